"""``watercolour publish --run RUN --out DIR``: a finished training run's published form (the
curve, run.json, analysis, rollout summary and contact sheet the book reads:
:mod:`watercolour.train.publish`, whose dataclass declares the flags; imported only when it
runs)."""

from __future__ import annotations

import argparse

from watercolour.cli.handoff import add_module_verb


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    add_module_verb(
        verbs, name, "watercolour.train.publish",
        help="publish a finished training run: curve, analysis, contact sheet",
        description="Write what the book reads of --run into --out: metrics.csv, run.json, "
                    "analysis.json, rollouts-summary.json, contact-sheet.png. See --help.")
