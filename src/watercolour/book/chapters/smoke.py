"""Chapter 06, "A scaled smoke run": the plumbing behind its cells (the evaluation table, the
live run's flags and files, the committed runs' tables, sentences and figures), so the chapter
shows the warm start, the live GRPO steps and the two mixes."""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from watercolour.analysis import read_curve, read_rollouts
from watercolour.analysis.curves import slot_backends
from watercolour.analysis.findings import CHECKS, learning_checks
from watercolour.analysis.rollouts import rollout_png
from watercolour.notebooks import markdown_table, resolve_output_dir, shown_path, thumbnail

MIXES = ("hps-only", "judge-led")
"""The committed longer runs, in the order the chapter shows them."""

EVALUATIONS: tuple[tuple[str, str], ...] = (
    ("untrained-eval.json", "random weights"),
    ("sft-eval.json", "the warm start"),
    ("sft-eval-hps-only.json", "the warm start"),
    ("hps-only/final-eval.json", "after hps-only"),
    ("sft-eval-judge-led.json", "the warm start"),
    ("judge-led/final-eval.json", "after judge-led"),
)
"""The committed evaluations (a file under the results folder) and the model each sampled."""

THIRDS = ("first", "middle", "last")

PUBLISHED = ("curve.csv", "rollouts")
"""What :func:`publish_live_run` writes into the chapter's ``out_dir`` for the chapters after
it (the book's pipeline hands them on: ``watercolour.book.pipeline.LINKS``)."""


def committed_results(results: str = "") -> Path:
    """The committed longer runs: ``results`` when given, else the ones shipped with the
    package (:data:`watercolour.results.TINY`)."""
    from watercolour.results import TINY

    return Path(results) if results else TINY


def warm_start_on_pool_figures(folder: Path | None = None) -> dict[str, str]:
    """The committed supervised warm start of a real model on the pool (``folder``, default the
    package's ``sft/smollm2-pool/``) as the chapter's prose quotes it (glue name -> text): samples
    passing the gate before and after, those after that painted nothing, the epochs of its
    training runs together, and the sketches short enough to train on."""
    from watercolour.results import SFT

    folder = folder or SFT / "smollm2-pool"
    probe = json.loads((folder / "eval.json").read_text(encoding="utf-8"))
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("sft-*.json"))]
    epochs = sum(run["config"]["training"]["num_train_epochs"] for run in runs)
    return {"sft-samples": str(probe["samples"]),
            "sft-passed-before": str(probe["before"]["passed"]),
            "sft-passed-after": str(probe["after"]["passed"]),
            "sft-blank-after": str(probe["after"]["rejection_reasons"].get("blank_canvas", 0)),
            "sft-epochs": f"{epochs:g}",
            "sft-sketches": str(runs[-1]["examples"]["kept"])}


def compact_warm_start_figures(folder: Path | None = None) -> dict[str, str]:
    """The committed supervised warm start of a real model on generated compact sketches
    (``folder``, default the package's ``sft/smollm2/``: ``eval.json`` and the run's
    ``sft.json``) as the chapter's prose quotes it (glue name -> text)."""
    from watercolour.results import SFT

    folder = folder or SFT / "smollm2"
    probe = json.loads((folder / "eval.json").read_text(encoding="utf-8"))
    run = json.loads((folder / "sft.json").read_text(encoding="utf-8"))
    before, after = probe["before"], probe["after"]
    reasons = after["rejection_reasons"]
    losses = [row["loss"] for row in run["loss"]]
    sampling = probe["sampling"]
    return {"compact-samples": str(probe["samples"]),
            "compact-passed-before": str(before["passed"]),
            "compact-passed-after": str(after["passed"]),
            "compact-pass-after": f"{after['pass_rate']:.0%}",
            "compact-rejected-after": ", ".join(f"{n} {k.replace('_', ' ')}"
                                                for k, n in sorted(reasons.items())) or "none",
            "compact-reward-after": f"{after['mean_reward_of_passed'] or 0:.3f}",
            "compact-examples": str(run["examples"]["kept"]),
            "compact-steps": str(run["global_step"]),
            "compact-minutes": f"{run['seconds'] / 60:.0f}",
            "compact-loss": f"{losses[0]:.2f} to {losses[-1]:.2f}",
            "compact-sampling": f"temperature {sampling['temperature']:g}, top-p "
                                f"{sampling['top_p']:g}"}


def glue_warm_start_on_pool(folder: Path | None = None) -> dict[str, str]:
    """Glue :func:`warm_start_on_pool_figures` and :func:`compact_warm_start_figures` (the
    package's records) for the chapter's prose; returns them."""
    from myst_nb import glue

    figures = warm_start_on_pool_figures(folder) | compact_warm_start_figures()
    for name, text in figures.items():
        glue(name, text, display=False)
    return figures


def describe_warm_start(folder: Path, read_s: float) -> tuple[str, dict[str, Any]]:
    """One line on the warm start in ``folder`` (its size, SFT steps, build time, the time to
    read it now, the SFT loss) and what the chapter's record keeps of it."""
    made = json.loads((folder / "warm-start.json").read_text(encoding="utf-8"))
    line = (f"{made['parameters'] / 1e6:.1f}M parameters; {made['config']['steps']} SFT steps "
            f"(built in {made['seconds']:.0f} s; read from the cache in {read_s:.1f} s); "
            f"SFT loss {made['losses'][0]:.2f} -> {made['losses'][-1]:.2f}")
    return line, {k: made[k] for k in ("key", "parameters", "seconds")}


def read_evaluations(committed: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """The :data:`EVALUATIONS` that exist under ``committed``: (file, model, its JSON)."""
    return [(name, label, json.loads((committed / name).read_text(encoding="utf-8")))
            for name, label in EVALUATIONS if (committed / name).is_file()]


def evaluation_table(evaluations: list[tuple[str, str, dict[str, Any]]]) -> str:
    """The evaluations as a Markdown table of six short columns: the model, its sampling
    (temperature / top-p), the mix that scored it, the replies that passed the allowlist
    gate, the mean reward (3 decimals) and why the rest were rejected."""
    rows = []
    for _, label, ev in evaluations:
        reasons = ", ".join(f"{k.replace('_', ' ')} {v}"
                            for k, v in ev["rejection_reasons"].items()) or "-"
        rows.append([label, f"{ev.get('temperature', 1.0)} / {ev.get('top_p', 1.0)}",
                     ev["mix"], f"{ev['passed']}/{ev['samples']}",
                     f"{ev['mean_reward']:.3f}", reasons])
    return markdown_table(["model", "T / top-p", "scored by", "passed", "reward",
                           "rejected for"], rows)


def evaluation_record(evaluations: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """Per evaluation (its file name without ``.json``): passed, samples, pass rate, reward."""
    return {name.removesuffix(".json"): {k: ev[k] for k in ("passed", "samples", "pass_rate",
                                                            "mean_reward")}
            for name, _, ev in evaluations}


@dataclass
class LivePlan:
    """The live steps' command line and the pool they are judged against."""

    flags: list[str]
    """``watercolour train`` flags."""
    note: str
    """What the chapter prints about the pool (or its absence)."""
    pool: dict[str, Any] | None
    """The pool's path, description and the pipeline's note; ``None`` without a pool."""


def plan_live_steps(recipe: str, steps: int, mix: str, run_dir: Path, pool: str = "",
                    pool_note: str = "") -> LivePlan:
    """The flags of ``steps`` GRPO steps of ``recipe`` into ``run_dir`` (emptied first),
    judged against ``pool`` when it exists; without it a mix other than ``hps-only`` (which
    needs no pool) falls back to ``hps-only``."""
    from watercolour.pool.choice import describe_pool

    shutil.rmtree(run_dir, ignore_errors=True)
    flags = ["--config", recipe, "--max-steps", str(steps), "--mix", mix, "--out", str(run_dir)]
    pool_path = resolve_output_dir(pool, create=False) if pool else None
    if pool_path is not None and pool_path.exists():
        described = describe_pool(pool_path)
        note = f"the live steps are judged against {described} ({shown_path(pool_path)})"
        if pool_note:
            note += f"\nchosen by the book's pipeline: {pool_note}"
        return LivePlan([*flags, "--pool", str(pool_path)], note,
                        {"path": str(pool_path), "described": described, "note": pool_note})
    if mix == "hps-only":
        return LivePlan(flags, "no pool: the hps-only mix needs none", None)
    flags[flags.index("--mix") + 1] = "hps-only"
    return LivePlan(flags, f"no pool at {pool!r} (run the chapter 'Building the pool' first): "
                    "the live steps use the hps-only mix, which needs none", None)


def publish_live_run(run_dir: Path, out: Path) -> pd.DataFrame:
    """Copy the run's curve to ``out/curve.csv`` and its rollouts to ``out/rollouts`` (what
    the analysis and rollouts chapters read) and return the rollouts, pictures included."""
    curve, rollouts = (out / name for name in PUBLISHED)
    shutil.copyfile(run_dir / "metrics.csv", curve)
    shutil.rmtree(rollouts, ignore_errors=True)
    shutil.copytree(run_dir / "rollouts", rollouts)
    return read_rollouts(rollouts, pictures=True)


def describe_live(summary: dict[str, Any], live: pd.DataFrame,
                  seconds: float) -> tuple[str, dict[str, Any]]:
    """One line on the live steps (steps, rollouts, time, statuses) and their record."""
    line = (f"{summary['global_step']} steps, {summary['rollouts']} rollouts in {seconds:.0f} s;"
            f" status {live['status'].value_counts().to_dict()}")
    return line, {"steps": summary["global_step"], "rollouts": summary["rollouts"],
                  "seconds": round(seconds, 1), "mean_reward": float(live["reward"].mean())}


def best_paintings_figure(live: pd.DataFrame, rollouts: Path, n: int = 8) -> Figure:
    """The ``n`` best-scored paintings that rendered, best first, each titled with its step
    and reward."""
    import matplotlib.image as mpimg

    shown = live[live["status"] == "ok"].sort_values("reward", ascending=False).head(n)
    figure = Figure(figsize=(2.2 * max(1, len(shown)), 2.6))
    axes = figure.subplots(1, max(1, len(shown)), squeeze=False)[0]
    for ax, (_, row) in zip(axes, shown.iterrows()):
        png = rollout_png(row["png"], rollouts)
        if png:
            ax.imshow(mpimg.imread(io.BytesIO(thumbnail(png, 256)), format="png"))
        ax.set_title(f"step {int(row['step'])}: {row['reward']:.2f}", fontsize=9)
    for ax in axes:
        ax.axis("off")
    return figure


def committed_analyses(committed: Path) -> dict[str, dict[str, Any]]:
    """Per committed mix with a curve: its ``analysis.json``."""
    return {m: json.loads((committed / m / "analysis.json").read_text(encoding="utf-8"))
            for m in MIXES if (committed / m / "metrics.csv").is_file()}


def curves_figure(committed: Path, mixes: list[str], window: int = 10) -> Figure:
    """Each mix's reward per step and its rolling mean over ``window`` steps, side by side."""
    figure = Figure(figsize=(6 * max(1, len(mixes)), 3.6))
    axes = figure.subplots(1, max(1, len(mixes)), sharey=True, squeeze=False)[0]
    for ax, name in zip(axes, mixes):
        curve = read_curve(committed / name / "metrics.csv")
        ax.plot(curve["step"], curve["reward"], ".", alpha=0.5, label="mean reward of the step")
        ax.plot(curve["step"], curve["reward"].rolling(window, min_periods=1).mean(), "-",
                label=f"rolling mean ({window} steps)")
        ax.set(title=f"{name}\n({slot_backends(committed / name)})", xlabel="step",
               ylabel="reward")
        ax.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    return figure


def runs_table(analyses: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The committed runs by third (reward, slope t, bad rollouts, the reward of the sketches
    that passed the gate, collapsed groups, spread, learning checks met) as Markdown, and the
    chapter's record of each."""
    rows, record = [], {}
    for name, analysis in analyses.items():
        f, r = analysis["findings"], analysis["rollouts"]
        bad, passed = r["bad"], r["passed"]
        checks = learning_checks(f, r)
        rows.append([name, *(f"{f['reward'][t]:.3f}" for t in THIRDS),
                     f"{f['reward_slope']['t']:.1f}",
                     " -> ".join(str(bad[t]["count"]) for t in THIRDS),
                     f"{passed['reward']['first']:.3f} -> {passed['reward']['last']:.3f} "
                     f"(t {passed['slope']['t']:.1f})",
                     f"{f['collapsed']['max']:.2f}",
                     f"{analysis['thirds']['reward_std']['first']:.3f}",
                     f"{sum(bool(v) for v in checks.values())} of {len(checks)}"])
        record[name] = {"reward": f["reward"], "slope_t": f["reward_slope"]["t"],
                        "below_0_3": {t: bad[t]["count"] for t in bad},
                        "passed_slope_t": passed["slope"]["t"], "checks": checks}
    table = markdown_table(
        ["mix", "first third", "middle", "last third", "slope t", "rollouts < 0.3 by third",
         "sketches that passed the gate: first -> last third (slope t)",
         "max frac_reward_zero_std", "reward_std in a group (first third)",
         "learning checks met"], rows)
    return table, record


def findings_table(analyses: dict[str, dict[str, Any]]) -> str:
    """The write-up's questions per mix as Markdown: the share of the gain from fewer bad
    paintings, how far the best and the median of a step moved, paint coverage, and the
    correlation of the number of shapes with the reward."""
    nan = float("nan")
    rows = []
    for name, analysis in analyses.items():
        r = analysis["rollouts"]
        share = r["bad_becoming_rare"]["share"]
        best, median = r["best_vs_median"]["best"], r["best_vs_median"]["median"]
        cover = r.get("coverage") or {}
        rows.append([name, "-" if share is None else f"{share:.2f}",
                     f"{best['moved']:+.3f}", f"{median['moved']:+.3f}",
                     f"{cover.get('first', nan):.3f} -> {cover.get('last', nan):.3f}",
                     f"{r.get('n_shapes_correlation', nan):+.2f}"])
    return markdown_table(["mix", "share of gain from fewer bad", "best-of-step moved",
                           "median moved", "paint coverage first -> last",
                           "n_shapes vs reward (r)"], rows)


def run_sentence(name: str, analysis: dict[str, Any], committed: Path) -> str:
    """What the committed run of ``name`` did, in words: its reward by third and slope, its bad
    rollouts, the passed sketches' reward, the learning checks it missed and, when both
    evaluations exist, the warm start against the trained policy on the same seeds."""
    f, r = analysis["findings"], analysis["rollouts"]
    missed = [CHECKS[k] for k, v in learning_checks(f, r).items() if v is False]
    reward, bad, passed = f["reward"], r["bad"], r["passed"]
    text = (f"Under `{name}` the step's mean reward went {reward['first']:.3f} → "
            f"{reward['middle']:.3f} → {reward['last']:.3f} (slope t "
            f"{f['reward_slope']['t']:.1f}), with {bad['first']['count']} → "
            f"{bad['middle']['count']} → {bad['last']['count']} rollouts under 0.3 a third; the "
            f"sketches that passed the gate went {passed['reward']['first']:.3f} → "
            f"{passed['reward']['last']:.3f} (slope t {passed['slope']['t']:.1f}). "
            + ("It meets every learning check" if not missed
               else f"It misses: {'; '.join(missed)}") + ".")
    if bad["first"]["count"] == bad["last"]["count"] == 0:
        text += (" No rollout scored under 0.3 in the first or the last third, so there were "
                 "none to make fewer.")
    final, warm = committed / name / "final-eval.json", committed / f"sft-eval-{name}.json"
    if final.is_file() and warm.is_file():
        after, before = (json.loads(p.read_text(encoding="utf-8")) for p in (final, warm))
        text += (f" On {after['samples']} fresh samples with the same seeds, the warm start "
                 f"scored {before['mean_reward']:.3f} ({before['passed']}/{before['samples']} "
                 f"passed) and the trained policy {after['mean_reward']:.3f} "
                 f"({after['passed']}/{after['samples']}).")
    return text


def breakage_table(breakage: dict[str, Any] | None) -> str:
    """``benchmarks/gate_breakage.py``'s result as Markdown: per model, the sketches the gate's
    static stage rejected at each sampling; a sentence when there is no result."""
    if breakage is None:
        return "No `gate-breakage.json` (run `benchmarks/gate_breakage.py` in a checkout)."
    models = breakage["models"]
    settings = next(iter(models.values()))
    return markdown_table(
        ["model", *(f"T {s['temperature']}, top-p {s['top_p']}" for s in settings)],
        [[name, *(f"{s['broken']} / {s['samples']}" for s in rows)]
         for name, rows in models.items()])


def breakage_at_recipe(breakage: dict[str, Any] | None, temperature: float = 0.8,
                       top_p: float = 0.95) -> dict[str, int] | None:
    """The sketches broken and sampled at the recipe's sampling (``temperature``, ``top_p``),
    summed over every model of the breakage result; ``None`` without a result."""
    if breakage is None:
        return None
    rows = [s for model in breakage["models"].values() for s in model
            if s["temperature"] == temperature and s["top_p"] == top_p]
    return {"broken": sum(s["broken"] for s in rows), "samples": sum(s["samples"] for s in rows)}


CURRICULUM = ("judge-led", "judge-led-curriculum")
"""The curriculum comparison: the constant-draw run and the same run with a references
schedule (``watercolour tiny runs ... --references-schedule linear:0.5:1.0
--name judge-led-curriculum``)."""

LOVE_ONLY_EVAL = "final-eval-love-only.json"
"""A trained policy's 32 samples judged against four ``love`` references
(``watercolour tiny evaluate ... --love-references 4``)."""


def welch_t(a: list[float], b: list[float]) -> float | None:
    """Welch's t of ``mean(b) - mean(a)`` (None with fewer than two values a side or no
    spread)."""
    import statistics

    if len(a) < 2 or len(b) < 2:
        return None
    se = (statistics.variance(a) / len(a) + statistics.variance(b) / len(b)) ** 0.5
    return None if se == 0 else (statistics.fmean(b) - statistics.fmean(a)) / se


def curriculum_comparison(committed: Path) -> tuple[str, dict[str, Any]]:
    """The two runs of :data:`CURRICULUM` side by side as Markdown: their schedule, the share
    of ``love`` among the references of the last step, the training reward by thirds, and
    each final policy's mean reward against half-``love`` and against ``love``-only
    references; with the record (Welch's t of the difference against ``love``-only). Empty
    when either run is missing."""
    import statistics

    if not all((committed / name / LOVE_ONLY_EVAL).is_file() for name in CURRICULUM):
        return "", {}
    rows, record = [], {}
    for name in CURRICULUM:
        folder = committed / name
        run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        curve = read_curve(folder / "metrics.csv")
        reward = json.loads((folder / "analysis.json").read_text(encoding="utf-8"))[
            "findings"]["reward"]
        evals = {key: json.loads((folder / file).read_text(encoding="utf-8"))
                 for key, file in (("half", "final-eval.json"), ("love", LOVE_ONLY_EVAL))}
        rewards = {key: [r["reward"] for r in ev["rows"] if r["reward"] is not None]
                   for key, ev in evals.items()}
        schedule = run["config"]["run"].get("references_schedule") or "half"
        last_share = float(curve["references_love_share"].iloc[-1]) \
            if "references_love_share" in curve else 0.5
        record[name] = {"schedule": schedule, "last_love_share": last_share,
                        "reward": reward, "rewards": rewards,
                        **{f"{key}_mean": round(statistics.fmean(v), 4)
                           for key, v in rewards.items()}}
        rows.append([name, f"`{schedule}`", f"{last_share:.2f}",
                     " -> ".join(f"{reward[t]:.3f}" for t in THIRDS),
                     *(f"{statistics.fmean(v):.3f} ± {statistics.stdev(v):.3f} (n {len(v)})"
                       for v in (rewards["half"], rewards["love"]))])
    t = welch_t(*(record[name]["rewards"]["love"] for name in CURRICULUM))
    record["love_only_t"] = None if t is None else round(t, 2)
    table = markdown_table(
        ["run", "references", "love share, last step", "training reward by thirds",
         "final policy vs half-love references", "final policy vs love-only references"],
        rows)
    return table, record


def curriculum_sentence(record: dict[str, Any]) -> str:
    """What the comparison found, in one sentence (empty without it)."""
    if not record:
        return ""
    constant, curriculum = (record[name]["love_mean"] for name in CURRICULUM)
    t = record["love_only_t"]
    counts = " and ".join(str(len(record[name]["rewards"]["love"])) for name in CURRICULUM)
    verdict = "higher" if curriculum > constant else "lower" if curriculum < constant else \
        "the same"
    return (f"Against `love`-only references the curriculum's final policy averages "
            f"{curriculum:.3f} and the constant run's {constant:.3f}: {verdict}, with a Welch t "
            f"of {t} over {counts} samples (|t| under 2 is within the samples' noise).")
