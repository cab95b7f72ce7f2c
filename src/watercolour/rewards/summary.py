"""Views of evaluations for people (the book, the command line): the same rollout under every
mix, and the judge's votes paired by reference."""

from __future__ import annotations

from typing import Any

from watercolour.rewards.evaluate import Evaluation
from watercolour.rewards.mix import PRESETS, Mix, combine
from watercolour.rewards.record import RewardRecord


def _record(evaluation: Evaluation | RewardRecord | dict[str, Any]) -> RewardRecord:
    if isinstance(evaluation, Evaluation):
        return evaluation.record
    if isinstance(evaluation, RewardRecord):
        return evaluation
    return RewardRecord.from_dict(evaluation)


def mix_totals(evaluation: Evaluation | RewardRecord | dict[str, Any],
               mixes: tuple[str, ...] = tuple(PRESETS)) -> dict[str, float | None]:
    """The rollout's total under each preset, from its components' raw scores (no new
    evaluation). A component the evaluation did not ask (weight 0 in its own mix) is missing,
    so a mix that needs it reads None."""
    record = _record(evaluation)
    raws = {name: part.raw for name, part in record.components.items()}
    raws["length"] = raws.get("length") or 0.0
    return {name: combine(Mix.preset(name), raws)[0] for name in mixes}


def vote_rows(evaluation: Evaluation | RewardRecord | dict[str, Any]) -> list[dict[str, Any]]:
    """One row per reference: its tier, who won with the candidate shown first, who won with
    the reference shown first (``candidate``/``reference``/``-`` for no answer)."""
    judge = _record(evaluation).components.get("judge")
    votes = (judge.details.get("votes") if judge is not None else None) or []
    rows: dict[str, dict[str, Any]] = {}

    def who(v: dict[str, Any]) -> str:
        if v["candidate_won"] is None:
            return "-"
        return "candidate" if v["candidate_won"] else "reference"

    for v in votes:
        row = rows.setdefault(v["reference"], {"reference": v["reference"], "tier": v["tier"]})
        row[v["order"]] = who(v)
    for row in rows.values():
        both = [row.get("candidate_first"), row.get("reference_first")]
        row["agree"] = both[0] == both[1] and "-" not in both
    return list(rows.values())
