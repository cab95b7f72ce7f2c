"""Where the trainer's rewards come from, and what it keeps of each scored rollout.

- :func:`make_rewarder`: environment servers (``--env-url``: the resilient multi-URL client,
  imported only then) or an in-process :class:`~watercolour.rewards.Rewarder` with a local
  browser. Servers must score the reward the run asks for: their mix, references and gate
  mode are read and compared with the run's before the first step, and any difference stops
  the run with one line per setting and its fix (never adopted:
  :mod:`watercolour.env.agreement`). Either is wrapped in :class:`GuardedRewarder`: a
  reward source that raises (a server gone mid-step, a bug) gives ``unavailable`` rollouts
  (reward ``None``: TRL drops them from their group) instead of killing the run.
- :class:`TrainingRewards`: :class:`~watercolour.rewards.trl.RewardFunctions` (one TRL reward
  function per component, the batch evaluated once, a group's rollouts facing the same
  references) that also hands every newly scored batch, with its prompts and completions, to
  a callback (the rollout log) and logs this project's per-step metrics through TRL's
  ``log_metric``: ``<component>_mean`` (length, judge, hps, pigment), ``gate_pass_rate``,
  ``paint_fraction_mean``, ``n_shapes_mean``, ``none_count``, ``render_seconds_mean``,
  ``references_love_share`` (the share of ``love`` among the step's drawn references: a
  curriculum's, ``--references-schedule``) and the reward stage's wall time
  (``time/rewards_s``, of which rendering ``time/render_s``).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from statistics import mean
from typing import Any

from watercolour.errors import SetupError
from watercolour.rewards import Evaluation, RewardConfig
from watercolour.rewards.record import RewardRecord, Unavailable
from watercolour.rewards.rubric import NAMES
from watercolour.rewards.trl import RewardFunctions, completion_text


class GuardedRewarder:
    """``evaluate_group`` that never raises: an exception from the wrapped source becomes one
    ``unavailable`` Evaluation per reply (the reason recorded)."""

    def __init__(self, inner: Any, config: RewardConfig) -> None:
        self.inner = inner
        self.config = getattr(inner, "config", None) or config
        self.mix = getattr(inner, "mix", None) or self.config.mix
        self.failures = 0

    def evaluate_group(self, replies: Sequence[str], subject: str | None = None,
                       seed: int | None = None, render_seed: int | None = None,
                       love: int | None = None) -> list[Evaluation]:
        """``love``: how many references come from ``love`` (a curriculum's step; None: the
        source's default draw, and the source is called without it)."""
        more = {} if love is None else {"love": love}
        try:
            out = list(self.inner.evaluate_group(replies, subject=subject, seed=seed,
                                                 render_seed=render_seed, **more))
            if len(out) != len(replies):
                raise RuntimeError(f"the reward source answered {len(out)} evaluations for "
                                   f"{len(replies)} replies")
            return out
        except Exception as err:  # the source failed: None rewards, the run goes on
            self.failures += 1
            reason = f"{type(err).__name__}: {err}".strip()
            return [unavailable(reason, subject, seed) for _ in replies]

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()


def unavailable(reason: str, subject: str | None, seed: int | None) -> Evaluation:
    """The record of a rollout whose reward source failed."""
    return Evaluation(RewardRecord(
        reward=None, status="unavailable", unavailable=Unavailable(part="source", reason=reason),
        subject=subject, seed=seed, trace=traceback.format_exc(limit=3)))


def make_rewarder(urls: Sequence[str], config: RewardConfig, *, renderer: Any = None,
                  tokenizer: Any = None, timeout_s: float = 900.0, retries: int = 2
                  ) -> GuardedRewarder:
    """The reward source: remote when ``urls`` are given, else in process (``renderer``
    must then be a started Renderer)."""
    if urls:
        try:
            from watercolour.env.client import RemoteRewarder
        except ImportError as err:
            raise SetupError(f"--env-url needs watercolour.env (the environment client): "
                               f"{err}") from err
        remote = RemoteRewarder(list(urls), timeout_s=timeout_s, retries=retries,
                                include_png=True)
        try:
            remote.agree(config)  # the servers score the reward this run asks for, or it stops
        except BaseException:
            remote.close()
            raise
        return GuardedRewarder(remote, config)
    from watercolour.rewards import Rewarder

    return GuardedRewarder(Rewarder(config, renderer=renderer, tokenizer=tokenizer), config)


def batch_metrics(evaluations: Sequence[Evaluation], weights: dict[str, float]
                  ) -> dict[str, float]:
    """This project's per-step metrics of one scored batch (NaN-free: a metric with nothing
    to average is left out, and TRL then logs no value for it)."""
    scored = [e for e in evaluations if e.status != "unavailable"]
    ok = [e for e in evaluations if e.status == "ok"]
    out: dict[str, float] = {"none_count": float(len(evaluations) - len(scored))}
    if scored:
        out["gate_pass_rate"] = len(ok) / len(scored)
        for name in (n for n in NAMES if n != "gate"):
            if weights.get(name, 0) > 0:
                values = [e.component(name) for e in scored]
                out[f"{name}_mean"] = mean(v for v in values if v is not None)
    if ok:
        out["paint_fraction_mean"] = mean(float(e.record.paint_fraction or 0.0) for e in ok)
        out["n_shapes_mean"] = mean(float(e.record.n_shapes or 0) for e in ok)
    renders = [r for r in (render_seconds(e) for e in evaluations) if r is not None]
    if renders:
        out["render_seconds_mean"] = mean(renders)
    share = love_share(evaluations)
    if share is not None:
        out["references_love_share"] = share
    return out


def love_share(evaluations: Sequence[Evaluation]) -> float | None:
    """The share of ``love`` among the references drawn for these evaluations' groups (each
    group's draw counted once, by its seed and ids); None when none was drawn (a mix without
    the judge, every source failed)."""
    draws: dict[tuple, list[str]] = {}
    for e in evaluations:
        refs = e.record.references or {}
        tiers = list(refs.get("tiers") or [])
        if tiers:
            draws[(refs.get("seed"), tuple(refs.get("ids") or ()))] = tiers
    tiers = [t for d in draws.values() for t in d]
    return sum(t == "love" for t in tiers) / len(tiers) if tiers else None


def render_seconds(e: Evaluation) -> float | None:
    value = e.record.latency_s.get("render")
    return float(value) if value is not None else None


def gate_seconds(e: Evaluation) -> float:
    return float(e.record.latency_s.get("gate") or 0.0)


Scored = Callable[[list[Any], list[Any], list[Evaluation], int], None]
"""(prompts, completions, evaluations, step) -> None."""


class TrainingRewards(RewardFunctions):
    """RewardFunctions that log the project's metrics and pass each scored batch on."""

    def __init__(self, rewarder: GuardedRewarder, on_scored: Scored | None = None,
                 default_subject: str | None = None, schedule: Any = None) -> None:
        super().__init__(rewarder, on_evaluations=self._scored, default_subject=default_subject,
                         schedule=schedule)
        self.on_scored = on_scored
        self._call: tuple[list[Any], list[Any], dict[str, Any], float] | None = None

    def evaluations(self, completions: list[Any], prompts: list[Any] | None = None,
                    **kwargs: Any) -> list[Evaluation]:
        self._call = (list(completions), list(prompts) if prompts is not None
                      else [""] * len(completions), kwargs, time.perf_counter())
        try:
            return super().evaluations(completions, prompts, **kwargs)
        finally:
            self._call = None

    @staticmethod
    def _log(done: list[Evaluation], kwargs: dict[str, Any]) -> None:
        # RewardFunctions' own logging reads each passed rollout's gate verdict, which an
        # environment server's evaluations do not carry; ours (batch_metrics) reads the
        # breakdown, so it is kept for in-process evaluations only.
        if all(e.verdict is not None for e in done if e.status == "ok"):
            RewardFunctions._log(done, kwargs)

    def _scored(self, done: list[Evaluation]) -> None:
        if self._call is None:
            return
        completions, prompts, kwargs, started = self._call
        state = kwargs.get("trainer_state")
        step = int(getattr(state, "global_step", 0) or 0)
        log_metric = kwargs.get("log_metric")
        if log_metric is not None:
            for name, value in batch_metrics(done, self.rewarder.mix.weights).items():
                log_metric(name, value)
            log_metric("time/rewards_s", time.perf_counter() - started)
            log_metric("time/render_s", rendering_wall_s(done, self.rewarder))
        if self.on_scored is not None:
            self.on_scored(prompts, [completion_text(c) for c in completions], done, step)


def rendering_wall_s(done: Sequence[Evaluation], rewarder: Any) -> float:
    """Wall time of the gate stage (static checks + renders): the sum of its latencies
    divided by the browsers working in parallel."""
    inner = getattr(rewarder, "inner", rewarder)
    renderer = getattr(inner, "renderer", None)
    workers = getattr(getattr(renderer, "config", None), "workers", 1) or 1
    return sum(gate_seconds(e) for e in done) / max(1, min(workers, len(done) or 1))
