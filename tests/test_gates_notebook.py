"""The chapter "Environment and gates" runs and writes its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watercolour import notebooks

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "03_environment_and_gates.md"


def test_gates_chapter_declares_its_parameters():
    assert set(notebooks.notebook_parameters(CHAPTER)) == {"only", "seed", "subject", "out_dir",
                                                            "mode", "package"}


@pytest.mark.browser
def test_gates_chapter_runs_and_writes_its_results(tmp_path):
    only = ["ok_setup_only.js", "bare_primitives.js", "no_sketch_refusal.txt"]
    results = tmp_path / "gates"
    executed = notebooks.run_notebook(
        CHAPTER, tmp_path / "executed",
        {"only": only, "seed": 0, "subject": "a lotus", "out_dir": str(results)}, timeout=300,
    )
    summary = json.loads((results / "gates.json").read_text())
    assert summary["all_as_expected"], summary["mismatches"]
    assert set(summary["fixtures"]) == set(only)
    assert summary["fixtures"]["ok_setup_only.js"]["passed"]
    assert summary["fixtures"]["no_sketch_refusal.txt"]["violations"] == ["no_sketch"]
    assert not summary["fixtures"]["bare_primitives.js"]["rendered"]
    assert summary["prompt"]["subject"] == "a lotus" and len(summary["prompt"]["methods"]) == 10
    nb = json.loads(executed.read_text())
    text = json.dumps(nb)
    assert "Paint a lotus in watercolour" in text  # the prompt is shown in full
    images = [o for c in nb["cells"] for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert images, "the fixture grid is a figure"
