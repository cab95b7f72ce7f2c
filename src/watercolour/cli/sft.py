"""``watercolour sft [FLAGS] [--config RECIPE] [--resume] [--dry-run [--json]]``.

Every flag of TRL's SFTConfig and of :class:`watercolour.train.sft.SftArguments` (TRL's
ModelConfig and ours), parsed by TRL's own parser (``watercolour sft --help`` lists them all),
as ``watercolour train``; the arguments are handed to that parser untouched.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    p = verbs.add_parser(
        name, add_help=False,
        help="supervised warm start on a rated pool (TRL's SFTTrainer, LoRA merged at the end)",
        description="Fine-tune on a pool's sketches. Flags: TRL's SFTConfig plus ours; see "
                    "--help.")

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
    from watercolour.train.sft import run as sft

    return sft(argv)
