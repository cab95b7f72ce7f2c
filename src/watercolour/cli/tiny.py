"""``watercolour tiny runs|evaluate [FLAGS]``: the tiny painter's committed runs (train, then
publish into the results: :mod:`watercolour.train.tiny.runs`) and its policy probe
(:mod:`watercolour.train.tiny.evaluate`). Each parses its own flags, declared once on its
dataclass; the chosen one is imported only when it runs (it loads torch)."""

from __future__ import annotations

import argparse
import importlib

from watercolour.cli.handoff import add_handoff_parser
from watercolour.errors import InputError

SUBCOMMANDS = {
    "runs": ("watercolour.train.tiny.runs",
             "train a tiny-painter run and publish it into the results (curve, analysis, "
             "contact sheet, final evaluation)"),
    "evaluate": ("watercolour.train.tiny.evaluate",
                 "sample a tiny painter with fixed seeds and score it (single replies or "
                 "episodes of --turns)"),
}
"""Each subcommand: its module (with ``main(argv, prog)``) and what it does."""

USAGE = "usage: watercolour tiny {" + ",".join(SUBCOMMANDS) + "} [FLAGS]\n\n" + "\n".join(
    f"  {name:<9} {about}" for name, (_, about) in SUBCOMMANDS.items()) + \
    "\n\n'watercolour tiny SUBCOMMAND --help' lists its flags."


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    add_handoff_parser(
        verbs, name, main=main,
        help="the tiny painter's runs and probe: tiny runs | tiny evaluate",
        description=USAGE)


def main(argv: list[str]) -> int:
    """Run the subcommand ``argv[0]`` with the rest of ``argv``."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        raise InputError(f"unknown subcommand {name!r}; choose from {', '.join(SUBCOMMANDS)}")
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return module.main(rest, prog=f"watercolour tiny {name}")
