"""The before/after probe of a policy in episodes of several turns: sample first attempts with
fixed seeds, score them, show each its critique (the environment's, as in training), sample the
revisions, score them against the same references, and compare the turns episode by episode.

    watercolour tiny evaluate runs/tiny/revise/final --turns 2 --recipe \
        tiny-revise --pool runs/main/pool --samples 32 \
        --out src/watercolour/results/tiny/revise/final-eval.json

Text only: the revision turn is the critique (what a text policy sees in training). Seeds:
turn ``t``, batch from sample ``start``, samples with ``torch.manual_seed(seed + start +
TURN_SEED * (t - 1))``; group ``g`` draws its references and renders with seed ``seed + g`` on
every turn, so an episode's turns are judged against the same references.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from watercolour.analysis.turns import paired_gain
from watercolour.train.evaluate import GROUP, Sampling, sample_chats, summarise

TURN_SEED = 7919
"""How far apart the sampling seeds of one episode's turns are."""


def evaluate_episodes(model: Any, tokenizer: Any, rewarder: Any, sampling: Sampling,
                      turns: int = 2, group: int = GROUP, love: int | None = None
                      ) -> dict[str, Any]:
    """``sampling.samples`` episodes of ``turns`` turns: per turn the usual summary
    (:func:`~watercolour.train.evaluate.summarise`), then the last turn against the first,
    episode by episode (:func:`compare_turns`), and one row per episode with each turn's
    status, reward and critique. An unavailable turn ends its episode."""
    from watercolour.env.server.environment import revision_prompt, turn_record

    if turns < 1:
        raise ValueError(f"turns must be at least 1, got {turns}")
    n = sampling.samples
    chats = [sampling.chat() for _ in range(n)]
    episodes: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    previous: list[Any] = [None] * n
    live = list(range(n))
    for turn in range(1, turns + 1):
        turn_sampling = replace(sampling, seed=sampling.seed + TURN_SEED * (turn - 1))
        replies = dict(zip(live, sample_chats(model, tokenizer, [chats[i] for i in live],
                                              turn_sampling)))
        for g in range(0, n, group):
            members = [i for i in range(g, min(g + group, n)) if i in replies]
            if not members:
                continue
            scored = rewarder.evaluate_group([replies[i] for i in members],
                                             subject=sampling.subject,
                                             seed=sampling.seed + g // group, love=love)
            for i, evaluation in zip(members, scored):
                record = turn_record(evaluation, replies[i], turn, previous[i])
                previous[i] = record
                episodes[i].append({"turn": turn, "status": record.status,
                                    "reward": record.reward,
                                    "violations": list(record.violations or []),
                                    "critique": record.critique, "reply": replies[i]})
                chats[i] = [*chats[i], {"role": "assistant", "content": replies[i]},
                            {"role": "user", "content": revision_prompt(record.critique)}]
        live = [i for i in live if episodes[i][-1]["status"] != "unavailable"]
    by_turn = {t: summarise([e[t - 1] for e in episodes if len(e) >= t])
               for t in range(1, turns + 1)}
    return {"turns": turns, "by_turn": by_turn,
            "revision": compare_turns(episodes), "episodes": episodes}


def compare_turns(episodes: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """Over the episodes whose first and last turns both scored: how many, the share whose last
    turn scored higher / lower / the same, the mean gain and its paired t, and how many
    rejected first attempts passed on the last turn (``repaired``) or the reverse
    (``broken``)."""
    pairs = [(e[0], e[-1]) for e in episodes if len(e) > 1
             and e[0]["reward"] is not None and e[-1]["reward"] is not None]
    gains = [last["reward"] - first["reward"] for first, last in pairs]
    t = paired_gain(pd.Series([last["reward"] for _, last in pairs], dtype=float),
                    pd.Series([first["reward"] for first, _ in pairs], dtype=float))["t"]
    return {"episodes": len(gains),
            "higher": sum(g > 0 for g in gains), "lower": sum(g < 0 for g in gains),
            "same": sum(g == 0 for g in gains),
            "mean_gain": round(statistics.fmean(gains), 4) if gains else None,
            "paired_t": None if t is None else round(t, 3),
            "repaired": sum(f["status"] == "rejected" and s["status"] == "ok" for f, s in pairs),
            "broken": sum(f["status"] == "ok" and s["status"] == "rejected" for f, s in pairs)}
