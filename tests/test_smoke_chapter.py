"""The chapter "A scaled smoke run" runs on a CPU (a short warm start, one live GRPO step,
the committed longer runs) and writes what the next chapters read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watercolour import notebooks
from watercolour.results import SMOLLM2, TINY
from watercolour.train.config import parse_args
from watercolour.train.tiny.runs import RESULTS

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "06_smoke_run.md"


def test_the_chapter_declares_its_parameters_and_is_in_the_book():
    assert set(notebooks.notebook_parameters(CHAPTER)) == {
        "mode", "live_steps", "mix", "pool", "pool_note", "results", "out_dir", "package"}
    assert "notebooks/06_smoke_run" in (ROOT / "_toc.yml").read_text()


def test_the_committed_runs_are_shipped_with_the_package():
    for mix in ("hps-only", "judge-led"):
        for name in ("metrics.csv", "run.json", "analysis.json", "rollouts-summary.json",
                     "contact-sheet.png", "final-eval.json"):
            assert (RESULTS / mix / name).is_file(), (mix, name)
    for name in ("metrics.csv", "run.json", "analysis.json", "rollouts-summary.json",
                 "contact-sheet.png", "final-eval.json", "revisions.png", "episode.json",
                 "episode-t1.png", "episode-t2.png"):
        assert (RESULTS / "revise" / name).is_file(), ("revise", name)
    assert RESULTS == TINY and (TINY / "sft-eval.json").is_file()  # one home, in the package
    for name in ("metrics.csv", "run.json", "analysis.json", "rollouts-summary.json",
                 "contact-sheet.png", "eval.json", "before.png", "after.png"):
        assert (SMOLLM2 / "judge-led" / name).is_file(), ("smollm2", name)


@pytest.mark.slow
def test_the_chapter_trains_live_and_shows_both_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("WATERCOLOUR_TINY_SFT_STEPS", "30")  # a short warm start for the test
    monkeypatch.setenv("WATERCOLOUR_TINY_SKETCHES", "400")
    out = tmp_path / "smoke"
    executed = notebooks.run_notebook(CHAPTER, tmp_path / "executed",
                                      {"out_dir": str(out), "live_steps": 1,
                                       "mix": "hps-only"}, timeout=900)
    record = json.loads((out / "smoke_run.json").read_text())
    _, training = parse_args(["--config", "tiny-cpu"])
    assert record["live"]["steps"] == 1
    assert record["live"]["rollouts"] == training.generation_batch_size  # one step's
    assert (out / "curve.csv").is_file() and (out / "rollouts").is_dir()
    assert set(record["runs"]) == {"hps-only", "judge-led"}
    assert record["sft-eval"]["samples"] == 64
    nb = json.loads(executed.read_text())
    # glued: captioned, labelled figures of the page
    images = [o for c in nb["cells"] for o in c.get("outputs", [])
              if any(k.endswith("image/png") for k in o.get("data", {}))]
    assert {o["metadata"]["scrapbook"]["name"] for o in images} == {
        "smoke-live", "smoke-curves", "smoke-sheet-hps-only", "smoke-sheet-judge-led",
        "smoke-revise-curves", "smoke-revise-episode", "smoke-revise-sheet",
        "smoke-sft-compact-after", "real-curve", "real-sheet", "real-eval-sheets"}
    # the pretrained model's GRPO run: every figure its prose quotes
    assert int(record["real_model"]["real-steps"]) >= 40 and "real-eval-t" in record["real_model"]
    # the run of two-turn episodes: each turn by thirds and the two targets
    assert set(record["revise"]["by_turn"]) == {"reward_turn1", "reward_turn2"}
    assert set(record["revise"]["targets"]) == {"revision_beats_first_in_last_third",
                                                "last_turn_rises"}
