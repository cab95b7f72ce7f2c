"""Sketches cannot reach the network, hang the pool, or crash it for the next sketch."""

from __future__ import annotations

import asyncio
import http.server
import threading
import time

import pytest

from watercolour.render import Renderer
from watercolour.render.browser import kill_marked

pytestmark = pytest.mark.browser

HANG_DEADLINE_S = 4.0
"""Per-render deadline for sketches that are meant to hang (the next render gets the default)."""
OK_SKETCH = "function setup(){ createCanvas(64,64,WEBGL); background(20,120,200); }"


@pytest.fixture(scope="module")
def loopback_server():
    """A real HTTP server on loopback that counts the requests reaching it."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"leaked")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()


def test_every_kind_of_request_is_blocked_and_listed(renderer, loopback_server):
    base, hits = loopback_server
    sketch = f"""
    async function setup() {{
      createCanvas(64, 64, WEBGL);
      background(240);
      const tries = [
        () => fetch('{base}/fetch'),
        () => {{ const x = new XMLHttpRequest(); x.open('GET', '{base}/xhr'); x.send(); }},
        () => {{ const i = new Image(); i.src = '{base}/img.png'; }},
        () => new WebSocket('ws://127.0.0.1:1/ws'),
        () => new EventSource('{base}/events'),
        () => import('{base}/module.js'),
        () => new FontFace('f', 'url({base}/font.woff)').load(),
        () => fetch('file:///etc/passwd'),
        () => navigator.sendBeacon('{base}/beacon', 'x'),
        () => fetch('https://example.com/remote'),
        () => {{ const s = document.createElement('script'); s.src = '{base}/script.js'; document.head.appendChild(s); }},
      ];
      for (const t of tries) {{ try {{ const p = t(); if (p && p.catch) p.catch(() => 0); }} catch (e) {{}} }}
      await new Promise(r => setTimeout(r, 500));
    }}"""
    result = renderer.render(sketch)
    assert result.png is not None and result.infra_error is None, result.to_dict()
    blocked = " ".join(result.blocked_requests)
    for path in ("/fetch", "/xhr", "/img.png", "/events", "/module.js", "/font.woff",
                 "/beacon", "example.com/remote", "/script.js", "ws://127.0.0.1:1/ws"):
        assert path in blocked, (path, result.blocked_requests)
    assert hits == []


def test_navigation_away_is_blocked(renderer, loopback_server):
    base, hits = loopback_server
    sketch = f"""
    function setup() {{ createCanvas(64, 64, WEBGL); background(20, 120, 200);
      location.href = '{base}/navigate'; }}"""
    result = renderer.render(sketch)
    assert any("/navigate" in url for url in result.blocked_requests), result.to_dict()
    assert result.png is not None
    assert hits == []


@pytest.mark.parametrize(
    "sketch",
    [
        "function setup(){ createCanvas(64,64,WEBGL); while(true){} }",
        "function setup(){ createCanvas(64,64,WEBGL); } function draw(){ for(;;){} }",
        "while(true){}",
        "async function setup(){ createCanvas(64,64,WEBGL); await new Promise(() => {}); }",
    ],
    ids=["setup", "draw", "top-level", "never-resolves"],
)
def test_endless_sketch_times_out_and_next_render_works(renderer, sketch):
    t0 = time.perf_counter()
    result = renderer.render(sketch, deadline_s=HANG_DEADLINE_S)
    elapsed = time.perf_counter() - t0
    assert result.timed_out and result.infra_error is None, result.to_dict()
    # The browser had rendered before, so the time-out is confirmed once in a fresh browser.
    assert result.retries == 1
    assert elapsed < 2 * HANG_DEADLINE_S + 10
    after = renderer.render(OK_SKETCH)
    assert after.ok, after.to_dict()


def test_workers_are_refused_and_listed(renderer):
    """A worker is another realm, with its own clock and random source: no sketch gets one."""
    sketch = """
    function setup(){ createCanvas(64,64,WEBGL); background(20,120,200);
      try { new Worker(URL.createObjectURL(new Blob(['while(true){}'], {type: 'text/javascript'}))); }
      catch (e) { console.log('refused: ' + e.message); } }"""
    result = renderer.render(sketch, deadline_s=HANG_DEADLINE_S)
    assert result.png is not None and not result.timed_out, result.to_dict()
    assert "new Worker" in result.blocked_requests
    assert any("not available to a sketch" in line for line in result.console)
    assert renderer.render(OK_SKETCH).ok


def test_busy_loop_after_first_frame_times_out(renderer):
    sketch = """
    function setup(){ createCanvas(64,64,WEBGL); background(0);
      setTimeout(() => { while(true){} }, 0); }"""
    result = renderer.render(sketch, deadline_s=HANG_DEADLINE_S)
    assert result.timed_out or result.png is not None
    assert renderer.render(OK_SKETCH).ok


def test_memory_bomb_is_reported_and_pool_heals(renderer):
    sketch = """
    function setup(){ createCanvas(64,64,WEBGL); const hoard = [];
      while (true) { hoard.push(new Array(1e6).fill(Math.random())); } }"""
    result = renderer.render(sketch, deadline_s=HANG_DEADLINE_S)
    assert not result.ok and result.infra_error is None, result.to_dict()
    assert result.crashed or result.timed_out or "memory" in (result.error or "").lower()
    assert renderer.render(OK_SKETCH).ok


def test_killed_browser_is_an_infrastructure_error_then_recovers():
    slow = """
    function setup(){ createCanvas(64,64,WEBGL); }
    function draw(){ let x = 0; for (let i = 0; i < 2e10; i++) { x += i % 7; } }"""
    with Renderer(workers=1, deadline_s=10) as renderer:
        future = renderer._submit(slow, 0)
        time.sleep(1.5)
        assert kill_marked(renderer._workers[0].marker) > 0
        result = future.result(30)
        assert result.infrastructure_failure and not result.timed_out, result.to_dict()
        assert result.error is None
        after = renderer.render(OK_SKETCH, deadline_s=60)
        assert after.ok, after.to_dict()
        assert renderer.restarts >= 1


def test_a_recycled_browser_paints_the_same_picture(small_sketch):
    with Renderer(workers=1, renders_per_browser=2) as renderer:
        results = [renderer.render(small_sketch, seed=3) for _ in range(3)]
        assert renderer.restarts == 1  # the third render came from a fresh browser
    assert all(r.ok for r in results), [r.to_dict() for r in results]
    assert results[2].png == results[0].png


def test_parallel_renders_match_sequential(small_sketch):
    sketches = [small_sketch] * 4
    seeds = [1, 2, 3, 4]
    with Renderer(workers=2, deadline_s=30) as renderer:
        parallel = renderer.render_many(sketches, seeds)
        sequential = [renderer.render(s, seed) for s, seed in zip(sketches, seeds)]
    for a, b in zip(parallel, sequential):
        assert a.ok and b.ok
        assert a.png == b.png


def test_async_api_from_another_event_loop(renderer, small_sketch):
    async def main():
        return await asyncio.gather(
            renderer.render_async(small_sketch, seed=5), renderer.render_async(OK_SKETCH)
        )

    first, second = asyncio.run(main())
    assert first.ok and second.ok


def test_no_state_carries_over_between_sketches(renderer):
    writer = """
    function setup() { createCanvas(32, 32, WEBGL); background(0);
      localStorage.setItem('k', 'v'); sessionStorage.setItem('k', 'v');
      document.cookie = 'k=v; domain=sketch.invalid; path=/'; window.name = 'dirty'; }"""
    reader = """
    function setup() { createCanvas(32, 32, WEBGL);
      const leaked = localStorage.getItem('k') || sessionStorage.getItem('k')
        || document.cookie.includes('k=v') || window.name === 'dirty';
      background(leaked ? 255 : 0, 0, 0); }"""
    assert renderer.render(writer).ok
    result = renderer.render(reader)
    assert result.ok, result.to_dict()
    assert result.image().getpixel((16, 16))[0] == 0
