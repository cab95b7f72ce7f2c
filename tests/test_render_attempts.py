"""Rendering again after an infrastructure failure, never after the sketch's own."""

from __future__ import annotations

import pytest

from watercolour.render.attempts import render_attempts
from watercolour.render.result import RenderResult


class ScriptedRenderer:
    """Returns the given results in turn and records each call's keyword arguments."""

    def __init__(self, *results: RenderResult) -> None:
        self.results = list(results)
        self.calls: list[dict] = []

    def render(self, code: str, seed: int = 0, **kwargs) -> RenderResult:
        self.calls.append({"seed": seed, **kwargs})
        return self.results.pop(0)


def browser_died() -> RenderResult:
    return RenderResult(infra_error="browser unavailable: gone")


def test_an_infrastructure_failure_is_rendered_again() -> None:
    fine = RenderResult(png=b"png")
    renderer = ScriptedRenderer(browser_died(), fine)
    result, attempts = render_attempts(renderer, "code", 7, attempts=3, deadline_s=5.0)
    assert result is fine and attempts == 2
    assert renderer.calls == [{"seed": 7, "deadline_s": 5.0}] * 2


def test_a_sketch_error_is_final() -> None:
    thrown = RenderResult(error="ReferenceError: x is not defined")
    renderer = ScriptedRenderer(thrown, RenderResult(png=b"png"))
    result, attempts = render_attempts(renderer, "code", 0, attempts=3)
    assert result is thrown and attempts == 1 and renderer.calls == [{"seed": 0}]


def test_the_last_failure_comes_back_when_attempts_run_out() -> None:
    renderer = ScriptedRenderer(browser_died(), browser_died())
    result, attempts = render_attempts(renderer, "code", 0, attempts=2)
    assert result.infrastructure_failure and attempts == 2 and len(renderer.calls) == 2
    with pytest.raises(ValueError, match="attempts"):
        render_attempts(renderer, "code", 0, attempts=0)
