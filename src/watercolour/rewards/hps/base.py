"""The preference-score slot: a picture and its prompt in, a score of how much people would
prefer it out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable


class ScorerUnavailable(RuntimeError):
    """The scorer did not answer (after its retries): an infrastructure failure; the rollout's
    reward is ``None``."""


@dataclass
class PreferenceScore:
    mu: float
    """The scorer's own scale (HPSv3: its mean preference; the offline scorer: 0..1)."""
    sigma: float | None
    """HPSv3's uncertainty, as the model returns it; None for scorers without one."""
    unit: float
    """``mu`` mapped to [0, 1]: what the reward uses."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class PreferenceScorer(Protocol):
    name: str

    def score(self, pngs: Sequence[bytes], prompt: str) -> list[PreferenceScore]:
        """One score per picture, in order. Raises :class:`ScorerUnavailable`."""
        ...
