"""Chapter 07, "The full 35B run on an H200": the plumbing behind its cells (the LoRA plans in
words, the memory and cost lines, the replayed curves' figure and summary), so the chapter
shows the recipe, the plan, the launcher and the curves."""

from __future__ import annotations

import shlex
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from watercolour.analysis import published_curve, read_curve, thirds_means

PLAN_KEYS = ("layers_adapted", "layers_total", "trainable_params", "experts_frozen")
"""What the chapter's results keep of a LoRA plan."""

MEMORY_KEYS = ("weights_gib", "lora_and_optimizer_gib", "activations_gib", "logits_gib",
               "kv_cache_gib", "total_gib")
"""The parts of the memory estimate, in the order the chapter prints them."""

STEP_MINUTES = (15, 18)
"""The reproduction's minutes per step on one H200 (its write-up)."""

CURVE_PANELS = (("reward", "group reward"), ("paint_fraction_mean", "paint coverage"),
                ("reward_std", "reward spread in a group"))
"""The replayed curves' columns and their panels' titles."""


def plan_record(plan: dict[str, Any]) -> dict[str, Any]:
    """The :data:`PLAN_KEYS` of a LoRA plan (``dry_run(...)["lora_plan"]``)."""
    return {k: plan[k] for k in PLAN_KEYS}


def describe_plans(plan: dict[str, Any], dense: dict[str, Any]) -> str:
    """The all-linear plan and the dense-model module list's plan, in three lines: the layers
    each adapts, the trainable parameters, whether the routed experts stay frozen."""
    return "\n".join([
        f"all-linear: {plan['layers_adapted']}/{plan['layers_total']} decoder layers adapted "
        f"{plan['layers_adapted_by_type']}",
        f"trainable: {plan['trainable_params']:,} of {plan['total_params']:,} "
        f"({plan['trainable_fraction']:.4%}); routed experts frozen: {plan['experts_frozen']}",
        f"dense-model list {dense['target_modules']}: attention adapted in "
        f"{dense['layers_adapted']}/{dense['layers_total']} layers "
        f"{dense['layers_adapted_by_type']}, {dense['trainable_params']:,} trainable"])


def describe_memory(memory: dict[str, Any]) -> str:
    """The memory estimate of a LoRA plan, a line per part, then whether it fits one GPU."""
    lines = [f"{key:<24} {memory[key]:>7.2f} GiB" for key in MEMORY_KEYS]
    lines.append(f"one H200: {memory['gpu_gib']} GiB -> fits: {memory['fits']}  "
                 f"({memory['assumptions']})")
    return "\n".join(lines)


def reproduction_hours(steps: int, minutes: tuple[float, float] = STEP_MINUTES) -> list[float]:
    """The GPU-hours of ``steps`` steps at the reproduction's ``minutes`` a step (low, high)."""
    return [steps * m / 60 for m in minutes]


def projected_hours(bench: dict[str, Any], steps: int,
                    workers: str = "8") -> tuple[list[float], str]:
    """From ``benchmarks/train_bench.py``'s result: the hours of ``steps`` steps with this
    project's renderer and ``workers`` browsers (low, high), and a line saying so."""
    projected = bench["projection_35b_step"]
    at = projected["by_workers"][workers]
    hours = [steps * (other + at["rendering_s"]) / 3600 for other in projected["non_rendering_s"]]
    line = (f"with this project's renderer and {workers} browsers: rendering "
            f"{at['share_min']:.1%}-{at['share_max']:.1%} of a step, "
            f"{hours[0]:.1f}-{hours[1]:.1f} H200-hours for the run")
    return hours, line


def format_command(command: list[str]) -> str:
    """A launch command (:func:`watercolour.train.launch.launch_command`) in two shell lines:
    the launcher up to ``--``, then, indented, what the job runs."""
    cut = command.index("--") + 1 if "--" in command else len(command)
    head, tail = shlex.join(command[:cut]), shlex.join(command[cut:])
    return f"{head} \\\n    {tail}" if tail else head


def read_published(mixes: str) -> dict[str, pd.DataFrame]:
    """The published curves named in ``mixes`` (comma-separated, e.g. ``hps-only,hps-led``)."""
    return {mix.strip(): read_curve(published_curve(mix.strip()))
            for mix in mixes.split(",") if mix.strip()}


def curves_figure(curves: dict[str, pd.DataFrame], window: int = 10) -> Figure:
    """One panel per :data:`CURVE_PANELS` column: each run's steps (faint) and their rolling
    mean over ``window`` steps, in the run's colour."""
    figure = Figure(figsize=(13, 3.6))
    axes = figure.subplots(1, len(CURVE_PANELS))
    for mix, curve in curves.items():
        for ax, (column, title) in zip(axes, CURVE_PANELS):
            line, = ax.plot(curve["step"], curve[column], alpha=0.25)
            ax.plot(curve["step"], curve[column].rolling(window, min_periods=1).mean(),
                    color=line.get_color(), label=mix)
            ax.set(title=title, xlabel="step")
    axes[0].legend()
    figure.tight_layout()
    return figure


def curve_summary(curves: dict[str, pd.DataFrame]) -> dict[str, dict[str, Any]]:
    """Per run: its steps, the reward's and paint coverage's first and last third (rounded to
    4 places, so that 2 places quoted from them match the curve's) and the steps with a
    collapsed group (``frac_reward_zero_std`` above 0)."""
    summary = {}
    for mix, curve in curves.items():
        parts = thirds_means(curve, ["reward", "paint_fraction_mean"])
        reward, cover = parts["reward"], parts["paint_fraction_mean"]
        summary[mix] = {"steps": len(curve),
                        "reward_thirds": [round(reward["first"], 4), round(reward["last"], 4)],
                        "paint_thirds": [round(cover["first"], 4), round(cover["last"], 4)],
                        "collapsed_steps": int((curve["frac_reward_zero_std"] > 0).sum())}
    return summary


def describe_summary(summary: dict[str, dict[str, Any]]) -> str:
    """:func:`curve_summary` in a line per run."""
    return "\n".join(
        f"{mix:<9} {s['steps']} steps: reward {s['reward_thirds'][0]:.2f} -> "
        f"{s['reward_thirds'][1]:.2f} (first -> last third), paint coverage "
        f"{s['paint_thirds'][0]:.2f} -> {s['paint_thirds'][1]:.2f}, groups collapsed: "
        f"{s['collapsed_steps']}" for mix, s in summary.items())
