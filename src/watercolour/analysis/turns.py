"""What a run of multi-turn episodes did, turn by turn (:mod:`watercolour.train.episodes`).

:func:`turn_curve_findings` reads the curve's ``reward_turn1`` ... ``reward_turnK`` columns:
each turn's reward by thirds and its slope over the steps, and the revision's paired gain over
the first attempt (per step: the last turn's mean minus the first's; the t-statistic is over
the steps of each third). :func:`turn_rollout_findings` pairs each episode's first and last
turns in the rollout log: outcomes, what the revision changed (the same sketch again, a
rejected sketch repaired, a passing one broken, shapes and paint) and the share that scored
higher, by third.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from watercolour.analysis.findings import _num
from watercolour.analysis.thirds import THIRDS, slope_t, third_of_steps, thirds_means

TURN_COLUMN = re.compile(r"^reward_turn(\d+)$")
EPISODE_KEYS = ("step", "group", "index")
"""What names an episode in the rollout log (each of its turns has the same three)."""


def has_turns(rollouts: pd.DataFrame) -> bool:
    """Whether a rollout log is of episodes of several turns (a ``turn`` column, two values)."""
    return "turn" in rollouts and rollouts["turn"].nunique() > 1


def turn_columns(curve: pd.DataFrame) -> list[str]:
    """The curve's ``reward_turnN`` columns with a value, in turn order."""
    found = [(int(m.group(1)), c) for c in curve.columns if (m := TURN_COLUMN.match(c))
             and curve[c].notna().any()]
    return [c for _, c in sorted(found)]


def paired_gain(later: pd.Series, earlier: pd.Series) -> dict[str, float | None]:
    """Mean of ``later - earlier`` over the rows where both are known, its standard deviation,
    and the paired t-statistic (``None`` with fewer than two pairs or no spread)."""
    diff = (pd.to_numeric(later, errors="coerce") - pd.to_numeric(earlier, errors="coerce")
            ).dropna()
    n = len(diff)
    if n < 2:
        return {"mean": _num(diff.mean()) if n else None, "sd": None, "t": None, "n": n}
    mean, sd = float(diff.mean()), float(diff.std(ddof=1))
    t = mean / (sd / math.sqrt(n)) if sd > 1e-12 else None
    return {"mean": _num(mean), "sd": _num(sd), "t": _num(t), "n": n}


def turn_curve_findings(curve: pd.DataFrame) -> dict[str, Any] | None:
    """Per turn: the reward by thirds and its slope; the last turn's paired gain over the
    first by third and over the run; ``revision_beats_first`` by thirds. ``None`` for a curve
    of fewer than two turns."""
    columns = turn_columns(curve)
    if len(columns) < 2:
        return None
    first, last = columns[0], columns[-1]
    third = third_of_steps(curve["step"])
    found: dict[str, Any] = {
        "turns": len(columns),
        "by_turn": {c: {**thirds_means(curve, [c])[c],
                        "slope": _rounded(slope_t(curve["step"], curve[c]))} for c in columns},
        "revision_gain": {
            **{t: paired_gain(curve[last][third == t], curve[first][third == t])
               for t in THIRDS},
            "all": paired_gain(curve[last], curve[first])},
    }
    if "revision_beats_first" in curve and curve["revision_beats_first"].notna().any():
        found["revision_beats_first"] = thirds_means(curve, ["revision_beats_first"])[
            "revision_beats_first"]
    return found


def episode_pairs(rollouts: pd.DataFrame) -> pd.DataFrame:
    """One row per episode with a first and a later turn: the first turn's fields suffixed
    ``_first``, the last turn's ``_last``, and ``unchanged`` (the revision repeated the
    sketch, spaces aside; with sketches in the log) (an episode that ended at turn 1 has no
    row)."""
    if "turn" not in rollouts:
        return pd.DataFrame()
    frame = rollouts.assign(turn=pd.to_numeric(rollouts["turn"], errors="coerce"))
    keys = list(EPISODE_KEYS)
    first = frame[frame["turn"] == 1]
    last = frame.sort_values("turn").groupby(keys, as_index=False).tail(1)
    last = last[last["turn"] > 1]
    pairs = first.merge(last, on=keys, suffixes=("_first", "_last"))
    if "sketch_first" in pairs:
        pairs["unchanged"] = (pairs["sketch_first"].fillna("").str.strip()
                              == pairs["sketch_last"].fillna("").str.strip())
    return pairs


def last_turns(rollouts: pd.DataFrame) -> pd.DataFrame:
    """Each episode's last turn (the one its reward scores), in step order."""
    ordered = rollouts.assign(turn=pd.to_numeric(rollouts["turn"], errors="coerce")
                              ).sort_values("turn", kind="stable")
    last = ordered.groupby(list(EPISODE_KEYS)).tail(1)
    return last.sort_values(["step", "index"], kind="stable").reset_index(drop=True)


def turn_rollout_findings(rollouts: pd.DataFrame) -> dict[str, Any] | None:
    """Per turn: outcomes; per third, of the episodes with a revision: how many, the share whose
    revision scored higher than the first attempt, repeated the sketch unchanged, repaired a
    rejected sketch, broke a passing one, and the mean change in shapes and paint. ``None``
    for a log without turns."""
    pairs = episode_pairs(rollouts)
    if pairs.empty:
        return None
    outcomes = {int(t): {str(k): int(v) for k, v in part["status"].value_counts().items()}
                for t, part in rollouts.groupby(pd.to_numeric(rollouts["turn"]))}
    pairs["third"] = third_of_steps(pairs["step"]).to_numpy()

    def block(part: pd.DataFrame) -> dict[str, Any]:
        both = part[part["reward_first"].notna() & part["reward_last"].notna()]
        ok_first, ok_last = part["status_first"] == "ok", part["status_last"] == "ok"
        return {"episodes": len(part),
                "revision_higher": _num((both["reward_last"] > both["reward_first"]).mean()),
                "revision_lower": _num((both["reward_last"] < both["reward_first"]).mean()),
                "reward_first": _num(both["reward_first"].mean()),
                "reward_last": _num(both["reward_last"].mean()),
                "unchanged_sketch": _num(part["unchanged"].mean())
                if "unchanged" in part and len(part) else None,
                "repaired": int((~ok_first & ok_last).sum()),
                "broken": int((ok_first & ~ok_last).sum()),
                "n_shapes_change": _change(part, "n_shapes"),
                "paint_fraction_change": _change(part, "paint_fraction")}

    return {"outcomes_by_turn": outcomes,
            "episodes_with_revision": len(pairs),
            "by_third": {t: block(pairs[pairs["third"] == t]) for t in THIRDS},
            "all": block(pairs)}


def _change(pairs: pd.DataFrame, name: str) -> float | None:
    if f"{name}_first" not in pairs:
        return None
    both = pairs[(pairs["status_first"] == "ok") & (pairs["status_last"] == "ok")]
    return _num((both[f"{name}_last"] - both[f"{name}_first"]).mean())


def _rounded(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: (_num(v) if k != "n" else v) for k, v in stats.items()}


__all__ = ["episode_pairs", "has_turns", "last_turns", "paired_gain", "turn_columns",
           "turn_curve_findings", "turn_rollout_findings"]
