"""A run's paintings measured on one fixed yardstick: the embedded judge's view of each.

A run's reward compares each rollout with the references drawn for its step, so when the draw
changes over the run (a references schedule such as ``linear:0:0.5``, which starts against the
pool's ``okay`` paintings and ends against its ``love`` ones) the reward of a late step is not
comparable with an early one's: the same painting scores lower against harder references.
The pool-fitted judge (:class:`~watercolour.rewards.judge.offline_judge.PoolFittedJudge`) is
deterministic and answers from one latent quality per picture, so every admitted rollout can
be placed on the same scale whatever it was compared with:

- ``latent``: the judge's latent quality of the render as a painting of its subject (only
  differences mean anything; the pool's paintings of the subject give the scale);
- ``wins``: the share of the pool's paintings of the same subject (``love`` and ``okay``, each
  tier also apart) that the judge prefers the render to: the judge term the rollout would earn
  against references drawn from all of them, in the judge's own units.

Both are given per step, by third, with their slope over the steps (``slope_t``), beside the
subject's own paintings' latents.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from watercolour.analysis.rollouts import rollout_png
from watercolour.analysis.thirds import THIRDS, slope_t, third_of_steps
from watercolour.rewards.judge.offline_judge import PoolFittedJudge
from watercolour.rewards.references import ReferencePool, subject_key

TIERS = ("love", "okay")


def subject_latents(judge: PoolFittedJudge, pool: ReferencePool, subject: str
                    ) -> dict[str, list[float]]:
    """The judge's latents of the pool's ``love`` and ``okay`` renders of ``subject`` (by
    :func:`subject_key`), each measured leave-one-out."""
    key = subject_key(subject)
    return {tier: [judge.quality(p.png, subject) for p in pool.tier(tier)
                   if subject_key(p.subject) == key] for tier in TIERS}


def score_rollouts(rollouts: pd.DataFrame, source: str | os.PathLike[str],
                   judge: PoolFittedJudge, pool: ReferencePool) -> pd.DataFrame:
    """One row per admitted rollout with a render: ``step``, ``latent`` and ``wins_love``,
    ``wins_okay``, ``wins`` (shares of the subject's pool paintings the judge prefers it to;
    ``None`` where the pool has none of that tier)."""
    rows = []
    references: dict[str, dict[str, list[float]]] = {}
    admitted = rollouts[rollouts["status"] == "ok"] if "status" in rollouts else rollouts
    for _, item in admitted.iterrows():
        png = rollout_png(item.get("png"), source)
        if png is None:
            continue
        subject = str(item.get("subject") or "")
        if subject not in references:
            references[subject] = subject_latents(judge, pool, subject)
        latent = judge.quality(png, subject)
        theirs = references[subject]
        row = {"step": int(item["step"]), "latent": latent}
        for tier in TIERS:
            row[f"wins_{tier}"] = _share_below(latent, theirs[tier])
        row["wins"] = _share_below(latent, theirs["love"] + theirs["okay"])
        rows.append(row)
    return pd.DataFrame(rows, columns=["step", "latent", *(f"wins_{t}" for t in TIERS), "wins"])


def yardstick(rollouts: pd.DataFrame, source: str | os.PathLike[str], judge: PoolFittedJudge,
              pool: ReferencePool) -> dict[str, Any]:
    """The run on the fixed yardstick: per measure, the mean by third and its slope over the
    per-step means; the latent's median by third; the per-step means of the latent and the
    wins (``by_step``); the subject's pool paintings' latents."""
    scored = score_rollouts(rollouts, source, judge, pool)
    subjects = sorted({str(s or "") for s in rollouts.get("subject", pd.Series(dtype=str))})
    found: dict[str, Any] = {
        "judge": judge.name, "rollouts": len(scored),
        "pool": {s: {tier: [round(v, 3) for v in values]
                     for tier, values in subject_latents(judge, pool, s).items()}
                 for s in subjects},
    }
    if scored.empty:
        return found
    per_step = scored.groupby("step").mean(numeric_only=True).reset_index()
    third = third_of_steps(scored["step"])
    for measure in ("latent", "wins", *(f"wins_{t}" for t in TIERS)):
        means = scored[measure].groupby(third).mean()
        fit = slope_t(per_step["step"], per_step[measure])
        found[measure] = {**{t: _round(means.get(t)) for t in THIRDS},
                          "slope": _round(fit["slope"]), "t": _round(fit["t"])}
    medians = scored["latent"].groupby(third).median()
    found["latent"]["median"] = {t: _round(medians.get(t)) for t in THIRDS}
    found["by_step"] = {"step": [int(s) for s in per_step["step"]],
                        "latent": [_round(v) for v in per_step["latent"]],
                        "wins": [_round(v) for v in per_step["wins"]]}
    return found


def describe(found: dict[str, Any]) -> str:
    """One line: the latent and the pool wins by third, with their slopes' t."""
    if "latent" not in found:
        return "the judge's yardstick: no admitted rollout with a render"
    latent, wins = found["latent"], found["wins"]
    return (f"the judge's yardstick (fixed, whatever the references): latent "
            f"{latent['first']} -> {latent['middle']} -> {latent['last']} (t {latent['t']}); "
            f"wins over the subject's pool paintings {wins['first']} -> {wins['middle']} -> "
            f"{wins['last']} (t {wins['t']})")


def _share_below(value: float, others: list[float]) -> float | None:
    return float(np.mean([value > o for o in others])) if others else None


def _round(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return round(float(value), 4)
