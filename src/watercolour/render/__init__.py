"""Render p5.js + p5.brush sketches to PNG in a pool of warm headless Chromium browsers.

The p5.brush API every layer above uses (the real methods, the prompt's allowlist and its
signatures) is :mod:`watercolour.render.brush`."""

from watercolour.render.config import RenderConfig
from watercolour.render.paint import paint_fraction
from watercolour.render.renderer import Renderer
from watercolour.render.result import RenderResult
from watercolour.render.vendor import versions

__all__ = ["RenderConfig", "RenderResult", "Renderer", "paint_fraction", "versions"]
