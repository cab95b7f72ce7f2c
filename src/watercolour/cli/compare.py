"""``watercolour compare --before POLICY [--after POLICY] --out DIR [FLAGS]``: two policies
(before and after training) sampled on the same seeds and scored by one reward, side by side,
with the paired difference (:mod:`watercolour.train.sft_eval`, whose dataclass declares the
flags; imported only when it runs: it loads torch)."""

from __future__ import annotations

import argparse

from watercolour.cli.handoff import add_module_verb


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    add_module_verb(
        verbs, name, "watercolour.train.sft_eval",
        help="two policies on the same seeds, one reward: before and after training",
        description="Sample --before and --after with the same seeds and score both; "
                    "writes OUT/eval.json and a contact sheet a side. See --help.")
