"""The environment behind the server: one shared :class:`Service` (the browsers, the render
cache, the rewarder and the judge and HPS backends) and one light
:class:`WatercolourEnvironment` per session on top of it.

``reset(seed=..., subject=...)`` draws the group's references from the seed (every rollout of
a GRPO group shares a seed and so faces the same references); ``step(action)`` gates, renders
once (through the cache), scores and answers the observation. Single turn by default.

**Episodes of several turns.** ``reset(turns=K)`` (``max_turns=K`` is the same option; a
multi-turn episode's usual K is 2,
:data:`~watercolour.env.models.MULTI_TURN_DEFAULT`; at most the server's
``WATERCOLOUR_ENV_MAX_TURNS``) lets the policy revise: after each turn but the last the
observation carries the critique of the render's own measurements as the next user turn
(``prompt``) and, when the reset asked for it (``show_render=true`` or ``include_png=true``),
the render itself as a base64 PNG (``png_base64``; the revision prompt then says it is
attached). The critique never names the references, their tiers, the reward or a component's
score (:mod:`watercolour.env.critique`): the policy learns to look at its picture, not to
chase the judge. Each turn keeps today's three outcomes: ``ok``, ``rejected`` (reward 0; the
episode goes on, so a rejected sketch may be revised) and ``unavailable`` (the browser, judge
or scorer failed: the episode **ends there with reward None**, never 0). An unchanged revision
(the same sketch, and the episode keeps its render seed) is served by the render cache: it
costs no render.

**The episode's reward** (:func:`episode_reward`, stated in every step's
``metadata["episode"]["rule"]``)::

    R = max(0, R_K - penalty * max(0, max(R_1, ..., R_{K-1}) - R_K))

``R_K`` is the last turn's reward; ``penalty`` is the server's
``WATERCOLOUR_ENV_REGRESSION_PENALTY`` (default **0**: the episode's reward is simply the last
turn's; at most 1). A revision that makes the painting worse than the best earlier turn costs;
nothing is ever added. Why this form: the reward must never exceed what the same final sketch
earns when submitted on every turn (then every turn earns ``R_K``, the penalty is 0 and
``R = R_K``); any other path to that sketch earns ``R_K`` less something non-negative. A weak
first turn therefore gains nothing, for every penalty. The improvement bonus it replaces
(``R_K + bonus * max(0, R_K - max(R_1, floor))``) paid exactly that: a gate-passing 0.185
first turn, then the good painting, earned 1.000 where the good painting twice earned 0.799.
Measured from the best earlier turn rather than turn 1, so that in a longer episode a last
revision that undoes a good one still costs. The parameters are the server's: a ``reset``
that asks for ``improvement_bonus`` (or any reward parameter) is refused, so a client cannot
choose how it is paid. Until the last turn an observation's ``reward`` is that turn's own
(``turn_reward``); the observation that ends the episode carries the episode's (``reward``
and ``episode_reward``) and, in ``metadata``, every turn's record (sketch, critique, reward,
status, render hash: :class:`~watercolour.env.models.TurnRecord`) and ``reward_turn1``,
``reward_turn2``, ... for the trainer's logs.

Sessions run their steps in their own threads (OpenEnv gives each session one), so eight
sessions render in parallel up to the browser count and the judge and HPS calls of one overlap
with the renders of the others. Each step is logged as one JSON line with its per-stage
latencies (logger ``watercolour.env``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
import time
import uuid
from typing import Any

from openenv.core.env_server.interfaces import Environment

from watercolour.env.cache import RenderCache
from watercolour.env.config import EnvConfig
from watercolour.env.critique import UNCHANGED, critique
from watercolour.env.models import (
    EPISODE_REWARD_RULE,
    RewardSettings,
    TurnRecord,
    WatercolourAction,
    WatercolourObservation,
    WatercolourState,
)
from watercolour.prompt import DEFAULT_SUBJECT, messages
from watercolour.rewards import Evaluation, Rewarder

log = logging.getLogger("watercolour.env")
MAX_SUBJECT_CHARS = 300
REVISION_PROMPT = ("Here is what your painting looks like: {critique} Revise the sketch and "
                   "reply with the complete new version in one fenced JavaScript code block.")
REVISION_PROMPT_WITH_RENDER = (
    "Here is what your painting looks like (the render is attached): {critique} Revise the "
    "sketch and reply with the complete new version in one fenced JavaScript code block.")
RESET_OPTIONS = ("seed", "episode_id", "subject", "render_seed", "turns", "max_turns",
                 "include_png", "show_render", "love_references")
SERVER_REWARD = ("improvement_bonus", "improvement_floor", "regression_penalty")
"""Reward parameters a reset may not set: they are the server's (:class:`EnvConfig`)."""


def episode_reward(history: list[TurnRecord], penalty: float = 0.0
                   ) -> tuple[float | None, float]:
    """The episode's reward and the penalty taken from it (see the module docstring): the
    last turn's reward, less ``penalty * max(0, best earlier reward - R_K)``, never below 0;
    None (and no penalty) when any turn was unavailable. It never exceeds the last turn's
    reward, which is what the last sketch earns when it is submitted on every turn."""
    if not history or any(t.status == "unavailable" or t.reward is None for t in history):
        return None, 0.0
    last = history[-1].reward
    best = max((t.reward for t in history[:-1]), default=last)
    taken = min(penalty * max(0.0, best - last), last) if penalty > 0 else 0.0
    return last - taken, taken


def turn_record(evaluation: Evaluation, reply: str, turn: int,
                previous: TurnRecord | None = None, cache_hit: bool | None = None
                ) -> TurnRecord:
    """One turn's record from its evaluation: the critique of its render (said to be the same
    picture as ``previous``'s when it is), its reward, status and hashes. The server's steps
    and the trainer's episodes (:mod:`watercolour.train.episodes`) both keep their turns so."""
    record = evaluation.record
    render_sha = hashlib.sha256(evaluation.png).hexdigest() if evaluation.png else None
    note = critique(record.gate or {})
    if render_sha and previous is not None and previous.render_sha256 == render_sha:
        note = f"{UNCHANGED} {note}"
    return TurnRecord(
        turn=turn, status=evaluation.status, reward=evaluation.reward,
        passed=record.gate_passed, violations=record.violations, critique=note,
        sketch=evaluation.verdict.sketch if evaluation.verdict else None,
        reply_sha256=hashlib.sha256(reply.encode("utf-8")).hexdigest(),
        render_sha256=render_sha, cache_hit=cache_hit,
        unavailable=record.unavailable.model_dump() if record.unavailable else None)


def revision_prompt(note: str, with_render: bool = False) -> str:
    """The user turn that asks for a revision, around a turn's critique."""
    return (REVISION_PROMPT_WITH_RENDER if with_render else REVISION_PROMPT).format(
        critique=note)


class Service:
    """What every session shares. Owns the renderer it starts (closed by :meth:`close`).

    Args:
        config: default :meth:`EnvConfig.from_env`.
        renderer: a started renderer to use instead of starting one (then not closed here).
    """

    def __init__(self, config: EnvConfig | None = None, *, renderer: Any = None) -> None:
        self.config = config or EnvConfig.from_env()
        self._owned = None
        if renderer is None:
            from watercolour.render import Renderer

            renderer = self._owned = Renderer(self.config.render).start()
        try:
            self.cache = RenderCache(renderer, self.config.render_cache)
            self.rewarder = Rewarder(self.config.reward, renderer=self.cache)
        except BaseException:
            self.close()
            raise
        self._lock = threading.Lock()
        self.held = 0
        self.refused = 0
        self.sessions = 0
        self.peak_sessions = 0
        self.steps_running = 0
        self.peak_steps = 0
        self.outcomes = {"ok": 0, "rejected": 0, "unavailable": 0}
        self.started_at = time.time()

    # ------------------------------------------------------------ sessions
    @property
    def limit(self) -> int:
        """Slots: websocket sessions and HTTP ``/reset`` ``/step`` requests in progress."""
        return self.config.max_sessions

    def admit(self) -> bool:
        """Take a slot (a websocket session, or an HTTP reset or step while it runs); False
        when all ``max_sessions`` are held."""
        with self._lock:
            if self.held >= self.config.max_sessions:
                self.refused += 1
                return False
            self.held += 1
            return True

    def release(self) -> None:
        """Give a slot back."""
        with self._lock:
            self.held = max(0, self.held - 1)

    def opened(self) -> None:
        with self._lock:
            self.sessions += 1
            self.peak_sessions = max(self.peak_sessions, self.sessions)

    def closed(self) -> None:
        with self._lock:
            self.sessions -= 1

    # ------------------------------------------------------------ scoring
    def evaluate(self, reply: str, subject: str, seed: int, render_seed: int,
                 love: int | None = None) -> tuple[Evaluation, bool | None]:
        """One rollout, and whether its render came from the cache. ``love``: how many
        references come from the love tier (None: the default draw)."""
        with self._lock:
            self.steps_running += 1
            self.peak_steps = max(self.peak_steps, self.steps_running)
        self.cache.reset_last()
        try:
            evaluation = self.rewarder.evaluate(reply, subject=subject, seed=seed,
                                                render_seed=render_seed,
                                                **({} if love is None else {"love": love}))
        finally:
            with self._lock:
                self.steps_running -= 1
        with self._lock:
            self.outcomes[evaluation.status] = self.outcomes.get(evaluation.status, 0) + 1
        return evaluation, self.cache.last_hit

    def reward_settings(self) -> RewardSettings:
        """The reward's settings a trainer must share (``GET /reward``): a fresh copy of the
        server's own, which nothing a client sends can change."""
        reward, pool = self.config.reward, self.rewarder.pool
        tiers = {} if pool is None else {t: [p.id for p in pool.tier(t)]
                                        for t in pool.counts()}
        return RewardSettings(mix=dict(reward.mix.weights), mix_name=reward.mix.name,
                              references=reward.references, gate_mode=reward.gate_mode,
                              pool=None if pool is None else (pool.source or reward.pool),
                              tiers=tiers)

    def stats(self, config: bool = True) -> dict[str, Any]:
        """Counters for ``/stats`` and the benchmark; with ``config``, the resolved
        configuration too (``/stats`` shows it only to a caller with the token)."""
        with self._lock:
            counts = {"sessions": self.sessions, "peak_sessions": self.peak_sessions,
                      "slots_held": self.held, "refused": self.refused,
                      "steps_running": self.steps_running,
                      "peak_parallel_steps": self.peak_steps,
                      "outcomes": dict(self.outcomes), "render_cache": self.cache.stats(),
                      "browsers": getattr(self.cache.config, "workers", None),
                      "uptime_s": round(time.time() - self.started_at, 1)}
        if config:
            counts["config"] = self.config.resolved()
        return counts

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()
            self._owned = None


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return value


class WatercolourEnvironment(Environment[WatercolourAction, WatercolourObservation,
                                         WatercolourState]):
    """One session: reset draws the references, step scores a reply."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, service: Service) -> None:
        super().__init__()
        self.service = service
        self._state = WatercolourState()
        self._reset_done = False
        self._closed = False
        service.opened()

    @property
    def state(self) -> WatercolourState:
        return self._state

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              subject: str | None = None, render_seed: int | None = None,
              turns: int | None = None, max_turns: int | None = None,
              include_png: bool = False, show_render: bool = False,
              love_references: int | None = None, **unknown: Any) -> WatercolourObservation:
        """A new episode. ``seed``: the group seed (default the reward's); ``subject``: what
        to paint; ``render_seed``: the sketch's seed (default from ``seed``; every turn of the
        episode renders with it); ``turns`` (or ``max_turns``): turns allowed (default 1;
        1..the server's limit); ``show_render`` (or ``include_png``): observations carry the
        render; ``love_references``: how many of the references come from the pool's love
        tier (0..references; default references // 2, the draw of every committed run; a
        trainer's curriculum sets it per step). The reward's parameters are the server's: a
        reset that names one (:data:`SERVER_REWARD`) is refused."""
        asked = sorted(set(unknown) & set(SERVER_REWARD))
        if asked:
            config = self.service.config
            raise ValueError(f"{', '.join(asked)}: the episode's reward parameters are the "
                             "server's, not a reset option (this server: regression_penalty "
                             f"{config.regression_penalty:g}, "
                             "WATERCOLOUR_ENV_REGRESSION_PENALTY)")
        if unknown:
            raise ValueError(f"unknown reset option(s): {', '.join(sorted(unknown))} (known: "
                             f"{', '.join(RESET_OPTIONS)})")
        config = self.service.config
        seed = config.reward.seed if seed is None else _int("seed", seed)
        render_seed = seed % 2**31 if render_seed is None else _int("render_seed", render_seed)
        if turns is not None and max_turns is not None and turns != max_turns:
            raise ValueError(f"turns and max_turns are the same option: give one, got "
                             f"{turns!r} and {max_turns!r}")
        name = "turns" if turns is not None else "max_turns"
        count = _int(name, turns if turns is not None else
                     max_turns if max_turns is not None else 1)
        if not 1 <= count <= config.max_turns:
            raise ValueError(f"{name} must be between 1 and {config.max_turns} (the "
                             f"server's WATERCOLOUR_ENV_MAX_TURNS), got {count}")
        if subject is not None and not isinstance(subject, str):
            raise ValueError(f"subject must be a string, got {type(subject).__name__}")
        subject = (subject or DEFAULT_SUBJECT).strip() or DEFAULT_SUBJECT
        if len(subject) > MAX_SUBJECT_CHARS:
            raise ValueError(f"subject must be at most {MAX_SUBJECT_CHARS} characters, got "
                             f"{len(subject)}")
        for option, value in (("include_png", include_png), ("show_render", show_render)):
            if not isinstance(value, bool):
                raise ValueError(f"{option} must be true or false, got {value!r}")
        if love_references is not None:
            n = config.reward.references
            if isinstance(love_references, bool) or not isinstance(love_references, int) \
                    or not 0 <= love_references <= n:
                raise ValueError(f"love_references must be a whole number from 0 to {n} (the "
                                 f"server's references a group), got {love_references!r}")
        references = self.service.rewarder.references(seed, subject, love_references)
        self._state = WatercolourState(
            episode_id=str(episode_id or uuid.uuid4()), step_count=0, seed=seed,
            render_seed=render_seed, subject=subject,
            reference_ids=references.ids if references is not None else [],
            love_references=love_references, turn=0,
            max_turns=count, include_png=include_png or show_render, done=False,
            regression_penalty=config.regression_penalty)
        self._reset_done = True
        return WatercolourObservation(status="ready", subject=subject, prompt=messages(subject),
                                      reference_ids=self._state.reference_ids,
                                      max_turns=count, done=False, reward=None,
                                      metadata={"episode": self._episode_metadata()})

    def _episode_metadata(self, reward: float | None = None, taken: float | None = None
                          ) -> dict[str, Any]:
        state = self._state
        return {"rule": EPISODE_REWARD_RULE, "turns": state.max_turns,
                "regression_penalty": state.regression_penalty, "done": state.done,
                "reward": reward, "penalty_taken": taken,
                "history": [t.model_dump() for t in state.history]}

    def step(self, action: WatercolourAction, timeout_s: float | None = None, **kwargs: Any
             ) -> WatercolourObservation:
        """Gate, render once, score; the observation carries the whole breakdown, and the
        episode's reward when this turn ends it (the last turn, or an unavailable one)."""
        if action.problem:
            raise ValueError(action.problem)
        if not self._reset_done:  # the stateless HTTP /step: an episode with the defaults
            self.reset()
        state = self._state
        if state.done:
            raise RuntimeError(f"the episode is over ({state.turn} of {state.max_turns} "
                               "turns): reset first")
        start = time.monotonic()
        evaluation, hit = self.service.evaluate(action.reply, state.subject, state.seed or 0,
                                                state.render_seed or 0, state.love_references)
        turn = state.turn + 1
        done = turn >= state.max_turns or evaluation.status == "unavailable"
        record = turn_record(evaluation, action.reply, turn,
                             state.history[-1] if state.history else None, cache_hit=hit)
        reply_sha, render_sha, note = record.reply_sha256, record.render_sha256, record.critique
        history = [*state.history, record]
        reward, taken = (episode_reward(history, state.regression_penalty) if done
                         else (None, None))
        self._state = state.model_copy(update={"turn": turn, "step_count": turn, "done": done,
                                               "history": history, "reward": reward})
        metadata: dict[str, Any] = {"episode": self._episode_metadata(reward, taken)}
        metadata.update({f"reward_turn{t.turn}": t.reward for t in history})
        latency = dict(evaluation.record.latency_s)
        latency["step"] = round(time.monotonic() - start, 4)
        observation = WatercolourObservation(
            done=done, reward=reward if done else evaluation.reward, status=evaluation.status,
            unavailable=(evaluation.record.unavailable.model_dump()
                         if evaluation.record.unavailable else None), subject=state.subject,
            prompt=[] if done else [{"role": "assistant", "content": action.reply},
                                    {"role": "user", "content": revision_prompt(
                                        note, bool(state.include_png and evaluation.png))}],
            breakdown=evaluation.record,
            reference_ids=state.reference_ids, critique=note, reply_sha256=reply_sha,
            turn=turn, max_turns=state.max_turns, latency_s=latency, cache_hit=hit,
            png_base64=(base64.b64encode(evaluation.png).decode("ascii")
                        if state.include_png and evaluation.png else None),
            turn_reward=evaluation.reward, episode_reward=reward, render_sha256=render_sha,
            metadata=metadata)
        log.info(json.dumps({"event": "step", "episode": state.episode_id, "turn": turn,
                             "status": evaluation.status, "reward": evaluation.reward,
                             "episode_reward": reward, "done": done,
                             "cache_hit": hit, "latency_s": latency,
                             "unavailable": observation.unavailable}, default=str))
        return observation

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.service.closed()
