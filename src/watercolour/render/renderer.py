"""A pool of warm browsers behind a synchronous and an asynchronous API."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from watercolour.errors import SetupError
from watercolour.render.browser import classify_backend, kill_marked, mesa_llvmpipe_available
from watercolour.render.config import RenderConfig
from watercolour.render.result import RenderResult
from watercolour.render.worker import BrowserWorker

if TYPE_CHECKING:  # imported when a browser starts (:meth:`Renderer.start`)
    from playwright.async_api import Playwright

SHUTDOWN_TIMEOUT_S = 20.0
log = logging.getLogger(__name__)


class Renderer:
    """Renders p5.js + p5.brush sketches to PNG in headless Chromium.

    >>> with Renderer(workers=1) as renderer:
    ...     result = renderer.render(code, seed=0)
    ...     result.png, result.paint_fraction, result.error

    The browsers live on an event loop in a background thread, so the same renderer serves
    plain code (:meth:`render`, :meth:`render_many`) and async code (:meth:`render_async`).
    """

    def __init__(self, config: RenderConfig | None = None, **overrides: Any) -> None:
        self.config = config if config is not None else RenderConfig.from_env(**overrides)
        if config is not None and overrides:
            raise TypeError("pass either a RenderConfig or keyword overrides, not both")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pw: Playwright | None = None
        self._workers: list[BrowserWorker] = []
        self._idle: asyncio.Queue[BrowserWorker] | None = None
        self.gl = ""
        self.backend = ""

    # ---------------------------------------------------------------- lifecycle
    def __enter__(self) -> Renderer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Renderer:
        await asyncio.wrap_future(self._start_thread_and_submit())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.close)

    def start(self) -> Renderer:
        """Launch the browsers; raises with a clear message when Chromium cannot start."""
        self._start_thread_and_submit().result(self.config.launch_timeout_s * 4 + 30)
        return self

    def _start_thread_and_submit(self) -> concurrent.futures.Future:
        if self._loop is not None:
            raise RuntimeError("this renderer is already started")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="watercolour-render",
                                        daemon=True)
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.add_done_callback(lambda f: f.exception() and self._stop_loop())
        return future

    async def _start(self) -> None:
        from playwright.async_api import async_playwright

        self._pw = await async_playwright().start()
        self.gl = await self._choose_gl()
        others = [BrowserWorker(self._pw, self.config, self.gl, i)
                  for i in range(1, self.config.workers)]
        await asyncio.gather(*(w.start() for w in others))
        self._workers.extend(others)
        self._idle = asyncio.Queue()
        for worker in self._workers:
            self._idle.put_nowait(worker)
        log.info("renderer: %d browser(s), WebGL on %s (%s)", len(self._workers), self.gl,
                 self.backend)

    async def _choose_gl(self) -> str:
        """Start the first browser; with ``gl="auto"`` prefer llvmpipe, else SwiftShader."""
        assert self._pw is not None
        wanted = self.config.gl
        if self.config.flags == "predecessor":
            wanted = "swiftshader"
        order = [wanted] if wanted != "auto" else (
            ["llvmpipe", "swiftshader"] if mesa_llvmpipe_available() else ["swiftshader"]
        )
        for gl in order:
            worker = BrowserWorker(self._pw, self.config, gl, 0)
            await worker.start()
            kind = classify_backend(worker.backend)
            if wanted == "auto" and gl == "llvmpipe" and kind != "llvmpipe":
                await worker.close()
                continue
            if kind == "none":
                await worker.close()
                raise SetupError(f"Chromium started with gl={gl} but offers no WebGL2")
            self._workers.append(worker)
            self.backend = worker.backend
            return gl
        raise SetupError("no WebGL backend worked (tried llvmpipe and swiftshader)")

    def close(self) -> None:
        """Close every browser and stop the background loop. Safe to call twice."""
        if self._loop is None:
            return
        if self._loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self._close(), self._loop)
            try:
                future.result(SHUTDOWN_TIMEOUT_S)
            except Exception:
                for worker in self._workers:
                    if worker.marker:
                        kill_marked(worker.marker)
        self._stop_loop()

    async def _close(self) -> None:
        await asyncio.gather(*(w.close() for w in self._workers), return_exceptions=True)
        self._workers.clear()
        if self._pw is not None:
            try:
                await asyncio.wait_for(self._pw.stop(), 10)
            except Exception:
                pass
            self._pw = None

    def _stop_loop(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None and thread is not threading.current_thread():
            thread.join(SHUTDOWN_TIMEOUT_S)
        if not loop.is_running():
            loop.close()

    # ---------------------------------------------------------------- rendering
    @property
    def restarts(self) -> int:
        """How many times a browser was replaced (after a hang, a crash or recycling)."""
        return sum(w.restarts for w in self._workers)

    async def _render(self, code: str, seed: int, deadline_s: float | None) -> RenderResult:
        assert self._idle is not None
        worker = await self._idle.get()
        try:
            return await worker.render(code, seed, deadline_s)
        finally:
            self._idle.put_nowait(worker)

    def _submit(
        self, code: str, seed: int, deadline_s: float | None = None
    ) -> concurrent.futures.Future:
        if self._loop is None or self._idle is None:
            raise RuntimeError("the renderer is not started: use `with Renderer() as r:`")
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        if deadline_s is not None and deadline_s <= 0:
            raise ValueError(f"deadline_s must be positive, got {deadline_s}")
        return asyncio.run_coroutine_threadsafe(
            self._render(code, int(seed), deadline_s), self._loop
        )

    def _wait_bound(self, renders: int, deadline_s: float | None = None) -> float:
        per_render = (deadline_s or self.config.deadline_s) + 60
        rounds = -(-renders // self.config.workers)
        return per_render * rounds

    def render(self, code: str, seed: int = 0, deadline_s: float | None = None) -> RenderResult:
        """Render one sketch and wait for it (``deadline_s`` overrides the configured one)."""
        return self._submit(code, seed, deadline_s).result(self._wait_bound(1, deadline_s))

    async def render_async(
        self, code: str, seed: int = 0, deadline_s: float | None = None
    ) -> RenderResult:
        """Render one sketch from async code (any event loop)."""
        return await asyncio.wrap_future(self._submit(code, seed, deadline_s))

    def render_many(
        self, codes: Sequence[str], seeds: Iterable[int] | int = 0
    ) -> list[RenderResult]:
        """Render several sketches across the workers; results in input order."""
        seed_list = [seeds] * len(codes) if isinstance(seeds, int) else list(seeds)
        if len(seed_list) != len(codes):
            raise ValueError(f"{len(codes)} sketches but {len(seed_list)} seeds")
        futures = [self._submit(code, seed) for code, seed in zip(codes, seed_list)]
        bound = self._wait_bound(len(codes))
        return [future.result(bound) for future in futures]
