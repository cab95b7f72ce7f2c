"""The build's crash-safe log: every generation (sketch, render, critique) as it arrives.

Layout under the log folder::

    generations.jsonl     one JSON record per generation, appended, flushed and fsynced
    renders/<id>.png      the render of generation <id>, written atomically *before* its record
    failures.jsonl        infrastructure failures (a painter, critic or browser that did not
                          answer after retries): kept for the record, retried on resume

A generation counts as done exactly when its record is in ``generations.jsonl``; a crash
between writing a PNG and its record leaves an orphan PNG that the retry overwrites.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from watercolour import jsonl
from watercolour.io import write_bytes_atomic


class GenerationLog:
    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.path = self.folder / "generations.jsonl"
        self.failures_path = self.folder / "failures.jsonl"
        self.renders = self.folder / "renders"
        self._lock = threading.Lock()
        self._records: dict[str, dict[str, Any]] = {}
        self.reload()

    def reload(self) -> None:
        jsonl.repair(self.path)
        records: dict[str, dict[str, Any]] = {}
        for record in jsonl.iter_records(self.path):
            rid = record["id"]
            if rid in records:
                raise ValueError(f"{self.path}: generation {rid} is logged twice")
            records[rid] = record
        with self._lock:
            self._records = records

    def __contains__(self, gen_id: str) -> bool:
        return gen_id in self._records

    def __len__(self) -> int:
        return len(self._records)

    def get(self, gen_id: str) -> dict[str, Any] | None:
        return self._records.get(gen_id)

    def records(self) -> list[dict[str, Any]]:
        """Every logged generation, in the order they were logged."""
        with self._lock:
            return list(self._records.values())

    def png_path(self, gen_id: str) -> Path:
        return self.renders / f"{gen_id}.png"

    def png(self, record: dict[str, Any]) -> bytes | None:
        name = record.get("png")
        if not name:
            return None
        path = self.folder / name
        return path.read_bytes() if path.is_file() else None

    def append(self, record: dict[str, Any], png: bytes | None) -> dict[str, Any]:
        """Log one generation: its PNG first (atomically), then its record (durably)."""
        gen_id = record["id"]
        with self._lock:
            if gen_id in self._records:
                raise ValueError(f"generation {gen_id} is already logged")
            self._records[gen_id] = record  # reserve the id
        try:
            if png is not None:
                path = self.png_path(gen_id)
                write_bytes_atomic(path, png)
                record["png"] = path.relative_to(self.folder).as_posix()
            else:
                record["png"] = None
            jsonl.append(self.path, record)
        except BaseException:
            with self._lock:
                self._records.pop(gen_id, None)
            raise
        return record

    def fail(self, record: dict[str, Any]) -> None:
        jsonl.append(self.failures_path, record)

    def failures(self) -> list[dict[str, Any]]:
        return jsonl.read(self.failures_path)
