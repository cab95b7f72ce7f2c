"""Renderer configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from watercolour import settings
from watercolour.settings import setting

GLBackend = Literal["auto", "llvmpipe", "swiftshader", "gpu"]
FlagSet = Literal["fast", "predecessor"]


@dataclass
class RenderConfig:
    """How sketches are rendered.

    Defaults run on a CPU-only Debian machine; the fields that declare a variable
    (``WATERCOLOUR_RENDER_WORKERS``, ``WATERCOLOUR_RENDER_DEADLINE``, ``WATERCOLOUR_CHROMIUM``,
    ``WATERCOLOUR_GL``) can also be set from the environment through :meth:`from_env`.
    """

    workers: int = setting(1, env="WATERCOLOUR_RENDER_WORKERS", positive=True,
                           help="warm browsers kept open; about one per two CPU cores")
    deadline_s: float = setting(30.0, env="WATERCOLOUR_RENDER_DEADLINE", positive=True,
                                help="wall-clock seconds for one render, enforced from Python")
    chromium: str | None = setting(None, env="WATERCOLOUR_CHROMIUM",
                                   help="Chromium binary; unset: Debian's, else Playwright's")
    gl: GLBackend = setting("auto", env="WATERCOLOUR_GL",
                            help="WebGL backend: Mesa llvmpipe, SwiftShader or the GPU; auto "
                            "prefers llvmpipe")
    viewport: tuple[int, int] = (1024, 1024)
    launch_timeout_s: float = 30.0
    renders_per_browser: int = 100
    """Recycle a browser after this many renders: a warm browser slows as it renders (at 500
    the tiny painter's runs rendered ~30% slower than after a restart;
    ``benchmarks/render_drift.py``: renders 251-300 took 1.12x as long as a browser recycled
    every 100, restarts included)."""
    js_heap_mb: int = 1024
    """V8 heap limit per page: a memory bomb crashes its own page quickly."""
    memory_mb: int = setting(3072, env="WATERCOLOUR_RENDER_MEMORY_MB", positive=True,
                             help="resident memory cap of one browser's processes together "
                             "(MiB); a sketch that passes it is rejected, and a browser above "
                             "half of it between renders is replaced")
    flags: FlagSet = "fast"
    """``fast``: our flags (2D canvas on the CPU, WebGL on ``gl``). ``predecessor``: only
    ``--use-angle=swiftshader``, as the published reproduction ran; kept for the benchmark."""
    extra_args: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        settings.check(self)  # the rules declared on the fields (positive, the Literal choices)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object
                 ) -> RenderConfig:
        """Defaults, then ``WATERCOLOUR_*`` variables, then explicit (non-None) overrides."""
        return settings.from_env(cls, environ, **overrides)
