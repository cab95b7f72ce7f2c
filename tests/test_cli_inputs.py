"""Bad input to ``render`` and ``score`` is one line on stderr and exit 2, checked before a
browser starts or a judge is fitted, and nothing is written: an output that is a directory,
an empty reply or sketch, a directory given as the input."""

from __future__ import annotations

import pytest
from pool_helpers import rows
from rewards_support import painting

from watercolour.cli import main
from watercolour.gates.fixtures import fixture_path
from watercolour.pool.dataset import write_pool_folder


def one_line(capsys, verb: str) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and captured.out == "", captured
    assert err.startswith(f"watercolour {verb}: error: ")
    return err


def snapshot(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_render_to_a_directory_is_one_line(tmp_path, capsys):
    sketch = str(fixture_path("ok_setup_only.js"))
    out = tmp_path / "renders"
    out.mkdir()
    assert main(["render", sketch, "-o", str(out)]) == 2
    err = one_line(capsys, "render")
    assert err.endswith(f"-o {out} is a directory: give a file name (e.g. {out}/out.png)")
    assert list(out.iterdir()) == []
    (tmp_path / "a-file").write_text("x")
    assert main(["render", sketch, "-o", str(tmp_path / "a-file" / "out.png")]) == 2
    assert one_line(capsys, "render").endswith(f"{tmp_path}/a-file is not a directory")
    assert main(["render", sketch, "--deadline", "0"]) == 2
    assert "--deadline must be a positive number" in one_line(capsys, "render")
    assert snapshot(tmp_path) == ["a-file", "renders"]


@pytest.mark.parametrize("verb", ["render", "gate", "score"])
def test_a_directory_as_the_input_is_said_to_be_one(verb, tmp_path, capsys):
    assert main([verb, str(tmp_path)]) == 2
    what = "sketch" if verb == "render" else "reply"
    assert one_line(capsys, verb).endswith(f"{tmp_path} is a directory: a {what} must be a "
                                           "file")


@pytest.mark.parametrize("verb", ["render", "score"])
def test_an_empty_input_is_one_line_and_nothing_is_written(verb, tmp_path, capsys,
                                                           monkeypatch):
    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    pool = write_pool_folder(pool_rows, tmp_path / "pool")
    work = tmp_path / "work"
    work.mkdir()
    empty = work / "empty.md"
    empty.write_text("  \n\n")
    monkeypatch.chdir(work)
    monkeypatch.delenv("WATERCOLOUR_JUDGE_CACHE", raising=False)  # the default cache folder
    args = ["--pool", str(pool)] if verb == "score" else ["-o", str(work / "out.png")]
    assert main([verb, str(empty), *args]) == 2
    what = "sketch" if verb == "render" else "reply"
    assert one_line(capsys, verb).endswith(f"{empty} is empty: a {what} must hold a p5.js "
                                           "sketch")
    assert snapshot(work) == ["empty.md"]  # no judge cache, no PNG
