"""Views of evaluations for people (the book, the command line): the same rollout under every
mix, and the judge's votes paired by reference."""

from __future__ import annotations

from typing import Any

from watercolour.rewards.evaluate import Evaluation
from watercolour.rewards.mix import PRESETS, Mix, combine


def mix_totals(evaluation: Evaluation | dict[str, Any],
               mixes: tuple[str, ...] = tuple(PRESETS)) -> dict[str, float | None]:
    """The rollout's total under each preset, from its components' raw scores (no new
    evaluation). A component the evaluation did not ask (weight 0 in its own mix) is missing,
    so a mix that needs it reads None."""
    data = evaluation.to_dict() if isinstance(evaluation, Evaluation) else evaluation
    c = data["components"]
    gate_status = data["gate"]["status"]
    return {name: combine(Mix.preset(name), gate_status, c["length"]["raw"] or 0.0,
                          c["judge"]["raw"], c["hps"]["raw"])[0] for name in mixes}


def vote_rows(evaluation: Evaluation | dict[str, Any]) -> list[dict[str, Any]]:
    """One row per reference: its tier, who won with the candidate shown first, who won with
    the reference shown first (``candidate``/``reference``/``-`` for no answer)."""
    data = evaluation.to_dict() if isinstance(evaluation, Evaluation) else evaluation
    votes = data["components"]["judge"].get("votes") or []
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
