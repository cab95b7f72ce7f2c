"""One home for each artefact: no symbolic links in the repository, every committed result under
``src/watercolour/results/`` (benchmarks keep their own records in ``benchmarks/results/``), and
the wheel's package data covers every committed result and recipe."""

from __future__ import annotations

import fnmatch
import subprocess
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "watercolour"


def _tracked() -> list[tuple[str, str]]:
    """(mode, path) of every file git tracks."""
    out = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return [(line.split()[0], line.split("\t", 1)[1]) for line in out.splitlines()]


def test_the_repository_holds_no_symbolic_links():
    assert [path for mode, path in _tracked() if mode == "120000"] == []


def test_committed_results_live_in_one_folder():
    homes = {"src/watercolour/results/", "benchmarks/results/"}
    elsewhere = [path for _, path in _tracked()
                 if "/results/" in f"/{path}" and not path.startswith(tuple(homes))
                 and not path.startswith("tests/")]
    assert elsewhere == []


def test_the_wheel_ships_every_result_and_recipe():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["watercolour"]
    shipped = [path for _, path in _tracked()
               if path.startswith(("src/watercolour/results/", "src/watercolour/recipes/"))
               and not path.endswith(".py")]
    assert len(shipped) > 50
    missing = [path for path in shipped
               if not any(fnmatch.fnmatchcase(str(Path(path).relative_to("src/watercolour")), p)
                          for p in patterns)]
    assert missing == []
