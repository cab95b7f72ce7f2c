"""How each component of the rubric scores a group of rollouts.

Each term is a function ``score(rewarder, group) -> list[Score]``: for the gate and the length
term one score per rollout; for the terms that look at the render (``on_render`` in the
rubric) one per rollout the gate passed and that is not a near copy (``group.asked``), in that
order. A term that needs a backend has a ``prepare(rewarder)`` that builds it once, at
start-up. The declarations that name, weigh and wire these functions are in
:mod:`watercolour.rewards.rubric`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from watercolour.gates import GateVerdict
from watercolour.rewards.backends import check_pool, make_judge, make_scorer
from watercolour.rewards.hps.base import ScorerUnavailable
from watercolour.rewards.length import length_term
from watercolour.rewards.pairwise import JudgeResult, judge_group
from watercolour.rewards.references import References

if TYPE_CHECKING:
    from watercolour.rewards.evaluate import Rewarder


@dataclass
class Group:
    """One group of rollouts, as the terms see it."""

    replies: Sequence[str]
    verdicts: list[GateVerdict]
    asked: list[int]
    """The rollouts the render terms score: passed the gate, rendered, not a near copy."""
    pngs: list[bytes]
    """Their renders, in the order of :attr:`asked`."""
    subject: str
    references: References | None


@dataclass
class Score:
    """One term's score of one rollout: ``raw`` in [0, 1], or None with the ``error`` that
    makes the rollout unavailable; ``details`` go into the record beside it."""

    raw: float | None
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


# ---------------------------------------------------------------- gate and length
def score_gate(rewarder: Rewarder, group: Group) -> list[Score]:
    """1 for a sketch the gate passed, 0 for one it rejected, None when the browser failed."""
    out = []
    for verdict in group.verdicts:
        if verdict.status == "unavailable":
            reason = "; ".join(n for n in verdict.notes if n.startswith("infrastructure"))
            out.append(Score(None, error=reason or "the browser failed"))
        else:
            out.append(Score(1.0 if verdict.status == "ok" else 0.0))
    return out


def score_length(rewarder: Rewarder, group: Group) -> list[Score]:
    """The length ramp of each reply, counted in the policy's tokens."""
    out = []
    for reply in group.replies:
        term = length_term(reply, rewarder.tokenizer)
        out.append(Score(term["raw"], {"tokens": term["tokens"],
                                       "counted_by": term["counted_by"]}))
    return out


def length_backend(rewarder: Rewarder) -> str:
    return "tokenizer" if rewarder.tokenizer is not None else "characters / 4"


# ---------------------------------------------------------------- the judge
def prepare_judge(rewarder: Rewarder) -> None:
    """A checked pool (enough references) and the configured judge."""
    rewarder.pool = check_pool(rewarder.config, rewarder.pool)
    if rewarder.judge is None:
        rewarder.judge = make_judge(rewarder.config, rewarder.pool)


def score_judge(rewarder: Rewarder, group: Group) -> list[Score]:
    """The share of ordered comparisons won against the group's references."""
    assert group.references is not None and rewarder.judge is not None
    results = judge_group(rewarder.judge, list(group.pngs), group.references, group.subject)
    out = []
    for judged in results:
        assert judged is not None
        details = {k: v for k, v in judged.to_dict().items() if k not in ("score", "judge")}
        out.append(Score(judged.score, details,
                         None if judged.score is not None else _judge_reason(judged)))
    return out


def _judge_reason(judged: JudgeResult) -> str:
    errors = sorted({v["error"].split(":")[0] for v in judged.votes if v.get("error")})
    return (f"the judge answered {judged.answered} of {judged.asked} comparisons (fewer than "
            f"half)" + (f": {', '.join(errors)}" if errors else ""))


# ---------------------------------------------------------------- the preference score
def prepare_preference(rewarder: Rewarder) -> None:
    if rewarder.scorer is None:
        rewarder.scorer = make_scorer(rewarder.config, rewarder.pool)


def score_preference(rewarder: Rewarder, group: Group) -> list[Score]:
    """The preference score of each render (HPSv3's slot), mapped to [0, 1]."""
    assert rewarder.scorer is not None
    caption = rewarder.config.hps_prompt.format(subject=group.subject)
    try:
        scores = rewarder.scorer.score(list(group.pngs), caption)
    except ScorerUnavailable as err:
        return [Score(None, {"mu": None, "sigma": None}, str(err) or "the scorer did not "
                      "answer") for _ in group.pngs]
    return [Score(s.unit, {"mu": s.mu, "sigma": s.sigma}) for s in scores]


# ---------------------------------------------------------------- pigment
def prepare_pigment(rewarder: Rewarder) -> None:
    """The ``love`` tier's coverage bands (the pool is required)."""
    from watercolour.rewards.backends import RewardSetupError
    from watercolour.rewards.pigment import PigmentBands

    if rewarder.pool is None:
        raise RewardSetupError("the pigment term needs a pool: set WATERCOLOUR_POOL "
                               "(or --pool)")
    try:
        rewarder.backends["pigment"] = PigmentBands.fit(rewarder.pool)
    except ValueError as err:
        raise RewardSetupError(str(err)) from err


def score_pigment(rewarder: Rewarder, group: Group) -> list[Score]:
    """Paint coverage against the ``love`` tier's band for the subject."""
    bands = rewarder.backends["pigment"]
    return [Score(*bands.score(png, group.subject)) for png in group.pngs]
