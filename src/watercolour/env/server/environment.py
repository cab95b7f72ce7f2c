"""The environment behind the server: one shared :class:`Service` (the browsers, the render
cache, the rewarder and the judge and HPS backends) and one light
:class:`WatercolourEnvironment` per session on top of it.

``reset(seed=..., subject=...)`` draws the group's references from the seed (every rollout of
a GRPO group shares a seed and so faces the same references); ``step(action)`` gates, renders
once (through the cache), scores and answers the observation. Single turn by default; an
episode reset with ``max_turns > 1`` gets, after each step, its critique as the next user turn
and may revise.

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
from watercolour.env.critique import critique
from watercolour.env.models import (
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
    def evaluate(self, reply: str, subject: str, seed: int, render_seed: int
                 ) -> tuple[Evaluation, bool | None]:
        """One rollout, and whether its render came from the cache."""
        with self._lock:
            self.steps_running += 1
            self.peak_steps = max(self.peak_steps, self.steps_running)
        self.cache.reset_last()
        try:
            evaluation = self.rewarder.evaluate(reply, subject=subject, seed=seed,
                                                render_seed=render_seed)
        finally:
            with self._lock:
                self.steps_running -= 1
        with self._lock:
            self.outcomes[evaluation.status] = self.outcomes.get(evaluation.status, 0) + 1
        return evaluation, self.cache.last_hit

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
              max_turns: int = 1, include_png: bool = False, **unknown: Any
              ) -> WatercolourObservation:
        """A new episode. ``seed``: the group seed (default the reward's); ``subject``: what
        to paint; ``render_seed``: the sketch's seed (default from ``seed``); ``max_turns``:
        steps allowed (1..the server's limit); ``include_png``: observations carry the
        render."""
        if unknown:
            raise ValueError(f"unknown reset option(s): {', '.join(sorted(unknown))} (known: "
                             "seed, episode_id, subject, render_seed, max_turns, include_png)")
        config = self.service.config
        seed = config.reward.seed if seed is None else _int("seed", seed)
        render_seed = seed % 2**31 if render_seed is None else _int("render_seed", render_seed)
        max_turns = _int("max_turns", max_turns)
        if not 1 <= max_turns <= config.max_turns:
            raise ValueError(f"max_turns must be between 1 and {config.max_turns} (the "
                             f"server's WATERCOLOUR_ENV_MAX_TURNS), got {max_turns}")
        if subject is not None and not isinstance(subject, str):
            raise ValueError(f"subject must be a string, got {type(subject).__name__}")
        subject = (subject or DEFAULT_SUBJECT).strip() or DEFAULT_SUBJECT
        if len(subject) > MAX_SUBJECT_CHARS:
            raise ValueError(f"subject must be at most {MAX_SUBJECT_CHARS} characters, got "
                             f"{len(subject)}")
        if not isinstance(include_png, bool):
            raise ValueError(f"include_png must be true or false, got {include_png!r}")
        references = self.service.rewarder.references(seed)
        self._state = WatercolourState(
            episode_id=str(episode_id or uuid.uuid4()), step_count=0, seed=seed,
            render_seed=render_seed, subject=subject,
            reference_ids=references.ids if references is not None else [], turn=0,
            max_turns=max_turns, include_png=include_png, done=False)
        self._reset_done = True
        return WatercolourObservation(status="ready", subject=subject, prompt=messages(subject),
                                      reference_ids=self._state.reference_ids,
                                      max_turns=max_turns, done=False, reward=None)

    def step(self, action: WatercolourAction, timeout_s: float | None = None, **kwargs: Any
             ) -> WatercolourObservation:
        """Gate, render once, score; the observation carries the whole breakdown."""
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
                                                state.render_seed or 0)
        data = evaluation.to_dict()
        gate = data.get("gate") or {}
        turn = state.turn + 1
        done = turn >= state.max_turns
        note = critique(gate)
        self._state = state.model_copy(update={"turn": turn, "step_count": turn, "done": done})
        latency = dict(data.get("latency_s") or {})
        latency["step"] = round(time.monotonic() - start, 4)
        observation = WatercolourObservation(
            done=done, reward=evaluation.reward, status=evaluation.status,
            unavailable=data.get("unavailable"), subject=state.subject,
            prompt=[] if done else [{"role": "assistant", "content": action.reply},
                                    {"role": "user",
                                     "content": REVISION_PROMPT.format(critique=note)}],
            components=data.get("components") or {}, breakdown=data,
            passed=gate.get("passed"), violations=list(gate.get("violations") or []),
            paint_fraction=gate.get("paint_fraction"), n_shapes=gate.get("n_shapes"),
            reference_ids=state.reference_ids, critique=note,
            reply_sha256=hashlib.sha256(action.reply.encode("utf-8")).hexdigest(),
            turn=turn, max_turns=state.max_turns, latency_s=latency, cache_hit=hit,
            png_base64=(base64.b64encode(evaluation.png).decode("ascii")
                        if state.include_png and evaluation.png else None))
        log.info(json.dumps({"event": "step", "episode": state.episode_id, "turn": turn,
                             "status": evaluation.status, "reward": evaluation.reward,
                             "cache_hit": hit, "latency_s": latency,
                             "unavailable": data.get("unavailable")}, default=str))
        return observation

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.service.closed()
