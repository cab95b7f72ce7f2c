"""The plumbing of chapters 06-08 (``watercolour.book.chapters.smoke``, ``.full_run``,
``.analysis``): what each helper builds from real files (the committed tiny runs, the published
curves) or small ones written here."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pandas as pd
import pytest
from pool_helpers import png, rows

from watercolour.analysis import analyse, published_curve
from watercolour.book.chapters import analysis, full_run, smoke
from watercolour.pool.dataset import write_pool_folder
from watercolour.train.tiny.runs import RESULTS

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------- 06: the smoke run


def _curriculum_run(folder: Path, schedule: str | None, shares: list[float],
                    half: list[float], love: list[float | None]) -> None:
    folder.mkdir(parents=True)
    run = {"config": {"run": {"references_schedule": schedule}}}
    (folder / "run.json").write_text(json.dumps(run))
    pd.DataFrame({"step": range(len(shares)), "reward": [0.5] * len(shares),
                  "references_love_share": shares}).to_csv(folder / "metrics.csv", index=False)
    thirds = {"first": 0.5, "middle": 0.6, "last": 0.7}
    (folder / "analysis.json").write_text(json.dumps({"findings": {"reward": thirds}}))
    for name, values in (("final-eval.json", half), (smoke.LOVE_ONLY_EVAL, love)):
        (folder / name).write_text(json.dumps({"rows": [{"reward": v} for v in values]}))


def test_the_curriculum_comparison_reads_both_runs_and_their_love_only_evaluations(tmp_path):
    assert smoke.curriculum_comparison(tmp_path) == ("", {})  # nothing committed: no table
    _curriculum_run(tmp_path / "judge-led", None, [0.5, 0.5], [0.6, 0.8], [0.4, 0.6])
    assert smoke.curriculum_comparison(tmp_path) == ("", {})  # one run alone: no table
    _curriculum_run(tmp_path / "judge-led-curriculum", "linear:0.5:1.0", [0.5, 1.0],
                    [0.7, 0.9], [0.6, 0.8, None])  # an unavailable sample is left out
    table, record = smoke.curriculum_comparison(tmp_path)
    assert record["judge-led"]["schedule"] == "half"
    assert record["judge-led-curriculum"]["last_love_share"] == 1.0
    assert record["judge-led"]["love_mean"] == 0.5
    assert record["judge-led-curriculum"]["love_mean"] == 0.7
    assert record["love_only_t"] == pytest.approx(0.2 / (0.02 / 2 + 0.02 / 2) ** 0.5, abs=0.01)
    assert "`linear:0.5:1.0`" in table and "0.700 ± 0.141 (n 2)" in table
    sentence = smoke.curriculum_sentence(record)
    assert "averages 0.700 and the constant run's 0.500: higher" in sentence
    assert smoke.curriculum_sentence({}) == ""
    assert smoke.welch_t([1.0], [2.0, 3.0]) is None
    assert smoke.welch_t([1.0, 1.0], [1.0, 1.0]) is None


def test_the_committed_results_default_to_the_shipped_runs(tmp_path):
    assert smoke.committed_results() == RESULTS
    assert smoke.committed_results(str(tmp_path)) == tmp_path


def test_the_warm_start_is_described_from_its_record(tmp_path):
    (tmp_path / "warm-start.json").write_text(json.dumps(
        {"key": "abc", "parameters": 4_200_000, "seconds": 1234.4, "config": {"steps": 1600},
         "losses": [5.123, 0.456]}))
    line, record = smoke.describe_warm_start(tmp_path, 0.25)
    assert line == ("4.2M parameters; 1600 SFT steps (built in 1234 s; read from the cache in "
                    "0.2 s); SFT loss 5.12 -> 0.46")
    assert record == {"key": "abc", "parameters": 4_200_000, "seconds": 1234.4}


def test_the_evaluations_table_and_record_come_from_the_committed_files():
    evaluations = smoke.read_evaluations(RESULTS)
    assert [name for name, _, _ in evaluations] == [n for n, _ in smoke.EVALUATIONS]
    table = smoke.evaluation_table(evaluations).splitlines()
    assert len(table) == 2 + len(evaluations)
    assert table[0] == "| model | T / top-p | scored by | passed | reward | rejected for |"
    assert table[1] == "|---|---|---|---:|---:|---|"  # counts and rewards right-aligned
    untrained = json.loads((RESULTS / "untrained-eval.json").read_text())
    assert table[2].startswith("| random weights | 1.0 / 1.0 | judge-led |")
    assert f"| {untrained['passed']}/{untrained['samples']} |" in table[2]
    record = smoke.evaluation_record(evaluations)
    assert record["untrained-eval"] == {k: untrained[k] for k in ("passed", "samples",
                                                                 "pass_rate", "mean_reward")}
    assert set(record) >= {"sft-eval", "hps-only/final-eval", "judge-led/final-eval"}
    assert smoke.read_evaluations(Path("/nonexistent")) == []


def test_the_live_steps_fall_back_to_hps_only_without_a_pool(tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "old").mkdir(parents=True)
    plan = smoke.plan_live_steps("tiny-cpu", 2, "judge-led", run_dir, str(tmp_path / "none"))
    assert not run_dir.exists(), "a previous run is cleared"
    assert plan.flags == ["--config", "tiny-cpu", "--max-steps", "2", "--mix", "hps-only",
                          "--out", str(run_dir)]
    assert plan.pool is None and "no pool at" in plan.note and "hps-only" in plan.note
    assert smoke.plan_live_steps("tiny-cpu", 1, "hps-only", run_dir).flags[5] == "hps-only"


def test_the_live_steps_are_judged_against_the_pool(tmp_path, monkeypatch):
    pool = write_pool_folder(rows(2, 3), tmp_path / "pool")
    plan = smoke.plan_live_steps("smoke-4b", 3, "judge-led", tmp_path / "run", str(pool),
                                 "your rated pool")
    assert plan.flags[-2:] == ["--pool", str(pool)]
    assert plan.flags[plan.flags.index("--mix") + 1] == "judge-led"
    assert plan.pool["path"] == str(pool) and plan.pool["note"] == "your rated pool"
    assert "love 2" in plan.pool["described"] and plan.pool["described"] in plan.note
    assert plan.note.endswith("chosen by the book's pipeline: your rated pool")
    monkeypatch.chdir(tmp_path)  # a page names the pool from where the reader runs
    plan = smoke.plan_live_steps("smoke-4b", 3, "judge-led", tmp_path / "run", str(pool))
    assert "(pool)" in plan.note and str(tmp_path) not in plan.note


def _fake_run(run_dir: Path) -> None:
    (run_dir / "rollouts").mkdir(parents=True)
    (run_dir / "metrics.csv").write_text("step,reward\n0,0.2\n1,0.4\n")
    lines = [{"step": s, "index": i, "reward": 0.1 * (s + i), "status": "ok" if i else "rejected",
              "png": base64.b64encode(png(s * 4 + i)).decode() if i else None}
             for s in range(2) for i in range(4)]
    (run_dir / "rollouts" / "rollouts.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines))


def test_the_live_run_is_published_for_the_next_chapters(tmp_path):
    run_dir, out = tmp_path / "run", tmp_path / "out"
    _fake_run(run_dir)
    out.mkdir()
    (out / "rollouts").mkdir()
    (out / "rollouts" / "stale.jsonl").write_text("{}\n")
    live = smoke.publish_live_run(run_dir, out)
    assert sorted(p.name for p in out.iterdir()) == sorted(smoke.PUBLISHED)
    assert (out / "curve.csv").read_text() == (run_dir / "metrics.csv").read_text()
    assert [p.name for p in (out / "rollouts").iterdir()] == ["rollouts.jsonl"]
    assert len(live) == 8 and "png" in live
    line, record = smoke.describe_live({"global_step": 2, "rollouts": 8}, live, 12.34)
    assert line == "2 steps, 8 rollouts in 12 s; status {'ok': 6, 'rejected': 2}"
    assert record == {"steps": 2, "rollouts": 8, "seconds": 12.3,
                      "mean_reward": pytest.approx(0.2)}
    figure = smoke.best_paintings_figure(live, out / "rollouts", n=4)
    titles = [ax.get_title() for ax in figure.axes]
    assert titles[0] == "step 1: 0.40"
    assert [t.split(": ")[1] for t in titles] == ["0.40", "0.30", "0.30", "0.20"]
    assert all(ax.images for ax in figure.axes), "each shows its painting"


def test_the_committed_runs_tables_and_sentences():
    analyses = smoke.committed_analyses(RESULTS)
    assert list(analyses) == list(smoke.MIXES)
    figure = smoke.curves_figure(RESULTS, list(analyses), window=5)
    titles = [ax.get_title() for ax in figure.axes]  # each names what filled its slots
    assert titles == [f"{m}\n(judge: pool-fitted, hps: offline-aesthetic)" for m in smoke.MIXES]
    assert figure.axes[0].get_legend().get_texts()[1].get_text() == "rolling mean (5 steps)"
    table, record = smoke.runs_table(analyses)
    assert len(table.splitlines()) == 2 + len(analyses)
    led = analyses["judge-led"]["findings"]
    assert record["judge-led"]["slope_t"] == led["reward_slope"]["t"]
    assert f"| {led['reward']['first']:.3f} |" in table.splitlines()[3]
    assert set(record["hps-only"]["checks"]) == set(smoke.CHECKS)
    findings = smoke.findings_table(analyses).splitlines()
    assert findings[0].startswith("| mix | share of gain from fewer bad |")
    assert findings[2].startswith("| hps-only |")
    sentence = smoke.run_sentence("hps-only", analyses["hps-only"], RESULTS)
    only = analyses["hps-only"]["findings"]["reward"]
    assert sentence.startswith(f"Under `hps-only` the step's mean reward went "
                               f"{only['first']:.3f} → ")
    final = json.loads((RESULTS / "hps-only" / "final-eval.json").read_text())
    assert f"the trained policy {final['mean_reward']:.3f}" in sentence


def test_the_gate_breakage_table_and_its_numbers():
    breakage = {"models": {
        "warm start": [{"temperature": 0.8, "top_p": 0.95, "broken": 1, "samples": 320},
                       {"temperature": 1.0, "top_p": 1.0, "broken": 9, "samples": 320}],
        "trained": [{"temperature": 0.8, "top_p": 0.95, "broken": 0, "samples": 300},
                    {"temperature": 1.0, "top_p": 1.0, "broken": 20, "samples": 300}]}}
    assert smoke.breakage_table(breakage).splitlines() == [
        "| model | T 0.8, top-p 0.95 | T 1.0, top-p 1.0 |", "|---|---:|---:|",
        "| warm start | 1 / 320 | 9 / 320 |", "| trained | 0 / 300 | 20 / 300 |"]
    assert smoke.breakage_at_recipe(breakage) == {"broken": 1, "samples": 620}
    assert smoke.breakage_at_recipe(breakage, 1.0, 1.0) == {"broken": 29, "samples": 620}
    assert smoke.breakage_at_recipe(None) is None
    assert "gate_breakage.py" in smoke.breakage_table(None)


# ---------------------------------------------------------------- 07: the full run


PLAN = {"layers_adapted": 40, "layers_total": 40, "layers_adapted_by_type": {"linear": 30},
        "trainable_params": 22_477_440, "total_params": 35_000_000_000,
        "trainable_fraction": 0.000642, "experts_frozen": True, "target_modules": "all-linear"}


def test_the_lora_plans_in_words_and_in_the_results():
    dense = {**PLAN, "layers_adapted": 10, "trainable_params": 1_000,
             "target_modules": ["q_proj", "v_proj"]}
    assert full_run.plan_record(PLAN) == {"layers_adapted": 40, "layers_total": 40,
                                          "trainable_params": 22_477_440,
                                          "experts_frozen": True}
    lines = full_run.describe_plans(PLAN, dense).splitlines()
    assert lines[0] == "all-linear: 40/40 decoder layers adapted {'linear': 30}"
    assert lines[1] == ("trainable: 22,477,440 of 35,000,000,000 (0.0642%); routed experts "
                        "frozen: True")
    assert lines[2].startswith("dense-model list ['q_proj', 'v_proj']: attention adapted in "
                               "10/40 layers")


def test_the_memory_and_the_hours():
    memory = {key: 1.5 for key in full_run.MEMORY_KEYS} | {
        "gpu_gib": 139.8, "fits": True, "assumptions": "bf16"}
    lines = full_run.describe_memory(memory).splitlines()
    assert len(lines) == len(full_run.MEMORY_KEYS) + 1
    assert lines[0] == f"{'weights_gib':<24}    1.50 GiB"
    assert lines[-1] == "one H200: 139.8 GiB -> fits: True  (bf16)"
    assert full_run.reproduction_hours(110) == [27.5, 33.0]
    bench = {"projection_35b_step": {"non_rendering_s": [60, 120], "by_workers": {
        "8": {"rendering_s": 60, "share_min": 0.2, "share_max": 0.5}}}}
    hours, line = full_run.projected_hours(bench, 60)
    assert hours == [2.0, 3.0]
    assert line.endswith("rendering 20.0%-50.0% of a step, 2.0-3.0 H200-hours for the run")


def test_the_launch_command_in_two_shell_lines():
    command = ["hf", "jobs", "uv", "run", "a b.py", "--", "--lr", "5e-5"]
    assert full_run.format_command(command) == "hf jobs uv run 'a b.py' -- \\\n    --lr 5e-5"
    assert full_run.format_command(["hf", "jobs"]) == "hf jobs"


def test_the_published_curves_replayed():
    curves = full_run.read_published("hps-only, hps-led")
    assert list(curves) == ["hps-only", "hps-led"]
    figure = full_run.curves_figure(curves, window=5)
    assert [ax.get_title() for ax in figure.axes] == [t for _, t in full_run.CURVE_PANELS]
    assert len(figure.axes[0].lines) == 4  # steps and rolling mean, per run
    summary = full_run.curve_summary(curves)
    assert round(summary["hps-led"]["reward_thirds"][0], 2) == 0.57
    assert round(summary["hps-led"]["reward_thirds"][1], 2) == 0.82
    assert summary["hps-only"]["collapsed_steps"] == 0
    assert summary["hps-led"]["steps"] == 110
    lines = full_run.describe_summary(summary).splitlines()
    assert lines[1].startswith("hps-led   110 steps: reward 0.57 -> 0.82 (first -> last third)")


# ---------------------------------------------------------------- 08: the analysis of a run


def test_the_runs_to_analyse(monkeypatch):
    monkeypatch.chdir(ROOT / "notebooks")  # where a chapter's kernel starts
    assert analysis.runs_to_analyse() == {"hps-led": published_curve("hps-led")}
    assert analysis.runs_to_analyse("runs/x.csv", "hps-only") == {
        "this run": ROOT / "runs" / "x.csv", "hps-only": published_curve("hps-only")}
    assert analysis.runs_to_analyse("/data/x.csv")["this run"] == Path("/data/x.csv")


@pytest.fixture
def own_run(tmp_path: Path) -> tuple[Path, Path]:
    curve = tmp_path / "curve.csv"
    pd.DataFrame({"step": range(9), "reward": [0.1 + 0.05 * s + (0.01, -0.02, 0.01)[s % 3]
                                                for s in range(9)],
                  "frac_reward_zero_std": [0.0] * 8 + [0.5],
                  "step_time": [120.0] * 9}).to_csv(curve, index=False)
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text("".join(
        json.dumps({"step": s, "index": i, "reward": 0.1 if i < 3 - s // 3 else 0.6,
                    "status": "ok", "n_shapes": i}) + "\n" for s in range(9) for i in range(4)))
    return curve, rollouts


def test_the_analysis_tables_and_lines(own_run):
    curve, rollouts = own_run
    results = {"this run": analyse(curve, rollouts)}
    table = analysis.thirds_table(results).splitlines()
    assert table[2] == "| this run | `reward` | 0.150 | 0.300 | 0.450 | +0.300 |"
    assert not any("judge_mean" in line for line in table), "a column the run lacks"
    slope = results["this run"].findings["reward_slope"]
    assert analysis.describe_slopes(results) == (
        f"this run: reward slope {slope['slope']:+.5f} per step, t = {slope['t']:.1f} over 9 "
        "steps")
    assert slope["t"] > 3
    lines = analysis.describe_collapse_and_time(results).splitlines()
    assert lines == ["this run: 1 steps with a collapsed group (largest share 0.5)",
                     "this run: a step took 2.0 min (median), 0.3 h for the run"]
    said = analysis.describe_rollouts(results["this run"])
    assert said.startswith("36 rollouts, 0 unavailable; below 0.3 by third: "
                           "9 (75%) -> 6 (50%) -> 3 (25%)")
    assert "from fewer bad paintings" in said and "best-of-step moved" in said
    assert analysis.describe_rollouts(analyse(curve)).startswith("No rollouts given")


def test_the_analysis_summary(own_run, tmp_path):
    curve, rollouts = own_run
    results = {"this run": analyse(curve, rollouts)}
    written = analysis.summary(results, mode="tiny", curve=curve, rollouts=str(rollouts),
                               window=5, gallery=tmp_path / "gallery")
    assert written["parameters"] == {"mode": "tiny", "curve": str(curve),
                                     "rollouts": str(rollouts),
                                     "gallery": str(tmp_path / "gallery" / "index.html"),
                                     "compare": None, "window": 5}
    assert written["runs"]["this run"] == results["this run"].to_dict()
    json.dumps(written)  # JSON-ready
    bare = analysis.summary(results, mode="tiny", curve=curve, gallery=tmp_path / "g")
    assert bare["parameters"]["rollouts"] is None and bare["parameters"]["gallery"] is None
