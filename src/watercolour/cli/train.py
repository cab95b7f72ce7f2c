"""``watercolour train [FLAGS] [--config RECIPE.yaml] [--resume] [--dry-run [--json]]``.

Every flag of TRL's GRPOConfig and of :class:`watercolour.train.config.RunArguments` (TRL's
ModelConfig and ours), parsed by TRL's own parser (``watercolour train --help`` lists them
all); the published command's names are aliases. The arguments are handed to that parser
untouched.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    p = verbs.add_parser(
        name, add_help=False,
        help="train the painter with GRPO (TRL): any scale, --config recipes/*.yaml",
        description="Train with GRPO. Flags: TRL's GRPOConfig plus ours; see --help.")

    def take_all(args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list]:
        # TrlParser parses these arguments itself (it owns --help and --config)
        namespace = namespace if namespace is not None else argparse.Namespace()
        namespace.argv = list(args or [])
        namespace.run = run
        return namespace, []

    p.parse_known_args = take_all  # type: ignore[method-assign]
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return main(args.argv)


def main(argv: list[str] | None = None) -> int:
    from watercolour.train.program import run as train

    return train(argv)
