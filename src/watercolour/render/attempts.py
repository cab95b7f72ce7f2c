"""Rendering again when the browser, not the sketch, failed."""

from __future__ import annotations

from typing import Protocol

from watercolour.render.result import RenderResult


class SketchRenderer(Protocol):
    """What a caller needs from a renderer (``watercolour.render.Renderer`` is one)."""

    def render(self, code: str, seed: int = 0,
               deadline_s: float | None = None) -> RenderResult: ...


def render_attempts(
    renderer: SketchRenderer, code: str, seed: int, *, attempts: int,
    deadline_s: float | None = None,
) -> tuple[RenderResult, int]:
    """The render, tried up to ``attempts`` times while it fails for infrastructure reasons
    (a sketch's own error is final), and how many tries it took. ``deadline_s`` is passed on
    only when given, so a renderer without that parameter serves too."""
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    extra = {} if deadline_s is None else {"deadline_s": deadline_s}
    attempt = 1
    result = renderer.render(code, seed=seed, **extra)
    while result.infrastructure_failure and attempt < attempts:
        attempt += 1
        result = renderer.render(code, seed=seed, **extra)
    return result, attempt
