"""Input checks the verbs make before anything slow starts or anything is written: a bad
input is one line on stderr and exit 2 (:mod:`watercolour.errors`), never a traceback after a
browser started or a judge was fitted. A reply or sketch read from a file is held to the
server's limit (:data:`~watercolour.env.limits.MAX_REPLY_CHARS`, one number for both), a file
far over it refused from its size alone, before it is read."""

from __future__ import annotations

from pathlib import Path

from watercolour.env.limits import MAX_REPLY_CHARS
from watercolour.errors import InputError, read_text

MAX_UTF8_BYTES = 4
"""The most bytes one character takes in UTF-8: a file larger than this many times the limit
cannot be within it, and is refused unread."""


def read_input(path: str | Path, what: str) -> str:
    """The UTF-8 text of ``path`` (a missing file, a directory or bytes that are not UTF-8:
    :func:`~watercolour.errors.read_text`), which must not be empty nor longer than the
    server's limit, :data:`~watercolour.env.limits.MAX_REPLY_CHARS` characters."""
    try:
        size = Path(path).stat().st_size if Path(path).is_file() else 0
    except OSError:
        size = 0  # read_text says what is wrong with it
    if size > MAX_UTF8_BYTES * MAX_REPLY_CHARS:
        raise InputError(too_long(path, what, f"{size} bytes"))
    text = read_text(path, what)
    if len(text) > MAX_REPLY_CHARS:
        raise InputError(too_long(path, what, f"{len(text)} characters"))
    if not text.strip():
        raise InputError(f"{path} is empty: a {what} must hold a p5.js sketch")
    return text


def too_long(path: str | Path, what: str, size: str) -> str:
    return (f"{path} is {size}: a {what} may be at most {MAX_REPLY_CHARS} characters (the "
            "server's limit)")


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
