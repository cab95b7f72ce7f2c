"""``OUT/metrics.csv``: one row per training step, TRL's names plus this project's.

Columns (fixed, so a resumed run appends to the same table; an empty cell is a missing
value): ``step`` (0-based, the step whose rollouts the row describes, as in the published
curves), TRL's ``reward``, ``reward_std``, ``frac_reward_zero_std``, ``entropy``, ``loss``,
``grad_norm``, ``learning_rate``, ``step_time``, ``completions/mean_length``,
``clipped_ratio``, ``kl`` (mean KL to the reference model; empty when ``beta`` is 0), each
component's ``rewards/<name>/mean``, ours (see :mod:`watercolour.train.reward_source`), and
the step's time split: ``generation_s``, ``rewards_s`` (of which ``render_s``;
``scoring_s`` is the rest) and ``update_s`` (``step_time`` minus generation and rewards).
A run of several turns an episode adds its own columns at the end
(:func:`watercolour.train.episodes.episode_columns`: ``reward_turn1``, ``reward_turn2``, ...).
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from watercolour.io import write_text_atomic
from watercolour.rewards.rubric import NAMES

TRL_COLUMNS = ("reward", "reward_std", "frac_reward_zero_std", "entropy", "loss", "grad_norm",
               "learning_rate", "step_time", "completions/mean_length", "clipped_ratio", "kl")
OUR_COLUMNS = (*(f"{c}_mean" for c in NAMES if c != "gate"), "gate_pass_rate",
               "paint_fraction_mean", "n_shapes_mean", "none_count", "render_seconds_mean",
               "references_love_share")
TIME_COLUMNS = ("generation_s", "rewards_s", "render_s", "scoring_s", "update_s")
COLUMNS: tuple[str, ...] = ("step", *TRL_COLUMNS,
                            *(f"rewards/{c}/mean" for c in NAMES), *OUR_COLUMNS,
                            *TIME_COLUMNS)
RENAMES = {"completions/clipped_ratio": "clipped_ratio", "time/generation_s": "generation_s",
           "time/rewards_s": "rewards_s", "time/render_s": "render_s"}


def row_from_logs(step: int, logs: dict[str, Any], columns: tuple[str, ...] = COLUMNS
                  ) -> dict[str, Any]:
    """One CSV row from a TRL log dict."""
    values = {RENAMES.get(k, k): v for k, v in logs.items()}
    row: dict[str, Any] = {"step": step}
    for column in columns[1:]:
        value = values.get(column)
        if isinstance(value, float) and math.isnan(value):
            value = None
        row[column] = value
    gen, rew, ren, total = (row.get(k) for k in ("generation_s", "rewards_s", "render_s",
                                                   "step_time"))
    if rew is not None and ren is not None:
        row["scoring_s"] = max(0.0, rew - ren)
    if total is not None and gen is not None and rew is not None:
        row["update_s"] = max(0.0, total - gen - rew)
    return row


class MetricsCSV(TrainerCallback):
    """A TRL/transformers callback writing ``metrics.csv`` (each row fsynced); ``extra``:
    columns after :data:`COLUMNS` (a multi-turn run's)."""

    def __init__(self, path: str | Path, extra: tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        self.columns = (*COLUMNS, *extra)

    def rows(self) -> list[dict[str, str]]:
        if not self.path.is_file():
            return []
        with open(self.path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))

    def truncate(self, first_dropped_step: int) -> int:
        """Keep the rows of steps before ``first_dropped_step`` (for ``--resume``)."""
        rows = self.rows()
        kept = [r for r in rows if int(r["step"]) < first_dropped_step]
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=self.columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)
        write_text_atomic(self.path, buffer.getvalue())
        return len(rows) - len(kept)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
        if not logs or "reward" not in logs or not state.is_world_process_zero:
            return
        row = row_from_logs(int(state.global_step) - 1, logs, self.columns)
        new = not self.path.is_file() or self.path.stat().st_size == 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns, lineterminator="\n")
            if new:
                writer.writeheader()
            writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
            handle.flush()
            os.fsync(handle.fileno())
