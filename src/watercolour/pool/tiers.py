"""The synthetic tier rule: how a starter pool gets ``love`` and ``okay`` without a person.

This is not anyone's taste. It is a documented rule over what the build generated, so the
environment has a pool to compare against before a person has rated anything; its rows say
``rated_by = "synthetic:<RULE>"``. A pool rated by a person (:mod:`watercolour.pool.rating`)
replaces it.

The rule (:data:`RULE`), applied to the **final round** of every painting:

1. *Eligible*: the render succeeded, the offline critic found neither ``blank`` nor
   ``faint`` nor ``broken``, and its score is at least :data:`OKAY_FLOOR`.
   Everything else stays out of the pool (negatives never enter it).
2. *love*: the best-scoring *candidates* (eligible, the critic names no issue, and the painter
   did not say it painted a flawed variant on purpose), at most :data:`LOVE_SHARE` of the
   eligible paintings (rounded up; ties broken by id).
3. *okay*: every other eligible painting.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

RULE = "final-round-score-v1"
OKAY_FLOOR = 0.45
LOVE_SHARE = 1 / 3
DISQUALIFYING = frozenset({"blank", "faint", "broken"})


@dataclass(frozen=True)
class TierDecision:
    id: str
    tier: str | None
    """``love``, ``okay``, or None (not in the pool)."""
    reason: str


def assign_tiers(
    finals: Iterable[Mapping[str, Any]],
    okay_floor: float = OKAY_FLOOR,
    love_share: float = LOVE_SHARE,
) -> list[TierDecision]:
    """Decide each final-round record's tier by :data:`RULE`.

    A record needs ``id``, ``status`` (``ok`` when it rendered), ``score``, ``issues`` and
    optionally ``painter_meta.variant`` (the procedural painter's intent).
    """
    rows = list(finals)
    decisions: dict[str, TierDecision] = {}
    eligible: list[Mapping[str, Any]] = []
    for row in rows:
        rid = str(row["id"])
        issues = set(row.get("issues") or [])
        score = row.get("score")
        if row.get("status") != "ok":
            decisions[rid] = TierDecision(rid, None, f"not rendered ({row.get('status')})")
        elif issues & DISQUALIFYING:
            decisions[rid] = TierDecision(rid, None, f"critic: {', '.join(sorted(issues))}")
        elif score is None or score < okay_floor:
            decisions[rid] = TierDecision(rid, None, f"score {score} below {okay_floor}")
        else:
            eligible.append(row)
    def ok_for_love(row: Mapping[str, Any]) -> bool:
        variant = (row.get("painter_meta") or {}).get("variant")
        return variant in (None, "good") and not row.get("issues")

    ranked = sorted(eligible, key=lambda r: (-float(r["score"]), str(r["id"])))
    n_love = math.ceil(len(ranked) * love_share) if ranked else 0
    top = {str(r["id"]) for r in [r for r in ranked if ok_for_love(r)][:n_love]}
    for row in ranked:
        rid = str(row["id"])
        variant = (row.get("painter_meta") or {}).get("variant")
        issues = row.get("issues") or []
        if rid in top:
            decisions[rid] = TierDecision(rid, "love", f"score {row['score']:.3f}, among the "
                                          f"best {love_share:.0%}, no issues")
        else:
            why = ("flawed variant " + variant if variant not in (None, "good") else
                   "issues: " + ", ".join(issues) if issues else "not among the best")
            decisions[rid] = TierDecision(rid, "okay", f"score {row['score']:.3f}, {why}")
    return [decisions[str(r["id"])] for r in rows]
