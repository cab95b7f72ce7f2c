"""Clients: :class:`WatercolourEnv`, the typed OpenEnv ``EnvClient`` of one session,
:class:`RemoteRewarder`, which scores a group of replies through one or more servers and
stands in for :class:`watercolour.rewards.Rewarder` in the trainer, and :func:`play_episode`,
which lets a policy sketch and revise through one multi-turn episode (a client's session or
the in-process environment).

>>> with RemoteRewarder(["http://127.0.0.1:8000", "http://10.0.0.2:8000"]) as rewarder:
...     evaluations = rewarder.evaluate_group(replies, subject="a lotus", seed=7)
...     [e.reward for e in evaluations]        # floats, 0.0 (rejected) or None (unavailable)

Resilience, as the reproduction's lost runs taught:

- the step timeout (``timeout_s``, 300 s) exceeds the slowest possible step (two render
  attempts at the render deadline, then the judge and HPS timeouts); OpenEnv's own default
  (60 s) is shorter than a slow render;
- a socket the far end closed is replaced on the next call, and a connection whose answer
  timed out is discarded (OpenEnv 0.10 does both), so a late answer is never read as the next
  call's: each observation also names the SHA-256 of the reply it answers;
- starting an episode (connect + reset) is retried up to ``retries`` times, on the next
  server; a server that refuses or drops connections is skipped for ``revive_after_s`` and
  then tried again;
- a step that was sent is never sent again (a sketch that brought one server down must not
  bring down the next): when it cannot complete, its evaluation is ``reward=None``,
  ``status="unavailable"`` with the reason, never an exception and never 0.
"""

from __future__ import annotations

import asyncio
import base64
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from pydantic import ValidationError
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from watercolour.env.agreement import ServerPool, check_agreement, read_reward_settings
from watercolour.env.config import variable
from watercolour.env.models import (
    MULTI_TURN_DEFAULT,
    RewardSettings,
    WatercolourAction,
    WatercolourObservation,
    WatercolourState,
)
from watercolour.errors import InputError
from watercolour.rewards import Evaluation, RewardConfig
from watercolour.rewards.record import ComponentScore, RewardRecord, Unavailable
from watercolour.rewards.rubric import NAMES

DEFAULT_STEP_TIMEOUT_S = 300.0
DEFAULT_RESET_TIMEOUT_S = 30.0


class WatercolourEnv(EnvClient[WatercolourAction, WatercolourObservation, WatercolourState]):
    """One session with a watercolour server (async; ``.sync()`` for plain code).

    >>> with WatercolourEnv("http://127.0.0.1:8000").sync() as env:
    ...     env.reset(seed=7, subject="a lotus")
    ...     result = env.step(WatercolourAction(reply=reply))
    ...     result.reward, result.observation.breakdown.components

    ``message_timeout_s`` (the step's) defaults to 300 s; a reset waits at most
    ``reset_timeout_s``. ``token``: the server's bearer token (default its variable,
    ``WATERCOLOUR_ENV_TOKEN``, when set and ``headers`` has no ``Authorization``).
    """

    def __init__(self, base_url: str, connect_timeout_s: float = 10.0,
                 message_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
                 reset_timeout_s: float = DEFAULT_RESET_TIMEOUT_S, token: str | None = None,
                 headers: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(base_url=base_url, connect_timeout_s=connect_timeout_s,
                         message_timeout_s=message_timeout_s,
                         headers=auth_headers(token, headers), **kwargs)
        self.reset_timeout_s = reset_timeout_s

    async def _reset_async(self, **kwargs: Any) -> StepResult[WatercolourObservation]:
        step_timeout = self._message_timeout
        self._message_timeout = min(self.reset_timeout_s, step_timeout)
        try:
            return await super()._reset_async(**kwargs)
        finally:
            self._message_timeout = step_timeout

    def _step_payload(self, action: WatercolourAction) -> dict[str, Any]:
        return {"reply": action.reply}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[WatercolourObservation]:
        known = WatercolourObservation.model_fields
        data = {k: v for k, v in (payload.get("observation") or {}).items() if k in known}
        observation = WatercolourObservation(**data, reward=payload.get("reward"),
                                             done=bool(payload.get("done", False)))
        return StepResult(observation=observation, reward=payload.get("reward"),
                          done=bool(payload.get("done", False)),
                          metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> WatercolourState:
        return WatercolourState(**payload)


# ---------------------------------------------------------------- several servers


@dataclass
class _Server:
    url: str
    dead_until: float = 0.0
    last_error: str | None = None
    served: int = 0
    failures: int = 0
    idle: list[WatercolourEnv] = field(default_factory=list)
    slots: asyncio.Semaphore | None = None


CONNECTION_ERRORS = (ConnectionError, ConnectionClosed, InvalidHandshake, OSError, EOFError)


def _reason(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


class RemoteRewarder:
    """Scores replies through watercolour servers: one episode per reply (reset with the
    group's seed and subject, step with the reply), sessions spread over ``urls``.

    Args:
        urls: the servers (``http://``, ``https://``, ``ws://`` or ``wss://``).
        timeout_s: seconds to wait for one step's answer.
        retries: further attempts to start an episode (connect + reset) when one fails.
        connect_timeout_s: seconds to open a connection.
        sessions_per_url: sessions open at once on one server; they stay open between groups
            (the next group reuses them), so several trainers sharing a server need its
            ``WATERCOLOUR_ENV_MAX_SESSIONS`` at least the sum of theirs.
        revive_after_s: how long a failed server is skipped before it is tried again.
        include_png: ask for the render (``Evaluation.png``).
        token: the servers' bearer token (their ``WATERCOLOUR_ENV_TOKEN``), sent as
            ``Authorization: Bearer``; default that variable here, when set.
        headers: extra HTTP headers (``{"Authorization": "Bearer hf_..."}`` for a private
            Space: an ``Authorization`` here is sent instead of the variable's token).
    """

    def __init__(self, urls: Sequence[str], *, timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
                 retries: int = 2, connect_timeout_s: float = 10.0, sessions_per_url: int = 8,
                 revive_after_s: float = 30.0, include_png: bool = False,
                 token: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        if isinstance(urls, str):
            urls = [urls]
        urls = [u.strip().rstrip("/") for u in urls if u and u.strip()]
        if not urls:
            raise InputError("RemoteRewarder needs at least one server URL")
        for url in urls:
            if url.split("://")[0] not in ("http", "https", "ws", "wss") or "://" not in url:
                raise InputError(f"a server URL must start with http://, https://, ws:// or "
                                 f"wss://, got {url!r}")
        if timeout_s <= 0 or connect_timeout_s <= 0:
            raise InputError("timeouts must be positive")
        if retries < 0:
            raise InputError(f"retries must be 0 or more, got {retries}")
        if sessions_per_url < 1:
            raise InputError(f"sessions_per_url must be at least 1, got {sessions_per_url}")
        self.urls = list(urls)
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.connect_timeout_s = float(connect_timeout_s)
        self.sessions_per_url = int(sessions_per_url)
        self.revive_after_s = float(revive_after_s)
        self.include_png = include_png
        self.headers = auth_headers(token, headers)
        self.pool: ServerPool | None = None
        """The servers' reference pool, once :meth:`agree` has read it."""
        self.served: dict[str, RewardSettings] = {}
        """Each server's reward settings (by URL), once :meth:`agree` has read them."""
        self._servers = [_Server(u) for u in self.urls]
        self._cursor = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="watercolour-remote-rewarder")
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._make_slots(), self._loop).result(10)

    async def _make_slots(self) -> None:
        for server in self._servers:
            server.slots = asyncio.Semaphore(self.sessions_per_url)

    # ------------------------------------------------------------ public
    def evaluate(self, reply: str, subject: str | None = None, seed: int | None = None,
                 render_seed: int | None = None) -> Evaluation:
        """One rollout (a group of one)."""
        return self.evaluate_group([reply], subject, seed, render_seed)[0]

    def evaluate_group(self, replies: Sequence[str], subject: str | None = None,
                       seed: int | None = None, render_seed: int | None = None,
                       love: int | None = None) -> list[Evaluation]:
        """The rollouts of one group, in order; each an :class:`~watercolour.rewards.
        Evaluation` (``reward`` None and ``status`` unavailable where a server failed).
        ``love``: how many references come from the love tier (the reset option
        ``love_references``, sent only when given; the server checks it)."""
        if self._loop.is_closed() or not self._thread.is_alive():
            raise RuntimeError("this RemoteRewarder is closed")
        if isinstance(replies, str):
            raise TypeError("replies must be a sequence of strings, not one string")
        for name, value in (("seed", seed), ("render_seed", render_seed), ("love", love)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"{name} must be an integer or None, got {value!r}")
        future = asyncio.run_coroutine_threadsafe(
            self._group(list(replies), subject, seed, render_seed, love), self._loop)
        return future.result()

    def reward_settings(self) -> dict[str, RewardSettings]:
        """Each server's reward settings (``GET /reward``), by URL.

        Raises:
            DisagreementError: a server cannot be reached or does not answer them.
        """
        return {url: read_reward_settings(url, self.headers, max(self.connect_timeout_s, 30.0))
                for url in self.urls}

    def agree(self, config: RewardConfig) -> None:
        """Refuse to score for a trainer whose reward ``config`` differs from any server's
        (the mix, the references, the gate mode) or when the servers' pools differ
        (:func:`~watercolour.env.agreement.check_agreement`); keep the servers' pool
        (:attr:`pool`) for the trainer's curriculum check and what each answered
        (:attr:`served`, by URL) for the run's record.

        Raises:
            DisagreementError: each difference, one line each, with its fix.
        """
        served = self.reward_settings()
        self.pool = check_agreement(config, served)
        self.served = served

    def stats(self) -> list[dict[str, Any]]:
        """Per server: episodes served, failures, the last error, whether it is skipped."""
        now = time.monotonic()
        return [{"url": s.url, "served": s.served, "failures": s.failures,
                 "skipped": s.dead_until > now, "last_error": s.last_error}
                for s in self._servers]

    def close(self) -> None:
        """Close every session and stop the background loop. Safe to call twice."""
        if self._loop.is_closed():
            return
        if self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._close_all(), self._loop).result(30)
            except Exception:
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        if not self._loop.is_running():
            self._loop.close()

    def __enter__(self) -> RemoteRewarder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ inside the loop
    async def _close_all(self) -> None:
        clients = [c for s in self._servers for c in s.idle]
        for s in self._servers:
            s.idle.clear()
        await asyncio.gather(*(self._discard(c) for c in clients), return_exceptions=True)

    async def _group(self, replies: list[str], subject: str | None, seed: int | None,
                     render_seed: int | None, love: int | None = None) -> list[Evaluation]:
        return list(await asyncio.gather(*(self._episode(r, subject, seed, render_seed, love)
                                           for r in replies)))

    def _pick(self, tried: set[int]) -> int | None:
        """The next server in turn that is not skipped and not yet tried by this episode;
        when every untried one is skipped, the one skipped longest ago (it may be back)."""
        now = time.monotonic()
        n = len(self._servers)
        for k in range(n):
            i = (self._cursor + k) % n
            if i not in tried and self._servers[i].dead_until <= now:
                self._cursor = i + 1
                return i
        left = [i for i in range(n) if i not in tried]
        return min(left, key=lambda i: self._servers[i].dead_until) if left else None

    def _mark_dead(self, server: _Server, reason: str) -> None:
        server.failures += 1
        server.last_error = reason
        server.dead_until = time.monotonic() + self.revive_after_s

    async def _session(self, server: _Server) -> WatercolourEnv:
        if server.idle:
            return server.idle.pop()
        client = WatercolourEnv(server.url, connect_timeout_s=self.connect_timeout_s,
                                message_timeout_s=self.timeout_s,
                                reset_timeout_s=max(self.connect_timeout_s,
                                                    DEFAULT_RESET_TIMEOUT_S),
                                headers=self.headers)
        await client.connect()
        return client

    @staticmethod
    async def _discard(client: WatercolourEnv | None) -> None:
        if client is None:
            return
        try:
            await asyncio.wait_for(client.close(), 5)
        except (Exception, asyncio.CancelledError):
            pass

    async def _episode(self, reply: str, subject: str | None, seed: int | None,
                       render_seed: int | None, love: int | None = None) -> Evaluation:
        start = time.monotonic()
        context = {"subject": subject, "seed": seed, "render_seed": render_seed}
        try:
            action = WatercolourAction(reply=reply)
            problem = action.problem
        except ValidationError as err:
            problem = err.errors(include_input=False)[0]["msg"]
        if problem:
            return unavailable("payload", f"the reply cannot be sent: {problem}", context, start)
        options: dict[str, Any] = {"include_png": self.include_png}
        options.update({k: v for k, v in context.items() if v is not None})
        if love is not None:
            options["love_references"] = love
        errors: list[str] = []
        tried: set[int] = set()
        for attempt in range(1, self.retries + 2):
            index = self._pick(tried)
            if index is None:  # every server tried once: start the round again, after a pause
                tried.clear()
                await asyncio.sleep(min(0.5 * attempt, 5.0))
                index = self._pick(tried)
            assert index is not None
            tried.add(index)
            server = self._servers[index]
            assert server.slots is not None
            async with server.slots:
                client: WatercolourEnv | None = None
                try:
                    client = await self._session(server)
                    await client.reset(**options)
                except (*CONNECTION_ERRORS, asyncio.TimeoutError) as err:
                    await self._discard(client)
                    errors.append(f"{server.url}: {_reason(err)}")
                    self._mark_dead(server, errors[-1])
                    continue
                except RuntimeError as err:  # the server answered with an error frame
                    await self._discard(client)
                    errors.append(f"{server.url}: {_reason(err)}")
                    if "CAPACITY_REACHED" in str(err):
                        server.last_error = errors[-1]
                        continue
                    return unavailable("server", f"{server.url} refused the episode: "
                                       f"{err}", context, start, server.url, attempt)
                try:
                    result = await client.step(action)
                except asyncio.TimeoutError:
                    await self._discard(client)
                    server.failures += 1
                    server.last_error = f"step timed out after {self.timeout_s:g} s"
                    return unavailable("timeout", f"{server.url} did not answer the step "
                                       f"within {self.timeout_s:g} s (the connection was "
                                       "discarded)", context, start, server.url, attempt)
                except CONNECTION_ERRORS as err:
                    await self._discard(client)
                    self._mark_dead(server, f"lost mid-step: {_reason(err)}")
                    return unavailable("server", f"{server.url} closed the connection "
                                       f"mid-step ({_reason(err)})", context, start,
                                       server.url, attempt)
                except RuntimeError as err:
                    server.idle.append(client)
                    return unavailable("server", f"{server.url} could not step: {err}",
                                       context, start, server.url, attempt)
                server.idle.append(client)
                server.served += 1
                return from_observation(result.observation, server.url, attempt,
                                        time.monotonic() - start)
        return unavailable("server", "no server could start the episode: "
                           + "; ".join(errors[-3:]), context, start, None, self.retries + 1)


def auth_headers(token: str | None = None, headers: Mapping[str, str] | None = None,
                 environ: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """``headers`` with ``Authorization: Bearer <token>``: ``token``, else the server's own
    variable (``WATERCOLOUR_ENV_TOKEN``) when set and ``headers`` has no ``Authorization``."""
    merged = dict(headers or {})
    given = any(k.lower() == "authorization" for k in merged)
    if token is not None:
        token = token.strip()
        if not token:
            raise InputError("token must not be empty")
        if given:
            raise InputError("give either token or an Authorization header, not both")
    elif not given:
        name = variable("token")
        token = ((os.environ if environ is None else environ).get(name) or "").strip() or None
    if token is not None:
        merged["Authorization"] = f"Bearer {token}"
    return merged or None


def from_observation(observation: WatercolourObservation, url: str | None = None,
                     attempts: int = 1, seconds: float | None = None) -> Evaluation:
    """The :class:`~watercolour.rewards.Evaluation` a step's observation describes (its
    ``breakdown`` is the server's record, given an ``env`` entry here)."""
    record = (observation.breakdown.model_copy(deep=True) if observation.breakdown is not None
              else RewardRecord(reward=observation.reward, status=observation.status))
    record.env = {"url": url, "attempts": attempts, "turn": observation.turn,
                        "cache_hit": observation.cache_hit, "critique": observation.critique,
                        "reply_sha256": observation.reply_sha256,
                        "latency_s": round(seconds, 4) if seconds is not None else None,
                        "turn_reward": observation.turn_reward,
                        "episode_reward": observation.episode_reward,
                        **{k: v for k, v in (observation.metadata or {}).items()
                           if k.startswith("reward_turn")}}
    png = base64.b64decode(observation.png_base64) if observation.png_base64 else None
    if observation.status == "unavailable":
        record.reward = None
    return Evaluation(record, png=png)


def unavailable(part: str, reason: str, context: Mapping[str, Any] | None = None,
                start: float | None = None, url: str | None = None,
                attempts: int = 0) -> Evaluation:
    """An evaluation that could not be made: reward None, with the part and the reason."""
    seconds = round(time.monotonic() - start, 4) if start is not None else None
    record = RewardRecord(
        **dict(context or {}), reward=None, status="unavailable",
        unavailable=Unavailable(part=part, reason=reason),
        components={n: ComponentScore() for n in NAMES}, latency_s={"total": seconds},
        env={"url": url, "attempts": attempts, "latency_s": seconds})
    return Evaluation(record)


Policy = Callable[[list[dict[str, str]], WatercolourObservation], str]
"""``policy(messages, observation) -> reply``: the conversation so far (the request, then each
reply and the critique that answered it) and the last observation (its ``png_base64`` is the
render when the episode shows it)."""


def play_episode(env: Any, policy: Policy, *, turns: int = MULTI_TURN_DEFAULT,
                 **reset_options: Any) -> WatercolourObservation:
    """One episode of up to ``turns`` turns (default 2: a sketch and one revision) on ``env``,
    the in-process :class:`~watercolour.env.server.WatercolourEnvironment` or a
    ``WatercolourEnv(...).sync()`` session; ``reset_options`` go to ``reset`` (``seed``,
    ``subject``, ``show_render``, ``love_references``, ...; the reward's parameters are the
    server's, not reset options).

    >>> final = play_episode(env, lambda messages, seen: model.reply(messages), seed=7,
    ...                      show_render=True)
    >>> final.reward, final.metadata["reward_turn1"], final.metadata["reward_turn2"]

    Returns the observation that ended the episode: its ``reward`` is the episode's (None
    when a turn was unavailable; the episode then ends early) and its ``metadata`` holds every
    turn's record."""
    observation = _observation(env.reset(turns=turns, **reset_options))
    messages = list(observation.prompt)
    while not observation.done:
        reply = policy(list(messages), observation)
        observation = _observation(env.step(WatercolourAction(reply=reply)))
        messages.extend(observation.prompt)
    return observation


def render_message(observation: WatercolourObservation) -> dict[str, Any]:
    """The observation's revision turn (the last of its ``prompt``) for a vision policy: the
    render first, as an OpenAI-style ``image_url`` part with a ``data:`` URL, then the text;
    the text alone when the observation carries no render."""
    if not observation.prompt:
        raise ValueError("this observation asks for no revision (the episode is over)")
    message = dict(observation.prompt[-1])
    if observation.png_base64:
        message["content"] = [
            {"type": "image_url",
             "image_url": {"url": f"data:image/png;base64,{observation.png_base64}"}},
            {"type": "text", "text": message["content"]}]
    return message


def _observation(result: Any) -> WatercolourObservation:
    """A client's ``StepResult`` or the in-process environment's observation: the
    observation."""
    return result if isinstance(result, WatercolourObservation) else result.observation
