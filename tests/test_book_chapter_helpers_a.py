"""The chapters' plumbing (watercolour.book.chapters: medium, gates, pool, rollouts), on small
made-up inputs: what each helper computes, formats and draws."""

from __future__ import annotations

import base64
import io
import json
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from watercolour.book.chapters import gates, medium, pool, rollouts
from watercolour.gates import Expected, expected_verdicts
from watercolour.pool.log import GenerationLog
from watercolour.pool.rating import Item, RatingLog
from watercolour.render import RenderResult
from watercolour.rewards.record import ComponentScore, RewardRecord

matplotlib.use("Agg")


def _png(colour: tuple[int, int, int], size: int = 8, dot: bool = False) -> bytes:
    image = Image.new("RGB", (size, size), colour)
    if dot:
        image.putpixel((0, 0), (0, 0, 0))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _render(paint: float = 0.3, calls: dict[str, int] | None = None, total: float = 1.0,
            error: str | None = None, png: bool = True) -> RenderResult:
    return RenderResult(png=_png((200, 120, 90)) if png else None, paint_fraction=paint,
                        error=error, evidence={"brush_calls": calls or {}, "n_shapes": 3},
                        timings={"load_s": 0.5, "total_s": total})


# ---------------------------------------------------------------- the medium

SKETCH = """function setup() {
  createCanvas(64, 64, WEBGL);
}

function draw() {
  brush.circle(0, 0, 10);
}

function petal() {
  return 1;
}"""


def test_sketch_opening_stops_at_the_end_of_draw():
    text = medium.sketch_opening("demo", SKETCH)
    assert text.startswith("`demo.js`, 11 lines; the first 7:")
    assert "brush.circle" in text and "function petal" not in text
    assert text.endswith("… and 4 more lines of helper functions.")
    whole = medium.sketch_opening("short", "function draw() {\n}")
    assert "more lines" not in whole and "the first 2" in whole


def test_render_lines_and_tables_report_each_render():
    results = {"good": _render(0.25, {"circle": 4, "fill": 2}, total=2.0),
               "broken": _render(0.0, {"rect": 1}, total=4.0, error="TypeError: x\n at y",
                                 png=False)}
    lines = medium.render_lines(results).splitlines()
    assert lines[0].split() == ["good", "paint", "0.250", "2.00", "s", "ok"]
    assert lines[1].endswith("TypeError: x")
    calls = medium.calls_table(results, ("fill", "circle"))
    assert calls.splitlines()[0] == "| sketch | shapes | `fill` | `circle` | `rect` |"
    assert "| good | 3 | 2 | 4 | 0 |" in calls
    assert calls.endswith("**Outside the allowlist: ['rect']**")
    assert medium.calls_table({"good": results["good"]}, ("fill", "circle")).endswith(
        "All calls are on the allowlist.")
    timings = medium.timings_table(results, "llvmpipe")
    assert "| good | 0.50 | 0.00 | 0.00 | 0.00 | 0.00 | 2.00 |" in timings
    assert "Median 3.00 s per render on `llvmpipe`" in timings
    viewer = medium.render_viewer(results)
    assert len(viewer.children) == 1 and viewer.get_title(0) == "good"
    fig = medium.example_grid(results)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["good\npaint 0.25", "broken\npaint 0.00"]


class _Renderer:
    """Paints the same picture for the same seed, a dot more for another."""

    def render_many(self, codes, seeds):
        return [RenderResult(png=_png((90, 90, 200), dot=s != seeds[0])) for s in seeds]


def test_determinism_counts_the_differing_pixels_and_feeds_the_summary():
    same = medium.determinism(_Renderer(), "demo", "code", seed=4)
    assert (same.same_seed_diff, same.other_seed_diff) == (0, 1)
    assert str(same).splitlines() == ["demo, 8x8 pixels", "seed 4 twice: 0 differ",
                                      "seeds 4 and 5: 1 differ"]
    assert [ax.get_title() for ax in same.figure().axes][2] == "seed 5: 1 px differ"
    summary = medium.medium_summary({"good": _render(0.25, {"circle": 2})}, same, "gl",
                                    {"seed": 4})
    assert summary["identical_pixels"] is True
    assert summary["determinism"] == {"sketch": "demo", "differing_pixels_same_seed": 0,
                                      "differing_pixels_other_seed": 1}
    assert summary["examples"][0]["brush_calls"] == {"circle": 2}
    json.dumps(summary)

    class Blank:
        def render_many(self, codes, seeds):
            return [RenderResult(error="ReferenceError: brush")] * len(codes)

    with pytest.raises(RuntimeError, match="ReferenceError"):
        medium.determinism(Blank(), "demo", "code", 0)


# ---------------------------------------------------------------- the gates

STATIC = ["bare_primitives.js", "no_sketch_refusal.txt"]  # decided without a render


def test_fixtures_decided_from_the_code_alone_and_their_tables():
    cases = expected_verdicts()
    verdicts = gates.run_fixtures(STATIC, cases, renderer=None)
    assert verdicts["no_sketch_refusal.txt"].violations == ["no_sketch"]
    assert not verdicts["bare_primitives.js"].passed
    assert gates.mismatches(verdicts, cases) == {}
    wrong = {**cases, "bare_primitives.js": Expected()}  # expected admitted: a mismatch
    assert list(gates.mismatches(verdicts, wrong)) == ["bare_primitives.js"]
    table = gates.reasons_table(verdicts)
    assert "| `no_sketch_refusal.txt` | `no_sketch` | `no_sketch` |" in table
    assert gates.decision(verdicts["no_sketch_refusal.txt"]) == "`no_sketch`"
    texts = [t.get_text() for ax in gates.fixture_grid(verdicts).axes for t in ax.texts]
    assert any(t.startswith("no sketch") for t in texts)
    assert any(t.startswith("not rendered: the code decides") for t in texts)
    summary = gates.gates_summary(verdicts, cases, None, "prompt text", "gl",
                                  {"subject": "a lotus"}, methods=("circle",))
    assert summary["prompt"] == {"subject": "a lotus", "chars": 11, "methods": ["circle"]}
    assert summary["all_as_expected"] and summary["calibration_all_as_expected"] is None
    assert summary["fixtures"]["bare_primitives.js"]["rendered"] is False
    json.dumps(summary)


CALIBRATION = {
    "floors": {"paint_floor": 0.005, "speck_ceiling": 0.5, "edge_floor": 0.01,
               "flood_coverage": 0.25},
    "cases": [
        {"name": "example:lotus", "expected": "admitted", "paint_fraction": 0.3,
         "shape_edges": 0.2, "speck_fraction": 0.01, "violations": [], "as_expected": True},
        {"name": "flood", "expected": "rejected", "paint_fraction": 0.8, "shape_edges": 0.0,
         "speck_fraction": None, "violations": ["shapeless"], "as_expected": False},
        {"name": "crashed", "expected": "rejected", "paint_fraction": None,
         "shape_edges": None, "speck_fraction": None, "violations": ["js_error"],
         "as_expected": True},
    ],
}


def test_calibration_table_and_figure():
    table = gates.calibration_table(CALIBRATION)
    assert "| example:lotus | admitted | 0.3000 | 0.2000 | 0.010 | admitted |" in table
    assert "| flood | rejected | 0.8000 | 0.0000 | – | shapeless **(unexpected)** |" in table
    assert table.endswith("shape edges ≥ 0.01 once paint ≥ 0.25.")
    ax = gates.calibration_figure(CALIBRATION).axes[0]
    assert [t.get_text() for t in ax.texts] == ["lotus", "flood"]  # no point without measures
    assert ax.get_xscale() == "log"


def _observation(status: str, reward: float | None, turn: int = 1, done: bool = True,
                 png: bytes | None = None) -> SimpleNamespace:
    record = RewardRecord(reward=reward, status=status,
                          components={"gate": ComponentScore(raw=1.0), "hps": ComponentScore()})
    return SimpleNamespace(status=status, reward=reward, critique="too pale", turn=turn,
                           done=done, breakdown=record,
                           png_base64=base64.b64encode(png).decode() if png else None)


def test_episode_tables_figures_and_summary():
    observations = {"honest": _observation("ok", 0.61234),
                    "lost": _observation("unavailable", None)}
    table = gates.observations_table(observations)
    assert "| honest | ok | 0.612 | 1.00 | – | – | too pale |" in table
    assert "| lost | unavailable | null |" in table
    episode = [_observation("ok", 0.2, turn=1, done=False, png=_png((1, 2, 3))),
               _observation("ok", 0.5, turn=2)]
    fig = gates.turns_figure(episode)
    assert [ax.get_title() for ax in fig.axes] == ["turn 1: reward 0.200",
                                                    "turn 2: reward 0.500 (done)"]
    summary = gates.env_summary("http://x", observations, [SimpleNamespace(reward=0.0)],
                                {"hits": 1}, episode)
    assert summary["steps"]["lost"] == {"status": "unavailable", "reward": None,
                                        "critique": "too pale"}
    assert summary["group"] == [0.0] and summary["two_turns"][1]["done"] is True


def test_local_server_reports_a_server_that_exits(tmp_path):
    log = tmp_path / "serve.log"
    with pytest.raises(RuntimeError, match="the server exited"):
        gates.LocalServer(log, {"WATERCOLOUR_RENDER_WORKERS": "not a number"}, timeout_s=120)
    assert log.read_text()  # its own words are kept


# ---------------------------------------------------------------- the pool


def _build(folder, rounds: int = 2) -> None:
    """A build log: painting b's sketch changes in round 2, a's is reused from round 1."""
    log = GenerationLog(folder / "log")
    for pid, cached in (("a", "a-r1"), ("b", None)):
        for k in range(1, rounds + 1):
            log.append({"id": f"{pid}-r{k}", "painting_id": pid, "kind": "painting",
                        "subject": "a poppy", "score": 0.5 + k / 10, "issues": ["pale"],
                        "painter_meta": {"variant": "flat"},
                        "render": {"cached_from": cached if k > 1 else None}},
                       _png((10 * k, 80, 80)))


def test_pool_grid_shows_the_revised_paintings_first(tmp_path):
    _build(tmp_path)
    assert pool.revised_first(tmp_path, rounds=2) == ["b", "a"]
    assert pool.revised_first(tmp_path, rounds=1) == ["a", "b"]  # one round: none revised
    fig = pool.rounds_grid(tmp_path, 2, ["a"])
    assert [ax.get_title() for ax in fig.axes] == ["poppy (flat), round 1\nscore 0.60: pale",
                                                   "poppy (flat), round 2\nscore 0.70: pale"]
    text = pool.sketch_opening("a\nb\nc", "A good poppy", lines=2)
    assert text == "A good poppy, 3 lines; the first 2:\n\n```javascript\na\nb\n```"


def test_pool_tiers_text_and_figure():
    stats = {"rows": 3, "tiers": {"love": 1, "okay": 2}}
    text = pool.tiers_text(stats, {"pool": {"left_out": {}, "variants_by_tier": {"love": 1}}})
    assert "**3 paintings: love 1, okay 2.** Left out: none." in text
    rows = [{"tier": t, "subject": "a lotus", "image": np.zeros((4, 4, 3))}
            for t in ("okay", "love", "okay")]

    class Rows(list):
        def __getitem__(self, key):
            return [r[key] for r in self] if isinstance(key, str) else list.__getitem__(self, key)

    fig = pool.tiers_figure(Rows(rows))
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == [
        "love: lotus", "okay: lotus", "okay: lotus"]
    assert len(fig.axes) == 4  # two rows of two: the most paintings one tier has


def test_script_ratings_rates_as_the_rule_once(tmp_path):
    items = [Item(id=name, png=b"") for name in ("p1", "p2", "p3")]
    path = tmp_path / "ratings.jsonl"
    pool.script_ratings(items, path, {"p1": "love"}, count=2)
    assert RatingLog(path).ratings() == {"p1": "love", "p2": "reject"}
    pool.script_ratings(items, path, {"p1": "love"}, count=2)  # a rerun adds none
    assert len(RatingLog(path).events) == 2
    assert {e["rater"] for e in RatingLog(path).events} == {"book-script"}
    assert pool.script_ratings(items, tmp_path / "none.jsonl", {}, count=0).ratings() == {}


def test_the_rated_pool_sentence_names_the_readers_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "build").mkdir()
    log = RatingLog(tmp_path / "build" / "ratings.jsonl")
    path, said = pool.rated_pool([Item(id="p1", png=b"")], log, tmp_path / "rated", 4)
    assert path is None
    assert "the ratings in build/ratings.jsonl" in said and str(tmp_path) not in said


def test_pool_summary_carries_the_build_and_the_ratings(tmp_path):
    result = SimpleNamespace(generations=14, new_generations=0, summary={
        "render_cache_hits": 3, "score_by_round": {"1": 0.5}, "negatives": {"blank": 1}})
    items = [Item(id="p1", png=b"")]
    log = RatingLog(tmp_path / "r.jsonl")
    log.record("p1", "okay")
    summary = pool.pool_summary(result, 1.234, {"rows": 1}, items, log,
                                {"path": None, "said": "not yet", "references": 4}, ["p1"],
                                {"seed": 0})
    assert summary["build_seconds"] == 1.23 and summary["generations"] == 14
    assert summary["rating"]["okay"] == 1 and summary["rated_pool"]["references"] == 4
    assert summary["grid"] == ["p1"]
    json.dumps(summary)


# ---------------------------------------------------------------- the rollouts


def _frame(tmp_path) -> pd.DataFrame:
    (tmp_path / "png").mkdir()
    (tmp_path / "png" / "a.png").write_bytes(_png((1, 2, 3)))
    return pd.DataFrame([
        {"step": 0, "index": 0, "reward": 0.0, "status": "rejected",
         "violations": ["no_sketch"], "png": None, "sketch": None, "completion": "I cannot"},
        {"step": 0, "index": 1, "reward": 0.4, "status": "ok", "violations": [],
         "png": "png/a.png", "sketch": "// a", "breakdown": json.dumps({"components": {
             "hps": {"raw": 0.5, "weight": 0.8, "contribution": 0.4}}})},
        {"step": 1, "index": 0, "reward": 0.4, "status": "ok", "violations": [],
         "png": None, "sketch": "// b"},
        {"step": 1, "index": 1, "reward": None, "status": "unavailable", "violations": [],
         "png": None, "sketch": "// c"},
    ])


def test_rollout_outcomes_tables_and_the_best(tmp_path):
    frame = _frame(tmp_path)
    statuses, violations = rollouts.outcomes(frame)
    assert statuses == {"ok": 2, "rejected": 1, "unavailable": 1}
    assert violations == {"no_sketch": 1}
    assert rollouts.steps_table(frame).splitlines()[2:] == ["| 0 | 2 | 0.200 | 0.400 |",
                                                            "| 1 | 1 | 0.400 | 0.400 |"]
    ranked = rollouts.ranked(frame)
    assert list(zip(ranked["step"], ranked["index"])) == [(1, 0), (0, 1), (0, 0)]
    best = rollouts.best_rollout(frame)
    assert best["sketch"] == "// b"  # the last of equal rewards
    assert rollouts.sketch_or_reply(best) == "// b"
    assert rollouts.sketch_or_reply(frame.iloc[0]) == "(no sketch: the reply was 'I cannot')"
    assert "| hps | 0.500 | 0.800 | 0.400 |" in rollouts.breakdown_table(frame.iloc[1])
    summary = rollouts.rollouts_summary(frame, tmp_path, best, "g/index.html", None, {"top": 2})
    assert summary["best"] == {"step": 1, "index": 0, "reward": 0.4}
    assert summary["with_picture"] == 1 and summary["steps"] == 2
    assert summary["status"]["unavailable"] == 1
    json.dumps(summary)


def test_rollout_figures(tmp_path):
    frame = _frame(tmp_path)
    ax = rollouts.reward_scatter(frame).axes[0]
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == [
        "ok (2)", "rejected (1)", "unavailable (1)"]
    fig = rollouts.strip(frame.head(2), "two", tmp_path)
    assert fig.axes[0].texts[0].get_text() == "no picture"
    assert fig.axes[1].images and fig.axes[1].get_title() == "step 0 #1\n0.40 · ok"
    assert rollouts.strip(frame.head(0), "none", tmp_path).axes  # one empty panel


def test_only_a_tiny_run_is_trained_here(tmp_path):
    with pytest.raises(ValueError, match="trains on a GPU"):
        rollouts.train_tiny(tmp_path, "smoke-4b")
    assert not list(tmp_path.iterdir())
