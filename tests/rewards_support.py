"""Shared by the reward tests: small synthetic paintings, pools made of them, real local HTTP
servers that misbehave on request, and a renderer that replays real renders."""

from __future__ import annotations

import io
import json
import math
import random
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image, ImageDraw, ImageFilter

from watercolour.rewards.references import ReferencePool

PAPER = (246, 240, 228)
HUES = [(232, 140, 110), (220, 90, 120), (240, 190, 90), (150, 110, 200), (110, 170, 120)]


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def painting(seed: int, kind: str = "love", size: int = 128) -> bytes:
    """A small synthetic picture. ``love``: soft, bled, translucent layered washes on paper;
    ``okay``: hard-edged, flat, opaque, darker shapes; ``blank``: bare paper."""
    rng = random.Random(f"{kind}-{seed}")
    base = Image.new("RGBA", (size, size), (*PAPER, 255))
    if kind == "blank":
        return _png(base)
    c = size / 2
    for layer in range(3 if kind == "love" else 1):
        sheet = Image.new("RGBA", (size, size), (0, 0, 0, 0))
        draw = ImageDraw.Draw(sheet)
        hue = HUES[(seed + layer) % len(HUES)] if kind == "love" else HUES[seed % len(HUES)]
        alpha = (70 + 40 * layer) if kind == "love" else 255
        radius = size * (0.30 - 0.07 * layer) * rng.uniform(0.9, 1.1)
        for k in range(5):
            a = k * 1.2566 + rng.uniform(-0.2, 0.2)
            x = c + 0.5 * radius * math.cos(a)
            y = c + 0.5 * radius * math.sin(a)
            r = radius * 0.55
            colour = hue if kind == "love" else tuple(int(v * 0.55) for v in hue)
            draw.ellipse((x - r, y - r, x + r, y + r), fill=(*colour, alpha))
        if kind == "love":
            sheet = sheet.filter(ImageFilter.GaussianBlur(size / 40))
        base = Image.alpha_composite(base, sheet)
    return _png(base)


def pool(n_love: int = 6, n_okay: int = 6, size: int = 128) -> ReferencePool:
    rows = [{"id": f"love-{i:02d}", "tier": "love", "png": painting(i, "love", size)}
            for i in range(n_love)]
    rows += [{"id": f"okay-{i:02d}", "tier": "okay", "png": painting(100 + i, "okay", size)}
             for i in range(n_okay)]
    return ReferencePool.from_rows(rows, source="synthetic")


# ---------------------------------------------------------------- HTTP servers

Behaviour = Any
"""``"ok"``, ``("status", code[, body])``, ``("hang", seconds)``, ``("raw", bytes)`` or a callable
(request json) -> response object."""


class FaultServer:
    """A real HTTP server on a free local port. Each request takes the next behaviour from
    ``script`` (the last one repeats); ``ok`` answers with ``respond(request_json)``.

    Counts requests and the most that were in flight at once."""

    def __init__(self, respond: Callable[[dict], Any], script: list[Behaviour] | None = None,
                 delay_s: float = 0.0) -> None:
        self.respond = respond
        self.script = list(script or ["ok"])
        self.delay_s = delay_s
        self.requests: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner._handle(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    payload = json.loads(body) if body else {}
                except json.JSONDecodeError:
                    payload = {"_raw": body[:100].decode("latin-1")}
                owner._handle(self, payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    def _next(self) -> Behaviour:
        with self._lock:
            n = len(self.requests)
            return self.script[min(n - 1, len(self.script) - 1)]

    def _handle(self, handler: BaseHTTPRequestHandler, payload: dict | None) -> None:
        with self._lock:
            self.requests.append({"path": handler.path, "json": payload,
                                  "authorization": handler.headers.get("Authorization")})
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            behaviour = self._next()
            if self.delay_s:
                time.sleep(self.delay_s)
            if isinstance(behaviour, tuple) and behaviour[0] == "hang":
                self._stop.wait(behaviour[1])
                return  # no answer at all: the client must time out
            if isinstance(behaviour, tuple) and behaviour[0] == "status":  # (, code[, body])
                self._send(handler, behaviour[1], (*behaviour, b'{"error": "injected failure"}')[2])
                return
            if isinstance(behaviour, tuple) and behaviour[0] == "raw":
                self._send(handler, 200, behaviour[1])
                return
            answer = behaviour(payload) if callable(behaviour) else self.respond(payload or {})
            self._send(handler, 200, json.dumps(answer).encode())
        finally:
            with self._lock:
                self.in_flight -= 1

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


def chat_completion(content: str) -> dict:
    """An OpenAI chat completion answering ``content``."""
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def answer(winner: str) -> Callable[[dict], dict]:
    return lambda request: chat_completion(json.dumps({"winner": winner, "reason": "test"}))


def hps_answer(request: dict) -> dict:
    n = len(request.get("images") or [])
    return {"scores": [{"mu": 5.0 + i, "sigma": 1.0} for i in range(n)], "scorer": "fake"}


# ---------------------------------------------------------------- judges and renderers


class AlwaysFirst:
    """A judge with total position bias."""

    name = "always-first"

    def compare(self, first: bytes, second: bytes, subject: str):
        from watercolour.rewards.judge.base import Vote

        return Vote("first")


class Failing:
    """A judge whose every answer fails (or fails when ``fail(i)``)."""

    name = "failing"

    def __init__(self, fail: Callable[[int], bool] = lambda i: True) -> None:
        self.fail = fail
        self.calls = 0

    def compare(self, first: bytes, second: bytes, subject: str):
        from watercolour.rewards.judge.base import Vote

        i = self.calls
        self.calls += 1
        return Vote(None, error="HTTP 500: injected") if self.fail(i) else Vote("first")


class ReplayRenderer:
    """Renders each sketch once with a real renderer and replays that result for any seed
    (the tests reuse one session's renders)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.cache: dict[str, Any] = {}
        self.calls = 0

    def render(self, code: str, seed: int = 0):
        self.calls += 1
        if code not in self.cache:
            self.cache[code] = self.real.render(code, seed=0)
        return self.cache[code]


class BrokenBrowser:
    """A renderer whose browser always fails (infrastructure)."""

    def __init__(self) -> None:
        self.calls = 0

    def render(self, code: str, seed: int = 0):
        from watercolour.render import RenderResult

        self.calls += 1
        return RenderResult(infra_error="the browser died (injected)")
