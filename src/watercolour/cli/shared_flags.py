"""The flags several programs share, each declared once here: its name, type and default.
A program's flag dataclass offers one as a field with its own help (``json: bool =
json_flag("print the report as JSON")``); :mod:`watercolour.flags` adds it to the parser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from watercolour.flags import flag, switch


def json_flag(help: str | None = "print the result as JSON") -> Any:
    """``--json``: print the result as JSON instead of lines for a person."""
    return switch("--json", help=help)


def out_flag(help: str | None = None, *, type: Any = Path, default: Any = None,
             required: bool = False, metavar: str | None = None) -> Any:
    """``--out``: where the program writes its result (a file or a folder)."""
    return flag("--out", type=type, default=default, required=required, metavar=metavar,
                help=help)


def seed_flag(help: str | None = None, *, default: int | None = 0) -> Any:
    """``--seed``: the seed of whatever the program draws."""
    return flag("--seed", type=int, default=default, help=help)


def pool_flag(help: str | None = None, *, default: str | None = None,
              required: bool = False) -> Any:
    """``--pool``: a reference pool (a pool folder, a build folder or a Hub id)."""
    return flag("--pool", default=default, required=required, help=help)


def mix_flag(help: str | None = None, *, default: str | None = None) -> Any:
    """``--mix``: the reward mix (a preset name or weights such as judge=0.5,hps=0.5)."""
    return flag("--mix", default=default, help=help)


def subject_flag(help: str | None = None) -> Any:
    """``--subject``: what the painting is of."""
    return flag("--subject", help=help)


def deadline_flag(help: str | None = None, *, default: float | None = None) -> Any:
    """``--deadline``: seconds a render may take."""
    return flag("--deadline", type=float, default=default, help=help)
