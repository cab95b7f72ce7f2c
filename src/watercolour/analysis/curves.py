"""Per-step training curves: read a curve CSV (TRL's column names plus component means) and
find the reproduction's published curves shipped with the package."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import pandas as pd

from watercolour.errors import InputError
from watercolour.rewards.rubric import NAMES

PUBLISHED = {"hps-only": "curve-hps-only.csv", "hps-led": "curve-hps-led.csv"}
"""The reproduction's published curves (``analysis/data/``, BSD-3-Clause), by reward mix."""

COMPONENTS = (*(f"{c}_mean" for c in NAMES if c != "gate"), "quality_mean",
              "paint_fraction_mean", "gate_mean")
"""Per-step means of the reward's terms a curve may carry (any subset): one per component of
the rubric (``length_mean``, ``judge_mean``, ``hps_mean``, ``pigment_mean``), the published
curves' ``quality_mean``, the paint coverage and the gate."""


def published_curve(mix: str) -> Path:
    """The path of a published curve shipped with the package: ``"hps-only"`` or ``"hps-led"``."""
    if mix not in PUBLISHED:
        raise InputError(f"no published curve {mix!r}; choose one of {', '.join(PUBLISHED)}")
    return Path(str(resources.files("watercolour.analysis") / "data" / PUBLISHED[mix]))


def read_curve(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a per-step curve CSV, sorted by ``step`` (the row number when there is no ``step``
    column). Non-numeric columns are dropped; empty cells are NaN.

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for a file that is not
    a CSV with at least one numeric column and one row.
    """
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"curve not found: {source}")
    try:
        frame = pd.read_csv(source)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise InputError(f"{source} is not a curve CSV: {err}") from err
    numeric = frame.apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all")
    if numeric.empty:
        raise InputError(f"{source} has no numeric columns: not a curve CSV")
    if "step" not in numeric.columns:
        numeric.insert(0, "step", range(len(numeric)))
    numeric = numeric[numeric["step"].notna()]
    return numeric.sort_values("step", kind="stable").reset_index(drop=True)


def numeric_columns(curve: pd.DataFrame) -> list[str]:
    """The curve's numeric columns other than ``step``."""
    return [c for c in curve.columns if c != "step"]


SLOTS = ("judge", "hps")
"""The reward's model slots, named by role; what filled them is in each run's ``run.json``."""


def slot_backends(run_dir: str | os.PathLike[str]) -> str:
    """What filled the reward's model slots in a run (its ``run.json``), for a figure's title:
    ``judge: pool-fitted, hps: offline-aesthetic``; ``backends not recorded`` without one."""
    import json

    path = Path(run_dir) / "run.json"
    try:
        reward = json.loads(path.read_text(encoding="utf-8")).get("reward") or {}
    except (OSError, ValueError):
        reward = {}
    named = [f"{slot}: {reward[slot]}" for slot in SLOTS if reward.get(slot)]
    return ", ".join(named) if named else "backends not recorded"
