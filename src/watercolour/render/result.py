"""What one render returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class RenderResult:
    """The outcome of rendering one sketch.

    Three outcomes are kept apart: a picture (``png`` set), a fault of the sketch
    (``error`` or ``timed_out``: it threw, never finished, or crashed its page) and a fault of
    the infrastructure (``infra_error``: the browser could not be started, died, or the capture
    failed). Only the last one is not the sketch's fault.
    """

    png: bytes | None = None
    width: int = 0
    height: int = 0
    paint_fraction: float = 0.0
    error: str | None = None
    """The sketch's first JavaScript error (message and stack), if any."""
    timed_out: bool = False
    crashed: bool = False
    """The page crashed, or the browser passed its memory cap (e.g. a memory bomb)."""
    over_memory: bool = False
    """The browser's processes together passed ``RenderConfig.memory_mb`` during the render."""
    retries: int = 0
    """Renders retried in a fresh browser because the first try timed out or crashed in a
    browser that had rendered before (it may not have been clean)."""
    infra_error: str | None = None
    console: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    """What the sketch did at run time: brush calls, filled shapes, bare p5 calls, DOM writes."""
    timings: dict[str, float | None] = field(default_factory=dict)
    """Seconds: ``load_s`` (page start to ``setup()``), ``setup_s``, ``draw_s`` (end of
    ``setup()`` to the first frame painted), ``sketch_s`` (both), ``gpu_s`` (waiting for the
    GPU queue), ``capture_s`` (encoding the PNG, in the page, in the task that ends the
    sketch), ``context_s`` (taking the render's fresh browser context), ``until_first_frame_s``
    (Python's view: start to the first frame, navigation included), ``measure_s`` (paint
    coverage), ``first_try_s`` (a retried render's first try) and ``total_s`` (wall clock, from
    Python)."""
    seed: int = 0
    backend: str = ""
    """The WebGL renderer string the browser reported at start-up."""

    @property
    def ok(self) -> bool:
        """A picture came back and nothing went wrong."""
        return (
            self.png is not None
            and self.error is None
            and not self.timed_out
            and not self.crashed
            and self.infra_error is None
        )

    @property
    def infrastructure_failure(self) -> bool:
        return self.infra_error is not None

    def to_dict(self, include_png: bool = False) -> dict[str, Any]:
        """Plain, JSON-serialisable fields (the PNG bytes only on request)."""
        data = asdict(self)
        data.pop("png")
        if include_png:
            data["png"] = self.png
        data["ok"] = self.ok
        data["png_bytes"] = len(self.png) if self.png else 0
        return data

    def image(self):  # -> PIL.Image.Image
        """The render as a PIL image."""
        import io

        from PIL import Image

        if self.png is None:
            raise ValueError("this render has no picture")
        return Image.open(io.BytesIO(self.png))
