"""The chapter "Building the pool" runs with small parameters and writes its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watercolour import notebooks
from watercolour.book import pipeline
from watercolour.pool.choice import describe_pool
from watercolour.pool.rating import RatingLog, items_from_build

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "04_building_the_pool.md"


def test_the_chapter_declares_its_parameters():
    assert set(notebooks.notebook_parameters(CHAPTER)) == {
        "n_paintings", "rounds", "canvas", "seed", "n_grid", "scripted_ratings", "out_dir",
        "painter_models", "critic_model", "base_url", "reference", "mode", "package"}


@pytest.mark.slow
@pytest.mark.browser
def test_the_chapter_builds_a_pool_and_rates_it(tmp_path):
    run = tmp_path / "run"  # laid out as the book's pipeline lays out a run
    results = run / "results" / "pool"
    params = {"n_paintings": 4, "rounds": 2, "canvas": 160, "n_grid": 2,
              "scripted_ratings": 4, "out_dir": str(results)}
    executed = notebooks.run_notebook(CHAPTER, tmp_path / "executed", params, timeout=600)
    summary = json.loads((results / "pool.json").read_text())
    assert summary["generations"] == 4 * 2 + 6  # paintings x rounds + one negative per kind
    assert set(summary["score_by_round"]) == {"1", "2"}
    pool = summary["pool"]
    assert pool["rows"] == pool["tiers"]["love"] + pool["tiers"]["okay"] >= 2
    assert pool["tiers"]["love"] >= 1 and pool["tiers"]["okay"] >= 1
    assert summary["rating"]["rated"] == 4 and summary["rating"]["items"] == 4
    # the script rated as the rule did; the rated pool exists exactly when that is enough
    rated = summary["rated_pool"]
    assert rated["references"] == 4
    enough = summary["rating"]["love"] >= 2 and summary["rating"]["okay"] >= 2
    assert (rated["path"] == str(results / "rated")) is enough
    assert (results / "rated").is_dir() is enough
    assert (results / "build" / "ratings.jsonl").is_file()
    nb = json.loads(executed.read_text())
    images = [o for c in nb["cells"] for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert len(images) >= 2
    widgets = [o for c in nb["cells"] for o in c.get("outputs", [])
               if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets  # the rating widget and the summary view

    # a person rates in between (a later session over the same log: their ratings stand)
    items = items_from_build(results / "build")
    person = RatingLog(results / "build" / "ratings.jsonl", rater="person")
    for item, rating in zip(items, ("love", "okay", "love", "okay")):
        person.record(item.id, rating)

    # running it again is a resume: nothing new is generated, no rating is lost or added
    notebooks.run_notebook(CHAPTER, tmp_path / "executed2", params, timeout=600)
    again = json.loads((results / "pool.json").read_text())
    assert again["new_generations"] == 0
    assert again["pool"]["tiers"] == pool["tiers"]
    assert again["rating"] | {"love": 2, "okay": 2, "reject": 0} == again["rating"]
    assert again["rated_pool"]["path"] == str(results / "rated")
    assert describe_pool(results / "rated") == "a rated pool (rated by person): love 2, okay 2"
    # and the book's pipeline hands that pool to the reward and training chapters
    for chapter in pipeline.POOL_CHAPTERS:
        params = pipeline.chapter_parameters(ROOT / "notebooks" / f"{chapter}.md", run, "tiny")
        assert params["pool"] == str(results / "rated"), params["pool_note"]
