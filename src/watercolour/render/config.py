"""Renderer configuration."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

GLBackend = Literal["auto", "llvmpipe", "swiftshader", "gpu"]
FlagSet = Literal["fast", "predecessor"]


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as err:
        raise ValueError(f"{name} must be a number, got {raw!r}") from err


@dataclass
class RenderConfig:
    """How sketches are rendered.

    Defaults run on a CPU-only Debian machine; every field can also be set from the
    environment (``WATERCOLOUR_RENDER_WORKERS``, ``WATERCOLOUR_RENDER_DEADLINE``,
    ``WATERCOLOUR_CHROMIUM``, ``WATERCOLOUR_GL``) through :meth:`from_env`.
    """

    workers: int = 1
    """Warm browsers kept open; about one per two CPU cores."""
    deadline_s: float = 30.0
    """Wall-clock limit for one render, enforced from Python."""
    chromium: str | None = None
    """Chromium binary; None finds Debian's Chromium, else Playwright's own browser."""
    gl: GLBackend = "auto"
    """WebGL backend: Mesa llvmpipe, SwiftShader, or the machine's GPU; auto prefers llvmpipe."""
    viewport: tuple[int, int] = (1024, 1024)
    launch_timeout_s: float = 30.0
    renders_per_browser: int = 500
    """Recycle a browser after this many renders, to bound any slow leak."""
    js_heap_mb: int = 1024
    """V8 heap limit per page: a memory bomb crashes its own page quickly."""
    reuse_page: bool = True
    """Keep one page per browser and navigate it for each sketch (a fresh document, a fresh
    origin, so no state carries over); False opens a new page in a new context per render."""
    flags: FlagSet = "fast"
    """``fast``: our flags (2D canvas on the CPU, WebGL on ``gl``). ``predecessor``: only
    ``--use-angle=swiftshader``, as the published reproduction ran; kept for the benchmark."""
    extra_args: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        if self.deadline_s <= 0:
            raise ValueError(f"deadline_s must be positive, got {self.deadline_s}")
        if self.flags not in ("fast", "predecessor"):
            raise ValueError(f"flags must be fast or predecessor, got {self.flags!r}")
        if self.gl not in ("auto", "llvmpipe", "swiftshader", "gpu"):
            raise ValueError(f"gl must be auto, llvmpipe, swiftshader or gpu, got {self.gl!r}")

    @classmethod
    def from_env(cls, **overrides: object) -> RenderConfig:
        """Defaults, then ``WATERCOLOUR_*`` variables, then explicit overrides."""
        values: dict[str, object] = {}
        if os.environ.get("WATERCOLOUR_RENDER_WORKERS"):
            values["workers"] = int(_env_float("WATERCOLOUR_RENDER_WORKERS", 1))
        if os.environ.get("WATERCOLOUR_RENDER_DEADLINE"):
            values["deadline_s"] = _env_float("WATERCOLOUR_RENDER_DEADLINE", 30.0)
        if os.environ.get("WATERCOLOUR_CHROMIUM"):
            values["chromium"] = os.environ["WATERCOLOUR_CHROMIUM"]
        if os.environ.get("WATERCOLOUR_GL"):
            values["gl"] = os.environ["WATERCOLOUR_GL"]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
