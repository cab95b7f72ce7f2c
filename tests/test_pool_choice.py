"""Which pool the reward and training chapters get: a person's rated pool when the judge can
draw from it, else the starter pool with the reason; the book pipeline passes the choice on,
and the pool chapter's ratings keep the rated pool in step with the log."""

from __future__ import annotations

from pathlib import Path

import pytest
from pool_helpers import png, rows

from watercolour.book import pipeline
from watercolour.pool.choice import RATED, STARTER, choose_pool, describe_pool
from watercolour.pool.dataset import write_pool_folder

ROOT = Path(__file__).resolve().parents[1]


def _pools(results: Path, love: int, okay: int) -> tuple[Path, Path]:
    """A starter pool (the rule's tiers) and a rated pool of ``love`` + ``okay`` paintings."""
    starter = write_pool_folder(rows(2, 3), results / "pool" / "build")
    rated = [{**r, "id": f"r{i}", "rated_by": "book", "png": png(100 + i)}
             for i, r in enumerate(rows(love, okay))]
    return write_pool_folder(rated, results / "pool" / "rated"), starter


def test_a_valid_rated_pool_is_used(tmp_path):
    rated, starter = _pools(tmp_path, love=2, okay=3)
    choice = choose_pool(rated, starter, references=4)
    assert (choice.path, choice.kind) == (rated, RATED)
    assert choice.reason == "2 love and 3 okay paintings, enough for the judge's 4 references " \
                            "a group"
    assert describe_pool(rated) == "a rated pool (rated by book): love 2, okay 3"
    assert describe_pool(starter) == "the synthetic starter pool (rated by synthetic:test): " \
                                     "love 2, okay 3"


def test_no_rated_pool_means_the_starter_pool(tmp_path):
    starter = write_pool_folder(rows(2, 3), tmp_path / "build")
    choice = choose_pool(tmp_path / "rated", starter, references=4)
    assert (choice.path, choice.kind) == (starter, STARTER)
    assert choice.reason == f"no rated pool at {tmp_path / 'rated'}"


def test_a_rated_pool_too_small_for_the_draw_means_the_starter_pool(tmp_path):
    rated, starter = _pools(tmp_path, love=1, okay=3)
    choice = choose_pool(rated, starter, references=4)
    assert (choice.path, choice.kind) == (starter, STARTER)
    assert "needs at least 2 love (have 1)" in choice.reason
    # with fewer references a group, the same pool is enough
    assert choose_pool(rated, starter, references=2).kind == RATED


def test_a_broken_rated_pool_means_the_starter_pool(tmp_path):
    rated, starter = _pools(tmp_path, love=2, okay=2)
    (rated / "metadata.jsonl").unlink()
    choice = choose_pool(rated, starter, references=4)
    assert choice.kind == STARTER and "holds no pool" in choice.reason


@pytest.mark.parametrize("chapter", pipeline.POOL_CHAPTERS)
def test_the_pipeline_hands_the_chosen_pool_to_the_reward_and_training_chapters(tmp_path,
                                                                                 chapter):
    path = ROOT / "notebooks" / f"{chapter}.md"
    run = tmp_path / "run"
    results = run / "results"
    # nothing built yet: the chapter's default stays
    assert "pool" not in pipeline.chapter_parameters(path, run, "tiny")
    rated, starter = _pools(results, love=1, okay=3)
    params = pipeline.chapter_parameters(path, run, "tiny")
    assert params["pool"] == str(starter)
    assert params["pool_note"].startswith(f"the starter pool {starter}: the rated pool")
    rated, starter = _pools(results, love=2, okay=3)
    params = pipeline.chapter_parameters(path, run, "tiny")
    assert params["pool"] == str(rated) and params["pool_note"].startswith("the rated pool")
    # a pool the caller names wins
    params = pipeline.chapter_parameters(path, run, "tiny", {"pool": "mine"})
    assert params["pool"] == "mine" and "pool_note" not in params


def test_the_pipeline_draws_as_many_references_as_the_chapter_does(tmp_path):
    path = ROOT / "notebooks" / "05_reward_components.md"
    run = tmp_path / "run"
    rated, starter = _pools(run / "results", love=1, okay=1)
    assert pipeline.chapter_parameters(path, run, "tiny")["pool"] == str(starter)
    params = pipeline.chapter_parameters(path, run, "tiny", {"references": 2})
    assert params["pool"] == str(rated)


def test_the_rated_pool_follows_the_log(tmp_path):
    pytest.importorskip("ipywidgets")
    from watercolour.pool.rating import Item, RatingLog, refresh_rated_pool

    items = [Item(f"g{i}", png(i), f"// sketch {i}", {"subject": "a red poppy"})
             for i in range(6)]
    log = RatingLog(tmp_path / "ratings.jsonl", rater="book")
    folder = tmp_path / "rated"
    for item, rating in zip(items, ("love", "okay", "reject")):
        log.record(item.id, rating)
    path, said = refresh_rated_pool(items, log, folder, references=4)
    assert path is None and not folder.exists()
    assert said.startswith("no rated pool (1 love, 1 okay of 3 rated)")
    # a later session (a new log over the same file) rates the rest: nothing is lost
    log = RatingLog(tmp_path / "ratings.jsonl", rater="book")
    for item, rating in zip(items[3:], ("love", "okay", "skip")):
        log.record(item.id, rating)
    path, said = refresh_rated_pool(items, log, folder, references=4)
    assert path == folder and said == f"rated pool written to {folder} (2 love, 2 okay of 5 rated)"
    assert describe_pool(folder) == "a rated pool (rated by book): love 2, okay 2"
    assert choose_pool(folder, tmp_path / "build", 4).kind == RATED
    # an undo the pool can no longer stand on removes it: the folder never disagrees with the log
    log.record(items[5].id, "undo")  # the skip of g5
    log.record(items[4].id, "undo")  # then the okay of g4
    path, said = refresh_rated_pool(items, log, folder, references=4)
    assert path is None and not folder.exists()
