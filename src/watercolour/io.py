"""Crash-safe file writes: to a temporary file (or folder) beside the target, then renamed."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

_UMASK = os.umask(0)
os.umask(_UMASK)  # read once, at import: the permissions a plain open() would give
FILE_MODE = 0o666 & ~_UMASK
"""The mode of a file written here: what ``open(path, "w")`` makes (``mkstemp`` alone would
leave it readable by its owner only)."""


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` so that ``path`` holds either the old content or the new, never half."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> Path:
    return write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def write_folder_atomic(target: str | os.PathLike[str],
                        write: Callable[[Path], object]) -> Path:
    """Make the folder ``target`` with ``write(folder)``: written in a scratch folder beside
    it, then moved into place, so a crash leaves the old folder or the new one, never half
    of one (a cache can then trust any folder it finds)."""
    import shutil

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        write(scratch / "new")
        if target.exists():
            shutil.rmtree(target)
        os.replace(scratch / "new", target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def save_model_folder(target: str | os.PathLike[str], model: Any, tokenizer: Any,
                      record_name: str, record: dict[str, Any]) -> Path:
    """Save a model, its tokenizer and a JSON ``record`` as the folder ``target``, atomically
    (:func:`write_folder_atomic`; a builtin's cache is trusted once its record is there)."""

    def write(folder: Path) -> None:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        write_json_atomic(folder / record_name, record)

    return write_folder_atomic(target, write)
