"""One rollout (or one group of rollouts) -> its reward and its record: the orchestration
(:class:`Rewarder`) over the rubric's components (:mod:`watercolour.rewards.rubric`). The
arithmetic is :func:`watercolour.rewards.mix.combine`; the record is
:class:`~watercolour.rewards.record.RewardRecord`.

    reply -> gate (static checks, render, runtime evidence) -> length
          -> the render's terms (judge vs the group's references in both orders, HPS,
             pigment), concurrently -> total | None

Three outcomes, never two (``status``):

- ``ok``: the total is ``sum(weight * raw)`` over the components; a **near copy** of a pool
  painting (:mod:`watercolour.rewards.copies`: by sketch, or by render whatever way up, the
  pool paintings it looks like re-rendered at its seed) is still ``ok``, but
  its render terms are 0 (not asked), with the reason ``near_copy`` recorded, so it earns the
  gate and length terms only;
- ``rejected``: the sketch failed the gate; the total is **0.0** (no component pays: not
  even length), with the violations;
- ``unavailable``: the browser failed the render, the HPS service failed or timed out, or the
  judge answered fewer than half of its comparisons: the total is **None** as a whole (no
  partial score from the components that did answer), so TRL drops the rollout from its group.

Components with weight 0 (the judge in ``hps-only``) are not asked at all. The judge's
references are drawn from the pool's paintings of the subject asked for
(:func:`~watercolour.rewards.references.draw_references`).
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from watercolour.gates import GateVerdict, check
from watercolour.prompt import DEFAULT_SUBJECT
from watercolour.rewards.backends import RewardSetupError, resolve_pool
from watercolour.rewards.config import RewardConfig
from watercolour.rewards.copies import CopyDetector, NearCopy
from watercolour.rewards.hps.base import PreferenceScorer
from watercolour.rewards.judge.base import PairwiseJudge
from watercolour.rewards.mix import combine
from watercolour.rewards.record import ComponentScore, RewardRecord, Unavailable
from watercolour.rewards.references import ReferencePool, References, draw_references
from watercolour.rewards.rubric import RUBRIC, Component
from watercolour.rewards.terms import Group, Score, Setup, Term, build_terms

# ---------------------------------------------------------------- the record


@dataclass
class Evaluation:
    """One rollout's evaluation: its typed record, the gate's verdict and the render (both
    None when it came from an environment server without them)."""

    record: RewardRecord
    verdict: GateVerdict | None = None
    png: bytes | None = None

    @property
    def reward(self) -> float | None:
        return self.record.reward

    @property
    def status(self) -> str:
        return self.record.status

    def component(self, name: str) -> float | None:
        """The component's raw score as TRL should log it: None when the rollout is
        unavailable, 0.0 when rejected or not asked."""
        if self.status == "unavailable":
            return None
        if self.status == "rejected":
            return 0.0
        raw = self.record.raw(name)
        return 0.0 if raw is None else float(raw)

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON form (what the rollout log and the observation carry)."""
        return self.record.to_dict()

    @classmethod
    def from_dict(cls, data: dict[str, Any], png: bytes | None = None) -> Evaluation:
        """An evaluation from a record's JSON form."""
        return cls(RewardRecord.from_dict(data), png=png)


@dataclass
class _Timed:
    scores: list[Score]
    seconds: float


# ---------------------------------------------------------------- the rewarder


class Rewarder:
    """Scores replies with the configured mix and backends.

    >>> with Renderer(workers=1) as renderer:
    ...     rewarder = Rewarder(RewardConfig.from_env(), renderer=renderer)
    ...     evaluation = rewarder.evaluate(reply, subject="a peach hibiscus", seed=7)
    ...     evaluation.reward, evaluation.record.components["judge"].raw

    Args:
        config: default :meth:`RewardConfig.from_env`.
        pool: the reference pool; default loaded from ``config``.
        judge, scorer: backends; default built from ``config`` (embedded defaults when no
            endpoint is configured) for the components that weigh.
        renderer: anything with ``render(code, seed)`` (a started ``Renderer``).
        tokenizer: the policy's tokenizer, for the length term (default characters / 4).

    Raises:
        RewardSetupError: a weighted component cannot be set up (the judge or the pigment
            term without a usable pool).
    """

    def __init__(self, config: RewardConfig | None = None, *, pool: ReferencePool | None = None,
                 judge: PairwiseJudge | None = None, scorer: PreferenceScorer | None = None,
                 renderer: Any = None, tokenizer: Any = None) -> None:
        self.config = config or RewardConfig.from_env()
        self.mix = self.config.mix
        self.renderer = renderer
        self.pool = resolve_pool(self.config, pool, for_judge=self.mix.needs("judge"))
        self.components: list[Component] = [c for c in RUBRIC if self.mix.needs(c.name)]
        """The rubric's components this mix weighs, in order."""
        self.terms: dict[str, Term] = build_terms(
            self.components, Setup(self.config, self.pool, tokenizer=tokenizer, judge=judge,
                                   scorer=scorer))
        """The scorer of each weighed component, by name."""
        self.copies = CopyDetector.from_pool(
            self.pool, self.config.copy_sketch, self.config.copy_render,
            render=self._render_pool_sketch if renderer is not None else None,
            confirm=self.config.copy_confirm) \
            if self.pool is not None else None

    def _render_pool_sketch(self, code: str, seed: int) -> bytes | None:
        """A pool painting's sketch rendered at a rollout's seed (the near-copy check compares
        a rollout with the pool paintings it looks like, rendered as it was)."""
        return self.renderer.render(code, seed=seed).png

    # ------------------------------------------------------------ public
    def backend(self, name: str) -> str | None:
        """What fills the component's slot (None when the mix does not weigh it)."""
        term = self.terms.get(name)
        return term.backend if term is not None else None

    def references(self, seed: int, subject: str | None = DEFAULT_SUBJECT,
                   love: int | None = None) -> References | None:
        """The group's references: drawn with ``seed`` from the paintings of ``subject``,
        ``love`` of them from the ``love`` tier (default half: ``references // 2``)."""
        if not self.mix.needs("judge") or self.pool is None:
            return None
        return draw_references(self.pool, seed, self.config.references, subject, love=love)

    def evaluate(self, reply: str, subject: str | None = None, seed: int | None = None,
                 render_seed: int | None = None, love: int | None = None) -> Evaluation:
        """One rollout (a group of one)."""
        return self.evaluate_group([reply], subject, seed, render_seed, love=love)[0]

    def evaluate_group(self, replies: Sequence[str], subject: str | None = None,
                       seed: int | None = None, render_seed: int | None = None,
                       verdicts: Sequence[GateVerdict] | None = None,
                       love: int | None = None) -> list[Evaluation]:
        """Rollouts of one group: they share the references drawn with ``seed`` (``love``
        of them from the ``love`` tier: :meth:`references`).

        ``verdicts`` (optional) are gate verdicts already made for these replies (the gate
        then is not run again)."""
        start = time.monotonic()
        subject = (subject or DEFAULT_SUBJECT).strip()
        seed = self.config.seed if seed is None else int(seed)
        if render_seed is None:
            render_seed = seed % 2**31
        if verdicts is None:
            gated = self._gate_all(replies, render_seed)
        else:
            gated = [(v, 0.0) for v in verdicts]
        group_verdicts = [v for v, _ in gated]
        rendered = [i for i, v in enumerate(group_verdicts) if v.status == "ok"
                    and v.render is not None and v.render.png is not None]
        copied: dict[int, NearCopy] = {}
        if self.copies is not None:
            for i in rendered:
                v = group_verdicts[i]
                found = self.copies.check(v.sketch or replies[i], v.render.png,
                                          seed=render_seed)
                if found is not None:
                    copied[i] = found
        asked = [i for i in rendered if i not in copied]  # copies are not judged
        group = Group(replies, group_verdicts, asked,
                      [group_verdicts[i].render.png for i in asked], subject,
                      self.references(seed, subject, love))
        scored = self._score(group)
        out = []
        for i, verdict in enumerate(group_verdicts):
            k = asked.index(i) if i in asked else None
            own: dict[str, Score | None] = {}
            for c in RUBRIC:
                timed = scored.get(c.name)
                if c.on_render and i in copied:  # owed nothing, whether or not others asked
                    own[c.name] = Score(0.0)
                elif timed is None:
                    own[c.name] = None
                elif not c.on_render:
                    own[c.name] = timed.scores[i]
                else:
                    own[c.name] = timed.scores[k] if k is not None else None
            total, status, missing, parts = combine(
                self.mix, {n: (sc.raw if sc is not None else None) for n, sc in own.items()})
            components = {c.name: self._component(c, parts[c.name], own[c.name],
                                                  asked=k is not None, copied=i in copied)
                          for c in RUBRIC}
            reason = None
            if missing is not None:
                failed = next(c for c in RUBRIC if (c.part or c.name) == missing)
                sc = own[failed.name]
                reason = (sc.error if sc is not None else None) or \
                    f"the {failed.name} component did not answer"
            latency: dict[str, float | None] = {
                "gate": round(gated[i][1], 4),
                "render": (verdict.render.timings.get("total_s")
                           if verdict.render is not None else None)}
            for c in self.components:
                if c.on_render:
                    timed = scored.get(c.name)
                    latency[c.name] = round(timed.seconds, 4) \
                        if (timed is not None and k is not None) else None
            latency["total"] = round(time.monotonic() - start, 4)
            record = RewardRecord(
                reward=total, status=status,
                unavailable=Unavailable(part=missing, reason=reason) if missing else None,
                near_copy=copied[i].to_dict() if i in copied else None,
                subject=subject, seed=seed, render_seed=render_seed, mix=self.mix.to_dict(),
                components=components,
                references=group.references.to_dict() if group.references is not None
                else None,
                gate=verdict.to_dict(include_sketch=False), latency_s=latency)
            out.append(Evaluation(record, verdict,
                                  verdict.render.png if verdict.render is not None else None))
        return out

    # ------------------------------------------------------------ parts
    def _score(self, group: Group) -> dict[str, _Timed]:
        """Every weighted component's scores; the render terms concurrently, and only when
        some rollout was rendered."""
        def timed(c: Component) -> _Timed:
            t = time.monotonic()
            return _Timed(self.terms[c.name].score(group), time.monotonic() - t)

        out = {c.name: timed(c) for c in self.components if not c.on_render}
        on_render = [c for c in self.components if c.on_render]
        if not group.asked or not on_render:
            return out
        with concurrent.futures.ThreadPoolExecutor(len(on_render),
                                                   thread_name_prefix="reward") as pool:
            futures = {c.name: pool.submit(timed, c) for c in on_render}
            out.update({name: f.result() for name, f in futures.items()})
        return out

    def _component(self, c: Component, part: dict[str, Any], score: Score | None, *,
                   asked: bool, copied: bool) -> ComponentScore:
        """One component's record: the arithmetic (``part``), what filled it, its details."""
        weighed = self.mix.needs(c.name)
        details = dict(score.details) if score is not None else {}
        return ComponentScore(
            **part, role=c.role, backend=self.backend(c.name),
            called=weighed and (asked or not c.on_render),
            error=score.error if score is not None else None,
            zeroed="near_copy" if (copied and c.on_render and weighed) else None,
            **details)

    def _gate_all(self, replies: Sequence[str], render_seed: int
                  ) -> list[tuple[GateVerdict, float]]:
        if self.renderer is None:
            raise RewardSetupError("the rewarder needs a renderer to gate replies")

        def one(reply: str) -> tuple[GateVerdict, float]:
            t = time.monotonic()
            verdict = check(reply, self.renderer, mode=self.config.gate_mode, seed=render_seed)
            return verdict, time.monotonic() - t

        workers = getattr(getattr(self.renderer, "config", None), "workers", 1) or 1
        if workers <= 1 or len(replies) <= 1:
            return [one(r) for r in replies]
        with concurrent.futures.ThreadPoolExecutor(min(workers, len(replies)),
                                                   thread_name_prefix="gate") as pool:
            return list(pool.map(one, replies))
