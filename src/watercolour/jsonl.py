"""Append-only JSON Lines logs that survive a crash: one record per line, flushed and fsynced
before :func:`append` returns; a torn last line (the process died mid-write) is dropped when
the log is read and cut off before the next append."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from watercolour.errors import InputError

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock(path: Path) -> threading.Lock:
    key = str(path.resolve())
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def read(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete record; a torn or unparsable last line is ignored."""
    return list(iter_records(path))


def iter_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    target = Path(path)
    if not target.is_file():
        return
    with open(target, "rb") as handle:
        lines = handle.read().split(b"\n")
    # the last element is b"" when the file ends with a newline, else a torn line: skipped
    for number, raw in enumerate(lines[:-1], 1):
        if not raw.strip():
            continue
        try:
            yield json.loads(raw)
        except json.JSONDecodeError as err:
            raise InputError(f"{target}: line {number} is not JSON ({err}); the log is "
                             "damaged beyond a torn last line") from err


def repair(path: str | os.PathLike[str]) -> int:
    """Cut a torn last line off the log; return how many bytes were dropped."""
    target = Path(path)
    if not target.is_file():
        return 0
    with _lock(target):
        return _cut_torn_tail(target)


def append(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """Add one record as one line, durable when this returns. Thread-safe."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
    if "\n" in line:  # json.dumps escapes newlines in strings; this guards the invariant
        raise ValueError("a record must serialise to one line")
    with _lock(target):
        if target.is_file() and target.stat().st_size:
            with open(target, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                torn = handle.read(1) != b"\n"
            if torn:
                _cut_torn_tail(target)
        with open(target, "ab") as handle:
            handle.write(line.encode("utf-8") + b"\n")
            handle.flush()
            os.fsync(handle.fileno())


def _cut_torn_tail(target: Path) -> int:
    with open(target, "rb+") as handle:
        data = handle.read()
        end = data.rfind(b"\n") + 1
        if end == len(data):
            return 0
        handle.truncate(end)
        handle.flush()
        os.fsync(handle.fileno())
        return len(data) - end
