"""Bad input is refused before work (issue 39): a reply or sketch over the server's limit is
one line and exit 2 at once, before a browser starts or a judge is fitted, and nothing is
written; a scored reply writes its judge cache under the project's cache directory
(``WATERCOLOUR_CACHE``), never into the working directory. Each verb runs from an empty
temporary working directory that is checked afterwards."""

from __future__ import annotations

import time

import pytest
from conftest import SMALL_SKETCH
from pool_helpers import rows
from rewards_support import painting

from watercolour.cli import main
from watercolour.env.models import MAX_REPLY_CHARS
from watercolour.pool.dataset import write_pool_folder


def snapshot(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    return write_pool_folder(pool_rows, tmp_path_factory.mktemp("limits") / "pool")


@pytest.fixture
def work(tmp_path, monkeypatch):
    """An empty working directory, and a cache directory of its own beside it."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("WATERCOLOUR_JUDGE_CACHE", raising=False)
    return folder


def one_line(capsys, verb: str) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and captured.out == "", captured
    assert err.startswith(f"watercolour {verb}: error: ")
    return err


@pytest.mark.parametrize("verb", ["render", "score"])
def test_a_10_mb_input_is_refused_at_once_and_nothing_is_written(verb, work, pool, capsys):
    big = work.parent / "big.js"
    big.write_text(SMALL_SKETCH + "//" + "x" * 10_000_000 + "\n")
    args = ["--pool", str(pool)] if verb == "score" else ["-o", str(work / "out.png")]
    started = time.monotonic()
    assert main([verb, str(big), *args]) == 2
    took = time.monotonic() - started
    err = one_line(capsys, verb)
    assert err.endswith(f"{big} is {big.stat().st_size} bytes: a "
                        f"{'sketch' if verb == 'render' else 'reply'} may be at most "
                        f"{MAX_REPLY_CHARS} characters (the server's limit)"), err
    assert took < 5, took  # no browser started, no judge fitted
    assert snapshot(work) == [] and not (work.parent / "cache").exists()


@pytest.mark.parametrize("verb", ["render", "score"])
def test_the_limit_counts_characters_as_the_server_does(verb, work, pool, capsys):
    over = work.parent / "over.md"
    over.write_text("é" * (MAX_REPLY_CHARS + 1))  # 2 000 002 bytes: under the unread bound
    args = ["--pool", str(pool)] if verb == "score" else []
    assert main([verb, str(over), *args]) == 2
    assert one_line(capsys, verb).endswith(f"is {MAX_REPLY_CHARS + 1} characters: a "
                                           f"{'sketch' if verb == 'render' else 'reply'} "
                                           f"may be at most {MAX_REPLY_CHARS} characters "
                                           "(the server's limit)")
    assert snapshot(work) == [] and not (work.parent / "cache").exists()


@pytest.mark.browser
def test_score_writes_its_judge_cache_under_the_cache_directory(work, pool, capsys):
    sketch = work.parent / "sketch.js"
    sketch.write_text(SMALL_SKETCH)
    assert main(["score", str(sketch), "--pool", str(pool), "--json"]) == 0
    assert '"reward"' in capsys.readouterr().out
    assert snapshot(work) == []  # nothing in the working directory
    fits = list((work.parent / "cache" / "judge").glob("pool-fitted-*.json"))
    assert len(fits) == 1, snapshot(work.parent / "cache")
