"""A curriculum of references: how many of a group's references come from the pool's ``love``
tier, step by step.

:func:`~watercolour.rewards.references.draw_references` draws ``love`` references from the
``love`` tier and the rest from ``okay``; a :class:`ReferencesSchedule` decides ``love`` for
each training step, so a run can start against easier opponents and end against ``love``
alone. It is declared once, as text (``--references-schedule``):

- ``half`` (the default): ``n // 2`` every step, today's draw, bit for bit.
- ``love-only``: every reference from ``love``.
- ``linear:A:B``: the love share goes from ``A`` at step 0 to ``B`` at the last step
  (``max_steps - 1``), linearly (``linear:0.5:1.0``).
- ``steps:S=SHARE,...``: piecewise constant, the share of the largest ``S`` at or before the
  step; the first ``S`` is 0 (``steps:0=0.5,40=0.75,80=1.0``).

Shares are in [0, 1]. **The rule for the count**: ``love = floor(share * n)`` (a 1e-9 slack
absorbs float error: ``0.29 * 100`` is 29), so it is never more than ``n`` and never below 0;
``half`` is the share 0.5, whose floor is ``n // 2`` for every ``n``. A share that floors to
0 draws only ``okay`` (a curriculum may start there on purpose).

:func:`calibrate` measures how hard each pool painting is for a policy (``watercolour pool
calibrate``): how often its rollouts beat it under the configured judge.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from watercolour.errors import InputError
from watercolour.rewards.references import ReferencePool

DEFAULT_SCHEDULE = "half"
FORMS = ("half", "love-only", "linear:A:B", "steps:0=A,S2=B,...")


def _bad(text: str, why: str) -> InputError:
    return InputError(f"--references-schedule {text!r}: {why}; accepted: half (the default: "
                      "n // 2 from love), love-only, linear:A:B (the love share from A at step "
                      "0 to B at the last step), steps:0=A,40=B,... (piecewise constant); "
                      "shares from 0 to 1")


def _share(text: str, value: str) -> float:
    try:
        share = float(value)
    except ValueError:
        raise _bad(text, f"{value!r} is not a number") from None
    if not 0.0 <= share <= 1.0 or math.isnan(share):
        raise _bad(text, f"the share {value} is not from 0 to 1")
    return share


@dataclass(frozen=True)
class ReferencesSchedule:
    """The love share of a group's references by training step (module docstring)."""

    text: str
    points: tuple[tuple[int, float], ...] = ((0, 0.5),)
    """``steps``: (first step, share) pairs, ascending, the first at 0."""
    linear: tuple[float, float] | None = None
    """``linear``: the share at step 0 and at the last step."""

    @classmethod
    def parse(cls, text: str | None) -> ReferencesSchedule:
        """The schedule the text names (None or empty: ``half``).

        Raises:
            InputError: anything else, naming the accepted forms.
        """
        raw = (text or DEFAULT_SCHEDULE).strip()
        name = raw.lower()
        if name == "half":
            return cls("half")
        if name == "love-only":
            return cls("love-only", ((0, 1.0),))
        kind, _, rest = name.partition(":")
        if kind == "linear":
            parts = rest.split(":")
            if len(parts) != 2:
                raise _bad(raw, "linear takes two shares, linear:A:B")
            start, end = (_share(raw, p.strip()) for p in parts)
            return cls(f"linear:{start:g}:{end:g}", linear=(start, end))
        if kind == "steps":
            points: list[tuple[int, float]] = []
            for item in (i.strip() for i in rest.split(",")):
                step, eq, value = item.partition("=")
                if not eq:
                    raise _bad(raw, f"{item!r} is not STEP=SHARE")
                try:
                    first = int(step.strip())
                except ValueError:
                    raise _bad(raw, f"the step {step.strip()!r} is not an integer") from None
                if points and first <= points[-1][0]:
                    raise _bad(raw, "the steps must increase")
                points.append((first, _share(raw, value.strip())))
            if points[0][0] != 0:
                raise _bad(raw, "the first step must be 0")
            text = "steps:" + ",".join(f"{s}={v:g}" for s, v in points)
            return cls(text, tuple(points))
        raise _bad(raw, "not a schedule")

    @property
    def is_default(self) -> bool:
        """Whether this is ``half``: every draw is today's (no love count is passed on)."""
        return self.text == DEFAULT_SCHEDULE

    def share(self, step: int, total_steps: int | None = None) -> float:
        """The love share at ``step`` (0-based) of a run of ``total_steps`` (``linear`` reads
        it; unknown, or a run of one step: the start share)."""
        if self.linear is not None:
            start, end = self.linear
            if not total_steps or total_steps <= 1:
                return start
            progress = min(1.0, max(0.0, step / (total_steps - 1)))
            return start + (end - start) * progress
        share = self.points[0][1]
        for first, value in self.points:
            if step >= first:
                share = value
        return share

    def love(self, step: int, n: int, total_steps: int | None = None) -> int:
        """How many of ``n`` references come from ``love`` at ``step``: ``floor(share * n)``,
        within 0..n."""
        return max(0, min(n, math.floor(self.share(step, total_steps) * n + 1e-9)))

    def check_pool(self, pool: ReferencePool, n: int, total_steps: int | None = None) -> None:
        """Refuse, before a run starts, a pool too small for the schedule's draws: the most
        ``love`` references any step asks for, and the most ``okay`` ones.

        Raises:
            InputError: naming the tier, what it holds and what the schedule needs.
        """
        last = total_steps if total_steps else self.points[-1][0] + 1  # unknown: every piece
        loves = [self.love(s, n, total_steps) for s in range(max(1, last))]
        for tier, need in (("love", max(loves)), ("okay", n - min(loves))):
            have = len(pool.tier(tier))
            if have < need:
                raise InputError(f"--references-schedule {self.text} draws up to {need} of "
                                 f"{n} references from {tier!r}; the pool {pool.source} holds "
                                 f"{have}")

    def describe(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------- difficulty of references
def calibrate(judge: Any, pool: ReferencePool, candidates: Sequence[tuple[bytes, str]]
              ) -> dict[str, Any]:
    """How hard each pool painting is for a policy: the share of the policy's renders
    (``candidates``: (PNG, subject) pairs) that beat it under ``judge``, asked in both orders as
    the reward asks (:func:`~watercolour.rewards.pairwise.judge_group`).

    Returns ``{"references": [...], "tiers": {...}, "judge", "candidates"}``: per painting its
    ``id``, ``tier``, ``subject``, ``win_rate`` (the policy's wins over the answered ordered
    comparisons; None when none answered), ``wins``, ``comparisons`` (answered) and ``asked``;
    per tier the paintings, their mean win rate and the pooled one (all wins over all answered
    comparisons), so a curriculum can be set from how often the policy beats each tier.
    """
    from watercolour.rewards.pairwise import judge_group
    from watercolour.rewards.references import References

    by_subject: dict[str, list[bytes]] = {}
    for png, subject in candidates:
        by_subject.setdefault(subject, []).append(png)
    rows = []
    for painting in sorted(pool.paintings, key=lambda p: p.id):
        refs = References(0, (painting,))
        wins = answered = asked = 0
        for subject, pngs in by_subject.items():
            for result in judge_group(judge, list(pngs), refs, subject):
                if result is None:
                    continue
                wins += result.wins
                answered += result.answered
                asked += result.asked
        rows.append({"id": painting.id, "tier": painting.tier, "subject": painting.subject,
                     "win_rate": wins / answered if answered else None, "wins": wins,
                     "comparisons": answered, "asked": asked})
    tiers: dict[str, dict[str, Any]] = {}
    for tier in sorted({r["tier"] for r in rows}):
        mine = [r for r in rows if r["tier"] == tier]
        rates = [r["win_rate"] for r in mine if r["win_rate"] is not None]
        answered = sum(r["comparisons"] for r in mine)
        tiers[tier] = {"paintings": len(mine),
                       "win_rate_mean": sum(rates) / len(rates) if rates else None,
                       "win_rate_pooled": sum(r["wins"] for r in mine) / answered
                       if answered else None,
                       "comparisons": answered}
    return {"judge": getattr(judge, "name", type(judge).__name__),
            "candidates": len(candidates), "references": rows, "tiers": tiers}
