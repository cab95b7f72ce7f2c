"""``watercolour train [FLAGS] [--config RECIPE.yaml] [--resume] [--dry-run [--json]]``.

Every flag of TRL's GRPOConfig and of :class:`watercolour.train.config.RunArguments` (TRL's
ModelConfig and ours), parsed by TRL's own parser (``watercolour train --help`` lists them
all); the published command's names are aliases. The arguments are handed to that parser
untouched.
"""

from __future__ import annotations

import argparse

from watercolour.cli.handoff import add_handoff_parser


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    add_handoff_parser(
        verbs, name, main=main,
        help="train the painter with GRPO (TRL): any scale, --config RECIPE (a shipped "
             "recipe such as tiny-cpu or full-35b, or a YAML file)",
        description="Train with GRPO. Flags: TRL's GRPOConfig plus ours; see --help.")


def main(argv: list[str] | None = None) -> int:
    from watercolour.train.program import run as train

    return train(argv)
