"""Is the pairwise judge consistent? (An idea the reproduction listed and did not run.)

For each pair of pictures (a, b) the judge is asked ``repeats`` times in each order. From the
answers:

- ``repeat_agreement``: the same ordered question asked again gets the same answer
  (a deterministic judge: 1.0; a sampling one: less);
- ``order_agreement``: both orders name the same *picture* as the better one (an unbiased,
  certain judge: 1.0);
- ``position_bias_rate``: both orders name the same *position* (first/first or
  second/second), i.e. the answer followed the layout, not the pictures; with
  ``first_rate`` and ``second_rate`` (how often each position won overall) it says which way;
- ``self_first_rate``: a picture against itself: which position wins (no right answer; an
  unbiased judge would split; a forced-choice judge shows its tie-breaking);
- ``answered_rate``: the share of questions answered at all.

Both-order scoring (:mod:`watercolour.rewards.pairwise`) cancels a position bias in the
*expected* score; the bias still costs signal, since a biased pair scores 0.5 whatever the
pictures are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from watercolour.rewards.judge.base import PairwiseJudge, Vote, compare_all


def consistency(judge: PairwiseJudge, pairs: Sequence[tuple[bytes, bytes]],
                subject: str, repeats: int = 2, self_pairs: Sequence[bytes] = ()
                ) -> dict[str, Any]:
    """Measure the judge on ``pairs`` (see the module docstring)."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    questions: list[tuple[bytes, bytes]] = []
    for a, b in pairs:
        for _ in range(repeats):
            questions += [(a, b), (b, a)]
    questions += [(x, x) for x in self_pairs for _ in range(repeats)]
    votes = compare_all(judge, questions, subject)
    per_pair = 2 * repeats
    asked = len(questions)
    answered = sum(v.winner is not None for v in votes)
    repeat_same = repeat_n = order_same = order_n = bias = 0
    rows = []
    for i in range(len(pairs)):
        block = votes[i * per_pair:(i + 1) * per_pair]
        forward = [v.winner for v in block[0::2]]   # (a, b)
        backward = [v.winner for v in block[1::2]]  # (b, a)
        for answers in (forward, backward):
            got = [w for w in answers if w is not None]
            for j in range(1, len(got)):
                repeat_n += 1
                repeat_same += int(got[j] == got[0])
        for f, r in zip(forward, backward):
            if f is None or r is None:
                continue
            order_n += 1
            same_picture = (f == "first") == (r == "second")
            order_same += int(same_picture)
            bias += int(not same_picture)
        rows.append({"pair": i, "forward": forward, "backward": backward})
    firsts = sum(v.winner == "first" for v in votes[:len(pairs) * per_pair])
    decided = sum(v.winner is not None for v in votes[:len(pairs) * per_pair])
    selfs: list[Vote] = votes[len(pairs) * per_pair:]
    self_decided = [v for v in selfs if v.winner is not None]

    def rate(k: int, n: int) -> float | None:
        return round(k / n, 4) if n else None

    return {
        "judge": getattr(judge, "name", type(judge).__name__),
        "pairs": len(pairs),
        "repeats": repeats,
        "questions": asked,
        "answered_rate": rate(answered, asked),
        "repeat_agreement": rate(repeat_same, repeat_n),
        "order_agreement": rate(order_same, order_n),
        "position_bias_rate": rate(bias, order_n),
        "first_rate": rate(firsts, decided),
        "second_rate": rate(decided - firsts, decided),
        "self_pairs": len(self_pairs),
        "self_first_rate": rate(sum(v.winner == "first" for v in self_decided),
                                len(self_decided)),
        "errors": sorted({v.error.split(":")[0] for v in votes if v.error})[:10],
        "per_pair": rows,
    }
