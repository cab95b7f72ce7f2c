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
