"""How each component of the rubric scores a group of rollouts: one :class:`Term` per component.

A term is self-contained: :meth:`build` makes it, once, at start-up, from what it needs (the
:class:`Setup`: the configuration, the pool, the policy's tokenizer, a judge or a preference
scorer the caller passed in), and :meth:`score` scores a group: for the gate and the length
term one score per rollout; for the terms that look at the render (``on_render`` in the
rubric) one per rollout the gate passed and that is not a near copy (``group.asked``), in that
order. The rewarder keeps the terms its mix weighs, by name (:func:`build_terms`), and never
hands itself to one. The declarations that name and weigh the components are in
:mod:`watercolour.rewards.rubric`; :data:`TERMS` gives each of them its term.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from watercolour.gates import GateVerdict
from watercolour.rewards.backends import RewardSetupError, make_judge, make_scorer
from watercolour.rewards.config import RewardConfig
from watercolour.rewards.hps.base import PreferenceScorer, ScorerUnavailable
from watercolour.rewards.judge.base import PairwiseJudge
from watercolour.rewards.length import length_term
from watercolour.rewards.pairwise import JudgeResult, judge_group
from watercolour.rewards.pigment import PigmentBands
from watercolour.rewards.references import ReferencePool, References
from watercolour.rewards.rubric import Component


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


@dataclass(frozen=True)
class Setup:
    """What a term may need to build itself, once, at start-up."""

    config: RewardConfig
    pool: ReferencePool | None
    """The pool the reward uses (:func:`~watercolour.rewards.backends.resolve_pool`)."""
    tokenizer: Any = None
    """The policy's tokenizer, for the length term (None: characters / 4)."""
    judge: PairwiseJudge | None = None
    """A judge to use; None: the configured one, built here."""
    scorer: PreferenceScorer | None = None
    """A preference scorer to use; None: the configured one, built here."""


class Term(Protocol):
    """A component's scorer (see the module docstring)."""

    @property
    def backend(self) -> str | None:
        """What fills the component's slot, recorded with every score."""
        ...

    def score(self, group: Group) -> list[Score]: ...


# ---------------------------------------------------------------- gate and length
@dataclass(frozen=True)
class GateTerm:
    """1 for a sketch the gate passed, 0 for one it rejected, None when the browser failed."""

    backend: ClassVar[str] = "chromium"

    @classmethod
    def build(cls, setup: Setup) -> GateTerm:
        return cls()

    def score(self, group: Group) -> list[Score]:
        out = []
        for verdict in group.verdicts:
            if verdict.status == "unavailable":
                reason = "; ".join(n for n in verdict.notes if n.startswith("infrastructure"))
                out.append(Score(None, error=reason or "the browser failed"))
            else:
                out.append(Score(1.0 if verdict.status == "ok" else 0.0))
        return out


@dataclass(frozen=True)
class LengthTerm:
    """The length ramp of each reply, counted in the policy's tokens."""

    tokenizer: Any = None

    @classmethod
    def build(cls, setup: Setup) -> LengthTerm:
        return cls(setup.tokenizer)

    @property
    def backend(self) -> str:
        return "tokenizer" if self.tokenizer is not None else "characters / 4"

    def score(self, group: Group) -> list[Score]:
        out = []
        for reply in group.replies:
            term = length_term(reply, self.tokenizer)
            out.append(Score(term["raw"], {"tokens": term["tokens"],
                                           "counted_by": term["counted_by"]}))
        return out


# ---------------------------------------------------------------- the judge
@dataclass(frozen=True)
class JudgeTerm:
    """The share of ordered comparisons won against the group's references."""

    judge: PairwiseJudge

    @classmethod
    def build(cls, setup: Setup) -> JudgeTerm:
        """The given judge, else the configured one (the pool-fitted judge is fitted on the
        pool, which the judge requires: :func:`~watercolour.rewards.backends.check_pool`)."""
        if setup.judge is not None:
            return cls(setup.judge)
        if setup.pool is None:
            raise RewardSetupError("the judge needs a pool: set WATERCOLOUR_POOL (or --pool)")
        return cls(make_judge(setup.config, setup.pool))

    @property
    def backend(self) -> str | None:
        return getattr(self.judge, "name", None)

    def score(self, group: Group) -> list[Score]:
        assert group.references is not None
        results = judge_group(self.judge, list(group.pngs), group.references, group.subject)
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
@dataclass(frozen=True)
class PreferenceTerm:
    """The preference score of each render (HPSv3's slot), mapped to [0, 1]."""

    scorer: PreferenceScorer
    caption: str
    """The caption scored against, with ``{subject}`` (``RewardConfig.hps_prompt``)."""

    @classmethod
    def build(cls, setup: Setup) -> PreferenceTerm:
        """The given scorer, else the configured one (the offline scorer fitted on the pool
        when there is one)."""
        scorer = setup.scorer if setup.scorer is not None else \
            make_scorer(setup.config, setup.pool)
        return cls(scorer, setup.config.hps_prompt)

    @property
    def backend(self) -> str | None:
        return getattr(self.scorer, "name", None)

    def score(self, group: Group) -> list[Score]:
        caption = self.caption.format(subject=group.subject)
        try:
            scores = self.scorer.score(list(group.pngs), caption)
        except ScorerUnavailable as err:
            return [Score(None, {"mu": None, "sigma": None}, str(err) or "the scorer did not "
                          "answer") for _ in group.pngs]
        return [Score(s.unit, {"mu": s.mu, "sigma": s.sigma}) for s in scores]


# ---------------------------------------------------------------- pigment
@dataclass(frozen=True)
class PigmentTerm:
    """Paint coverage against the ``love`` tier's band for the subject."""

    bands: PigmentBands
    backend: ClassVar[str] = "love-tier coverage bands"

    @classmethod
    def build(cls, setup: Setup) -> PigmentTerm:
        """The ``love`` tier's coverage bands (the pool is required).

        Raises:
            RewardSetupError: no pool, or one without ``love`` paintings.
        """
        if setup.pool is None:
            raise RewardSetupError("the pigment term needs a pool: set WATERCOLOUR_POOL "
                                   "(or --pool)")
        try:
            return cls(PigmentBands.fit(setup.pool))
        except ValueError as err:
            raise RewardSetupError(str(err)) from err

    def score(self, group: Group) -> list[Score]:
        return [Score(*self.bands.score(png, group.subject)) for png in group.pngs]


# ---------------------------------------------------------------- the rubric's terms
TERMS: dict[str, Callable[[Setup], Term]] = {
    "gate": GateTerm.build, "length": LengthTerm.build, "judge": JudgeTerm.build,
    "hps": PreferenceTerm.build, "pigment": PigmentTerm.build}
"""Component name -> how its term is built; one for every component of the rubric."""


def build_terms(components: Sequence[Component], setup: Setup) -> dict[str, Term]:
    """The term of each of ``components``, by name, built in order (the first that cannot be
    set up raises ``RewardSetupError``)."""
    return {c.name: TERMS[c.name](setup) for c in components}
