"""Verbs whose flags TRL's own parser reads (``train``, ``sft``): argparse hands it every
argument untouched, since TrlParser owns ``--help`` and ``--config``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_handoff_parser(verbs: argparse._SubParsersAction, name: str, *, help: str,
                       description: str, main: Callable[[list[str]], int]) -> None:
    """Add verb ``name``, whose run calls ``main`` with the arguments after the verb."""
    p = verbs.add_parser(name, add_help=False, help=help, description=description)

    def run(args: argparse.Namespace) -> int:
        return main(args.argv)

    def take_all(args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list]:
        namespace = namespace if namespace is not None else argparse.Namespace()
        namespace.argv = list(args or [])
        namespace.run = run
        return namespace, []

    p.parse_known_args = take_all  # type: ignore[method-assign]
    p.set_defaults(run=run)


def add_module_verb(verbs: argparse._SubParsersAction, name: str, module: str, *, help: str,
                    description: str) -> None:
    """Add verb ``name``, handed to ``module``'s ``main(argv, prog="watercolour NAME")``: the
    module declares the verb's flags on its dataclass and is imported only when the verb runs
    (it may load torch), so listing the verbs stays quick."""
    import importlib

    def main(argv: list[str]) -> int:
        return importlib.import_module(module).main(argv, prog=f"watercolour {name}")

    add_handoff_parser(verbs, name, main=main, help=help, description=description)
