"""``watercolour <verb>``: one verb per capability, human output by default, ``--json`` for
machines. Errors are one line on stderr and a non-zero exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from watercolour.cli import book, gallery, gate, pool, render, score, train

VERBS = {
    "render": render,
    "gallery": gallery,
    "gate": gate,
    "pool": pool,
    "score": score,
    "book": book,
    "train": train,
}


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="watercolour",
        description="Teach a language model to paint watercolours with p5.brush.",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for name, module in VERBS.items():
        module.add_parser(verbs, name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("watercolour: interrupted", file=sys.stderr)
        return 130
    except (CliError, FileNotFoundError, ValueError, RuntimeError) as err:
        print(f"watercolour {args.verb}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
