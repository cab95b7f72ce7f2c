"""A bounded render cache in front of a renderer: the same sketch and seed are rendered once.

GRPO groups repeat sketches (a policy that has converged writes the same one several times)
and a retried step renders again; both are served from here. Concurrent requests for the same
sketch and seed wait for the one render in flight instead of starting their own. Results that
failed for infrastructure reasons are not kept (the next request renders again). It also
counts what the benchmark reports: hits, misses and the most renders in flight at once
(the renderer runs up to its browser count of them in parallel; the rest queue).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any

from watercolour.render import RenderResult


class RenderCache:
    """Wraps anything with ``render(code, seed, deadline_s=None)`` (a started ``Renderer``).

    Args:
        renderer: the real renderer; its ``config`` is passed through (the rewarder reads the
            browser count from it).
        size: renders kept, least recently used first out; 0 turns the cache off.
    """

    def __init__(self, renderer: Any, size: int = 256) -> None:
        self.renderer = renderer
        self.config = getattr(renderer, "config", None)
        self.size = size
        self._done: OrderedDict[str, RenderResult] = OrderedDict()
        self._pending: dict[str, Future] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.rendering = 0
        self.peak_in_flight = 0
        self._local = threading.local()

    @staticmethod
    def key(code: str, seed: int, deadline_s: float | None = None) -> str:
        digest = hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{digest}:{int(seed)}:{deadline_s}"

    @property
    def last_hit(self) -> bool | None:
        """Whether this thread's last render came from the cache (None: no render yet)."""
        return getattr(self._local, "hit", None)

    def reset_last(self) -> None:
        self._local.hit = None

    def render(self, code: str, seed: int = 0, deadline_s: float | None = None) -> RenderResult:
        key = self.key(code, seed, deadline_s)
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                self.hits += 1
                self._local.hit = True
                return self._done[key]
            waiting = self._pending.get(key)
            if waiting is None:
                mine: Future = Future()
                self._pending[key] = mine
                self.misses += 1
                self.rendering += 1
                self.peak_in_flight = max(self.peak_in_flight, self.rendering)
            else:
                self.hits += 1
        if waiting is not None:
            self._local.hit = True
            return waiting.result()
        self._local.hit = False
        try:
            extra = {} if deadline_s is None else {"deadline_s": deadline_s}
            result = self.renderer.render(code, seed=seed, **extra)
        except BaseException as err:
            with self._lock:
                self.rendering -= 1
                self._pending.pop(key, None)
            mine.set_exception(err)
            raise
        with self._lock:
            self.rendering -= 1
            self._pending.pop(key, None)
            if self.size > 0 and not result.infrastructure_failure:
                self._done[key] = result
                while len(self._done) > self.size:
                    self._done.popitem(last=False)
        mine.set_result(result)
        return result

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "kept": len(self._done),
                    "size": self.size, "rendering": self.rendering,
                    "peak_in_flight": self.peak_in_flight}
