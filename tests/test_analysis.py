"""The analysis of a run: thirds, findings from curves and rollouts, the CLI, and the
reproduction's published figures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from watercolour.analysis import (
    analyse,
    published_curve,
    read_curve,
    read_rollouts,
    slope_t,
    third_of_steps,
    thirds_means,
)

# ---------------------------------------------------------------- the write-up's figures


def test_published_curves_reproduce_the_write_ups_figures():
    only = analyse(published_curve("hps-only"))
    led = analyse(published_curve("hps-led"))
    assert only.findings["steps"] == 60 and led.findings["steps"] == 110
    # group reward, first third -> last third: hps-only 0.58 -> 0.71, hps-led 0.57 -> 0.82
    assert round(only.thirds["reward"]["first"], 2) == 0.58
    assert round(only.thirds["reward"]["last"], 2) == 0.71
    assert round(led.thirds["reward"]["first"], 2) == 0.57
    assert round(led.thirds["reward"]["last"], 2) == 0.82
    # paint coverage hps-led 0.13 -> 0.30
    assert round(led.findings["coverage"]["first"], 2) == 0.13
    assert round(led.findings["coverage"]["last"], 2) == 0.30
    # no group ever collapsed
    for run in (only, led):
        assert run.findings["collapsed"]["steps_with_collapse"] == 0
        assert run.findings["collapsed"]["max"] == 0.0
        assert run.findings["reward_slope"]["t"] > 3  # the reward rose, clearly
    assert set(led.findings["components"]) == {"judge_mean", "quality_mean", "length_mean",
                                               "paint_fraction_mean"}


# ---------------------------------------------------------------- thirds and slope


def test_thirds_split_steps_into_consecutive_equal_as_possible_parts():
    parts = third_of_steps(list(range(10)))
    assert parts.tolist() == ["first"] * 4 + ["middle"] * 3 + ["last"] * 3
    # repeated steps (rollouts) fall in the third of their step
    assert third_of_steps([0, 0, 1, 1, 2, 2]).tolist() == ["first", "first", "middle",
                                                           "middle", "last", "last"]


def test_thirds_means_and_slope_on_a_known_line():
    import pandas as pd

    frame = pd.DataFrame({"step": range(9), "reward": [0.1 * s for s in range(9)]})
    means = thirds_means(frame)
    assert means["reward"] == pytest.approx({"first": 0.1, "middle": 0.4, "last": 0.7})
    fit = slope_t(frame["step"], frame["reward"])
    assert fit["slope"] == pytest.approx(0.1) and fit["t"] is None  # a perfect line: no error
    noisy = slope_t(range(6), [0, 1, 0, 1, 0, 1])
    assert noisy["slope"] == pytest.approx(3 / 35) and 0 < noisy["t"] < 2


# ---------------------------------------------------------------- curves with a subset


def test_a_curve_with_a_subset_of_the_columns(tmp_path):
    curve = tmp_path / "curve.csv"
    curve.write_text("step,reward,note\n0,0.1,a\n1,0.2,b\n2,0.3,c\n3,0.6,d\n4,0.5,e\n5,0.7,f\n")
    result = analyse(curve)
    assert set(result.thirds) == {"reward"}  # the text column is dropped
    assert result.thirds["reward"] == pytest.approx({"first": 0.15, "middle": 0.45,
                                                     "last": 0.6})
    notes = " ".join(result.notes)
    for missing in ("paint_fraction_mean", "frac_reward_zero_std", "step_time", "rollouts"):
        assert missing in notes
    assert "coverage" not in result.findings and "collapsed" not in result.findings


def test_a_curve_without_a_step_column_uses_row_order(tmp_path):
    curve = tmp_path / "curve.csv"
    curve.write_text("judge_mean\n0.1\n0.2\n0.9\n")
    result = analyse(curve)
    assert result.thirds["judge_mean"] == pytest.approx({"first": 0.1, "middle": 0.2,
                                                        "last": 0.9})
    assert "reward" in " ".join(result.notes)


def test_bad_curves_get_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="curve not found"):
        read_curve(tmp_path / "missing.csv")
    text = tmp_path / "words.csv"
    text.write_text("name\nalpha\nbeta\n")
    with pytest.raises(ValueError, match="no numeric columns"):
        read_curve(text)


# ---------------------------------------------------------------- rollouts

REWARDS = {  # step -> the group's rewards (None: unavailable)
    0: [0.1, 0.1, 0.5, 0.5], 1: [0.1, 0.1, 0.5, 0.5, None],
    2: [0.1, 0.5, 0.5, 0.5], 3: [0.1, 0.5, 0.5, 0.5],
    4: [0.5, 0.5, 0.5, 0.5], 5: [0.5, 0.5, 0.7, 0.7],
}


def _rollouts() -> list[dict]:
    rows = []
    for step, rewards in REWARDS.items():
        for index, reward in enumerate(rewards):
            status = "unavailable" if reward is None else ("ok" if reward >= 0.3 else "rejected")
            rows.append({
                "step": step, "group": 0, "index": index, "seed": 100 * step + index,
                "prompt": "Paint a peach hibiscus.", "completion": "```js\n...\n```",
                "sketch": "function setup(){}", "png": b"\x89PNG fake".hex(),
                "reward": reward, "components": {"gate": 1.0, "judge": reward or 0.0},
                "status": status, "violations": [] if status != "rejected" else ["blank"],
                "paint_fraction": None if reward is None else reward / 2,
                "n_shapes": None if reward is None else round(reward * 20),
                "references": [f"love-{step % 2}", "okay-0"],
            })
    return rows


@pytest.fixture
def rollouts_jsonl(tmp_path):
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rollouts()))
    return path


@pytest.fixture
def curve_csv(tmp_path):
    path = tmp_path / "curve.csv"
    lines = ["step,reward,frac_reward_zero_std"]
    for step, rewards in REWARDS.items():
        scored = [r for r in rewards if r is not None]
        lines.append(f"{step},{sum(scored) / len(scored)},{1.0 if len(set(scored)) == 1 else 0}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rollout_findings_on_a_known_run(curve_csv, rollouts_jsonl):
    result = analyse(curve_csv, rollouts_jsonl)
    r = result.rollouts
    assert r["rollouts"] == 25 and r["scored"] == 24 and r["unavailable"] == 1
    assert r["status"] == {"ok": 18, "rejected": 6, "unavailable": 1}
    assert {t: v["count"] for t, v in r["bad"].items()} == {"first": 4, "middle": 2, "last": 0}
    assert r["bad"]["first"]["share"] == pytest.approx(0.5)
    # mean 0.30 -> 0.55: at the average gap (0.425) the good share rising 0.5 -> 1 gives 0.2125
    gain = r["bad_becoming_rare"]
    assert gain["gain"] == pytest.approx(0.25)
    assert gain["from_fewer_bad"] == pytest.approx(0.2125)
    assert gain["from_fewer_bad"] + gain["from_better_paintings"] == pytest.approx(0.25)
    assert gain["share"] == pytest.approx(0.85)
    # best of step 0.5, 0.5 -> 0.5, 0.7; median 0.3, 0.3 -> 0.5, 0.6
    assert r["best_vs_median"]["best"]["moved"] == pytest.approx(0.1)
    assert r["best_vs_median"]["median"]["moved"] == pytest.approx(0.25)
    assert r["ceiling"]["mean_if_all_good"] == pytest.approx(0.55)
    # the sketches that passed: 0.5 at every step but the last (0.6); 18 of the 24 scored
    passed = r["passed"]
    assert passed["reward"] == pytest.approx({"first": 0.5, "middle": 0.5, "last": 0.55})
    assert passed["slope"]["slope"] > 0 and passed["slope"]["n"] == 6
    assert passed["share_of_rollouts"] == pytest.approx(0.75)
    assert r["n_shapes_correlation"] == pytest.approx(1.0)
    assert r["coverage"]["first"] == pytest.approx(0.15)
    assert r["collapsed_groups"] == {"groups": 6, "collapsed": 1}  # step 4: all 0.5
    assert result.findings["collapsed"]["steps_with_collapse"] == 1
    draw = r["reference_draw"]
    assert draw["references"] == 3
    by_ref = {e["reference"]: e for e in draw["largest"]}
    assert by_ref["okay-0"]["steps"] == 6
    assert by_ref["okay-0"]["effect"] == pytest.approx(0.0, abs=1e-9)  # drawn every step
    # steps drawing love-0 (0, 2, 4) and love-1 (1, 3, 5) sit on opposite sides of the trend
    assert by_ref["love-0"]["effect"] == pytest.approx(-by_ref["love-1"]["effect"])
    assert not any("rollouts" in n for n in result.notes)


def test_learning_checks_on_a_known_run(curve_csv, rollouts_jsonl):
    from watercolour.analysis.findings import learning_checks

    result = analyse(curve_csv, rollouts_jsonl)
    checks = learning_checks(result.findings, result.rollouts)
    # step means 0.3, 0.3, 0.4, 0.4, 0.5, 0.6; bad 4 -> 0; step 4's group is all 0.5
    assert checks == {"last_third_above_first": True, "slope_t_at_least": True,
                      "fewer_bad_in_last_third": True, "zero_std_never_1": False}
    t = result.findings["reward_slope"]["t"]
    assert learning_checks(result.findings, result.rollouts, min_slope_t=t + 1)[
        "slope_t_at_least"] is False
    assert set(learning_checks({}, {}).values()) == {None}


def test_a_run_too_short_to_judge_says_so_instead_of_answering(curve_csv, rollouts_jsonl):
    from watercolour.analysis.findings import MIN_STEPS_TO_JUDGE, describe_learning

    result = analyse(curve_csv, rollouts_jsonl)  # 6 steps: two a third
    words = describe_learning(result.findings, result.rollouts)
    assert words.startswith("too few steps to judge (6;") and "slope" not in words
    assert any(line.strip().startswith("learned? too few steps") for line in result.summary_lines())
    long_enough = {**result.findings, "steps": MIN_STEPS_TO_JUDGE}
    assert describe_learning(long_enough, result.rollouts) == (
        "last third above the first: yes, slope t >= 3: yes, fewer bad rollouts in the last "
        "third: yes, frac_reward_zero_std never 1: no")


def test_rollouts_read_the_same_from_jsonl_and_a_datasets_folder(tmp_path, rollouts_jsonl):
    import datasets

    rows = _rollouts()
    for row in rows:
        row["png"] = bytes.fromhex(row["png"])
    folder = tmp_path / "rollouts"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    from_disk, from_jsonl = read_rollouts(folder), read_rollouts(rollouts_jsonl)
    assert "png" not in from_disk.columns and "png" in read_rollouts(folder, pictures=True)
    assert from_disk["reward"].isna().sum() == 1
    assert from_disk["reward"].fillna(-1).tolist() == from_jsonl["reward"].fillna(-1).tolist()
    # a torn last line (a crash mid-write) is dropped, not fatal
    torn = tmp_path / "torn.jsonl"
    torn.write_text(rollouts_jsonl.read_text() + '{"step": 6, "rew')
    assert len(read_rollouts(torn)) == 25
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"reward": 0.1}\n')
    with pytest.raises(ValueError, match="no step column"):
        read_rollouts(bad)


# ---------------------------------------------------------------- the CLI


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "watercolour", "analyse", *args],
                          capture_output=True, text=True, timeout=120)


def test_cli_json_has_thirds_for_every_numeric_column(curve_csv, rollouts_jsonl):
    proc = _cli(str(published_curve("hps-led")), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    columns = read_curve(published_curve("hps-led")).columns.drop("step")
    assert set(out["thirds"]) == set(columns)
    assert all(set(v) == {"first", "middle", "last"} for v in out["thirds"].values())
    assert round(out["thirds"]["reward"]["last"], 2) == 0.82
    proc = _cli(str(curve_csv), "--rollouts", str(rollouts_jsonl), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rollouts"]["bad"]["last"]["count"] == 0
    human = _cli("hps-only")
    assert human.returncode == 0 and "0.579 -> 0.637 -> 0.710" in human.stdout
    assert "last third above the first: yes" in human.stdout
    human = _cli(str(curve_csv), "--rollouts", str(rollouts_jsonl))
    assert "learned? too few steps to judge (6;" in human.stdout  # the fixture's 6 steps


def test_cli_bad_input_is_one_line(tmp_path):
    proc = _cli(str(tmp_path / "nope.csv"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "curve not found" in proc.stderr


def test_slot_backends_names_what_filled_the_model_slots(tmp_path):
    from watercolour.analysis.curves import slot_backends

    assert slot_backends(tmp_path) == "backends not recorded"
    (tmp_path / "run.json").write_text('{"reward": {"judge": "openai", "hps": "hpsv3-service"}}')
    assert slot_backends(tmp_path) == "judge: openai, hps: hpsv3-service"
