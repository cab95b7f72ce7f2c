"""``watercolour.io``: crash-safe writes that leave files as a plain write would."""

from __future__ import annotations

import os
import stat

import pytest

from watercolour.io import FILE_MODE, write_bytes_atomic, write_json_atomic


def test_an_atomic_write_replaces_the_file_with_a_plain_file_mode(tmp_path):
    path = tmp_path / "sub" / "record.json"
    write_json_atomic(path, {"a": 1})
    write_bytes_atomic(path, b'{"a": 2}\n')
    assert path.read_bytes() == b'{"a": 2}\n'
    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode == stat.S_IMODE(plain.stat().st_mode) == FILE_MODE
    assert mode & stat.S_IRGRP  # not mkstemp's owner-only 0600 (under the usual umask 022)
    assert [p.name for p in path.parent.iterdir()] == ["record.json"]  # no temporary left


def test_a_failed_write_keeps_the_old_content_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "record.json"
    write_bytes_atomic(path, b"old")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        write_bytes_atomic(path, b"new")
    assert path.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["record.json"]
