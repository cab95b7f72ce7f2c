"""The pairwise judge term: a candidate against its group's references, in both orders.

For each reference the judge is asked twice, once with the candidate shown first and once
with the reference shown first. The term is the fraction of the *answered* ordered
comparisons the candidate wins, so a judge that always picks the first picture scores every
candidate 0.5 and a position bias cannot favour anyone. Failed or unparseable answers are
dropped; when fewer than half of the comparisons answered, the term is ``None``
(infrastructure: the rollout's reward is ``None``, not a guess from the few that answered).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from watercolour.rewards.judge.base import PairwiseJudge, Vote, compare_all
from watercolour.rewards.references import References

ORDERS: tuple[str, ...] = ("candidate_first", "reference_first")


@dataclass
class JudgeResult:
    score: float | None
    """Wins / answered, or None when fewer than half of the comparisons answered."""
    wins: int
    answered: int
    asked: int
    votes: list[dict[str, Any]] = field(default_factory=list)
    """One per ordered comparison: reference id and tier, order, winner, whether the
    candidate won, error, latency."""
    latency_s: float = 0.0
    judge: str = ""

    @property
    def unavailable(self) -> bool:
        return self.score is None

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "wins": self.wins, "answered": self.answered,
                "asked": self.asked, "votes": self.votes, "latency_s": self.latency_s,
                "judge": self.judge}


def tally(votes: Sequence[Vote], references: References, judge: str = "",
          latency_s: float = 0.0) -> JudgeResult:
    """Score one candidate from its votes, given in :func:`pairs_for` order."""
    records = []
    wins = answered = 0
    for i, vote in enumerate(votes):
        painting = references.paintings[i // 2]
        order = ORDERS[i % 2]
        won = None
        if vote.winner is not None:
            answered += 1
            won = vote.winner == ("first" if order == "candidate_first" else "second")
            wins += int(won)
        records.append({"reference": painting.id, "tier": painting.tier, "order": order,
                        "winner": vote.winner, "candidate_won": won, "error": vote.error,
                        "reason": vote.reason, "latency_s": round(vote.latency_s, 4),
                        "attempts": vote.attempts})
    asked = len(votes)
    score = wins / answered if answered and 2 * answered >= asked else None
    return JudgeResult(score, wins, answered, asked, records, round(latency_s, 4), judge)


def pairs_for(candidate: bytes, references: References) -> list[tuple[bytes, bytes]]:
    """The ordered comparisons for one candidate: per reference, candidate first, then
    reference first."""
    out = []
    for painting in references.paintings:
        out.append((candidate, painting.png))
        out.append((painting.png, candidate))
    return out


def judge_candidate(judge: PairwiseJudge, candidate: bytes, references: References,
                    subject: str) -> JudgeResult:
    return judge_group(judge, [candidate], references, subject)[0]


def judge_group(judge: PairwiseJudge, candidates: Sequence[bytes | None],
                references: References, subject: str) -> list[JudgeResult | None]:
    """Every candidate of a group against the same references, all comparisons submitted
    together (so a concurrent judge overlaps them). A None candidate (no picture) gives
    None."""
    start = time.monotonic()
    pairs: list[tuple[bytes, bytes]] = []
    spans: list[tuple[int, int] | None] = []
    for candidate in candidates:
        if candidate is None:
            spans.append(None)
            continue
        own = pairs_for(candidate, references)
        spans.append((len(pairs), len(pairs) + len(own)))
        pairs.extend(own)
    votes = compare_all(judge, pairs, subject) if pairs else []
    elapsed = time.monotonic() - start
    name = getattr(judge, "name", type(judge).__name__)
    return [None if span is None else tally(votes[span[0]:span[1]], references, name, elapsed)
            for span in spans]
