"""The pool-fitted judge's fit is cached per pool content and configuration: a second start
with the same pool reads it, a changed pool or setting refits, a damaged file is refitted."""

from __future__ import annotations

import json

import pytest
from robust_support import flower, flower_pool

from watercolour.rewards import RewardConfig
from watercolour.rewards.backends import make_judge
from watercolour.rewards.features import FEATURES, critic_terms, paint_statistics
from watercolour.rewards.judge.offline_judge import PoolFittedJudge, fit_key
from watercolour.rewards.references import ReferencePool

PER_KIND = 2


@pytest.fixture(scope="module")
def pool():
    return flower_pool(3)


@pytest.fixture
def fits(monkeypatch):
    """Counts the real fits (the fit itself runs unchanged)."""
    calls = []
    real = PoolFittedJudge.fit.__func__

    def counted(cls, *args, **kwargs):
        calls.append(1)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(PoolFittedJudge, "fit", classmethod(counted))
    return calls


def _files(folder):
    return sorted(folder.glob("pool-fitted-*.json"))


def test_a_second_start_reads_the_cached_fit(pool, tmp_path, fits):
    first = PoolFittedJudge.fit_cached(pool, tmp_path, per_kind=PER_KIND)
    assert len(fits) == 1 and len(_files(tmp_path)) == 1
    second = PoolFittedJudge.fit_cached(pool, tmp_path, per_kind=PER_KIND)
    assert len(fits) == 1  # read, not fitted
    assert second.model.weights.tolist() == first.model.weights.tolist()
    love, okay = flower(30, "a peach hibiscus"), flower(31, "a peach hibiscus", "okay")
    assert second.probability(love, okay, "a peach hibiscus") == pytest.approx(
        first.probability(love, okay, "a peach hibiscus"))


def test_a_changed_pool_or_setting_refits(pool, tmp_path, fits):
    PoolFittedJudge.fit_cached(pool, tmp_path, per_kind=PER_KIND)
    rows = [{"id": p.id, "tier": "okay" if p.id == pool.paintings[0].id else p.tier,
             "subject": p.subject, "png": p.png} for p in pool.paintings]
    retiered = ReferencePool.from_rows(rows, source=pool.source)
    assert fit_key(retiered, per_kind=PER_KIND) != fit_key(pool, per_kind=PER_KIND)
    PoolFittedJudge.fit_cached(retiered, tmp_path, per_kind=PER_KIND)
    assert len(fits) == 2
    PoolFittedJudge.fit_cached(pool, tmp_path, per_kind=PER_KIND, l2=0.05)
    assert len(fits) == 3 and len(_files(tmp_path)) == 3
    PoolFittedJudge.fit_cached(pool, tmp_path, per_kind=PER_KIND)  # the first is still there
    assert len(fits) == 3


@pytest.mark.parametrize("damage", ["{not json", '{"key": "other", "model": {}}',
                                    '{"model": {"mean": []}}', ""])
def test_a_damaged_cache_file_is_refitted_not_a_crash(pool, tmp_path, fits, damage):
    PoolFittedJudge.fit_cached(pool, tmp_path, per_kind=PER_KIND)
    (path,) = _files(tmp_path)
    good = json.loads(path.read_text())
    path.write_text(damage)
    judge = PoolFittedJudge.fit_cached(pool, tmp_path, per_kind=PER_KIND)
    assert len(fits) == 2
    assert json.loads(path.read_text()) == good  # replaced by a sound fit
    assert judge.model.weights.tolist() == good["model"]["weights"]


def test_the_rewarders_judge_uses_the_configured_cache(pool, tmp_path, fits):
    config = RewardConfig(judge="pool-fitted", judge_cache=str(tmp_path / "cache"))
    make_judge(config, pool)
    make_judge(config, pool)
    assert len(fits) == 1 and len(_files(tmp_path / "cache")) == 1
    make_judge(RewardConfig(judge="pool-fitted", judge_cache=""), pool)
    assert len(fits) == 2


def test_the_weak_variants_are_measured_directly_and_bounded():
    good = {"paint_fraction": 0.2, "paint_luminance": 0.98, "paint_chroma": 0.2,
            "depth": 0.2, "tonal_range": 0.3, "centre_offset": 0.1, "edge_paint": 0.0}
    terms = critic_terms(good)
    assert all(v == 0.0 for k, v in terms.items() if k.startswith("near_"))
    assert terms["critic_score"] == pytest.approx(1.0)
    flawed = critic_terms({**good, "paint_fraction": 0.01, "tonal_range": 0.14,
                           "paint_luminance": 0.1})
    assert flawed["near_sparse"] == 1.0 and flawed["near_dark"] == 1.0
    assert 0.5 < flawed["near_flat"] < 1.0  # just past the critic's threshold
    assert flawed["critic_score"] < terms["critic_score"]
    measured = paint_statistics(flower(3, "a peach hibiscus"))
    assert set(FEATURES) <= set(measured)
    assert all(0.0 <= measured[k] <= 1.0 for k in terms)
