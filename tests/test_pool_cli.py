"""``watercolour pool build`` and ``watercolour pool info``."""

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
