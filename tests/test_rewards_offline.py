"""The embedded backends: the pool-fitted judge and the banded aesthetic scorer, on small
synthetic paintings (no browser)."""

from __future__ import annotations

import pytest
from rewards_support import painting, pool

from watercolour.rewards.features import FEATURES, paint_statistics
from watercolour.rewards.hps.offline import PARTS, PoolBandedAestheticScorer, aesthetic_parts
from watercolour.rewards.judge.offline_judge import (
    DEGRADATIONS,
    PoolFittedJudge,
    degrade,
    held_out_accuracy,
)


@pytest.fixture(scope="module")
def ref_pool():
    return pool(6, 6)


@pytest.fixture(scope="module")
def judge(ref_pool):
    return PoolFittedJudge.fit(ref_pool, per_kind=3)


def test_measurements_cover_the_medium():
    m = paint_statistics(painting(1))
    assert set(m) == set(FEATURES)
    soft, hard = paint_statistics(painting(2, "love")), paint_statistics(painting(2, "okay"))
    assert soft["softness"] > hard["softness"]          # bled edges are ramps
    assert soft["translucency"] > hard["translucency"]  # light washes
    assert paint_statistics(painting(0, "blank"))["paint_fraction"] == 0.0


def test_the_fitted_judge_learns_the_tiers_and_answers_the_pairwise_question(judge):
    love, okay, blank = painting(40, "love"), painting(41, "okay"), painting(0, "blank")
    assert judge.compare(love, okay).winner == "first"
    assert judge.compare(okay, love).winner == "second"
    assert judge.compare(okay, blank).winner == "first"
    vote = judge.compare(love, okay)
    assert vote.probability > 0.5 and vote.error is None
    assert judge.compare(love, love).winner == "first"  # a tie goes to the first picture


def test_the_fit_is_deterministic_and_serialisable(ref_pool, judge):
    again = PoolFittedJudge.fit(ref_pool, per_kind=3)
    assert again.model.weights.tolist() == judge.model.weights.tolist()
    copy = PoolFittedJudge.from_json(judge.to_json())
    x = painting(7)
    assert copy.quality(x) == pytest.approx(judge.quality(x))
    # two degraded copies per painting, three of each of the six form-destroying kinds,
    # two of each of the seven abstract families
    assert judge.model.fitted_on["negative"] == 2 * 12 + 6 * 3 + 7 * 2
    assert {f"clip:{f}" for f in FEATURES} <= set(judge.model.importance())


def test_degraded_copies_are_worse(judge):
    source = painting(5)
    for kind in DEGRADATIONS:
        assert judge.quality(degrade(source, kind)) < judge.quality(source), kind
    with pytest.raises(ValueError):
        degrade(source, "sepia")


def test_held_out_accuracy_is_measured_by_painting(ref_pool):
    report = held_out_accuracy(ref_pool, folds=3, per_kind=2)
    assert report["folds"] == 3 and report["paintings"] == 12
    assert report["love_vs_okay"]["ordered_pairs"] > 0
    assert report["love_vs_okay"]["accuracy"] >= 0.9  # synthetic tiers are easy
    assert report["pool_vs_negative"]["accuracy"] is None  # no real negatives here


def test_the_offline_scorer_prefers_a_painting_to_bare_paper():
    scorer = PoolBandedAestheticScorer()
    blank, wash = scorer.score([painting(0, "blank"), painting(3)], "ignored")
    assert blank.mu == blank.unit == 0.0 and blank.sigma is None
    assert 0.0 < wash.unit <= 1.0
    assert "not a learned preference model" in scorer.name
    assert set(aesthetic_parts(painting(3))) == set(PARTS)
