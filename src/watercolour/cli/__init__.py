"""``watercolour <verb>``: one verb per capability, human output by default, ``--json`` for
machines. Bad input and setup problems (:mod:`watercolour.errors`, a missing file) are one line
on stderr and exit code 2; any other exception is a bug and keeps its traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from watercolour.cli import (
    analyse,
    book,
    client,
    compare,
    evaluate,
    gallery,
    gate,
    pool,
    publish,
    render,
    score,
    serve,
    sft,
    tiny,
    train,
)
from watercolour.errors import exit_status

VERBS = {
    "render": render,
    "gallery": gallery,
    "gate": gate,
    "pool": pool,
    "score": score,
    "book": book,
    "analyse": analyse,
    "serve": serve,
    "client": client,
    "train": train,
    "sft": sft,
    "evaluate": evaluate,
    "compare": compare,
    "publish": publish,
    "tiny": tiny,
}


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
    return exit_status(f"watercolour {args.verb}", lambda: args.run(args))


if __name__ == "__main__":
    sys.exit(main())
