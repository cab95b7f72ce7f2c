"""What stands between the network and the environment: one ASGI middleware in front of
OpenEnv's app, because every step spends a render and the judge's and scorer's calls on the
owner's account.

- **The token.** With ``WATERCOLOUR_ENV_TOKEN`` set, every route but ``/health`` needs
  ``Authorization: Bearer <token>`` (compared with :func:`hmac.compare_digest`): HTTP answers
  401, a websocket upgrade is refused (403, close code 4401). Without one, nothing is checked,
  so a proxy that authenticates in front (a private Space) keeps working; but a request that
  reached the server on an address beyond the loopback is refused (403) unless
  ``WATERCOLOUR_ENV_ANONYMOUS`` says a proxy authenticates (``watercolour serve`` refuses to
  start that way; this covers ``uvicorn watercolour.env.server.app:app --host 0.0.0.0``).
- **One session limit.** Websocket sessions and plain HTTP ``/reset`` and ``/step`` hold one of
  ``WATERCOLOUR_ENV_MAX_SESSIONS`` slots while they run; when all are held, HTTP answers 503
  and a websocket gets OpenEnv's ``CAPACITY_REACHED`` error. An HTTP request takes its slot
  only once its whole body is in: a request still sending holds nothing.
- **Bounded input.** An HTTP request body is read whole, before the app sees the request
  (:meth:`Guard._body`), under two bounds: its size, :data:`MAX_BODY_BYTES` (413: a
  ``Content-Length`` over it before anything is read, a streamed body as soon as the bytes
  counted pass it), and its pace (408): it must be in within ``WATERCOLOUR_ENV_BODY_TIMEOUT``
  seconds and, after its first second (:data:`BODY_GRACE_S`), average at least
  ``WATERCOLOUR_ENV_BODY_MIN_RATE`` bytes a second, so a body trickled a byte at a time (a
  slowloris) is cut off within seconds. A websocket message over :data:`MAX_MESSAGE_BYTES`
  closes the socket (1009). Error frames never echo the input (only where and what,
  truncated).
- **Idle websockets.** A websocket that sends nothing for ``WATERCOLOUR_ENV_IDLE_TIMEOUT``
  seconds is closed (4408) and its session freed; a step in progress is not idle time.
- OpenEnv's MCP routes (``/mcp``, ``/harness``) answer 404: this environment has no tools, and
  their sessions would outlive the request, the limit and the idle timeout.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from watercolour.env.config import variable
from watercolour.env.limits import MAX_MESSAGE_BYTES

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_BODY_BYTES = MAX_MESSAGE_BYTES
"""The largest HTTP request body read (the same bound as a websocket message)."""

BODY_GRACE_S = 1.0
"""Seconds a request body may take before its average pace is held to the minimum rate (a
request's first bytes may wait on the connection's start)."""

OPEN_PATHS = frozenset({"/health"})
CLOSED_PREFIXES = ("/mcp", "/harness")
HELD = frozenset({("websocket", "/ws"), ("POST", "/reset"), ("POST", "/step")})
"""What holds a session slot while it runs."""

CLOSE_UNAUTHORIZED = 4401
CLOSE_IDLE = 4408
CLOSE_TOO_BIG = 1009
MAX_TEXT = 200
MAX_ERRORS = 8


class Slots(Protocol):
    """The shared session count (:class:`~watercolour.env.server.environment.Service`)."""

    @property
    def limit(self) -> int: ...

    def admit(self) -> bool: ...

    def release(self) -> None: ...


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (an address or ``localhost``) is the loopback; a name is not."""
    if not host:
        return False
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def short(text: Any, limit: int = MAX_TEXT) -> str:
    """``text`` as one string of at most ``limit`` characters."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_errors(errors: Any) -> list[dict[str, Any]]:
    """Validation errors as where and what only (``loc``, ``msg``), a few, truncated: never
    the ``input`` or ``ctx`` pydantic puts beside them."""
    if not isinstance(errors, list | tuple):
        return [{"loc": [], "msg": short(errors)}]
    listed = []
    for error in list(errors)[:MAX_ERRORS]:
        if isinstance(error, dict):
            loc = [x if isinstance(x, int) else short(x, 60)
                   for x in list(error.get("loc") or [])[:6]]
            listed.append({"loc": loc, "msg": short(error.get("msg", ""))})
        else:
            listed.append({"loc": [], "msg": short(error)})
    if len(errors) > MAX_ERRORS:
        listed.append({"loc": [], "msg": f"and {len(errors) - MAX_ERRORS} more"})
    return listed


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value
    return None


def _json(status: int, detail: str, extra: dict[str, str] | None = None
          ) -> tuple[Message, Message]:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    return ({"type": "http.response.start", "status": status, "headers": headers},
            {"type": "http.response.body", "body": body})


class Guard:
    """The middleware (see the module docstring). ``token``: the bearer token, or None;
    ``slots``: the shared session count; ``idle_timeout_s``: seconds a websocket may wait;
    ``body_timeout_s``, ``body_min_rate``: an HTTP body's deadline and least pace (bytes a
    second; 0: none) (the server's settings, :class:`~watercolour.env.config.EnvConfig`)."""

    def __init__(self, app: Callable[..., Awaitable[None]], *, token: str | None,
                 slots: Slots, idle_timeout_s: float, body_timeout_s: float,
                 body_min_rate: float, anonymous: bool = False,
                 max_body_bytes: int = MAX_BODY_BYTES,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.app = app
        self._token = token.encode("utf-8") if token else None
        self.slots = slots
        self.idle_timeout_s = float(idle_timeout_s)
        self.body_timeout_s = float(body_timeout_s)
        self.body_min_rate = float(body_min_rate)
        self.anonymous = anonymous
        self.max_body_bytes = max_body_bytes
        self.max_message_bytes = max_message_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        else:  # lifespan
            await self.app(scope, receive, send)

    # ------------------------------------------------------------ checks
    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        """Why this request may not go further (status, reason), or None."""
        path = scope.get("path", "")
        if path in OPEN_PATHS:
            return None
        if self._token is not None:
            presented = _header(scope, b"authorization") or b""
            scheme, _, value = presented.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(),
                                                                     self._token):
                return 401, "a bearer token is required (Authorization: Bearer <token>)"
        elif not self.anonymous:
            server = scope.get("server")
            if server and not is_loopback(str(server[0])):
                return 403, (f"this server has no {variable('token')} and is reached beyond "
                             f"the loopback: set one (or {variable('anonymous')}=1 behind a "
                             "proxy that authenticates)")
        if path.startswith(CLOSED_PREFIXES):
            return 404, "Not Found"
        return None

    # ------------------------------------------------------------ HTTP
    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self._refusal(scope)
        if refused is not None:
            status, reason = refused
            extra = {"www-authenticate": "Bearer"} if status == 401 else None
            for message in _json(status, reason, extra):
                await send(message)
            return
        length = _header(scope, b"content-length")
        if length is not None and length.strip().isdigit() and \
                int(length) > self.max_body_bytes:
            await self._too_large(send)
            return
        body = await self._body(receive, send)
        if body is None:  # answered (413, 408), or the client went away
            return
        held = (scope.get("method", "GET"), scope.get("path", "")) in HELD
        if held and not self.slots.admit():
            for message in _json(503, "the server is at its session limit "
                                      "(WATERCOLOUR_ENV_MAX_SESSIONS): try again later"):
                await send(message)
            return
        given = {"done": False}

        async def replay() -> Message:  # the body read, then whatever comes (a disconnect)
            if given["done"]:
                return await receive()
            given["done"] = True
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            await self.app(scope, replay, send)
        finally:
            if held:
                self.slots.release()

    async def _body(self, receive: Receive, send: Send) -> bytes | None:
        """The whole request body, read under the size and pace bounds (module docstring);
        None when it broke one (answered here: 413 or 408) or the client disconnected."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        chunks: list[bytes] = []
        read = 0
        while True:
            deadline = start + self.body_timeout_s
            if self.body_min_rate > 0:
                deadline = min(deadline, start + BODY_GRACE_S + read / self.body_min_rate)
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                await self._too_slow(send, read, loop.time() - start)
                return None
            if message.get("type") == "http.disconnect":
                return None
            if message.get("type") != "http.request":
                continue
            chunk = message.get("body") or b""
            read += len(chunk)
            if read > self.max_body_bytes:
                await self._too_large(send)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_slow(self, send: Send, read: int, elapsed: float) -> None:
        rule = f"in all within {self.body_timeout_s:g} s"
        if self.body_min_rate > 0:
            rule += f", at {self.body_min_rate:g} bytes a second or more"
        for message in _json(408, f"the request body came too slowly ({read} bytes in "
                                  f"{elapsed:.1f} s): it must arrive {rule}",
                             {"connection": "close"}):
            await send(message)

    async def _too_large(self, send: Send) -> None:
        for message in _json(413, f"the request body is over {self.max_body_bytes} bytes"):
            await send(message)

    # ------------------------------------------------------------ websocket
    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self._refusal(scope)
        if refused is not None:  # before the accept: the upgrade is answered 403
            code = CLOSE_UNAUTHORIZED if refused[0] == 401 else 1008
            await send({"type": "websocket.close", "code": code, "reason": short(refused[1],
                                                                                120)})
            return
        held = scope.get("path", "") == "/ws"
        if held and not self.slots.admit():
            await self._capacity(receive, send)
            return
        closed = {"done": False}

        async def close(code: int, reason: str) -> Message:
            if not closed["done"]:
                closed["done"] = True
                await send({"type": "websocket.close", "code": code, "reason": reason})
            return {"type": "websocket.disconnect", "code": code}

        async def bounded() -> Message:
            if closed["done"]:
                return {"type": "websocket.disconnect", "code": 1000}
            try:
                message = await asyncio.wait_for(receive(), self.idle_timeout_s)
            except asyncio.TimeoutError:
                return await close(CLOSE_IDLE, f"idle for {self.idle_timeout_s:g} s")
            if message.get("type") == "websocket.receive" and _over(
                    message.get("text"), message.get("bytes"), self.max_message_bytes):
                return await close(CLOSE_TOO_BIG, "message too big")
            elif message.get("type") == "websocket.disconnect":
                closed["done"] = True
            return message

        async def guarded(message: Message) -> None:
            if closed["done"]:
                return
            if message.get("type") == "websocket.send" and \
                    (message.get("text") or "").startswith('{"type":"error"'):
                message = {**message, "text": short_frame(message["text"])}
            elif message.get("type") == "websocket.close":
                closed["done"] = True
            await send(message)

        try:
            await self.app(scope, bounded, guarded)
        finally:
            if held:
                self.slots.release()

    async def _capacity(self, receive: Receive, send: Send) -> None:
        """OpenEnv's own answer when its sessions are all held: an error frame, then close."""
        from openenv.core.env_server.exceptions import SessionCapacityError
        from openenv.core.env_server.types import WSErrorCode, WSErrorResponse

        message = await receive()
        if message.get("type") != "websocket.connect":
            return
        limit = self.slots.limit
        error = SessionCapacityError(active_sessions=limit, max_sessions=limit)
        frame = WSErrorResponse(data={"message": str(error),
                                      "code": WSErrorCode.CAPACITY_REACHED,
                                      "active_sessions": limit, "max_sessions": limit})
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": frame.model_dump_json()})
        await send({"type": "websocket.close", "code": 1000})


def _over(text: str | None, data: bytes | None, limit: int) -> bool:
    """Whether a websocket message is over ``limit`` bytes (text counted as UTF-8)."""
    if data is not None:
        return len(data) > limit
    if text is None or len(text) * 4 <= limit:
        return False
    return len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit


def short_frame(text: str) -> str:
    """An OpenEnv error frame with its message truncated and its validation errors reduced
    to where and what (pydantic's ``input`` would echo the message back)."""
    try:
        frame = json.loads(text)
        data = frame.get("data")
    except (ValueError, AttributeError):
        return text
    if not isinstance(data, dict):
        return text
    if "message" in data:
        data["message"] = short(data["message"])
    if "errors" in data:
        data["errors"] = short_errors(data["errors"])
    return json.dumps(frame)
