"""One warm Chromium browser that renders one sketch at a time."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:  # Playwright is imported where a browser starts, not by the gates' maths
    from playwright.async_api import (
        Browser,
        BrowserContext,
        Page,
        Playwright,
        Route,
        WebSocketRoute,
    )

from watercolour.render.browser import (
    WEBGL_PROBE,
    find_chromium,
    kill_marked,
    launch_args,
)
from watercolour.render.config import RenderConfig
from watercolour.render.harness import BINDING, LIB_PATH, SKETCH_PATH, page_html
from watercolour.render.paint import decode_rgb, paint_fraction
from watercolour.render.processes import browser_rss_mb
from watercolour.render.result import RenderResult
from watercolour.render.vendor import libraries

MAX_CONSOLE = 50
MAX_BLOCKED = 50
CLOSE_TIMEOUT_S = 3.0
MEMORY_POLL_S = 0.25


class PageCrashed(Exception):
    """The renderer process of the page died (a memory bomb, or a renderer fault)."""


class BrowserGone(Exception):
    """The browser process exited or stopped answering."""


class OverMemory(Exception):
    """The browser's processes together grew past the memory cap during a render."""


@dataclass
class _Job:
    """State of the render in flight, filled by the page's event handlers."""

    code: str
    seed: int
    nonce: str
    host: str
    done: asyncio.Future
    console: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://{self.host}/"


def _fail(job: _Job | None, exc: Exception) -> None:
    if job is not None and not job.done.done():
        job.done.set_exception(exc)


class BrowserWorker:
    """A browser that renders every sketch in a context of its own.

    Isolation: each render gets a new browser context (its own renderer process, storage,
    routes and scripts) on a fresh origin, opened while the previous result is being used and
    closed as soon as the render ends, so nothing a sketch leaves behind (a busy page, a
    poisoned document, timers) reaches the next one. A render whose browser may not have been
    clean (a time-out or crash after earlier renders) is retried once in a fresh browser before
    it counts against the sketch. The browser is replaced after a hang, a crash, N renders, or
    when its memory stays above the cap."""

    def __init__(self, playwright: Playwright, config: RenderConfig, gl: str, index: int) -> None:
        self._pw = playwright
        self._config = config
        self._gl = gl
        self._index = index
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._next: asyncio.Future | None = None
        self._closing: set[asyncio.Future] = set()
        self._job: _Job | None = None
        self._renders = 0
        self._serial = 0
        self._page_crashed = False
        self.marker = ""
        self.backend = ""
        self.restarts = 0

    # ---------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        """Launch the browser and read which WebGL backend it got."""
        self.marker = f"{self._index}-{secrets.token_hex(6)}"
        executable = find_chromium(self._config.chromium)
        args = launch_args(self._gl, self._config.js_heap_mb, self.marker,
                           self._config.extra_args, self._config.flags)
        try:
            self._browser = await asyncio.wait_for(
                self._pw.chromium.launch(
                    executable_path=executable,
                    headless=True,
                    args=args,
                    timeout=self._config.launch_timeout_s * 1000,
                ),
                self._config.launch_timeout_s + 5,
            )
        except Exception as err:
            kill_marked(self.marker)
            hint = (
                "install Debian's chromium (apt-get install chromium), run "
                "`playwright install chromium` elsewhere, or set WATERCOLOUR_CHROMIUM"
            )
            raise RuntimeError(f"could not launch Chromium ({executable or 'Playwright'}): "
                               f"{err}; {hint}") from err
        self._browser.on("disconnected", lambda _: _fail(self._job, BrowserGone("browser exited")))
        self._renders = 0
        self.backend = await self._probe_webgl()
        self._prepare_next()

    async def _probe_webgl(self) -> str:
        assert self._browser is not None
        page = await asyncio.wait_for(self._browser.new_page(), CLOSE_TIMEOUT_S * 3)
        try:
            renderer = await asyncio.wait_for(page.evaluate(WEBGL_PROBE), CLOSE_TIMEOUT_S * 3)
        finally:
            await asyncio.wait_for(page.close(), CLOSE_TIMEOUT_S)
        return renderer or ""

    @property
    def alive(self) -> bool:
        return self._browser is not None and self._browser.is_connected()

    async def close(self) -> None:
        """Close the browser; kill its processes if it does not answer."""
        browser, self._browser = self._browser, None
        self._page = self._context = None
        self._drop_next()
        if browser is not None:
            try:
                await asyncio.wait_for(browser.close(), CLOSE_TIMEOUT_S)
            except Exception:
                pass
        if self.marker:
            kill_marked(self.marker)

    async def restart(self) -> None:
        self.restarts += 1
        await self.close()
        await self.start()

    # ---------------------------------------------------------------- the page
    async def _open_context(self) -> tuple[BrowserContext, Page]:
        """A new context with one page, its routes and handlers: the next render's clean room."""
        assert self._browser is not None
        width, height = self._config.viewport
        bound = CLOSE_TIMEOUT_S * 3
        context = await asyncio.wait_for(
            self._browser.new_context(
                viewport={"width": width, "height": height},
                device_scale_factor=1,
                service_workers="block",
                accept_downloads=False,
            ),
            bound,
        )
        try:
            await asyncio.wait_for(context.route("**/*", self._on_route), bound)
            await asyncio.wait_for(context.route_web_socket("**/*", self._on_websocket), bound)
            page = await asyncio.wait_for(context.new_page(), bound)
            await asyncio.wait_for(page.expose_binding(BINDING, self._on_notify), bound)
        except BaseException:
            await self._close_context(context)
            raise
        page.on("console", self._on_console)
        page.on("pageerror", self._on_pageerror)
        page.on("crash", self._on_crash)
        page.on("dialog", self._on_dialog)
        page.on("popup", self._on_popup)
        return context, page

    def _prepare_next(self) -> None:
        """Open the next render's context in the background, off the critical path."""
        if self._next is None and self._browser is not None:
            self._next = asyncio.ensure_future(self._open_context())

    def _drop_next(self) -> None:
        pending, self._next = self._next, None
        if pending is None:
            return
        if pending.done():
            if not pending.cancelled() and pending.exception() is None:
                context, _ = pending.result()
                closing = asyncio.ensure_future(self._close_quietly(context))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        else:  # still opening: cancelled, or failing as its browser closes (nothing to report)
            pending.cancel()
            pending.add_done_callback(lambda task: task.cancelled() or task.exception())

    async def _take_context(self) -> None:
        """The prepared context, or a new one when there is none or it failed."""
        self._prepare_next()
        pending, self._next = self._next, None
        assert pending is not None
        self._context, self._page = await asyncio.wait_for(pending, CLOSE_TIMEOUT_S * 6)
        self._page_crashed = False

    @staticmethod
    async def _close_context(context: BrowserContext) -> None:
        for page in context.pages:
            await asyncio.wait_for(page.close(run_before_unload=False), CLOSE_TIMEOUT_S)
        await asyncio.wait_for(context.close(), CLOSE_TIMEOUT_S)

    @classmethod
    async def _close_quietly(cls, context: BrowserContext) -> None:
        """Close an unused prepared context in the background; its browser may already be
        closing (a recycle), which closes the context too, so a failure is nothing to report."""
        try:
            await cls._close_context(context)
        except Exception:
            pass

    async def _discard_context(self) -> None:
        """Close the render's context (its renderer process goes with it); when even that
        fails the whole browser is closed, so the next render starts clean either way."""
        context, self._context, self._page = self._context, None, None
        if context is None:
            return
        try:
            await self._close_context(context)
        except Exception:
            await self.close()

    # ---------------------------------------------------------------- page events
    async def _on_route(self, route: Route) -> None:
        job = self._job
        url = route.request.url
        parts = urlsplit(url)
        if job is not None and parts.scheme == "https" and parts.netloc == job.host:
            if parts.path == "/":
                await route.fulfill(status=200, content_type="text/html; charset=utf-8",
                                    body=page_html(job.seed, job.nonce))
                return
            if parts.path == SKETCH_PATH:
                await route.fulfill(status=200, content_type="application/javascript",
                                    body=job.code)
                return
            if parts.path.startswith(LIB_PATH):
                name = parts.path[len(LIB_PATH):]
                for lib in libraries():
                    if lib.name == name:
                        await route.fulfill(status=200, content_type="application/javascript",
                                            body=lib.code)
                        return
        if job is not None and len(job.blocked) < MAX_BLOCKED:
            job.blocked.append(url[:300])
        await route.abort("blockedbyclient")

    async def _on_websocket(self, ws: WebSocketRoute) -> None:
        job = self._job
        if job is not None and len(job.blocked) < MAX_BLOCKED:
            job.blocked.append(ws.url[:300])
        await ws.close()

    @staticmethod
    async def _on_dialog(dialog: Any) -> None:
        await dialog.dismiss()

    @staticmethod
    async def _on_popup(popup: Page) -> None:
        await popup.close()

    def _on_notify(self, _source: Any, nonce: str, payload: str) -> None:
        job = self._job
        if job is None or nonce != job.nonce or job.done.done():
            return  # a stale render, or the sketch pretending to be the harness
        try:
            job.done.set_result(json.loads(payload))
        except ValueError as err:
            job.done.set_exception(err)

    def _on_crash(self, _page: Page) -> None:
        self._page_crashed = True
        _fail(self._job, PageCrashed("the page crashed"))

    def _on_console(self, message: Any) -> None:
        job = self._job
        if job is not None and len(job.console) < MAX_CONSOLE:
            job.console.append(f"{message.type}: {message.text}"[:500])

    def _on_pageerror(self, error: Any) -> None:
        job = self._job
        if job is not None and len(job.page_errors) < 10:
            job.page_errors.append(str(error)[:1000])

    # ---------------------------------------------------------------- rendering
    async def render(self, code: str, seed: int, deadline_s: float | None = None) -> RenderResult:
        """Render one sketch; never raises. A time-out or crash in a browser that had rendered
        before is retried once in a fresh browser: only a browser known to be clean can blame
        the sketch."""
        used = self._renders > 0
        result = await self._render_once(code, seed, deadline_s)
        if (result.timed_out or result.crashed) and used and not result.over_memory:
            first = result
            await self.restart()
            result = await self._render_once(code, seed, deadline_s)
            result.retries = first.retries + 1
            result.timings["first_try_s"] = first.timings.get("total_s")
        return result

    async def _render_once(self, code: str, seed: int, deadline_s: float | None) -> RenderResult:
        deadline_s = deadline_s or self._config.deadline_s
        t0 = time.perf_counter()
        result = RenderResult(seed=seed, backend=self.backend)
        try:
            if not self.alive or self._renders >= self._config.renders_per_browser:
                await self.restart()
                result.backend = self.backend
            await self._take_context()
        except Exception as err:
            result.infra_error = f"browser unavailable: {err}"
            result.timings["total_s"] = time.perf_counter() - t0
            await self.close()
            return result
        result.timings["context_s"] = time.perf_counter() - t0

        self._renders += 1
        self._serial += 1
        loop = asyncio.get_running_loop()
        job = _Job(code=code, seed=seed, nonce=secrets.token_hex(16),
                   host=f"r{self._serial}.sketch.invalid", done=loop.create_future())
        self._job = job
        watchdog = asyncio.ensure_future(self._watch_memory(job))
        try:
            await self._run(job, result, t0, deadline_s)
        except Exception as err:  # a Playwright failure we did not foresee
            result.infra_error = f"render failed in the browser layer: {type(err).__name__}: {err}"
        finally:
            watchdog.cancel()
            self._job = None
            result.console = job.console
            result.blocked_requests = job.blocked
            await self._discard_context()
            if result.infra_error is not None or result.timed_out or result.crashed \
                    or self._over_memory(idle=True):
                await self.close()
            else:
                self._prepare_next()
            result.timings["total_s"] = time.perf_counter() - t0
        return result

    def _over_memory(self, idle: bool = False) -> float | None:
        """The browser's resident memory in MiB when it is over the cap (or, idle between
        renders, over half of it), else None."""
        if not self.marker:
            return None
        rss = browser_rss_mb(self.marker)
        cap = self._config.memory_mb / 2 if idle else self._config.memory_mb
        return rss if rss > cap else None

    async def _watch_memory(self, job: _Job) -> None:
        """Fail the render as soon as the browser's processes together pass the memory cap:
        typed arrays, textures and GPU buffers are outside the JavaScript heap limit."""
        while not job.done.done():
            await asyncio.sleep(MEMORY_POLL_S)
            rss = await asyncio.to_thread(self._over_memory)
            if rss is not None:
                _fail(job, OverMemory(f"the sketch took the browser to {rss:.0f} MB of memory "
                                      f"(cap {self._config.memory_mb} MB)"))
                return

    async def _run(self, job: _Job, result: RenderResult, t0: float, deadline_s: float) -> None:
        assert self._page is not None
        deadline = t0 + deadline_s
        navigation = asyncio.ensure_future(self._page.goto(job.url, wait_until="commit"))
        try:
            payload = await asyncio.wait_for(job.done, max(0.1, deadline - time.perf_counter()))
        except asyncio.TimeoutError:
            result.timed_out = True
            result.error = ("the sketch did not finish its first frame within "
                            f"{deadline_s:g} s")
            return
        except PageCrashed as err:
            result.crashed = True
            result.error = f"{err} (out of memory, or the sketch broke the renderer)"
            return
        except OverMemory as err:
            result.crashed = result.over_memory = True
            result.error = str(err)
            return
        except BrowserGone as err:
            result.infra_error = str(err)
            return
        finally:
            await self._settle(navigation)

        self._apply_payload(payload, job, result)
        result.timings["until_first_frame_s"] = time.perf_counter() - t0
        capture = payload.get("capture") or {}
        if "url" not in capture:
            if result.error is None:
                result.error = f"nothing to capture: {capture.get('error', 'no picture')}"
            return
        t_measure = time.perf_counter()
        png = base64.b64decode(capture["url"].split(",", 1)[1])
        rgb = decode_rgb(png)
        result.png = png
        result.height, result.width = int(rgb.shape[0]), int(rgb.shape[1])
        result.paint_fraction = paint_fraction(rgb)
        result.timings["measure_s"] = time.perf_counter() - t_measure

    @staticmethod
    async def _settle(navigation: asyncio.Future) -> None:
        if not navigation.done():
            navigation.cancel()
        try:
            await asyncio.wait_for(navigation, 0.5)
        except BaseException:
            pass

    @staticmethod
    def _apply_payload(payload: dict[str, Any], job: _Job, result: RenderResult) -> None:
        evidence = payload.get("evidence", {})
        errors = evidence.pop("errors", [])
        if errors:
            result.error = errors[0]["message"]
        elif job.page_errors and payload.get("reason") == "error":
            result.error = job.page_errors[0]
        evidence["canvas_count"] = payload.get("canvas_count", 0)
        evidence["webgl"] = payload.get("webgl", False)
        evidence["finished_by"] = payload.get("reason")
        evidence["all_errors"] = [e["message"] for e in errors]
        for url in [*evidence.get("navigations", []), *evidence.get("blocked_apis", [])]:
            if len(job.blocked) < MAX_BLOCKED:
                job.blocked.append(url)
        result.evidence = evidence
        result.timings.update(payload.get("timings", {}))
