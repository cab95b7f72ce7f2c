"""``watercolour pool build``, ``watercolour pool info`` and ``watercolour pool rated``."""

from __future__ import annotations

import argparse
import json

import pytest
from pool_helpers import rows

from watercolour.pool.dataset import write_pool_folder


def run_cli(argv: list[str]) -> int:
    """``watercolour ARGV`` through the real entry point once ``pool`` is registered there;
    until then through the verb module with the same error handling."""
    from watercolour import cli
    from watercolour.cli import pool

    if "pool" in cli.VERBS:
        return cli.main(argv)
    parser = argparse.ArgumentParser(prog="watercolour")
    verbs = parser.add_subparsers(dest="verb", required=True)
    pool.add_parser(verbs, "pool")
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except (FileNotFoundError, ValueError, RuntimeError) as err:
        print(f"watercolour {args.verb}: error: {err}", file=__import__("sys").stderr)
        return 2


def test_info_json_and_human(tmp_path, capsys):
    folder = write_pool_folder(rows(2, 3), tmp_path / "pool")
    assert run_cli(["pool", "info", str(folder), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rows"] == 5 and info["tiers"] == {"love": 2, "okay": 3}
    assert info["paint_fraction"]["mean"] == pytest.approx(0.2)
    assert run_cli(["pool", "info", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "5 paintings (love 2, okay 3)" in out and "subjects: a red poppy 3" in out


def test_info_errors_are_one_line(tmp_path, capsys):
    assert run_cli(["pool", "info", str(tmp_path / "missing" / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("watercolour pool: error: no pool folder") and "\n" not in err
    bad = rows(2, 0)
    write_pool_folder(bad, tmp_path / "bad")
    assert run_cli(["pool", "info", str(tmp_path / "bad")]) == 2
    assert "tier 'okay' is empty" in capsys.readouterr().err
    assert run_cli(["pool", "info", str(tmp_path / "bad"), "--no-check", "--json"]) == 0


@pytest.mark.browser
def test_build_then_info(tmp_path, capsys):
    out = tmp_path / "starter"
    code = run_cli(["pool", "build", "--out", str(out), "--size", "5", "--rounds", "1",
                    "--canvas", "160", "--negatives", "0", "--seed", "3", "--quiet",
                    "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["generations"] == 5 and summary["config"]["seed"] == 3
    assert run_cli(["pool", "info", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rows"] == summary["pool"]["rows"] == sum(info["tiers"].values())
    assert info["tiers"] == summary["pool"]["tiers"]
    assert info["painters"] == {"procedural": info["rows"]}
    # rerunning is a resume: nothing new
    assert run_cli(["pool", "build", "--out", str(out), "--size", "5", "--rounds", "1",
                    "--canvas", "160", "--negatives", "0", "--seed", "3", "--quiet"]) == 0
    assert "(0 new" in capsys.readouterr().out

    # a person's ratings of that build become the pool (the widget's log format)
    from watercolour.pool.rating import items_from_build

    ids = [item.id for item in items_from_build(out)]
    assert len(ids) == 5
    log = tmp_path / "ratings.jsonl"
    actions = [(ids[0], "love"), (ids[1], "reject"), (ids[1], "undo"), (ids[1], "love"),
               (ids[2], "okay"), (ids[3], "okay"), (ids[4], "reject")]
    lines = [{"id": i, "action": a, "rater": "me", "at": "2026-12-02T18:00:00+0000"}
             for i, a in actions]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rated = tmp_path / "rated"
    assert run_cli(["pool", "rated", str(out), "--ratings", str(log), "--out", str(rated),
                    "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["love"], summary["okay"], summary["reject"]) == (2, 2, 1)
    assert run_cli(["pool", "info", str(rated), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tiers"] == {"love": 2, "okay": 2}

    # too few for the judge's draw, another build's log, a folder as the log: one line, exit 2
    assert run_cli(["pool", "rated", str(out), "--ratings", str(log), "--out",
                    str(tmp_path / "big"), "--references", "6"]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs at least 3 love (have 2) and 3 okay (have 2)" in err and "\n" not in err
    assert not (tmp_path / "big").exists()
    stranger = tmp_path / "stranger.jsonl"
    stranger.write_text(json.dumps({"id": "nope", "action": "love", "rater": "me",
                                    "at": "x"}) + "\n")
    assert run_cli(["pool", "rated", str(out), "--ratings", str(stranger), "--out",
                    str(tmp_path / "s")]) == 2
    assert "does not hold" in capsys.readouterr().err
    assert run_cli(["pool", "rated", str(out), "--ratings", str(tmp_path), "--out",
                    str(tmp_path / "d")]) == 2
    assert "is a directory" in capsys.readouterr().err
    # rated elsewhere: only id and action are needed; a line that is not a rating is refused
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({"id": i, "action": a}) + "\n"
                            for i, a in zip(ids, ("love", "okay", "love", "okay"))))
    assert run_cli(["pool", "rated", str(out), "--ratings", str(bare), "--out",
                    str(tmp_path / "bare")]) == 0
    assert "2 love + 2 okay" in capsys.readouterr().out
    assert run_cli(["pool", "info", str(tmp_path / "bare"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rated_by"] == {"person": 4}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(bare.read_text() + json.dumps({"id": ids[4], "action": "like"}) + "\n")
    assert run_cli(["pool", "rated", str(out), "--ratings", str(bad), "--out",
                    str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.jsonl: record 5 is not a rating" in err and "\n" not in err
