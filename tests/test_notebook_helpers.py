"""The chapters' small helpers: Markdown tables and thumbnails."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from watercolour.notebooks import markdown_table, thumbnail


def test_markdown_table_escapes_and_cuts_cells():
    text = markdown_table(["a", "b"], [(1, "x|y\nz"), (2, "a long cell")], limit=6)
    assert text.splitlines() == ["| a | b |", "|---:|---|", "| 1 | x\\|y z |", "| 2 | a lon… |"]
    with pytest.raises(ValueError, match="a row has 1 cells, the header 2"):
        markdown_table(["a", "b"], [(1,)])


def test_markdown_table_aligns_columns_of_numbers_right():
    text = markdown_table(["model", "pass", "rate", "reward", "t", "note"],
                          [("warm start", "29/32", "91%", 0.412, "-", "ok"),
                           ("trained", "1 / 320", "88%", -0.05, 3.1, "2.1x")])
    assert text.splitlines()[1] == "|---|---:|---:|---:|---:|---|"
    assert markdown_table(["a"], [("-",)]).splitlines()[1] == "|---|"  # no number at all


def test_a_page_shows_paths_relative_to_the_repository(tmp_path, monkeypatch):
    from watercolour.notebooks import resolve_path, shown_path

    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        (root / name).write_text("")
    monkeypatch.chdir(root / "notebooks")  # where papermill starts a chapter's kernel
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_path("runs/book/results/pool") == root / "runs/book/results/pool"
    assert resolve_path(tmp_path / "x") == tmp_path / "x"
    assert shown_path(root / "runs" / "book" / "smoke_run.json") == "runs/book/smoke_run.json"
    assert shown_path("runs/book/pool") == "runs/book/pool"
    assert shown_path(tmp_path / "home" / ".cache" / "watercolour") == "~/.cache/watercolour"
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "watercolour" / "r.json"
    assert shown_path(site) == "watercolour/r.json"
    assert shown_path(root / ".venv" / "lib" / "site-packages" / "torch" / "a.py") == \
        "torch/a.py"


def test_thumbnail_fits_the_box_and_keeps_the_aspect():
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((100, 400, 3), dtype=np.uint8)).save(buffer, format="PNG")
    small = Image.open(io.BytesIO(thumbnail(buffer.getvalue(), 80)))
    assert small.format == "PNG" and small.size == (80, 20)
    same = Image.open(io.BytesIO(thumbnail(buffer.getvalue(), 1000)))
    assert same.size == (400, 100)  # never enlarged


# ---------------------------------------------------------------- dependencies: ranges + pins


def test_every_requirement_is_a_range_with_a_pin_in_constraints():
    import re

    import tomllib
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    pins = {}
    for line in (root / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version and re.fullmatch(r"[\w.+-]+", version), line
            pins[canonicalize_name(name)] = version
    requirements = list(project["dependencies"]) + [
        r for group in project["optional-dependencies"].values() for r in group]
    for text in requirements:
        req = Requirement(text)
        # a range, not a pin: Colab's (or any platform's) own versions are kept when they fit
        assert not any(spec.operator in ("==", "===") for spec in req.specifier), text
        assert req.specifier, f"{text}: no range at all"
        pinned = pins.get(canonicalize_name(req.name))
        assert pinned is not None, f"{req.name} has no exact version in constraints.txt"
        assert req.specifier.contains(pinned, prereleases=True), f"{pinned} is outside {text}"
    # Colab's preinstalled numpy, pillow and matplotlib (2.0, 11, 3.10 at the time of writing)
    # satisfy the ranges: installing the package does not replace them
    allowed = {canonicalize_name(Requirement(t).name): Requirement(t).specifier
               for t in requirements}
    for name, colab in (("numpy", "2.0.2"), ("pillow", "11.3.0"), ("matplotlib", "3.10.0")):
        assert allowed[name].contains(colab), (name, colab)
    assert pins["torch"] == "2.13.0"  # the CPU build install.sh takes on these machines


# ---------------------------------------------------------------- what the chapters measure


def test_the_shipped_measurements_are_the_checkouts(tmp_path, monkeypatch):
    from watercolour.notebooks import MEASURED, MEASUREMENTS, measurement

    root = Path(__file__).resolve().parents[1]
    shipped = sorted(p.name for p in MEASUREMENTS.glob("*.json"))
    newest = [sorted((root / "benchmarks" / "results").glob(pattern))[-1] for pattern in MEASURED]
    assert shipped == sorted(p.name for p in newest), "ship exactly the newest of each"
    for path in newest:
        assert (MEASUREMENTS / path.name).read_bytes() == path.read_bytes(), (
            f"{path.name} changed: copy it to src/watercolour/results/benchmarks/ "
            "(Colab readers see the package's copy)")
    # outside a checkout (Colab) the chapters read the package's copy
    monkeypatch.chdir(tmp_path)
    assert measurement("gate-breakage.json")["models"]
    assert measurement("train-bench-*.json") == json.loads(newest[-1].read_text())
    assert measurement("no-such-*.json") is None


def test_the_job_scripts_pins_are_the_constraints():
    # scripts/hf_job_train.py installs with uv from its own PEP 723 block: the same versions
    import re

    import tomllib

    root = Path(__file__).resolve().parents[1]
    block = re.search(r"^# /// script\n(.*?)^# ///$",
                      (root / "scripts/hf_job_train.py").read_text(), re.S | re.M)
    inline = tomllib.loads("\n".join(line[2:] for line in block.group(1).splitlines()))
    pins = dict(line.split("#")[0].strip().split("==")
                for line in (root / "constraints.txt").read_text().splitlines()
                if line.split("#")[0].strip())
    for requirement in inline["dependencies"]:
        name, _, version = requirement.partition("==")
        assert version, f"{requirement}: the job pins exact versions"
        assert pins.get(re.sub(r"\[.*\]", "", name).lower()) == version, requirement
