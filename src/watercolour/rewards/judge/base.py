"""What a pairwise judge is: two pictures in, which one is the better watercolour out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol, runtime_checkable

Winner = Literal["first", "second"]


@dataclass
class Vote:
    """One ordered comparison's answer."""

    winner: Winner | None
    """``first`` or ``second`` (the picture shown first or second); None when the judge did
    not answer usably (failed, timed out, or answered something unparseable)."""
    error: str | None = None
    """Why there is no winner."""
    reason: str | None = None
    """The judge's one-line reason, when it gives one."""
    raw: str | None = None
    """The judge's answer text (truncated), for the record."""
    latency_s: float = 0.0
    attempts: int = 1
    probability: float | None = None
    """P(first is better), from judges that have one (the offline judge)."""

    @property
    def answered(self) -> bool:
        return self.winner is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class PairwiseJudge(Protocol):
    """Anything that answers the pairwise question.

    ``compare(first, second, subject)``: which of two encoded pictures is the better
    watercolour of ``subject``, as a :class:`Vote`. It never raises for a failed request: a
    failure is a vote with ``winner=None`` and an ``error``.
    """

    name: str

    def compare(self, first: bytes, second: bytes, subject: str) -> Vote: ...


def compare_all(judge: PairwiseJudge, pairs: Sequence[tuple[bytes, bytes]],
                subject: str) -> list[Vote]:
    """Ask every ordered pair; concurrently when the judge has ``compare_many``."""
    many = getattr(judge, "compare_many", None)
    if many is not None:
        return list(many(pairs, subject))
    return [_safe(judge, a, b, subject) for a, b in pairs]


def _safe(judge: PairwiseJudge, first: bytes, second: bytes, subject: str) -> Vote:
    try:
        return judge.compare(first, second, subject)
    except Exception as err:  # a judge that raises still only costs its vote
        return Vote(None, error=f"{type(err).__name__}: {err}"[:300])
