"""One render never changes another: whatever a sketch leaves behind, the next render in the
same browser paints and reports exactly what it would in a fresh browser."""

from __future__ import annotations

import time

import pytest

from watercolour.gates import check
from watercolour.render import Renderer

pytestmark = pytest.mark.browser

OK_SKETCH = """
function setup() { createCanvas(96, 96, WEBGL); background('#f6f0e4'); brush.noStroke(); }
function draw() {
  for (let i = 0; i < 4; i++) { brush.fill('#b8323a', 180); brush.circle(-20 + 12 * i, 0, 30); }
  noLoop();
}"""

POISONERS = {
    # Playwright's WebSocket routing once left a script in later documents that the harness
    # counted as eval: 98 innocent renders in a row were rejected as dynamic_code.
    "websocket": """
      function setup() { createCanvas(64, 64, WEBGL); background(240);
        try { new (globalThis['Web' + 'Socket'])('ws://127.0.0.1:1/x'); } catch (e) {}
        brush.fill('#336699', 200); brush.circle(0, 0, 30); }""",
    # Busy after its capture: the next sketch once timed out behind it.
    "busy_after_capture": """
      function setup() { createCanvas(64, 64, WEBGL); background(240);
        brush.fill('#336699', 200); brush.circle(0, 0, 30);
        setTimeout(() => { while (true) {} }, 50); }""",
    "timers_and_storage": """
      function setup() { createCanvas(64, 64, WEBGL); background(240);
        localStorage.setItem('k', 'v'); window.name = 'dirty';
        setInterval(() => { brush.fill('#000000', 255); brush.circle(0, 0, 60); }, 1);
        brush.fill('#336699', 200); brush.circle(0, 0, 30); }""",
}


def _comparable(result) -> tuple:
    evidence = {k: v for k, v in result.evidence.items() if k != "all_errors"}
    return (result.png, result.error, result.timed_out, result.crashed, result.infra_error,
            sorted(evidence.items(), key=lambda kv: kv[0]).__repr__(), result.blocked_requests)


@pytest.fixture(scope="module")
def fresh_reference():
    with Renderer(workers=1) as renderer:
        return renderer.render(OK_SKETCH, seed=7)


@pytest.mark.parametrize("poisoner", sorted(POISONERS))
def test_the_next_render_is_what_a_fresh_browser_gives(renderer, fresh_reference, poisoner):
    renderer.render(POISONERS[poisoner], seed=0, deadline_s=10)
    t0 = time.perf_counter()
    results = [renderer.render(OK_SKETCH, seed=7) for _ in range(3)]
    assert time.perf_counter() - t0 < 60
    for after in results:
        assert after.ok and after.retries == 0, after.to_dict()
        assert _comparable(after) == _comparable(fresh_reference)
    verdict = check(OK_SKETCH, renderer, mode="allowlist")
    assert verdict.passed, verdict.reasons


DETERMINISM = """
function setup() {
  createCanvas(96, 96, WEBGL);
  const seeds = [performance.now(), Date.now(), new Date().getTime(), performance.timeOrigin,
                 parseInt(crypto.randomUUID().slice(0, 6), 16), document.timeline.currentTime,
                 new Event('x').timeStamp];
  let h = 0;
  for (const s of seeds) h = (h * 31 + Math.floor((s || 0) * 1000)) % 1000003;
  window.__h = h;
  background(h % 256, (h >> 8) % 256, (h >> 16) % 256);
}
function draw() {
  requestAnimationFrame((t) => { window.__t = t; });
  brush.noStroke();
  brush.fill('#' + ((window.__h * 2654435761) >>> 0).toString(16).padStart(8, '0').slice(0, 6), 200);
  brush.circle((window.__h % 40) - 20, 0, 30);
  noLoop();
}"""


def test_clocks_and_crypto_read_the_same_in_every_browser(renderer):
    used = renderer.render(DETERMINISM, seed=3)
    with Renderer(workers=1) as other:
        fresh = other.render(DETERMINISM, seed=3)
        time.sleep(1.0)  # the wall clock moves; what the sketch reads does not
        later = other.render(DETERMINISM, seed=3)
    assert used.ok and fresh.ok and later.ok, (used.to_dict(), fresh.to_dict())
    assert used.png == fresh.png == later.png
    assert renderer.render(DETERMINISM, seed=4).png != used.png  # the seed still matters


def test_a_sketch_past_the_memory_cap_is_rejected_and_the_browser_heals():
    hoarder = """
    function setup() { createCanvas(64, 64, WEBGL); background(240);
      const keep = [];
      for (let i = 0; i < 12; i++) { const a = new Uint8Array(256 * 1024 * 1024); a.fill(i + 1); keep.push(a); }
      brush.fill('#336699', 200); brush.circle(0, 0, 30); window.__keep = keep; }"""
    with Renderer(workers=1, memory_mb=1536, deadline_s=60) as renderer:
        result = renderer.render(hoarder)
        assert result.crashed and result.over_memory and result.infra_error is None, \
            result.to_dict()
        assert "memory" in result.error and result.retries == 0
        verdict = check(hoarder, renderer)
        assert verdict.violations == ["crashed"] and "memory" in verdict.reasons["crashed"]
        after = renderer.render(OK_SKETCH, seed=7)
        assert after.ok, after.to_dict()
