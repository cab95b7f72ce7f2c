"""Chapter 06's pretrained model after GRPO: SmolLM2-135M's committed runs from its compact
warm start (``results/smollm2/<run>/``: each run's curve, analysis with the judge's fixed
yardstick, rollout summary and contact sheet, and ``eval.json``, the warm start against the
trained policy on the same seeds with love-only references), the one the chapter shows
(:data:`CHAPTER_RUN`) quoted and drawn, and all of them in one table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from watercolour.analysis import read_curve, third_of_steps
from watercolour.analysis.thirds import THIRDS

SPLIT = (("generation_s", "generation"), ("render_s", "rendering"),
         ("scoring_s", "scoring"), ("update_s", "the update"))
"""A step's parts, as the trainer times them (column, words); rendering and scoring make up
the reward's time."""


CHAPTER_RUN = "judge-led-okay-first"
"""The published run the chapter shows (under the package's ``smollm2/``): the judge-led mix
with references from the pool's ``okay`` tier first (``--references-schedule linear:0:0.5``);
:func:`runs_table` lists it beside the others."""


def run_folder(folder: Path | None = None) -> Path:
    """The committed run: ``folder``, else the package's ``smollm2/`` :data:`CHAPTER_RUN`."""
    from watercolour.results import SMOLLM2

    return folder or SMOLLM2 / CHAPTER_RUN


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def gate_pass_by_third(summary: dict[str, Any]) -> dict[str, float]:
    """The share of each third's rollouts that passed the gate (``rollouts-summary.json``)."""
    return {t: summary["by_third"][t]["ok"] / summary["by_third"][t]["rollouts"]
            for t in THIRDS if summary["by_third"][t]["rollouts"]}


def step_split(curve: Any) -> dict[str, float]:
    """The median step's seconds in ``curve`` (a run's metrics), in all and by part
    (:data:`SPLIT`)."""
    return {column: float(curve[column].median())
            for column in ("step_time", *(c for c, _ in SPLIT)) if column in curve}


def targets(folder: Path, warm_start_pass_rate: float) -> dict[str, bool | None]:
    """Issue 41's targets, met or not: the reward's slope t >= 3, the last third above the
    first, the last third's gate pass rate no lower than the warm start's, and the trained
    policy above the warm start on the same seeds by at least two standard errors (paired
    t >= 2; ``None`` without the evaluation)."""
    analysis = _read(folder / "analysis.json")
    reward = analysis["findings"]["reward"]
    passing = gate_pass_by_third(_read(folder / "rollouts-summary.json"))
    paired = _paired(folder)
    return {"slope_t_at_least_3": analysis["findings"]["reward_slope"]["t"] >= 3,
            "last_third_beats_first": reward["last"] > reward["first"],
            "last_third_passes_as_often": passing["last"] >= warm_start_pass_rate,
            "beats_the_warm_start": None if paired is None else paired["t"] >= 2}


def _schedule(run: dict[str, Any]) -> str:
    """The run's references schedule (``run.json``), ``half`` where it names none."""
    return (run["config"].get("run") or {}).get("references_schedule") or "half"


def invocations(run: dict[str, Any]) -> str:
    """How the run's steps were run (``run.json``; ``earlier`` where it was resumed), as a
    clause: ``in one invocation``, or where it was resumed and to what length."""
    earlier = run.get("earlier") or []
    if not earlier:
        return "in one invocation"
    training = run["config"]["training"]
    stops = " and ".join(str(e["until_step"]) for e in earlier)
    plans = [*(e.get("max_steps") for e in earlier), training["max_steps"]]
    if len(set(plans)) == 1:
        return f"resumed from its checkpoint at step {stops} with the same plan"
    return (f"resumed from its checkpoint at step {stops} with another plan "
            f"({' → '.join(str(n) for n in plans)} steps: the learning rate's "
            f"{training.get('lr_scheduler_type', 'schedule')} laid over the new length from "
            "there)")


def _paired(folder: Path) -> dict[str, Any] | None:
    """The love-only evaluation's paired difference, when it has a t."""
    if not (folder / "eval.json").is_file():
        return None
    paired = _read(folder / "eval.json").get("paired")
    return paired if paired and paired.get("t") is not None else None


def run_figures(folder: Path | None = None, warm_start: Path | None = None) -> dict[str, str]:
    """The run in ``folder`` (default :func:`run_folder`) as the chapter's prose quotes it
    (glue name -> text); ``warm_start``: its supervised start's ``eval.json`` (default the
    package's ``sft/smollm2/``)."""
    from watercolour.results import SFT

    folder = run_folder(folder)
    start = _read(warm_start or SFT / "smollm2" / "eval.json")["after"]
    analysis, run = _read(folder / "analysis.json"), _read(folder / "run.json")
    reward, slope = analysis["findings"]["reward"], analysis["findings"]["reward_slope"]
    passing = gate_pass_by_third(_read(folder / "rollouts-summary.json"))
    training = run["config"]["training"]
    curve = read_curve(folder / "metrics.csv")
    split = step_split(curve)
    figures = {
        "real-steps": str(slope["n"]),
        "real-group": str(training["num_generations"]),
        "real-schedule": _schedule(run),
        "real-invocations": invocations(run),
        "real-reward-thirds": " → ".join(f"{reward[t]:.3f}" for t in THIRDS),
        "real-slope-t": f"{slope['t']:.1f}",
        "real-pass-first": f"{passing['first']:.0%}",
        "real-pass-last": f"{passing['last']:.0%}",
        "real-pass-start": f"{start['pass_rate']:.0%}",
        "real-step-s": f"{split['step_time']:.0f}",
        "real-step-split": ", ".join(f"{words} {split[column]:.0f} s"
                                     for column, words in SPLIT if column in split),
        "real-minutes": f"{curve['step_time'].sum() / 60:.0f}",
        "real-reply-tokens": f"{curve['completions/mean_length'].median():.0f}",
    }
    figures |= yardstick_figures(analysis)
    if (folder / "eval.json").is_file():
        probe = _read(folder / "eval.json")
        paired = probe["paired"]
        figures |= {
            "real-eval-samples": str(probe["samples"]),
            "real-eval-before": f"{probe['before']['mean_reward']:.3f}",
            "real-eval-after": f"{probe['after']['mean_reward']:.3f}",
            "real-eval-passed-before": str(probe["before"]["passed"]),
            "real-eval-passed-after": str(probe["after"]["passed"]),
            "real-eval-gain": f"{paired['mean']:+.3f}",
            "real-eval-t": "—" if paired["t"] is None else f"{paired['t']:.1f}",
        }
    return figures


def yardstick_figures(analysis: dict[str, Any]) -> dict[str, str]:
    """The run on the judge's fixed yardstick (``analysis.json``'s ``yardstick``, from
    :mod:`watercolour.analysis.yardstick`) as the prose quotes it; empty without one."""
    found = analysis.get("yardstick") or {}
    if "latent" not in found:
        return {}
    latent, wins = found["latent"], found["wins"]
    loved = sorted(v for tiers in found["pool"].values() for v in tiers["love"])
    return {
        "real-latent-thirds": " → ".join(f"{latent[t]:.2f}" for t in THIRDS),
        "real-latent-t": f"{latent['t']:.1f}",
        "real-wins-thirds": " → ".join(f"{wins[t]:.0%}" for t in THIRDS),
        "real-wins-t": f"{wins['t']:.1f}",
        "real-latent-loved": f"{loved[0]:.2f} to {loved[-1]:.2f}",
    }


def verdict(folder: Path | None = None, warm_start: Path | None = None) -> str:
    """What the run proves, in words that follow its targets (:func:`targets`)."""
    from watercolour.results import SFT

    folder = run_folder(folder)
    start = _read(warm_start or SFT / "smollm2" / "eval.json")["after"]
    met = targets(folder, start["pass_rate"])
    if met["slope_t_at_least_3"] and met["last_third_beats_first"]:
        text = "The step reward rose over the run, beyond the noise of its steps"
    elif met["last_third_beats_first"]:
        text = ("The step reward ended above where it began (the last third above the first), "
                "but within the noise of its steps (slope t under 3)")
    else:
        text = "The step reward did not rise over the run"
    schedule = _schedule(_read(folder / "run.json"))
    if schedule not in ("half", "love-only"):
        text += f" (its references grew harder as it went: {schedule})"
    text += (", and the trained policy kept passing the gate as often as its warm start"
             if met["last_third_passes_as_often"]
             else ", and the trained policy passed the gate a little less often than its warm "
             "start")
    latent = (_read(folder / "analysis.json").get("yardstick") or {}).get("latent")
    if latent and latent.get("t") is not None:
        moved = ("rose" if latent["t"] >= 3 else "fell" if latent["t"] <= -3 else
                 f"drifted {'up' if latent['t'] > 0 else 'down'}, within the noise of its "
                 "steps")
        text += f"; on the judge's fixed scale its paintings {moved}"
    paired = _paired(folder)
    if paired is not None:
        if met["beats_the_warm_start"]:
            text += ("; on fresh samples with the same seeds it beats its warm start against "
                     "the pool's loved paintings")
        elif paired["mean"] > 0:
            text += ("; on fresh samples with the same seeds it scores above its warm start "
                     "against the pool's loved paintings, by less than two standard errors")
        else:
            text += ("; on fresh samples with the same seeds it does not beat its warm start "
                     "against the pool's loved paintings")
    return text + "."


def glue_run(folder: Path | None = None) -> dict[str, str]:
    """Glue :func:`run_figures` and :func:`verdict` (``real-verdict``) for the chapter's prose;
    returns them."""
    from myst_nb import glue

    figures = run_figures(folder) | {"real-verdict": verdict(folder)}
    for name, text in figures.items():
        glue(name, text, display=False)
    return figures


def runs_table(root: Path | None = None) -> str:
    """Every published GRPO run of the model (the folders of ``root``, default the package's
    ``smollm2/``, each with ``analysis.json``) as Markdown, one row a run: its references,
    the training reward by thirds, the judge's fixed scale by thirds (the latent; slope t of
    each), and the love-only evaluation's paired gain over the warm start."""
    from watercolour.notebooks import markdown_table
    from watercolour.results import SMOLLM2

    rows = []
    for folder in sorted(p for p in (root or SMOLLM2).iterdir()
                         if (p / "analysis.json").is_file()):
        analysis, run = _read(folder / "analysis.json"), _read(folder / "run.json")
        reward, slope = analysis["findings"]["reward"], analysis["findings"]["reward_slope"]
        latent = (analysis.get("yardstick") or {}).get("latent")
        paired = _paired(folder)
        schedule = _schedule(run)
        rows.append([
            f"`{folder.name}`", f"`{schedule}`",
            f"{' → '.join(f'{reward[t]:.3f}' for t in THIRDS)} (t {_t(slope['t'])})",
            "—" if not latent else
            f"{' → '.join(f'{latent[t]:.2f}' for t in THIRDS)} (t {_t(latent['t'])})",
            "—" if paired is None else f"{paired['mean']:+.3f} (t {_t(paired['t'])})"])
    return markdown_table(["run", "references", "reward by thirds", "judge's scale by thirds",
                           "vs warm start, love-only"], rows)


def _t(value: float | None) -> str:
    """A t statistic as the table shows it (``—`` where it is undefined: no noise)."""
    return "—" if value is None else f"{value:.1f}"


def evaluation_sheets(folder: Path | None = None) -> Figure:
    """The love-only evaluation's contact sheets (``before.png``, ``after.png`` of the run's
    folder) side by side: the warm start and the trained policy on the same seeds."""
    from PIL import Image

    folder = run_folder(folder)
    figure = Figure(figsize=(12, 3.4))
    for axes, (name, title) in zip(figure.subplots(1, 2),
                                   (("before", "the warm start"), ("after", "after GRPO"))):
        with Image.open(folder / f"{name}.png") as sheet:
            axes.imshow(sheet.convert("RGB"))
        axes.set_title(title)
        axes.axis("off")
    figure.tight_layout()
    return figure


def curve_figure(folder: Path | None = None, window: int = 8) -> Figure:
    """The run's reward per step, its rolling mean over ``window`` steps and each third's mean;
    the same of the judge's fixed scale where the run has it (``analysis.json``'s
    ``yardstick``); and the share of rollouts that passed the gate per step."""
    import pandas as pd

    folder = run_folder(folder)
    curve = read_curve(folder / "metrics.csv")
    analysis = _read(folder / "analysis.json")
    scale = (analysis.get("yardstick") or {}).get("by_step")
    figure = Figure(figsize=(12, 3.6) if scale else (11, 3.6))
    panels = list(figure.subplots(1, 3 if scale else 2))
    _per_step(panels[0], curve["step"], curve["reward"], analysis["findings"]["reward"], window,
              "reward")
    panels[0].set(title=f"SmolLM2-135M, {_schedule(_read(folder / 'run.json'))} references")
    if scale:
        latent = analysis["yardstick"]["latent"]
        _per_step(panels[1], pd.Series(scale["step"]), pd.Series(scale["latent"], dtype=float),
                  latent, window, "judge's latent quality")
        panels[1].set(title="the judge's fixed scale")
    if "gate_pass_rate" in curve:
        panels[-1].plot(curve["step"], curve["gate_pass_rate"], ".-", alpha=0.7)
    panels[-1].set(title="gate pass rate", xlabel="step", ylim=(-0.05, 1.05))
    figure.tight_layout()
    return figure


def _per_step(axes: Any, steps: Any, values: Any, by_third: dict[str, float], window: int,
              label: str) -> None:
    """``values`` per step (dots), their rolling mean over ``window`` steps and each third's
    mean (``by_third``: black lines) on ``axes``."""
    axes.plot(steps, values, ".", alpha=0.5, label="mean of the step")
    axes.plot(steps, values.rolling(window, min_periods=1).mean(), "-",
              label=f"rolling mean ({window} steps)")
    thirds = third_of_steps(steps).to_numpy()
    for i, third in enumerate(THIRDS):
        part = steps[thirds == third]
        if len(part) and by_third.get(third) is not None:
            axes.hlines(by_third[third], part.min(), part.max(), colors="black", linewidth=2,
                        label="mean of the third" if i == 0 else None)
    axes.set(xlabel="step", ylabel=label)
    axes.legend(loc="best", fontsize=7)
