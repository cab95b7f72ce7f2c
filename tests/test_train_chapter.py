"""The chapter "The full 35B run on an H200" runs (replaying the published curves) and
writes its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watercolour import notebooks

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "07_full_run.md"


def test_the_chapter_declares_its_parameters():
    assert set(notebooks.notebook_parameters(CHAPTER)) == {"recipe", "mixes", "window",
                                                           "out_dir", "mode", "package"}


def test_the_chapter_is_in_the_table_of_contents():
    assert "notebooks/07_full_run" in (ROOT / "_toc.yml").read_text()


@pytest.mark.slow
def test_the_chapter_shows_the_plan_and_replays_the_curves(tmp_path):
    results = tmp_path / "full_run"
    executed = notebooks.run_notebook(CHAPTER, tmp_path / "executed",
                                      {"out_dir": str(results)}, timeout=600)
    data = json.loads((results / "full_run.json").read_text())
    assert data["lora_plan"] == {"layers_adapted": 40, "layers_total": 40,
                                 "trainable_params": 22_477_440, "experts_frozen": True}
    assert data["dense_plan"]["layers_adapted"] == 10
    assert data["reproduction_hours"] == [27.5, 33.0]
    assert data["launch"][:4] == ["hf", "jobs", "uv", "run"]
    assert data["launch"][5:11] == ["--flavor", "h200", "--timeout", "48h", "--secrets",
                                    "HF_TOKEN"]
    assert data["curves"]["hps-led"]["reward_thirds"][1] > data["curves"]["hps-led"][
        "reward_thirds"][0]
    assert data["curves"]["hps-only"]["collapsed_steps"] == 0
    # what one H200 measured, read from the recorded GPU check
    measured = {row["run"]: row for row in data["measured"]}
    assert (measured["full-35b"]["peak_gib"], measured["full-35b"]["plan_gib"]) == (66.74,
                                                                                  68.74)
    assert measured["full-35b"]["step_s"] == 104.74
    assert measured["full-35b"]["generation_share"] == 0.877
    paths = data["step_paths"]
    assert [p["kind"] for p in paths] == ["measured", "projected", "projected", "projected"]
    assert paths[0]["source"] == "train-gpu-20261204-170050.json"
    assert paths[1]["35b"] > paths[2]["35b"] > paths[3]["35b"]  # fallback > fla > vLLM
    assert [c["hours"] for c in data["run_costs"]] == sorted(
        (c["hours"] for c in data["run_costs"]), reverse=True)
    assert all(low < high for low, high in (c["usd"] for c in data["run_costs"]))
    nb = json.loads(executed.read_text())
    # the figure is glued (a captioned, labelled figure of the page), not shown in its cell
    images = [o for c in nb["cells"] for o in c.get("outputs", [])
              if any(k.endswith("image/png") for k in o.get("data", {}))]
    assert [o["metadata"]["scrapbook"]["name"] for o in images] == ["full-curves"]
    glued = {o["metadata"]["scrapbook"]["name"] for c in nb["cells"] for o in c.get("outputs", [])
             if "scrapbook" in o.get("metadata", {})}
    assert {"hps-only-reward-first", "hps-led-reward-last"} <= glued  # quoted in the text
    assert {"gpu-check-file", "peak-35b", "share-35b", "reply-tokens", "usd-low"} <= glued
