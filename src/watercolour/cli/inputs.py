"""Input checks the verbs make before anything slow starts or anything is written: a bad
input is one line on stderr and exit 2 (:mod:`watercolour.errors`), never a traceback after a
browser started or a judge was fitted."""

from __future__ import annotations

from pathlib import Path

from watercolour.errors import InputError, read_text


def read_input(path: str | Path, what: str) -> str:
    """The UTF-8 text of ``path`` (a missing file, a directory or bytes that are not UTF-8:
    :func:`~watercolour.errors.read_text`), which must not be empty."""
    text = read_text(path, what)
    if not text.strip():
        raise InputError(f"{path} is empty: a {what} must hold a p5.js sketch")
    return text


def output_file(path: str | Path | None, flag: str = "-o") -> Path | None:
    """``path`` if a file can be written there: not a directory, and every folder above it
    that exists is a folder (the missing ones are made when it is written)."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{flag} {path} is a directory: give a file name (e.g. "
                         f"{path / 'out.png'})")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{flag} {path}: {parent} is not a directory")
            break
    return path
