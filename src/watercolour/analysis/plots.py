"""Figures of a run's curve: reward with its rolling mean and spread, the reward's terms, paint
coverage and step time. Each returns a matplotlib ``Figure`` with a title and labelled axes."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from watercolour.analysis.curves import COMPONENTS


def plot_reward(curve: pd.DataFrame, window: int = 10, title: str = "Group reward") -> Figure:
    """Per-step mean reward, its rolling mean over ``window`` steps and, when the curve has
    ``reward_std``, the group's spread (mean ± one standard deviation)."""
    figure = Figure(figsize=(8, 3.6))
    ax = figure.add_subplot()
    steps, reward = curve["step"], curve["reward"]
    if "reward_std" in curve:
        ax.fill_between(steps, reward - curve["reward_std"], reward + curve["reward_std"],
                        alpha=0.15, color="tab:blue", label="± group std")
    ax.plot(steps, reward, color="tab:blue", alpha=0.45, lw=1, label="step mean")
    ax.plot(steps, reward.rolling(window, min_periods=1).mean(), color="tab:blue", lw=2.2,
            label=f"rolling mean ({window} steps)")
    ax.set(title=title, xlabel="step", ylabel="reward")
    ax.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    return figure


def plot_components(curve: pd.DataFrame, window: int = 10,
                    title: str = "Reward terms (group means)") -> Figure:
    """The rolling mean of each reward term the curve has (``judge_mean``, ``hps_mean`` ...)."""
    figure = Figure(figsize=(8, 3.6))
    ax = figure.add_subplot()
    for name in COMPONENTS:
        if name in curve and curve[name].notna().any():
            ax.plot(curve["step"], curve[name].rolling(window, min_periods=1).mean(), lw=1.8,
                    label=name.removesuffix("_mean"))
    ax.set(title=title, xlabel="step", ylabel=f"rolling mean ({window} steps)")
    ax.legend(loc="best", fontsize=8)
    figure.tight_layout()
    return figure


def plot_series(curve: pd.DataFrame, column: str, title: str, ylabel: str,
                window: int = 10, scale: float = 1.0) -> Figure:
    """One column per step (times ``scale``) with its rolling mean."""
    figure = Figure(figsize=(8, 3.2))
    ax = figure.add_subplot()
    values = curve[column] * scale
    ax.plot(curve["step"], values, color="tab:green", alpha=0.45, lw=1, label="per step")
    ax.plot(curve["step"], values.rolling(window, min_periods=1).mean(), color="tab:green",
            lw=2.2, label=f"rolling mean ({window} steps)")
    ax.set(title=title, xlabel="step", ylabel=ylabel)
    ax.legend(loc="best", fontsize=8)
    figure.tight_layout()
    return figure


def plot_coverage(curve: pd.DataFrame, window: int = 10) -> Figure:
    """Paint coverage (``paint_fraction_mean``): the share of the canvas with paint on it."""
    return plot_series(curve, "paint_fraction_mean", "Paint coverage", "share of canvas painted",
                       window)


def plot_step_time(curve: pd.DataFrame, window: int = 10) -> Figure:
    """Minutes per training step (``step_time`` in seconds)."""
    return plot_series(curve, "step_time", "Step time", "minutes per step", window, 1 / 60)


def write_plots(curve: pd.DataFrame, folder, window: int = 10, name: str = "") -> list:
    """The curves the book's analysis chapter shows, as PNGs in ``folder`` (created):
    ``reward.png``, ``components.png``, ``coverage.png`` and ``step-time.png``, each written
    when the curve has its columns. Returns the paths written."""
    from pathlib import Path

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    suffix = f" ({name})" if name else ""
    figures = []
    if "reward" in curve:
        figures.append(("reward.png", plot_reward(curve, window, title="Group reward" + suffix)))
    if any(c in curve and curve[c].notna().any() for c in COMPONENTS):
        figures.append(("components.png", plot_components(
            curve, window, title="Reward terms (group means)" + suffix)))
    for column, file_name, plot in (("paint_fraction_mean", "coverage.png", plot_coverage),
                                    ("step_time", "step-time.png", plot_step_time)):
        if column in curve and curve[column].notna().any():
            figure = plot(curve, window)
            figure.axes[0].set_title(figure.axes[0].get_title() + suffix)
            figures.append((file_name, figure))
    written = []
    for file_name, figure in figures:
        figure.savefig(out / file_name, dpi=120)
        written.append(out / file_name)
    return written
