"""Shared helpers for the gate tests: the packaged fixtures and fake renderers."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image

import watercolour.gates.fixtures as packaged
from watercolour.gates.fixtures import expected_verdicts, fixture_path, fixture_text
from watercolour.render import RenderResult

FIXTURES = Path(packaged.__file__).parent
MANIFEST = json.loads((FIXTURES / packaged.MANIFEST).read_text(encoding="utf-8"))["cases"]
"""The raw manifest (its ``passed`` fields are checked against the violations)."""
CASES = expected_verdicts()

__all__ = ["CASES", "FIXTURES", "MANIFEST", "fixture_path", "fixture_text"]


def png_of(rgb: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb.astype(np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


PAPER = (246, 240, 228)


def paper(size: int = 256) -> np.ndarray:
    return np.tile(np.array(PAPER, dtype=np.uint8), (size, size, 1))


def washes(size: int = 256) -> np.ndarray:
    """Two soft round washes on paper: an honest little painting."""
    rgb = paper(size).astype(np.float32)
    yy, xx = np.mgrid[0:size, 0:size]
    for cx, cy, r, colour in ((90, 100, 50, (238, 154, 114)), (170, 160, 35, (143, 178, 107))):
        d = np.hypot(xx - cx, yy - cy)
        alpha = np.clip((r - d) / 10.0, 0, 1)[..., None] * 0.6
        rgb = rgb * (1 - alpha) + np.array(colour, dtype=np.float32) * alpha
    return rgb.astype(np.uint8)


class FakeRenderer:
    """Returns canned results in turn and counts the calls (no browser)."""

    def __init__(self, *results: RenderResult) -> None:
        self.results = list(results)
        self.calls = 0
        self.deadlines: list[float | None] = []

    def render(self, code: str, seed: int = 0, deadline_s: float | None = None) -> RenderResult:
        self.calls += 1
        self.deadlines.append(deadline_s)
        return self.results[min(self.calls, len(self.results)) - 1]


class NoRenderer:
    """For verdicts the code alone decides: rendering is an error."""

    calls = 0

    def render(self, code: str, seed: int = 0, deadline_s: float | None = None) -> RenderResult:
        self.calls += 1
        return RenderResult(infra_error="NoRenderer: not rendered in static tests")


def painted(evidence: dict | None = None, rgb: np.ndarray | None = None,
            **fields: object) -> RenderResult:
    """A RenderResult as the renderer would return it for a painting sketch."""
    image = washes() if rgb is None else rgb
    ev = {"brush_calls": {"fill": 2, "circle": 2, "noStroke": 1}, "n_shapes": 2, "p5_calls": {},
          "dom_writes": [], "navigations": [], "text_calls": 0, "raw_2d_calls": {},
          "raw_gl_calls": {}, "dynamic_code": 0, "tampering": [], "blocked_apis": [], "canvas_count": 1, "webgl": True,
          "finished_by": "draw", "all_errors": []}
    ev.update(evidence or {})
    result = RenderResult(png=png_of(image), width=image.shape[1], height=image.shape[0],
                          evidence=ev, timings={"total_s": 0.1})
    for key, value in fields.items():
        setattr(result, key, value)
    from watercolour.render.paint import paint_fraction

    result.paint_fraction = paint_fraction(image)
    return result
