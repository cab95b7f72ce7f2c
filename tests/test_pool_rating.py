"""The rating widget, driven headless by button clicks: every click is in the log at once, a
new widget over the same log (a kernel restart) resumes where the last one stopped, undo
works across restarts, and the pool is built from the log."""

from __future__ import annotations

import json

import pytest
from pool_helpers import png

from watercolour.pool.dataset import load_pool
from watercolour.pool.rating import (
    Item,
    RatingLog,
    RatingWidget,
    items_from_pool,
    rating_summary,
    summary_view,
    write_rated_pool,
)
from watercolour.pool.schema import PoolValidationError

pytest.importorskip("ipywidgets")


@pytest.fixture
def items() -> list[Item]:
    return [Item(f"g{i}", png(i), f"// sketch {i}", {"subject": "a red poppy", "round": 3,
                                                    "painter": "procedural", "seed": i})
            for i in range(6)]


def _log_actions(path):
    return [(e["id"], e["action"]) for e in map(json.loads, path.read_text().splitlines())]


def test_clicks_are_logged_the_moment_they_happen(items, tmp_path):
    path = tmp_path / "ratings.jsonl"
    w = RatingWidget(items, path, image_size=64)
    assert w.current.id == "g0" and w.progress_text == "0 / 6 rated"
    assert w.image.value  # the render is shown
    w.buttons["love"].click()
    assert _log_actions(path) == [("g0", "love")]  # on disk before the next click
    w.buttons["okay"].click()
    w.buttons["reject"].click()
    assert w.current.id == "g3"
    assert "3 / 6 rated" in w.progress.value
    assert w.ratings == {"g0": "love", "g1": "okay", "g2": "reject"}


def test_a_kernel_restart_loses_nothing_and_resumes(items, tmp_path):
    path = tmp_path / "ratings.jsonl"
    w = RatingWidget(items, path, image_size=64)
    for name in ("love", "okay", "skip", "reject"):
        w.buttons[name].click()
    del w  # the kernel dies
    w2 = RatingWidget(items, path, image_size=64)  # a new kernel, the same log
    assert w2.ratings == {"g0": "love", "g1": "okay", "g3": "reject"}
    assert w2.current.id == "g4"  # the first one neither rated nor skipped
    assert w2.progress_text == "3 / 6 rated"
    w2.buttons["love"].click()  # g4
    w2.buttons["okay"].click()  # g5
    assert w2.current.id == "g2"  # then back to the skipped one
    w2.buttons["okay"].click()
    assert w2.current is None and "All rated" in w2.title.value
    assert w2.image.layout.display == "none"  # no empty (broken) picture
    assert w2.buttons["love"].disabled


def test_undo_takes_back_the_latest_rating_even_after_a_restart(items, tmp_path):
    path = tmp_path / "ratings.jsonl"
    w = RatingWidget(items, path, image_size=64)
    w.rate("love")
    w.rate("reject")
    w.buttons["undo"].click()
    assert w.current.id == "g1" and w.ratings == {"g0": "love"}
    w.rate("okay")
    assert w.ratings == {"g0": "love", "g1": "okay"}
    w3 = RatingWidget(items, path, image_size=64)
    w3.undo()  # takes back g1's okay (the undone reject stays undone)
    assert w3.ratings == {"g0": "love"}
    assert w3.current.id == "g1"
    w3.undo()
    w3.undo()  # nothing left: harmless
    assert w3.ratings == {}
    assert "nothing to undo" in w3.status.value
    # the log only grew: every event is still there
    assert [a for _, a in _log_actions(path)] == ["love", "reject", "undo", "okay", "undo",
                                                   "undo"]


def test_rerating_and_the_unrated_filter(items, tmp_path):
    w = RatingWidget(items, tmp_path / "r.jsonl", image_size=64)
    w.rate("love")
    w.unrated.value = False
    w.go("g0")
    assert "rated love" in w.title.value
    w.rate("okay")  # change of mind
    assert w.ratings["g0"] == "okay"
    assert w.current.id == "g1"  # without the filter, the next one in order
    w.show_source.value = True
    assert w.source.layout.display == "" and w.source.value == "// sketch 1"


def test_summary_and_the_pool_built_from_the_log(items, tmp_path):
    log = RatingLog(tmp_path / "r.jsonl", rater="ada")
    for item, rating in zip(items, ["love", "okay", "reject", "okay", "love"]):
        log.record(item.id, rating)
    assert rating_summary(items, log) == {"items": 6, "rated": 5, "love": 2, "okay": 2,
                                          "reject": 1, "unrated": 1}
    view = summary_view(items, log, size=32)
    assert "love <b>2</b>" in view.children[0].value
    folder = write_rated_pool(items, log, tmp_path / "rated")
    ds = load_pool(folder)
    assert sorted(zip(ds["id"], ds["tier"])) == [("g0", "love"), ("g1", "okay"),
                                                  ("g3", "okay"), ("g4", "love")]
    assert set(ds["rated_by"]) == {"ada"}
    assert all(ds["rated_at"])
    # a pool needs both tiers
    lonely = RatingLog(tmp_path / "lonely.jsonl")
    lonely.record("g0", "love")
    with pytest.raises(PoolValidationError, match="tier 'okay' is empty"):
        write_rated_pool(items, lonely, tmp_path / "nope")


def test_rating_an_existing_pool_again(tmp_path):
    from pool_helpers import rows

    from watercolour.pool.dataset import write_pool_folder

    folder = write_pool_folder(rows(2, 2), tmp_path / "pool")
    items = items_from_pool(folder)
    assert [i.id for i in items] == ["p000", "p001", "p002", "p003"]
    assert items[0].meta["tier"] == "love" and items[0].sketch.startswith("function setup")
    w = RatingWidget(items, tmp_path / "again.jsonl", image_size=32)
    for rating in ("okay", "love", "reject", "okay"):
        w.rate(rating)
    rerated = load_pool(write_rated_pool(items, w.log, tmp_path / "mine"))
    assert list(rerated["tier"]) == ["okay", "love", "okay"]


def test_bad_input(items, tmp_path):
    with pytest.raises(ValueError, match="nothing to rate"):
        RatingWidget([], tmp_path / "r.jsonl")
    with pytest.raises(ValueError, match="unique"):
        RatingWidget([items[0], items[0]], tmp_path / "r.jsonl")
    w = RatingWidget(items, tmp_path / "r.jsonl", image_size=64)
    with pytest.raises(ValueError, match="rating must be one of"):
        w.rate("meh")


def test_the_keyboard_rates_as_the_buttons_do(items, tmp_path):
    path = tmp_path / "ratings.jsonl"
    w = RatingWidget(items, path, image_size=64)
    for key in ("1", "2", "3", "s", "u", "x"):  # x is no shortcut: ignored
        w.keys.value = key
        assert w.keys.value == ""  # emptied for the next key
    assert _log_actions(path) == [("g0", "love"), ("g1", "okay"), ("g2", "reject"),
                                  ("g3", "skip"), ("g3", "undo")]
    w.keys.value = "21"  # a fast typist's two keys arrive together
    assert w.ratings == {"g0": "love", "g1": "okay", "g2": "reject", "g3": "okay",
                         "g4": "love"}
    assert w.current.id == "g5"
