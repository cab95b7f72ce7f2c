"""The judge's fixed yardstick: a run's admitted rollouts placed on the pool-fitted judge's own
scale, whatever references each step drew, and ``watercolour publish`` adding it to a run
rewarded by that judge."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from rewards_support import painting

from watercolour.analysis.yardstick import describe, score_rollouts, yardstick
from watercolour.rewards.judge.offline_judge import PoolFittedJudge
from watercolour.rewards.references import ReferencePool
from watercolour.train.publish import judge_yardstick

SUBJECT = "a peach hibiscus"


@pytest.fixture(scope="module")
def subject_pool() -> ReferencePool:
    rows = [{"id": f"love-{i}", "tier": "love", "subject": SUBJECT, "png": painting(i, "love")}
            for i in range(5)]
    rows += [{"id": f"okay-{i}", "tier": "okay", "subject": SUBJECT,
              "png": painting(100 + i, "okay")} for i in range(5)]
    rows += [{"id": f"daisy-{i}", "tier": "love", "subject": "a white daisy",
              "png": painting(200 + i, "love")} for i in range(3)]
    return ReferencePool.from_rows(rows, source="synthetic")


@pytest.fixture(scope="module")
def judge(subject_pool) -> PoolFittedJudge:
    return PoolFittedJudge.fit(subject_pool, per_kind=3)


def improving_run(steps: int = 9, per_step: int = 3) -> pd.DataFrame:
    """Hard, flat paintings early, soft layered washes late; the reward falls all the same
    (as it does when the references grow harder), and one rollout a step is rejected."""
    rows = []
    for step in range(steps):
        for i in range(per_step):
            kind = "okay" if step < steps // 3 else "love"
            rows.append({"step": step, "status": "ok", "subject": SUBJECT,
                         "png": painting(300 + 10 * step + i, kind),
                         "reward": 0.9 - 0.05 * step})
        rows.append({"step": step, "status": "rejected", "subject": SUBJECT, "png": None,
                     "reward": 0.0})
    return pd.DataFrame(rows)


def test_the_yardstick_rises_where_the_paintings_improve_though_the_reward_falls(
        subject_pool, judge, tmp_path):
    run = improving_run()
    found = yardstick(run, tmp_path, judge, subject_pool)
    assert found["rollouts"] == 27                      # the rejected rollouts are left out
    assert found["latent"]["last"] > found["latent"]["first"]
    assert found["wins"]["last"] > found["wins"]["first"]
    assert found["latent"]["t"] > 0 and found["wins_okay"]["t"] > 0
    for measure in ("wins", "wins_love", "wins_okay"):
        assert all(0.0 <= found[measure][t] <= 1.0 for t in ("first", "middle", "last"))
    # the scale: the subject's own paintings (5 love, 5 okay), not the daisies
    assert [len(found["pool"][SUBJECT][t]) for t in ("love", "okay")] == [5, 5]
    assert "latent" in describe(found) and "t " in describe(found)
    assert found["by_step"]["step"] == list(range(9))
    assert found["by_step"]["latent"][-1] > found["by_step"]["latent"][0]


def test_a_rollout_is_placed_by_what_it_shows_not_by_the_references_it_met(subject_pool, judge,
                                                                          tmp_path):
    love = painting(2, "love")       # a pool painting, measured leave-one-out
    run = pd.DataFrame([{"step": 0, "status": "ok", "subject": SUBJECT, "png": love,
                         "references": ["okay-0"]},
                        {"step": 1, "status": "ok", "subject": SUBJECT, "png": love,
                         "references": ["love-0", "love-1"]}])
    scored = score_rollouts(run, tmp_path, judge, subject_pool)
    assert scored["latent"].nunique() == 1 and scored["wins"].nunique() == 1
    expected = judge.quality(love, SUBJECT)
    assert scored["latent"].iloc[0] == pytest.approx(expected)
    okay = [judge.quality(p.png, SUBJECT) for p in subject_pool.tier("okay")]
    assert scored["wins_okay"].iloc[0] == pytest.approx(sum(expected > q for q in okay) / 5)


def test_a_subject_the_pool_lacks_has_no_wins_and_nothing_admitted_is_said(subject_pool, judge,
                                                                          tmp_path):
    run = pd.DataFrame([{"step": 0, "status": "ok", "subject": "a blue teapot",
                         "png": painting(1, "love")}])
    assert score_rollouts(run, tmp_path, judge, subject_pool)["wins"].isna().all()
    none = yardstick(run.assign(status="rejected"), tmp_path, judge, subject_pool)
    assert none["rollouts"] == 0 and "latent" not in none
    assert "no admitted rollout" in describe(none)


def test_publish_measures_only_a_pool_fitted_judges_run_and_says_when_its_pool_is_gone(
        tmp_path):
    run = improving_run(3, 1)
    (tmp_path / "run.json").write_text(json.dumps({"reward": {"judge": "openai",
                                                              "pool": "nowhere"}}))
    assert judge_yardstick(tmp_path, run, tmp_path) is None
    (tmp_path / "run.json").write_text(json.dumps({"reward": {"judge": "pool-fitted",
                                                              "pool": str(tmp_path / "gone")}}))
    note = judge_yardstick(tmp_path, run, tmp_path)
    assert isinstance(note, str) and "the run's pool cannot be read" in note
