"""One call for the whole analysis of a run: :func:`analyse` a curve CSV (and its rollouts)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from watercolour.analysis.curves import numeric_columns, read_curve
from watercolour.analysis.findings import (
    curve_findings,
    describe_learning,
    rollout_findings,
)
from watercolour.analysis.rollouts import read_rollouts
from watercolour.analysis.thirds import thirds_means
from watercolour.analysis.turns import (
    has_turns,
    last_turns,
    turn_curve_findings,
    turn_rollout_findings,
)


@dataclass
class Analysis:
    """The results of :func:`analyse`, JSON-ready (``asdict``)."""

    curve: str
    thirds: dict[str, dict[str, float | None]]
    """Every numeric column of the curve -> its mean over the first, middle and last third."""
    findings: dict[str, Any]
    rollouts: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    """What was skipped and why (a column or the rollouts missing)."""
    turns: dict[str, Any] | None = None
    """A run of multi-turn episodes: :func:`~watercolour.analysis.turns.turn_curve_findings`
    (``curve``) and :func:`~watercolour.analysis.turns.turn_rollout_findings` (``rollouts``)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary_lines(self) -> list[str]:
        """A few lines for people: the headline numbers, then the notes."""
        f = self.findings
        lines = [f"{self.curve}: {f['steps']} steps"]
        for name, change in [("reward", f.get("reward")), *f.get("components", {}).items()]:
            if change and change["first"] is not None and change["last"] is not None:
                lines.append(f"  {name}: {change['first']:.3f} -> {change['middle']:.3f} -> "
                             f"{change['last']:.3f} (first / middle / last third)")
        if f.get("reward_slope", {}).get("t") is not None:
            s = f["reward_slope"]
            lines.append(f"  reward slope {s['slope']:+.5f}/step, t = {s['t']:.1f}")
        if "collapsed" in f:
            lines.append(f"  steps with a collapsed group: {f['collapsed']['steps_with_collapse']}")
        if "step_time" in f:
            lines.append(f"  step time: median {f['step_time']['median_s']:.0f} s, "
                         f"{f['step_time']['total_h']:.1f} h in all")
        r = self.rollouts
        if r and "bad" in r:
            bad = " -> ".join(str(r["bad"][t]["count"]) for t in ("first", "middle", "last"))
            lines.append(f"  rollouts: {r['rollouts']} ({r['unavailable']} unavailable); "
                         f"below 0.3 by third: {bad}")
            share = r["bad_becoming_rare"]["share"]
            if share is not None:
                lines.append(f"  share of the mean's gain from fewer bad paintings: {share:.2f}")
            passed = r.get("passed") or {}
            if (passed.get("slope") or {}).get("t") is not None:
                p = passed["reward"]
                lines.append(f"  sketches that passed the gate ({passed['share_of_rollouts']:.0%}):"
                             f" {p['first']:.3f} -> {p['middle']:.3f} -> {p['last']:.3f}, "
                             f"slope t = {passed['slope']['t']:.1f}")
            bm = r["best_vs_median"]
            if bm["best"]["moved"] is not None:
                lines.append(f"  best-of-step moved {bm['best']['moved']:+.3f}, median "
                             f"{bm['median']['moved']:+.3f}")
        lines += turn_lines(self.turns)
        checks = describe_learning(f, r or {})
        if checks:
            lines.append(f"  learned? {checks}")
        lines += [f"  note: {n}" for n in self.notes]
        return lines


def analyse(curve: str | os.PathLike[str],
            rollouts: str | os.PathLike[str] | pd.DataFrame | None = None) -> Analysis:
    """Analyse a per-step curve CSV and, when given, the run's rollouts: a dataset's path, or
    the frame :func:`read_rollouts` read from one."""
    frame = read_curve(curve)
    notes: list[str] = []
    findings = curve_findings(frame, notes)
    rollout_results, turns = None, None
    by_turn = turn_curve_findings(frame)
    if by_turn is not None:
        turns = {"curve": by_turn}
    if rollouts is not None:
        frame_of_rollouts = (rollouts if isinstance(rollouts, pd.DataFrame)
                             else read_rollouts(rollouts))
        if has_turns(frame_of_rollouts):
            turns = {**(turns or {}), "rollouts": turn_rollout_findings(frame_of_rollouts)}
            frame_of_rollouts = last_turns(frame_of_rollouts)
            notes.append("episodes of several turns: the rollout findings are of each "
                         "episode's last turn (the one its reward scores); `turns` has both")
        rollout_results = rollout_findings(frame_of_rollouts, notes)
    else:
        notes.append("no rollouts given: bad paintings per third, best-of-step vs median, the "
                     "gain from fewer bad paintings, the ceiling, n_shapes vs reward and the "
                     "reference draw's effect need them (--rollouts)")
    return Analysis(curve=str(Path(curve)), thirds=thirds_means(frame, numeric_columns(frame)),
                    findings=findings, rollouts=rollout_results, notes=notes, turns=turns)


def turn_lines(turns: dict[str, Any] | None) -> list[str]:
    """Each turn's reward by thirds with its slope t, and the revision's paired gain over the
    first attempt in the last third (a few lines; none for a single-turn run)."""
    curve = (turns or {}).get("curve")
    if not curve:
        return []
    lines = []
    for name, by in curve["by_turn"].items():
        thirds = " -> ".join("-" if by[t] is None else f"{by[t]:.3f}"
                             for t in ("first", "middle", "last"))
        t = by["slope"]["t"]
        lines.append(f"  {name}: {thirds}; slope t = {'-' if t is None else f'{t:.1f}'}")
    gain = curve["revision_gain"]["last"]
    if gain["mean"] is not None:
        t = gain["t"]
        lines.append(f"  revision minus first attempt, last third: {gain['mean']:+.3f} "
                     f"(paired t = {'-' if t is None else f'{t:.1f}'} over {gain['n']} steps)")
    return lines

