"""The plumbing of the chapter "Rollouts": a tiny run trained when no rollouts are given, the
outcome counts and tables, the reward scatter, the strips of the best and the worst rollouts
and the chapter's ``rollouts.json``."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from watercolour.analysis import reward_breakdown
from watercolour.analysis.rollouts import rollout_png
from watercolour.notebooks import markdown_table, resolve_path, shown_path

STATUS_COLOURS = {"ok": "tab:green", "rejected": "tab:red", "unavailable": "tab:grey"}


@dataclass
class TinyRun:
    """A tiny run trained by the chapter itself."""

    rollouts: str
    """Its rollouts folder."""
    seconds: float
    said: str
    """The trainer's last line of output."""


def train_tiny(out: str | os.PathLike[str], mode: str, max_steps: int = 1) -> TinyRun:
    """Train ``max_steps`` of the ``tiny-cpu`` recipe with the ``hps-only`` mix into ``out``
    (``watercolour train``, a subprocess). Only ``mode="tiny"`` trains here: any other mode
    raises ``ValueError`` (its run needs a GPU and the training chapter)."""
    if mode != "tiny":
        raise ValueError(f"mode {mode!r} trains on a GPU: run the training chapter first and "
                         "set `rollouts` to its rollouts folder")
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "watercolour", "train", "--config", "tiny-cpu",
                           "--max-steps", str(max_steps), "--mix", "hps-only",
                           "--out", str(out)], capture_output=True, text=True)
    if proc.returncode != 0:  # the trainer's own last words, not its progress bars
        raise RuntimeError("training the tiny run failed: "
                           + " | ".join(proc.stderr.strip().splitlines()[-5:]))
    said = (proc.stdout.strip().splitlines() or ["trained"])[-1]
    return TinyRun(str(Path(out) / "rollouts"), round(time.perf_counter() - started, 1), said)


def rollouts_to_read(rollouts: str, run_dir: Path, mode: str,
                     max_steps: int = 1) -> tuple[str, TinyRun | None]:
    """The rollouts the chapter reads: ``rollouts`` (a relative path from the project root,
    or absolute) when given, else those of a tiny run trained into ``run_dir``
    (:func:`train_tiny`); and that run (``None`` when none was trained)."""
    if rollouts:
        return str(resolve_path(rollouts)), None
    run = train_tiny(run_dir, mode, max_steps)
    return run.rollouts, run


def describe_source(frame: pd.DataFrame, source: str, run: TinyRun | None) -> str:
    """What was read from where (a reader's path), after the trainer's last line when the
    chapter trained the run itself."""
    line = (f"{len(frame)} rollouts over {frame['step'].nunique()} steps from "
            f"{shown_path(source)}")
    return f"{run.said} ({run.seconds} s)\n{line}" if run is not None else line


def outcomes(frame: pd.DataFrame) -> tuple[Counter[str], Counter[str]]:
    """How many rollouts had each status, and how often each violation was named."""
    statuses = Counter(str(s) for s in frame.get("status", []))
    violations = Counter(str(v) for vs in frame.get("violations", [])
                         if vs is not None and not isinstance(vs, (str, float)) for v in list(vs))
    return statuses, violations


def steps_table(frame: pd.DataFrame) -> str:
    """Markdown: per step, the rollouts and their mean and best reward."""
    by_step = frame.groupby("step")["reward"].agg(["count", "mean", "max"]).reset_index()
    return markdown_table(["step", "rollouts", "mean reward", "best"],
                          [[int(r.step), int(r["count"]), f"{r['mean']:.3f}", f"{r['max']:.3f}"]
                           for _, r in by_step.iterrows()])


def reward_scatter(frame: pd.DataFrame) -> Figure:
    """Every rollout's reward against its step, coloured by status (no reward: just below 0;
    the rollouts of a step spread a little by their index)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.4))
    for status, rows in frame.groupby(frame["status"].astype(str)):
        reward = rows["reward"].fillna(-0.05)
        jitter = (rows["index"].fillna(0) - 3.5) * 0.03 if "index" in rows else 0
        ax.scatter(rows["step"] + jitter, reward, s=24, alpha=0.8,
                   color=STATUS_COLOURS.get(str(status), "tab:blue"),
                   label=f"{status} ({len(rows)})")
    ax.set_title("Every rollout's reward, by step")
    ax.set_xlabel("step")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_ylabel("reward (unavailable: below 0)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """The rollouts with a reward, highest first (ties keep their order)."""
    return frame.dropna(subset=["reward"]).sort_values("reward", kind="stable").iloc[::-1]


def _reward(value: Any) -> str:
    return "–" if value is None or value != value else f"{value:.2f}"


def strip(rows: pd.DataFrame, title: str, source: str | os.PathLike[str]) -> Figure:
    """The pictures of ``rows`` in a row (``no picture`` where there is none), each titled with
    its step, index, reward and status; ``source`` is the rollouts' folder or file."""
    import matplotlib.pyplot as plt
    from PIL import Image

    n = max(len(rows), 1)
    fig, axes = plt.subplots(1, n, figsize=(2 * n, 2.5), squeeze=False)
    for ax in axes[0]:
        ax.set_xticks([])
        ax.set_yticks([])
    for ax, (_, row) in zip(axes[0], rows.iterrows()):
        png = rollout_png(row.get("png"), source)
        if png:
            ax.imshow(Image.open(io.BytesIO(png)))
        else:
            ax.text(0.5, 0.5, "no picture", ha="center", va="center", color="grey")
        ax.set_title(f"step {row['step']} #{row.get('index')}\n{_reward(row['reward'])} · "
                     f"{row.get('status')}", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def best_rollout(frame: pd.DataFrame) -> pd.Series:
    """The rollout with the highest reward (the last of equals); the first when none has one."""
    scored = ranked(frame)
    return scored.iloc[0] if len(scored) else frame.iloc[0]


def breakdown_table(row: Any) -> str:
    """Markdown: the row's reward term by term (raw score, weight, what it added)."""
    return markdown_table(
        ["term", "raw", "weight", "adds"],
        [[t["term"], *("–" if v is None else f"{v:.3f}" for v in
                       (t["raw"], t["weight"], t["contribution"]))]
         for t in reward_breakdown(row)])


def sketch_or_reply(row: Any, chars: int = 120) -> str:
    """The row's sketch, else the start of the reply that held none."""
    sketch, reply = row.get("sketch"), row.get("completion")
    if isinstance(sketch, str) and sketch:
        return sketch
    return f"(no sketch: the reply was {(reply if isinstance(reply, str) else '')[:chars]!r})"


def _int_or_none(value: Any) -> int | None:
    return None if value is None or value != value else int(value)


def rollouts_summary(frame: pd.DataFrame, source: str | os.PathLike[str], best: Any,
                     gallery: str | os.PathLike[str], trained_here_s: float | None,
                     parameters: dict[str, Any]) -> dict[str, Any]:
    """The chapter's ``rollouts.json``: counts by step, status and violation, the rollouts
    with a picture, the best rollout and the gallery's path."""
    statuses, violations = outcomes(frame)
    return {
        "parameters": parameters,
        "trained_here_s": trained_here_s,
        "rollouts": len(frame),
        "steps": int(frame["step"].nunique()),
        "status": dict(statuses),
        "violations": dict(violations),
        "with_picture": int(sum(rollout_png(p, source) is not None
                                for p in frame.get("png", []))),
        "best": {"step": int(best["step"]), "index": _int_or_none(best.get("index")),
                 "reward": None if best["reward"] != best["reward"] else float(best["reward"])},
        "gallery": str(gallery),
    }
