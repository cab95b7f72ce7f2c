"""``watercolour sft [FLAGS] [--config RECIPE] [--resume] [--dry-run [--json]]``.

Every flag of TRL's SFTConfig and of :class:`watercolour.train.sft.SftArguments` (TRL's
ModelConfig and ours), parsed by TRL's own parser (``watercolour sft --help`` lists them all),
as ``watercolour train``; the arguments are handed to that parser untouched.
"""

from __future__ import annotations

import argparse

from watercolour.cli.handoff import add_handoff_parser


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    add_handoff_parser(
        verbs, name, main=main,
        help="supervised warm start on a rated pool (TRL's SFTTrainer, LoRA merged at the end)",
        description="Fine-tune on a pool's sketches. Flags: TRL's SFTConfig plus ours; see "
                    "--help.")


def main(argv: list[str] | None = None) -> int:
    from watercolour.train.sft import run as sft

    return sft(argv)
