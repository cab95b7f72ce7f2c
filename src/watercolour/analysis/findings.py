"""What the reproduction reported about a run, computed from its curve and its rollouts.

:func:`curve_findings` needs only the per-step curve; :func:`rollout_findings` needs the
rollouts. Every finding whose columns are missing is left out with a note saying why.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from watercolour.analysis.curves import COMPONENTS
from watercolour.analysis.thirds import THIRDS, slope_t, third_of_steps, thirds_means

BAD = 0.3
"""A rollout with a total reward below this is a bad painting (near-blank, shapeless)."""

MIN_SLOPE_T = 3.0
"""The reward's slope t-statistic over the steps from which a run counts as learning."""

MIN_STEPS_TO_JUDGE = 9
"""Fewer steps than this (three a third) are too few for :func:`learning_checks` to mean much."""


def curve_findings(curve: pd.DataFrame, notes: list[str]) -> dict[str, Any]:
    """Reward and component change first → last third, the reward's slope t-statistic, paint
    coverage change, collapsed groups and step time, from a per-step curve. Appends a note to
    ``notes`` for each finding a missing column rules out."""
    found: dict[str, Any] = {"steps": len(curve)}
    if "reward" in curve:
        found["reward"] = _change(curve, "reward")
        found["reward_slope"] = slope_t(curve["step"], curve["reward"])
    else:
        notes.append("no `reward` column: reward change and slope skipped")
    present = [c for c in COMPONENTS if c in curve and curve[c].notna().any()]
    found["components"] = {c: _change(curve, c) for c in present}
    if not present:
        notes.append(f"no component means ({', '.join(COMPONENTS)}): components skipped")
    if "paint_fraction_mean" in curve and curve["paint_fraction_mean"].notna().any():
        found["coverage"] = _change(curve, "paint_fraction_mean")
    else:
        notes.append("no `paint_fraction_mean` column: paint coverage change skipped")
    if "frac_reward_zero_std" in curve:
        zero = curve["frac_reward_zero_std"].dropna()
        found["collapsed"] = {"steps_with_collapse": int((zero > 0).sum()),
                              "max": _num(zero.max()), "mean": _num(zero.mean())}
    else:
        notes.append("no `frac_reward_zero_std` column: collapsed groups skipped")
    if "step_time" in curve and curve["step_time"].notna().any():
        seconds = curve["step_time"].dropna()
        found["step_time"] = {"median_s": _num(seconds.median()), "mean_s": _num(seconds.mean()),
                              "total_h": _num(seconds.sum() / 3600)}
    else:
        notes.append("no `step_time` column: step time skipped")
    return found


def rollout_findings(rollouts: pd.DataFrame, notes: list[str]) -> dict[str, Any]:
    """Bad paintings per third, best-of-step vs median, the share of the mean's gain from bad
    paintings becoming rare, the ceiling, ``n_shapes`` vs reward, collapsed groups and the
    reference draw's effect, from a run's rollouts (one row each)."""
    scored = rollouts[rollouts["reward"].notna()]
    found: dict[str, Any] = {"rollouts": len(rollouts), "scored": len(scored),
                             "unavailable": int(rollouts["reward"].isna().sum())}
    if "status" in rollouts:
        found["status"] = {str(k): int(v) for k, v in rollouts["status"].value_counts().items()}
    if scored.empty:
        notes.append("no rollout has a reward: rollout findings skipped")
        return found
    third = third_of_steps(scored["step"])
    bad = scored["reward"] < BAD
    found["bad"] = {t: {"count": int(bad[third == t].sum()), "share": _num(bad[third == t].mean())}
                    for t in THIRDS}
    per_step = scored.groupby("step")["reward"].agg(best="max", median="median", mean="mean")
    per_step = per_step.reset_index()
    best_median = thirds_means(per_step, ["best", "median", "mean"])
    found["best_vs_median"] = {name: {**means, "moved": _moved(means)}
                               for name, means in best_median.items()}
    found["bad_becoming_rare"] = _gain_from_bad_becoming_rare(scored, third)
    if "status" in scored:
        found["passed"] = _passed_reward(scored)
    good_last = scored["reward"][(third == "last") & ~bad]
    found["ceiling"] = {
        "mean_if_all_good": _num(good_last.mean()),
        "mean": _num(scored["reward"][third == "last"].mean()),
        "note": "last third: the mean reward if every rollout scored like the good ones "
                f"(reward >= {BAD})",
    }
    if "n_shapes" in scored and scored["n_shapes"].notna().sum() >= 3:
        pairs = scored[["n_shapes", "reward"]].dropna()
        found["n_shapes_correlation"] = _num(pairs["n_shapes"].corr(pairs["reward"]))
    else:
        notes.append("no `n_shapes` in the rollouts: its correlation with reward skipped")
    if "paint_fraction" in scored and scored["paint_fraction"].notna().any():
        found["coverage"] = thirds_means(scored.assign(third=third), ["paint_fraction"])[
            "paint_fraction"]
    keys = ["step", "group"] if "group" in scored else ["step"]
    spread = scored.groupby(keys)["reward"].agg(["std", "count"])
    spread = spread[spread["count"] >= 2]
    found["collapsed_groups"] = {"groups": len(spread),
                                 "collapsed": int((spread["std"].fillna(0) == 0).sum())}
    if "references" in scored:
        found["reference_draw"] = _reference_effect(scored)
    else:
        notes.append("no `references` in the rollouts: the reference draw's effect skipped")
    return found


CHECKS = {
    "last_third_above_first": "last third above the first",
    "slope_t_at_least": f"slope t >= {MIN_SLOPE_T:g}",
    "fewer_bad_in_last_third": "fewer bad rollouts in the last third",
    "zero_std_never_1": "frac_reward_zero_std never 1",
}
"""What each of :func:`learning_checks`' answers checks, in words."""


def learning_checks(findings: dict[str, Any], rollouts: dict[str, Any],
                    min_slope_t: float = MIN_SLOPE_T) -> dict[str, bool | None]:
    """Did the run learn? From :func:`curve_findings` and :func:`rollout_findings`: the last
    third's mean reward above the first's, the reward's slope t at least ``min_slope_t``, fewer
    bad rollouts in the last third than in the first, and no step whose groups all had one
    reward (``frac_reward_zero_std`` never 1). ``None`` where the run lacks the data."""
    reward, bad = findings.get("reward") or {}, rollouts.get("bad") or {}
    first, last = reward.get("first"), reward.get("last")
    t = (findings.get("reward_slope") or {}).get("t")
    bad_first, bad_last = ((bad.get(k) or {}).get("count") for k in ("first", "last"))
    zero_max = (findings.get("collapsed") or {}).get("max")
    return {
        "last_third_above_first": None if None in (first, last) else last > first,
        "slope_t_at_least": None if t is None else t >= min_slope_t,
        "fewer_bad_in_last_third": (None if None in (bad_first, bad_last)
                                    else bad_last < bad_first),
        "zero_std_never_1": None if zero_max is None else zero_max < 1,
    }


def describe_checks(checks: dict[str, bool | None]) -> str:
    """``learning_checks``' answers in words, leaving out the ones without data."""
    return ", ".join(f"{CHECKS[k]}: {'yes' if v else 'no'}" for k, v in checks.items()
                     if v is not None)


def describe_learning(findings: dict[str, Any], rollouts: dict[str, Any]) -> str:
    """:func:`learning_checks` in words, or why a run this short cannot be judged."""
    steps = findings.get("steps")
    if steps is not None and steps < MIN_STEPS_TO_JUDGE:
        return (f"too few steps to judge ({steps}; the checks need {MIN_STEPS_TO_JUDGE} or more, "
                "three a third)")
    return describe_checks(learning_checks(findings, rollouts))


def _passed_reward(scored: pd.DataFrame) -> dict[str, Any]:
    """The mean reward of the sketches that passed the gate, by third, and its slope over the
    steps: what the paintings gained, apart from how often the code broke."""
    passed = scored[scored["status"] == "ok"]
    per_step = passed.groupby("step")["reward"].mean().reset_index()
    return {"reward": thirds_means(per_step, ["reward"])["reward"],
            "slope": slope_t(per_step["step"], per_step["reward"]),
            "share_of_rollouts": _num(len(passed) / len(scored))}


def _gain_from_bad_becoming_rare(scored: pd.DataFrame, third: pd.Series) -> dict[str, Any]:
    """Split the change of the mean reward, first → last third, into the part from the share of
    bad paintings changing (at the two thirds' average bad/good gap) and the part from the bad
    and good paintings' own means changing (at the average shares). The two add up exactly."""
    parts = {}
    for t in ("first", "last"):
        rewards = scored["reward"][third == t]
        bad = rewards[rewards < BAD]
        good = rewards[rewards >= BAD]
        parts[t] = {"good_share": len(good) / len(rewards) if len(rewards) else math.nan,
                    "good": good.mean() if len(good) else math.nan,
                    "bad": bad.mean() if len(bad) else math.nan,
                    "mean": rewards.mean() if len(rewards) else math.nan}
    first, last = parts["first"], parts["last"]
    gain = last["mean"] - first["mean"]
    # a side with no bad (or good) paintings: its mean does not move the decomposition
    bad_f, bad_l = _fill(first["bad"], last["bad"])
    good_f, good_l = _fill(first["good"], last["good"])
    share_change = last["good_share"] - first["good_share"]
    composition = share_change * ((good_f + good_l) / 2 - (bad_f + bad_l) / 2)
    within = ((first["good_share"] + last["good_share"]) / 2 * (good_l - good_f)
              + (1 - (first["good_share"] + last["good_share"]) / 2) * (bad_l - bad_f))
    share = composition / gain if gain and not math.isnan(gain) and gain != 0 else None
    return {"gain": _num(gain), "from_fewer_bad": _num(composition),
            "from_better_paintings": _num(within), "share": _num(share)}


def _reference_effect(scored: pd.DataFrame) -> dict[str, Any]:
    """How far each step's mean reward sits from the run's trend line, and, per reference, the
    average of that residual over the steps that drew it: the references that move a step."""
    per_step = scored.groupby("step")["reward"].mean()
    fit = slope_t(per_step.index, per_step.to_numpy())
    slope = fit["slope"] or 0.0
    trend = per_step.mean() + slope * (per_step.index.to_numpy() - per_step.index.to_numpy().mean())
    residual = pd.Series(per_step.to_numpy() - trend, index=per_step.index)
    drawn: dict[str, set] = {}
    for step, refs in zip(scored["step"], scored["references"]):
        for ref in _reference_ids(refs):
            drawn.setdefault(ref, set()).add(step)
    effects = {ref: {"steps": len(steps), "effect": _num(residual.loc[sorted(steps)].mean())}
               for ref, steps in drawn.items()}
    ranked = sorted(effects, key=lambda r: -abs(effects[r]["effect"] or 0.0))
    values = [e["effect"] for e in effects.values() if e["steps"] >= 2 and e["effect"] is not None]
    return {"step_residual_std": _num(residual.std()) if len(residual) > 1 else None,
            "references": len(effects),
            "effect_spread": _num(max(values) - min(values)) if values else None,
            "largest": [{"reference": r, **effects[r]} for r in ranked[:5]]}


def _reference_ids(refs: Any) -> list[str]:
    if refs is None or (isinstance(refs, float) and math.isnan(refs)):
        return []
    if isinstance(refs, str):
        try:
            refs = json.loads(refs)
        except json.JSONDecodeError:
            return [refs]
    if isinstance(refs, dict):
        refs = [refs]
    ids = []
    for ref in list(refs):
        if isinstance(ref, dict):
            ref = ref.get("id", json.dumps(ref, sort_keys=True))
        ids.append(str(ref))
    return sorted(set(ids))


def _change(curve: pd.DataFrame, column: str) -> dict[str, float | None]:
    means = thirds_means(curve, [column])[column]
    return {**means, "moved": _moved(means)}


def _moved(means: dict[str, float | None]) -> float | None:
    first, last = means.get("first"), means.get("last")
    return None if first is None or last is None else last - first


def _fill(a: float, b: float) -> tuple[float, float]:
    if math.isnan(a):
        a = b
    if math.isnan(b):
        b = a
    return (0.0, 0.0) if math.isnan(a) else (a, b)


def _num(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else round(number, 6)


__all__ = ["BAD", "CHECKS", "MIN_SLOPE_T", "curve_findings", "describe_checks",
           "learning_checks", "rollout_findings"]
