"""Shared fixtures: real headless Chromium renderers (no mocks)."""

from __future__ import annotations

import pytest

from watercolour.render import Renderer

SMALL_SKETCH = """
function setup() {
  createCanvas(256, 256, WEBGL);
  background('#f6f0e4');
}
function draw() {
  brush.noStroke();
  for (let i = 0; i < 4; i++) {
    brush.fill(random(['#e8a07a', '#d9705a', '#7a9a5a']), 140);
    brush.fillBleed(0.2);
    brush.circle(random(-80, 80), random(-80, 80), random(25, 50));
  }
  noLoop();
}
"""


@pytest.fixture(scope="session")
def renderer():
    """One warm browser for the whole session."""
    with Renderer(workers=1, deadline_s=20) as r:
        yield r


@pytest.fixture(scope="session")
def strict_renderer():
    """A renderer with a short deadline, for sketches that hang."""
    with Renderer(workers=1, deadline_s=4) as r:
        yield r


@pytest.fixture
def small_sketch() -> str:
    return SMALL_SKETCH
