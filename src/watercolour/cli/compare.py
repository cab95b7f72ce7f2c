"""``watercolour compare --before POLICY [--after POLICY] --out DIR [FLAGS]``: two policies
(before and after a supervised warm start) sampled on the same seeds and scored by one reward,
side by side (:mod:`watercolour.train.sft_eval`, whose dataclass declares the flags; imported
only when it runs: it loads torch)."""

from __future__ import annotations

import argparse

from watercolour.cli.handoff import add_handoff_parser


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    add_handoff_parser(
        verbs, name, main=main,
        help="two policies on the same seeds, one reward: before and after a warm start",
        description="Sample --before and --after with the same seeds and score both; "
                    "writes OUT/eval.json and a contact sheet a side. See --help.")


def main(argv: list[str]) -> int:
    from watercolour.train.sft_eval import main as compare

    return compare(argv, prog="watercolour compare")
