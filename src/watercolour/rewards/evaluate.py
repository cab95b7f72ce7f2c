"""One rollout (or one group of rollouts) -> its reward and a breakdown: the record
(:class:`Evaluation`) and the orchestration (:class:`Rewarder`). The arithmetic is
:func:`watercolour.rewards.mix.combine`; the backends are built by
:mod:`watercolour.rewards.backends`.

    reply -> gate (static checks, render, runtime evidence) -> length
          -> judge vs the group's references (both orders) -> HPS -> total | None

Three outcomes, never two (``status``):

- ``ok``: the total is ``sum(weight * raw)`` over gate (raw 1), length, judge and HPS; a
  **near copy** of a pool painting (:mod:`watercolour.rewards.copies`: by sketch or by render)
  is still ``ok``, but its judge and HPS terms are 0 (not asked), with the reason
  ``near_copy`` recorded, so it earns the gate and length terms only;
- ``rejected``: the sketch failed the gate; the total is **0.0** (no component pays: not
  even length), with the violations;
- ``unavailable``: the browser failed the render, the HPS service failed or timed out, or the
  judge answered fewer than half of its comparisons: the total is **None** as a whole (no
  partial score from the components that did answer), so TRL drops the rollout from its group.

Components with weight 0 (the judge in ``hps-only``) are not asked at all. The judge's
references are drawn from the pool's paintings of the subject asked for
(:func:`~watercolour.rewards.references.draw_references`).

:meth:`Evaluation.to_dict` is the plain, JSON-serialisable record logged with the rollout:
``reward``, ``status``, ``unavailable`` (which part failed, and why), ``near_copy`` (None, or
the pool painting copied, how, the similarity and the threshold), every component's
``raw``/``weight``/``contribution`` (and its details: tokens, wins/answered/asked, mu/sigma),
the references (seed, ids, tiers) with the per-order votes, latencies and the gate verdict.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from watercolour.gates import GateVerdict, check
from watercolour.prompt import DEFAULT_SUBJECT
from watercolour.rewards.backends import (
    RewardSetupError,
    check_pool,
    load_pool,
    make_judge,
    make_scorer,
)
from watercolour.rewards.config import RewardConfig
from watercolour.rewards.copies import CopyDetector, NearCopy
from watercolour.rewards.hps.base import PreferenceScore, PreferenceScorer, ScorerUnavailable
from watercolour.rewards.judge.base import PairwiseJudge
from watercolour.rewards.length import length_term
from watercolour.rewards.mix import combine
from watercolour.rewards.pairwise import JudgeResult, judge_group
from watercolour.rewards.references import ReferencePool, References, draw_references

# ---------------------------------------------------------------- the record


@dataclass
class Evaluation:
    reward: float | None
    status: str
    breakdown: dict[str, Any]
    verdict: GateVerdict | None = None
    png: bytes | None = None
    judge: JudgeResult | None = None
    hps: PreferenceScore | None = None

    def component(self, name: str) -> float | None:
        """The component's raw score as TRL should log it: None when the rollout is
        unavailable, 0.0 when rejected or not asked."""
        if self.status == "unavailable":
            return None
        if self.status == "rejected":
            return 0.0
        raw = self.breakdown["components"][name]["raw"]
        return 0.0 if raw is None else float(raw)

    def to_dict(self) -> dict[str, Any]:
        return self.breakdown


@dataclass
class _Part:
    value: Any = None
    error: str | None = None
    seconds: float = 0.0
    name: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- the rewarder


class Rewarder:
    """Scores replies with the configured mix and backends.

    >>> with Renderer(workers=1) as renderer:
    ...     rewarder = Rewarder(RewardConfig.from_env(), renderer=renderer)
    ...     evaluation = rewarder.evaluate(reply, subject="a peach hibiscus", seed=7)
    ...     evaluation.reward, evaluation.to_dict()["components"]

    Args:
        config: default :meth:`RewardConfig.from_env`.
        pool: the reference pool; default loaded from ``config`` when the judge is needed.
        judge, scorer: backends; default built from ``config`` (embedded defaults when no
            endpoint is configured).
        renderer: anything with ``render(code, seed)`` (a started ``Renderer``).
        tokenizer: the policy's tokenizer, for the length term (default characters / 4).

    Raises:
        RewardSetupError: the judge is needed and there is no usable pool.
    """

    def __init__(self, config: RewardConfig | None = None, *, pool: ReferencePool | None = None,
                 judge: PairwiseJudge | None = None, scorer: PreferenceScorer | None = None,
                 renderer: Any = None, tokenizer: Any = None) -> None:
        self.config = config or RewardConfig.from_env()
        self.mix = self.config.mix
        self.renderer = renderer
        self.tokenizer = tokenizer
        self.pool = pool
        self.judge = judge
        self.scorer = scorer
        if self.mix.judge > 0:
            self.pool = check_pool(self.config, self.pool)
            if self.judge is None:
                self.judge = make_judge(self.config, self.pool)
        elif self.pool is None:  # hps-only: the pool still bounds the scorer and finds copies
            self.pool = load_pool(self.config)
        if self.mix.hps > 0 and self.scorer is None:
            self.scorer = make_scorer(self.config, self.pool)
        self.copies = CopyDetector.from_pool(
            self.pool, self.config.copy_sketch, self.config.copy_render) \
            if self.pool is not None else None

    # ------------------------------------------------------------ public
    def references(self, seed: int, subject: str | None = DEFAULT_SUBJECT
                   ) -> References | None:
        """The group's references: drawn with ``seed`` from the paintings of ``subject``."""
        if self.mix.judge <= 0 or self.pool is None:
            return None
        return draw_references(self.pool, seed, self.config.references, subject)

    def evaluate(self, reply: str, subject: str | None = None, seed: int | None = None,
                 render_seed: int | None = None) -> Evaluation:
        """One rollout (a group of one)."""
        return self.evaluate_group([reply], subject, seed, render_seed)[0]

    def evaluate_group(self, replies: Sequence[str], subject: str | None = None,
                       seed: int | None = None, render_seed: int | None = None,
                       verdicts: Sequence[GateVerdict] | None = None) -> list[Evaluation]:
        """Rollouts of one group: they share the references drawn with ``seed``.

        ``verdicts`` (optional) are gate verdicts already made for these replies (the gate
        then is not run again)."""
        start = time.monotonic()
        subject = (subject or DEFAULT_SUBJECT).strip()
        seed = self.config.seed if seed is None else int(seed)
        if render_seed is None:
            render_seed = seed % 2**31
        gates = self._gate_all(replies, render_seed) if verdicts is None else \
            [_Part(v, seconds=0.0) for v in verdicts]
        lengths = [length_term(r, self.tokenizer) for r in replies]
        references = self.references(seed, subject)
        rendered = [i for i, g in enumerate(gates) if g.value.status == "ok"
                    and g.value.render is not None and g.value.render.png is not None]
        copied: dict[int, NearCopy] = {}
        if self.copies is not None:
            for i in rendered:
                found = self.copies.check(gates[i].value.sketch or replies[i],
                                          gates[i].value.render.png)
                if found is not None:
                    copied[i] = found
        passed = [i for i in rendered if i not in copied]  # copies are not judged
        pngs = [gates[i].value.render.png for i in passed]
        prompt = self.config.hps_prompt.format(subject=subject)
        judge_part, hps_part = _Part(), _Part()
        with concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="reward") as pool:
            fj = pool.submit(self._judge, pngs, references, subject) \
                if pngs and self.mix.judge > 0 else None
            fh = pool.submit(self._hps, pngs, prompt) if pngs and self.mix.hps > 0 else None
            if fj is not None:
                judge_part = fj.result()
            if fh is not None:
                hps_part = fh.result()
        out = []
        for i in range(len(replies)):
            verdict: GateVerdict = gates[i].value
            k = passed.index(i) if i in passed else None
            judged: JudgeResult | None = judge_part.value[k] if (
                k is not None and judge_part.value is not None) else None
            scored: PreferenceScore | None = hps_part.value[k] if (
                k is not None and hps_part.value is not None) else None
            copy = copied.get(i)
            total, status, missing, components = combine(
                self.mix, verdict.status, lengths[i]["raw"],
                0.0 if copy is not None else judged.score if judged is not None else None,
                0.0 if copy is not None else scored.unit if scored is not None else None)
            components["length"].update(tokens=lengths[i]["tokens"],
                                        counted_by=lengths[i]["counted_by"])
            components["judge"]["backend"] = getattr(self.judge, "name", None)
            components["judge"]["called"] = self.mix.judge > 0 and k is not None
            if judged is not None:
                components["judge"].update({key: v for key, v in judged.to_dict().items()
                                            if key not in ("score", "judge")})
            components["judge"]["error"] = judge_part.error if k is not None else None
            components["hps"].update(
                backend=getattr(self.scorer, "name", None),
                called=self.mix.hps > 0 and k is not None,
                mu=scored.mu if scored is not None else None,
                sigma=scored.sigma if scored is not None else None,
                error=hps_part.error if k is not None else None)
            if copy is not None:
                for name in ("judge", "hps"):
                    components[name]["zeroed"] = "near_copy"
            reason = None
            if status == "unavailable":
                reason = {"render": "; ".join(n for n in verdict.notes
                                              if n.startswith("infrastructure"))
                          or "the browser failed",
                          "hps": hps_part.error or "the scorer did not answer",
                          "judge": _judge_reason(judged, judge_part)}.get(missing or "")
            breakdown = {
                "reward": total,
                "status": status,
                "unavailable": {"part": missing, "reason": reason} if missing else None,
                "near_copy": copy.to_dict() if copy is not None else None,
                "subject": subject,
                "seed": seed,
                "render_seed": render_seed,
                "mix": self.mix.to_dict(),
                "components": components,
                "references": references.to_dict() if references is not None else None,
                "gate": verdict.to_dict(include_sketch=False),
                "latency_s": {"gate": round(gates[i].seconds, 4),
                              "render": (verdict.render.timings.get("total_s")
                                         if verdict.render is not None else None),
                              "judge": round(judge_part.seconds, 4) if k is not None else None,
                              "hps": round(hps_part.seconds, 4) if k is not None else None,
                              "total": round(time.monotonic() - start, 4)},
            }
            out.append(Evaluation(total, status, breakdown, verdict,
                                  verdict.render.png if verdict.render is not None else None,
                                  judged, scored))
        return out

    # ------------------------------------------------------------ parts
    def _gate_all(self, replies: Sequence[str], render_seed: int) -> list[_Part]:
        if self.renderer is None:
            raise RewardSetupError("the rewarder needs a renderer to gate replies")

        def one(reply: str) -> _Part:
            t = time.monotonic()
            verdict = check(reply, self.renderer, mode=self.config.gate_mode, seed=render_seed)
            return _Part(verdict, seconds=time.monotonic() - t)

        workers = getattr(getattr(self.renderer, "config", None), "workers", 1) or 1
        if workers <= 1 or len(replies) <= 1:
            return [one(r) for r in replies]
        with concurrent.futures.ThreadPoolExecutor(min(workers, len(replies)),
                                                   thread_name_prefix="gate") as pool:
            return list(pool.map(one, replies))

    def _judge(self, pngs: list[bytes], references: References | None, subject: str) -> _Part:
        t = time.monotonic()
        assert references is not None and self.judge is not None
        results = judge_group(self.judge, pngs, references, subject)
        return _Part(results, seconds=time.monotonic() - t)

    def _hps(self, pngs: list[bytes], prompt: str) -> _Part:
        t = time.monotonic()
        assert self.scorer is not None
        try:
            scores = self.scorer.score(pngs, prompt)
        except ScorerUnavailable as err:
            return _Part(None, error=str(err), seconds=time.monotonic() - t)
        return _Part(scores, seconds=time.monotonic() - t)


def _judge_reason(judged: JudgeResult | None, part: _Part) -> str:
    if judged is None:
        return part.error or "the judge did not run"
    errors = sorted({v["error"].split(":")[0] for v in judged.votes if v.get("error")})
    return (f"the judge answered {judged.answered} of {judged.asked} comparisons (fewer than "
            f"half)" + (f": {', '.join(errors)}" if errors else ""))
