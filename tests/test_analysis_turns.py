"""The analysis of a run of multi-turn episodes: each turn's curve, the revision's paired gain
over the first attempt, and what the revisions changed in the rollout log."""

from __future__ import annotations

import csv
import json
import math
import statistics

import pandas as pd
import pytest

from watercolour.analysis import analyse, read_rollouts
from watercolour.analysis.turns import (
    episode_pairs,
    paired_gain,
    turn_columns,
    turn_curve_findings,
    turn_rollout_findings,
)


def curve(steps: int = 9, gain: float = 0.05) -> pd.DataFrame:
    """Turn 1 rises 0.01 a step; turn 2 is turn 1 plus ``gain`` plus a little alternating noise."""
    rows = []
    for s in range(steps):
        first = 0.4 + 0.01 * s
        rows.append({"step": s, "reward": first + gain, "reward_turn1": first,
                     "reward_turn2": first + gain + (0.01 if s % 2 else -0.01),
                     "revision_beats_first": 0.5 + 0.05 * s})
    return pd.DataFrame(rows)


def test_paired_gain_is_the_paired_t_of_the_differences():
    later = pd.Series([0.5, 0.7, 0.6, 0.9])
    earlier = pd.Series([0.4, 0.5, 0.6, 0.5])
    diff = [0.1, 0.2, 0.0, 0.4]
    expected = statistics.mean(diff) / (statistics.stdev(diff) / math.sqrt(4))
    found = paired_gain(later, earlier)
    assert found["n"] == 4 and found["mean"] == pytest.approx(0.175)
    assert found["t"] == pytest.approx(expected, rel=1e-5)
    # unknown values drop their pair; one pair has no spread to test
    assert paired_gain(pd.Series([0.5, None]), pd.Series([0.4, 0.1]))["t"] is None
    assert paired_gain(pd.Series([0.5, None]), pd.Series([0.4, 0.1]))["n"] == 1


def test_turn_curve_findings_by_turn_and_by_third():
    frame = curve()
    assert turn_columns(frame) == ["reward_turn1", "reward_turn2"]
    found = turn_curve_findings(frame)
    assert found["turns"] == 2
    first = found["by_turn"]["reward_turn1"]
    assert first["first"] == pytest.approx(0.41) and first["last"] == pytest.approx(0.47)
    assert first["slope"]["slope"] == pytest.approx(0.01) and first["slope"]["t"] is None
    last = found["revision_gain"]["last"]  # steps 6, 7, 8: gains 0.04, 0.06, 0.04
    assert last["n"] == 3 and last["mean"] == pytest.approx(0.14 / 3, abs=1e-6)
    assert last["t"] == pytest.approx((0.14 / 3) / (statistics.stdev([0.04, 0.06, 0.04])
                                                    / math.sqrt(3)), rel=1e-4)
    assert found["revision_gain"]["all"]["n"] == 9
    assert found["revision_beats_first"]["first"] == pytest.approx(0.55)
    # the revision made worse: the gain is negative, its t too
    worse = turn_curve_findings(curve(gain=-0.1))["revision_gain"]["all"]
    assert worse["mean"] < 0 and worse["t"] < 0


def test_a_single_turn_curve_has_no_turn_findings():
    frame = curve().drop(columns=["reward_turn2"])
    assert turn_curve_findings(frame) is None
    # a column with no value is not a turn
    assert turn_curve_findings(curve().assign(reward_turn2=float("nan"))) is None


def rollout(step, index, turn, reward, status="ok", sketch="a", n_shapes=10, paint=0.2):
    return {"step": step, "group": 0, "index": index, "turn": turn, "turns": 2,
            "reward": reward, "status": status, "sketch": sketch, "n_shapes": n_shapes,
            "paint_fraction": paint, "critique": "c"}


def test_episode_pairs_and_what_the_revisions_changed():
    rows = [
        # step 0: a rejected sketch repaired; a repeat of the same sketch
        rollout(0, 0, 1, 0.05, "rejected", "x", None, None), rollout(0, 0, 2, 0.7, "ok", "y"),
        rollout(0, 1, 1, 0.6, "ok", "same"), rollout(0, 1, 2, 0.6, "ok", " same "),
        # step 1: more shapes and paint, higher; a passing sketch broken
        rollout(1, 0, 1, 0.5, "ok", "a", 10, 0.2), rollout(1, 0, 2, 0.8, "ok", "b", 14, 0.3),
        rollout(1, 1, 1, 0.6, "ok", "a"), rollout(1, 1, 2, 0.05, "rejected", "bad", None, None),
        # step 2: an episode that ended at turn 1 (unavailable): no pair
        rollout(2, 0, 1, None, "unavailable", None, None, None),
        rollout(2, 1, 1, 0.4, "ok", "p", 8, 0.1), rollout(2, 1, 2, 0.5, "ok", "q", 8, 0.15),
    ]
    frame = pd.DataFrame(rows)
    pairs = episode_pairs(frame)
    assert len(pairs) == 5 and set(pairs.columns) >= {"reward_first", "reward_last"}
    found = turn_rollout_findings(frame)
    assert found["episodes_with_revision"] == 5
    assert found["outcomes_by_turn"] == {1: {"ok": 4, "rejected": 1, "unavailable": 1},
                                        2: {"ok": 4, "rejected": 1}}
    everything = found["all"]
    assert everything["repaired"] == 1 and everything["broken"] == 1
    assert everything["unchanged_sketch"] == pytest.approx(1 / 5)
    assert everything["revision_higher"] == pytest.approx(3 / 5)
    assert everything["revision_lower"] == pytest.approx(1 / 5)
    # shapes and paint change over the episodes ok at both ends: (0, 4, 0) and (0, .1, .05)
    assert everything["n_shapes_change"] == pytest.approx(4 / 3)
    assert everything["paint_fraction_change"] == pytest.approx(0.05)
    assert found["by_third"]["first"]["episodes"] == 2
    # a single-turn log has no turns
    assert turn_rollout_findings(frame.drop(columns=["turn"])) is None


def test_analyse_reports_turns_and_scores_rollouts_by_their_last_turn(tmp_path):
    frame = curve()
    path = tmp_path / "metrics.csv"
    frame.to_csv(path, index=False)
    log = tmp_path / "rollouts.jsonl"
    rows = []
    for s in range(9):
        for i in range(2):
            rows += [rollout(s, i, 1, 0.1), rollout(s, i, 2, 0.9, sketch="b")]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    analysis = analyse(path, log)
    assert analysis.turns["curve"]["turns"] == 2
    assert analysis.turns["rollouts"]["all"]["revision_higher"] == 1.0
    # the usual rollout findings are of the last turns: 18 episodes, none below 0.3
    assert analysis.rollouts["rollouts"] == 18
    assert all(b["count"] == 0 for b in analysis.rollouts["bad"].values())
    assert any("last turn" in note for note in analysis.notes)
    text = "\n".join(analysis.summary_lines())
    assert "reward_turn2:" in text and "paired t" in text
    # JSON-ready; the frame read_rollouts gives (with the pictures) is analysed as its path is
    json.dumps(analysis.to_dict())
    assert analyse(path, read_rollouts(log, pictures=True)).to_dict() == analysis.to_dict()
    # a single-turn curve and log: no turns
    single = tmp_path / "single.csv"
    with open(single, "w", newline="") as handle:
        writer = csv.DictWriter(handle, ["step", "reward"])
        writer.writeheader()
        writer.writerows({"step": s, "reward": 0.5} for s in range(9))
    assert analyse(single).turns is None
