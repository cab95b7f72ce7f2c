"""The pool-building pipeline on the embedded default, with real renders: an interrupted build
resumes with nothing lost and nothing done twice, even after a torn write."""

from __future__ import annotations

import json
import threading

import pytest

from watercolour.pool.build import BuildConfig, build_pool, plan_jobs
from watercolour.pool.dataset import load_pool, pool_stats
from watercolour.pool.painters import PaintRequest, ProceduralPainter
from watercolour.pool.rating import items_from_build
from watercolour.pool.tiers import assign_tiers


class CountingPainter(ProceduralPainter):
    """The procedural painter, counting its calls; optionally crashing after ``crash_after``."""

    def __init__(self, crash_after: int | None = None) -> None:
        super().__init__()
        self.crash_after = crash_after
        self.calls: list[tuple[int, int]] = []
        self._lock = threading.Lock()

    def paint(self, request: PaintRequest):
        with self._lock:
            if self.crash_after is not None and len(self.calls) >= self.crash_after:
                raise RuntimeError("simulated crash")
            self.calls.append((request.seed, request.round))
        return super().paint(request)


def _lines(path):
    return path.read_text().splitlines()


def test_the_tier_rule():
    finals = [
        {"id": "a", "status": "ok", "score": 0.9, "issues": [], "painter_meta": {"variant": "good"}},
        {"id": "b", "status": "ok", "score": 0.95, "issues": [], "painter_meta": {"variant": "flat"}},
        {"id": "c", "status": "ok", "score": 0.8, "issues": ["dark"]},
        {"id": "d", "status": "ok", "score": 0.7, "issues": []},
        {"id": "e", "status": "ok", "score": 0.3, "issues": []},
        {"id": "f", "status": "ok", "score": 0.9, "issues": ["blank"]},
        {"id": "g", "status": "sketch_error", "score": 0.0, "issues": ["broken"]},
    ]
    tiers = {d.id: d.tier for d in assign_tiers(finals)}
    # eligible: a b c d (4) -> at most ceil(4/3) = 2 love, from candidates a and d
    assert tiers == {"a": "love", "b": "okay", "c": "okay", "d": "love", "e": None,
                     "f": None, "g": None}


def test_jobs_are_deterministic_and_spread_over_painters():
    class Other(ProceduralPainter):
        name = "other"

    jobs = plan_jobs(BuildConfig(size=4, seed=2), [ProceduralPainter(), Other()])
    assert [j.painting_id for j in jobs] == ["procedural-0000", "other-0001",
                                             "procedural-0002", "other-0003"]
    assert [j.seed for j in jobs] == [200_000, 200_001, 200_002, 200_003]
    assert jobs[0].gen_id(3) == "procedural-0000-r3"
    with pytest.raises(ValueError, match="names must differ"):
        plan_jobs(BuildConfig(size=2), [ProceduralPainter(), ProceduralPainter()])


@pytest.mark.browser
def test_an_interrupted_build_resumes_without_loss_or_repeats(renderer, tmp_path):
    out = tmp_path / "pool-build"
    config = BuildConfig(out=str(out), size=6, rounds=2, canvas=192, negatives=1,
                         concurrency=2, progress=False)
    expected = {f"procedural-{i:04d}-r{r}" for i in range(6) for r in (1, 2)} | {
        f"negative-{k}-0" for k in ("blank", "blob", "scribble", "faint", "grey", "off_canvas")}

    # 1. a crash after five paint calls
    crashing = CountingPainter(crash_after=5)
    with pytest.raises(RuntimeError, match="simulated crash"):
        build_pool(config, painters=[crashing], renderer=renderer)
    log = out / "log" / "generations.jsonl"
    before = _lines(log)
    first_ids = [json.loads(line)["id"] for line in before]
    paintings_before = [i for i in first_ids if i.startswith("procedural")]
    assert 1 <= len(paintings_before) <= 5
    assert len(set(first_ids)) == len(first_ids)
    for gen_id in first_ids:  # every logged generation has its render on disk
        assert (out / "log" / "renders" / f"{gen_id}.png").is_file()
    assert not (out / "pool").exists()

    # 2. the process also died while writing a record: a torn line, an orphan PNG
    with open(log, "ab") as handle:
        handle.write(b'{"id": "procedural-0005-r2", "kind": "pai')
    (out / "log" / "renders" / "procedural-0005-r2.png").write_bytes(b"half")

    # 3. resume
    resumed = CountingPainter()
    result = build_pool(config, painters=[resumed], renderer=renderer)
    after = _lines(log)
    assert after[: len(before)] == before  # nothing rewritten
    ids = [json.loads(line)["id"] for line in after]
    assert len(ids) == len(set(ids)) == len(expected)  # nothing twice
    assert set(ids) == expected  # nothing lost
    assert len(resumed.calls) == 12 - len(paintings_before)
    assert result.new_generations == len(expected) - len(first_ids)
    assert result.generations == len(expected)

    # every round was critiqued; round 2 sees round 1's issues
    records = {json.loads(line)["id"]: json.loads(line) for line in after}
    for i in range(6):
        r1, r2 = records[f"procedural-{i:04d}-r1"], records[f"procedural-{i:04d}-r2"]
        assert r1["status"] == r2["status"] == "ok"
        assert r1["critique"] and r1["score"] is not None
        assert r2["painter_meta"]["revisions"] == r1["issues"][:2] or not r1["issues"]
    assert any(r["render"].get("cached_from") for r in records.values())  # unchanged sketch

    # 4. the pool
    pool = load_pool(out)
    stats = pool_stats(pool)
    assert stats["rows"] == result.pool_rows == sum(result.tiers.values())
    assert result.tiers["love"] >= 1 and result.tiers["okay"] >= 1
    assert set(pool["round"]) == {2}
    assert set(pool["rated_by"]) == {"synthetic:final-round-score-v1"}
    assert "A synthetic pool" in (out / "pool" / "README.md").read_text()
    negatives = load_pool(out / "negatives", check=False)
    assert sorted(negatives["kind"]) == sorted(k.split("-")[1] for k in expected
                                               if k.startswith("negative"))
    summary = json.loads((out / "build.json").read_text())
    assert summary["pool"]["tiers"] == result.tiers
    assert set(summary["score_by_round"]) == {"1", "2"}

    # 5. a third run has nothing to do
    idle = CountingPainter()
    again = build_pool(config, painters=[idle], renderer=renderer)
    assert idle.calls == [] and again.new_generations == 0
    assert _lines(log) == after

    # 6. the folder belongs to this build: other parameters would mix two builds
    with pytest.raises(ValueError, match="made with seed 0 \\(now 1\\)"):
        build_pool(BuildConfig(out=str(out), size=6, rounds=2, canvas=192, seed=1),
                   renderer=renderer)

    # 7. what a person would rate: the final round of each painting
    items = items_from_build(out)
    assert sorted(i.id for i in items) == sorted(f"procedural-{i:04d}-r2" for i in range(6))
