"""Chapter 06's pretrained model after GRPO (book/chapters/real_model.py): the figures it
quotes, the verdict that follows the targets, the curve it shows."""

from __future__ import annotations

import json

import pandas as pd

from watercolour.book.chapters import real_model


def write_run(folder, rewards, passed_last=6, paired=(0.05, 2.5)):
    """A published run of ``len(rewards)`` steps of 6 rollouts; every rollout passes except
    ``6 - passed_last`` in each step of the last third; the love-only evaluation's paired gain
    ``(mean, t)``."""
    from watercolour.analysis import analyse

    folder.mkdir(parents=True)
    n = len(rewards)
    pd.DataFrame({"step": range(n), "reward": rewards, "step_time": [100.0] * n,
                  "generation_s": [60.0] * n, "render_s": [10.0] * n, "scoring_s": [3.0] * n,
                  "update_s": [27.0] * n, "gate_pass_rate": [1.0] * n,
                  "completions/mean_length": [770.0] * n}
                 ).to_csv(folder / "metrics.csv", index=False)
    (folder / "analysis.json").write_text(json.dumps(analyse(folder / "metrics.csv").to_dict()))
    third = {"rollouts": 6 * (n // 3), "ok": 6 * (n // 3)}
    last = {"rollouts": 6 * (n // 3), "ok": passed_last * (n // 3)}
    (folder / "rollouts-summary.json").write_text(json.dumps(
        {"by_third": {"first": third, "middle": third, "last": last}}))
    (folder / "run.json").write_text(json.dumps({"config": {"training": {"num_generations": 6}}}))
    mean, t = paired
    side = {"mean_reward": 0.3, "passed": 32}
    (folder / "eval.json").write_text(json.dumps(
        {"samples": 32, "before": side, "after": side | {"mean_reward": 0.3 + mean},
         "paired": {"mean": mean, "sd": 0.1, "t": t, "n": 32}}))
    start = folder.parent / "start.json"
    start.write_text(json.dumps({"after": {"pass_rate": 1.0}}))
    return start


def test_a_rising_run_that_keeps_passing_is_called_so(tmp_path):
    folder = tmp_path / "run"
    start = write_run(folder, [0.30 + 0.005 * i + 0.01 * (i % 2) for i in range(42)])
    figures = real_model.run_figures(folder, start)
    assert figures["real-steps"] == "42" and figures["real-group"] == "6"
    assert figures["real-pass-last"] == "100%" and figures["real-pass-start"] == "100%"
    assert figures["real-step-split"] == ("generation 60 s, rendering 10 s, scoring 3 s, "
                                          "the update 27 s")
    assert figures["real-minutes"] == "70"  # 42 steps of 100 s
    assert figures["real-reply-tokens"] == "770"
    assert figures["real-eval-gain"] == "+0.050" and figures["real-eval-t"] == "2.5"
    first, middle, last = (float(x) for x in figures["real-reward-thirds"].split(" → "))
    assert first < middle < last
    met = real_model.targets(folder, 1.0)
    assert met == {"slope_t_at_least_3": True, "last_third_beats_first": True,
                   "last_third_passes_as_often": True, "beats_the_warm_start": True}
    text = real_model.verdict(folder, start)
    assert text.startswith("The step reward rose over the run")
    assert "as often as its warm start" in text and "it beats its warm start" in text


def test_a_flat_run_that_breaks_sketches_is_not_called_a_success(tmp_path):
    folder = tmp_path / "run"
    start = write_run(folder, [0.35 + (0.05 if i % 2 else -0.05) for i in range(42)],
                      passed_last=5, paired=(-0.02, -0.8))
    met = real_model.targets(folder, 1.0)
    assert met["slope_t_at_least_3"] is False and met["last_third_passes_as_often"] is False
    assert met["beats_the_warm_start"] is False
    text = real_model.verdict(folder, start)
    assert "did not rise over the run" in text and "less often than its warm start" in text
    assert "does not beat its warm start" in text
    assert real_model.run_figures(folder, start)["real-pass-last"] == "83%"


def test_a_small_gain_is_called_small(tmp_path):
    """Last third above the first without a slope t of 3, and a paired gain under two
    standard errors: said as such, not as a success."""
    folder = tmp_path / "run"
    rewards = [0.30 + (0.08 if i % 2 else -0.08) + 0.001 * i for i in range(42)]
    start = write_run(folder, rewards, paired=(0.03, 1.5))
    met = real_model.targets(folder, 1.0)
    assert met["last_third_beats_first"] and not met["slope_t_at_least_3"]
    assert met["beats_the_warm_start"] is False
    text = real_model.verdict(folder, start)
    assert "within the noise of its steps" in text
    assert "by less than two standard errors" in text


def test_the_judges_fixed_scale_is_quoted_and_read_into_the_verdict(tmp_path):
    """A run whose reward fell (its references grew harder) while its paintings rose on the
    judge's yardstick: both are said; without a yardstick the figures are left out."""
    folder = tmp_path / "run"
    start = write_run(folder, [0.40 - 0.002 * i + 0.01 * (i % 2) for i in range(42)])
    assert "real-latent-t" not in real_model.run_figures(folder, start)
    analysis = json.loads((folder / "analysis.json").read_text())
    analysis["yardstick"] = {
        "latent": {"first": -4.5, "middle": -3.25, "last": -2.0, "t": 4.2},
        "wins": {"first": 0.1, "middle": 0.2, "last": 0.35, "t": 3.6},
        "pool": {"a peach hibiscus": {"love": [0.5, -1.25, 0.1], "okay": [-3.0]}}}
    (folder / "analysis.json").write_text(json.dumps(analysis))
    figures = real_model.run_figures(folder, start)
    assert figures["real-latent-thirds"] == "-4.50 → -3.25 → -2.00"
    assert figures["real-latent-t"] == "4.2" and figures["real-wins-t"] == "3.6"
    assert figures["real-wins-thirds"] == "10% → 20% → 35%"
    assert figures["real-latent-loved"] == "-1.25 to 0.50"
    text = real_model.verdict(folder, start)
    assert "did not rise over the run" in text and "grew harder" not in text
    assert "on the judge's fixed scale its paintings rose" in text
    run = json.loads((folder / "run.json").read_text())
    run["config"]["run"] = {"references_schedule": "linear:0:0.5"}
    (folder / "run.json").write_text(json.dumps(run))
    assert real_model.run_figures(folder, start)["real-schedule"] == "linear:0:0.5"
    assert ("did not rise over the run (its references grew harder as it went: "
            "linear:0:0.5)") in real_model.verdict(folder, start)
    analysis["yardstick"]["latent"]["t"] = -1.9
    (folder / "analysis.json").write_text(json.dumps(analysis))
    assert "drifted down, within the noise of its steps" in real_model.verdict(folder, start)


def test_the_runs_table_has_a_row_a_published_run(tmp_path):
    write_run(tmp_path / "judge-led", [0.30 + 0.004 * i + 0.01 * (i % 2) for i in range(30)],
              paired=(0.037, 1.91))
    write_run(tmp_path / "okay-first", [0.35 + 0.01 * (i % 3) for i in range(30)])
    run = json.loads((tmp_path / "okay-first" / "run.json").read_text())
    run["config"]["run"] = {"references_schedule": "linear:0:0.5"}
    (tmp_path / "okay-first" / "run.json").write_text(json.dumps(run))
    analysis = json.loads((tmp_path / "okay-first" / "analysis.json").read_text())
    analysis["yardstick"] = {"latent": {"first": -5.5, "middle": -5.0, "last": -4.25, "t": 2.04}}
    (tmp_path / "okay-first" / "analysis.json").write_text(json.dumps(analysis))
    (tmp_path / "not-a-run").mkdir()
    write_run(tmp_path / "straight", [0.3 + 0.01 * i for i in range(30)])  # no noise: no t
    lines = real_model.runs_table(tmp_path).splitlines()
    assert len(lines) == 5 and "judge's scale by thirds" in lines[0]
    assert "0.345 → 0.445 → 0.545 (t —)" in lines[4]
    assert lines[2].startswith("| `judge-led` | `half` |") and "+0.037 (t 1.9)" in lines[2]
    assert "| — |" in lines[2]                                # no yardstick in that run
    assert "`linear:0:0.5`" in lines[3] and "-5.50 → -5.00 → -4.25 (t 2.0)" in lines[3]


def test_the_evaluation_sheets_stand_side_by_side(tmp_path):
    from PIL import Image

    folder = tmp_path / "run"
    folder.mkdir()
    for name, colour in (("before", "red"), ("after", "blue")):
        Image.new("RGB", (64, 32), colour).save(folder / f"{name}.png")
    left, right = real_model.evaluation_sheets(folder).axes
    assert (left.get_title(), right.get_title()) == ("the warm start", "after GRPO")
    assert left.images[0].get_array()[0, 0].tolist() == [255, 0, 0]
    assert right.images[0].get_array()[0, 0].tolist() == [0, 0, 255]


def test_the_curve_figure_draws_the_thirds(tmp_path):
    folder = tmp_path / "run"
    write_run(folder, [0.3 + 0.004 * i for i in range(30)])
    figure = real_model.curve_figure(folder)
    left, right = figure.axes
    assert len(left.collections) == 3  # one mean line a third
    assert left.get_title() == "SmolLM2-135M, half references"
    assert right.get_title() == "gate pass rate"
    analysis = json.loads((folder / "analysis.json").read_text())
    analysis["yardstick"] = {
        "latent": {"first": -5.0, "middle": -4.0, "last": -3.0, "t": 5.0},
        "by_step": {"step": list(range(30)), "latent": [-5.5 + 0.1 * i for i in range(30)],
                    "wins": [0.1] * 30}}
    (folder / "analysis.json").write_text(json.dumps(analysis))
    left, middle, right = real_model.curve_figure(folder).axes
    assert middle.get_title() == "the judge's fixed scale" and len(middle.collections) == 3
    assert [line.get_ydata()[0] for line in middle.lines][:1] == [-5.5]


def test_a_resumed_run_says_where_it_was_resumed_and_to_what_length():
    run = {"config": {"training": {"max_steps": 75, "lr_scheduler_type": "cosine"}}}
    assert real_model.invocations(run) == "in one invocation"
    run["earlier"] = [{"argv": ["watercolour", "train"], "max_steps": 40, "until_step": 40}]
    assert real_model.invocations(run) == (
        "resumed from its checkpoint at step 40 with another plan (40 → 75 steps: the "
        "learning rate's cosine laid over the new length from there)")
    run["config"]["training"]["max_steps"] = 40  # resumed after an interruption
    assert real_model.invocations(run) == ("resumed from its checkpoint at step 40 with the "
                                           "same plan")


def test_the_committed_run_gives_every_figure_the_chapter_quotes():
    """The published run and its love-only evaluation, as the chapter reads them from the
    package: 40 steps or more, the same 32 seeds on both sides, the verdict in words."""
    figures = real_model.run_figures()
    assert int(figures["real-steps"]) >= 40 and figures["real-group"] == "6"
    assert figures["real-eval-samples"] == "32"
    folder = real_model.run_folder()
    probe = json.loads((folder / "eval.json").read_text())
    assert probe["love_references"] == 4
    assert probe["paired"]["n"] == 32 and probe["paired"]["t"] is not None
    assert real_model.verdict().startswith("The step reward")
    assert len(real_model.evaluation_sheets().axes) == 2
