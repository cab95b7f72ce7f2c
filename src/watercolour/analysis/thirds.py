"""Split a run's steps into three consecutive, equal-as-possible parts and compare them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

THIRDS = ("first", "middle", "last")


def third_of_steps(steps: Sequence[float] | pd.Series) -> pd.Series:
    """For each value in ``steps``, which third of the run's distinct steps it falls in
    (``"first"``, ``"middle"``, ``"last"``). The distinct steps, sorted, are split into three
    consecutive parts whose sizes differ by at most one, the larger parts first (as
    ``numpy.array_split``)."""
    values = pd.Series(steps)
    distinct = np.sort(values.dropna().unique())
    label = {}
    for name, part in zip(THIRDS, np.array_split(distinct, 3)):
        label.update({step: name for step in part})
    return values.map(label)


def thirds_means(frame: pd.DataFrame, columns: Sequence[str] | None = None,
                 step: str = "step") -> dict[str, dict[str, float | None]]:
    """``{column: {"first": mean, "middle": mean, "last": mean}}`` over the thirds of the steps;
    a third with no value is ``None``. Default columns: every numeric one but ``step``."""
    names = list(columns) if columns is not None else [
        c for c in frame.columns if c != step and pd.api.types.is_numeric_dtype(frame[c])]
    parts = third_of_steps(frame[step])
    result: dict[str, dict[str, float | None]] = {}
    for name in names:
        means = frame[name].groupby(parts).mean()
        result[name] = {t: _number(means.get(t)) for t in THIRDS}
    return result


def slope_t(steps: Sequence[float], values: Sequence[float]) -> dict[str, float | None]:
    """Least-squares slope of ``values`` on ``steps``, its standard error and t-statistic
    (``None`` where fewer than three points or no spread make them undefined)."""
    x = np.asarray(steps, dtype=float)
    y = np.asarray(values, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = len(x)
    if n < 3 or np.ptp(x) == 0:
        return {"slope": None, "stderr": None, "t": None, "n": n}
    xc = x - x.mean()
    slope = float((xc * (y - y.mean())).sum() / (xc**2).sum())
    residual = y - y.mean() - slope * xc
    stderr = math.sqrt(float((residual**2).sum()) / (n - 2) / float((xc**2).sum()))
    t = slope / stderr if stderr > 1e-12 * max(1.0, abs(slope)) else None  # else: no noise
    return {"slope": slope, "stderr": stderr, "t": t, "n": n}


def _number(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else number
