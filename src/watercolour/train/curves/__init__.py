"""The reproduction's published training curves (BSD-3-Clause; see ``README.md`` here):
per-step group means of two full 35B-A3B runs, to replay instead of training.

>>> rows = load_curve("hps-led")
>>> thirds(rows, "reward")   # first third -> last third: (0.57..., 0.82...)
"""

from __future__ import annotations

import csv
from importlib import resources
from statistics import mean

CURVES = {"hps-only": "curve-hps-only.csv", "hps-led": "curve-hps-led.csv"}


def load_curve(mix: str) -> list[dict[str, float | None]]:
    """One run's rows (``step`` and the metrics; None for an empty cell)."""
    if mix not in CURVES:
        raise KeyError(f"no published curve for {mix!r}; choose from {sorted(CURVES)}")
    text = resources.files("watercolour.train.curves").joinpath(CURVES[mix]).read_text("utf-8")
    rows = []
    for raw in csv.DictReader(text.splitlines()):
        rows.append({k: (float(v) if v not in ("", None) else None) for k, v in raw.items()})
    return rows


def thirds(rows: list[dict[str, float | None]], column: str) -> tuple[float, float]:
    """The column's mean over the first third of the steps and over the last third."""
    values = [r[column] for r in rows]
    n = len(values) // 3
    first = [v for v in values[:n] if v is not None]
    last = [v for v in values[-n:] if v is not None]
    return mean(first), mean(last)
