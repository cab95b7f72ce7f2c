"""Command-line flags declared once, as dataclass fields: one field is one flag.

A program's flags are a plain dataclass whose fields are made with :func:`flag` (or
:func:`switch` for an on/off flag, :func:`positional` for an argument without dashes)::

    @dataclass
    class InfoFlags:
        path: str = positional(help="a folder or a Hub dataset id (owner/name)")
        revision: str | None = flag(help="Hub revision (branch, tag or commit)")
        json: bool = switch(help="print an object with rows, tiers, ...")

and :func:`add_flags` ``(parser, InfoFlags)`` adds them to an argparse parser, one
``add_argument`` per field, in field order: the names given (default ``--field-name``), the
field's default, its help (in the field's ``metadata["help"]``, as ``HfArgumentParser`` reads
it), the other argparse options (``type``, ``choices``, ``metavar``, ``action``, ``nargs``,
``required``) as given. The parsed value lands under the field's name (``args.revision``), so
the dataclass is the one place a flag is declared. :func:`command` makes a subcommand from one
such dataclass and the function that runs it, :func:`parser_for` a program's whole parser (a
benchmark's).

A flag several programs share (``--json``, ``--pool``, ``--seed``, ...) is declared once, as a
:class:`Shared` at the end of this module (:data:`JSON`, :data:`OUT`, :data:`SEED`,
:data:`POOL`, :data:`MIX`, :data:`SUBJECT`, :data:`DEADLINE`: here, below every layer, so the
command line, the training programs and the benchmarks all take them from one place), and
offered by each program's dataclass with its own help:
``json: bool = flag(like=JSON, help="print the report as JSON")``.
Settings that also have an environment variable are :func:`watercolour.settings.setting`
fields, made flags by :func:`watercolour.settings.add_arguments`.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

FLAG = "watercolour.flag"
"""The metadata key that holds a field's flag: its names and argparse options."""


@dataclasses.dataclass(frozen=True)
class Shared:
    """A flag several programs offer, declared once: its names, default, help and argparse
    options. A program's field takes it with ``flag(like=SHARED, help=...)``, overriding what
    differs for that program (most often the help)."""

    names: tuple[str, ...]
    default: Any = None
    help: str | None = None
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


_UNSET: Any = object()


def flag(*names: str, like: Shared | None = None, default: Any = _UNSET,
         help: str | None = _UNSET, **options: Any) -> Any:
    """A dataclass field that is one command-line option.

    Args:
        names: the option strings (``"-p", "--parameter"``); none: ``like``'s names, else
            ``--field-name``.
        like: a :class:`Shared` flag this field offers; what is not given here is taken from
            it.
        default: the value when the flag is not given (a list is copied per parser; not
            given: ``like``'s default, else None).
        help: the line ``--help`` shows (None: the flag is listed without one).
        options: argparse's other keywords: ``type``, ``choices``, ``metavar``, ``action``,
            ``nargs``, ``required``, ``const``.
    """
    if like is not None:
        names = names or like.names
        default = like.default if default is _UNSET else default
        help = like.help if help is _UNSET else help
        options = {**like.options, **options}
    default = None if default is _UNSET else default
    help = None if help is _UNSET else help
    metadata: dict[str, Any] = {FLAG: {"names": names, "options": options}}
    if help is not None:
        metadata["help"] = help
    if isinstance(default, list | dict | set):
        return dataclasses.field(default_factory=lambda: type(default)(default),
                                 metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def switch(*names: str, help: str | None = None) -> Any:
    """An on/off flag (``action="store_true"``): False unless given."""
    return flag(*names, default=False, help=help, action="store_true")


def positional(default: Any = None, help: str | None = None, **options: Any) -> Any:
    """A positional argument named after its field (``metavar`` renames it in ``--help``);
    optional where ``nargs="?"``."""
    return flag(default=default, help=help, positional=True, **options)


def add_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, cls: type) -> None:
    """One argument of ``parser`` per :func:`flag` field of ``cls``, in field order; its value
    is parsed into ``args.<field name>``."""
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(FLAG)
        if spec is None:
            continue
        options = dict(spec["options"])
        default = (f.default_factory() if f.default_factory is not dataclasses.MISSING
                   else f.default)
        if options.pop("positional", False):
            names: tuple[str, ...] = (f.name,)
        else:
            names = spec["names"] or ("--" + f.name.replace("_", "-"),)
            options["dest"] = f.name
        parser.add_argument(*names, default=default, help=f.metadata.get("help"), **options)


def command(subcommands: argparse._SubParsersAction, name: str, cls: type,
            run: Callable[[argparse.Namespace], int], **parser_options: Any
            ) -> argparse.ArgumentParser:
    """The subcommand ``name`` (``help``, ``description`` in ``parser_options``): the flags
    of ``cls``, run by ``run(args)``."""
    parser = subcommands.add_parser(name, **parser_options)
    add_flags(parser, cls)
    parser.set_defaults(run=run)
    return parser


def parser_for(cls: type, **parser_options: Any) -> argparse.ArgumentParser:
    """A program's whole parser (``description`` and the like in ``parser_options``): the
    flags of ``cls``."""
    parser = argparse.ArgumentParser(**parser_options)
    add_flags(parser, cls)
    return parser


# ---------------------------------------------------------------- the shared flags

JSON = Shared(("--json",), default=False, help="print the result as JSON",
              options={"action": "store_true"})
"""``--json``: print the result as JSON instead of lines for a person."""

OUT = Shared(("--out",), options={"type": Path})
"""``--out``: where the program writes its result (a file or a folder)."""

SEED = Shared(("--seed",), default=0, options={"type": int})
"""``--seed``: the seed of whatever the program draws."""

POOL = Shared(("--pool",))
"""``--pool``: a reference pool (a pool folder, a build folder or a Hub id)."""

MIX = Shared(("--mix",))
"""``--mix``: the reward mix (a preset name or weights such as judge=0.5,hps=0.5)."""

SUBJECT = Shared(("--subject",))
"""``--subject``: what the painting is of."""

DEADLINE = Shared(("--deadline",), options={"type": float})
"""``--deadline``: seconds a render may take."""
