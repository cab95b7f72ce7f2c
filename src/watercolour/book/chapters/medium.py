"""The plumbing of the chapter "The medium": a sketch's opening, the tables and figures of the
example renders, the determinism check and the chapter's ``medium.json``."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from watercolour.notebooks import markdown_table, thumbnail
from watercolour.render import RenderResult, versions
from watercolour.render.paint import decode_rgb

TIMING_COLUMNS = {"load": "load_s", "setup()": "setup_s", "draw()": "draw_s",
                  "GPU queue": "gpu_s", "capture": "capture_s", "total": "total_s"}
"""The render timings the chapter tabulates: column title -> key of ``RenderResult.timings``."""


def _seconds(result: RenderResult, key: str) -> float:
    return float(result.timings.get(key) or 0.0)


def sketch_opening(name: str, code: str) -> str:
    """Markdown showing ``code`` up to the end of its ``draw()`` (the first lone ``}`` after
    ``function draw``), and how many lines of helper functions follow."""
    lines = code.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("function draw")), 0)
    end = next((i for i in range(start, len(lines)) if lines[i] == "}"), len(lines) - 1)
    rest = len(lines) - end - 1
    head = "\n".join(lines[: end + 1])
    return (f"`{name}.js`, {len(lines)} lines; the first {end + 1}:\n\n```javascript\n{head}\n"
            "```\n\n" + (f"… and {rest} more lines of helper functions." if rest else ""))


def render_lines(results: Mapping[str, RenderResult]) -> str:
    """One line per render: its paint fraction, seconds and ``ok`` or its first problem."""
    lines = []
    for name, res in results.items():
        problem = res.error or res.infra_error or "timed out"
        status = "ok" if res.ok else problem.splitlines()[0]
        lines.append(f"{name:<16} paint {res.paint_fraction:.3f}  "
                     f"{_seconds(res, 'total_s'):5.2f} s  {status}")
    return "\n".join(lines)


def example_grid(results: Mapping[str, RenderResult], cols: int = 4) -> Figure:
    """The renders side by side, each titled with its name and paint fraction."""
    import matplotlib.pyplot as plt

    cols = max(1, min(cols, len(results)))
    rows = -(-len(results) // cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(2.4 * cols, 2.7 * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (name, res) in zip(axes.flat, results.items()):
        if res.png is not None:
            ax.imshow(res.image())
        ax.set_title(f"{name.replace('_', ' ')}\npaint {res.paint_fraction:.2f}", fontsize=9)
    fig.tight_layout()
    return fig


def calls_table(results: Mapping[str, RenderResult], allowed: Sequence[str]) -> str:
    """Markdown: the brush calls each render recorded, one column per method (allowlist order
    first), and a closing line naming any method outside ``allowed``."""
    calls = {name: res.evidence.get("brush_calls", {}) for name, res in results.items()}
    used = sorted({m for c in calls.values() for m in c},
                  key=lambda m: (allowed.index(m) if m in allowed else len(allowed), m))
    table = markdown_table(
        ["sketch", "shapes", *(f"`{m}`" for m in used)],
        [(name, res.evidence.get("n_shapes", 0), *(calls[name].get(m, 0) for m in used))
         for name, res in results.items()])
    outside = sorted(set(used) - set(allowed))
    return table + "\n\n" + (f"**Outside the allowlist: {outside}**" if outside
                             else "All calls are on the allowlist.")


def render_viewer(results: Mapping[str, RenderResult]) -> Any:
    """An ``ipywidgets.Tab`` with one thumbnail per render that has a picture."""
    import ipywidgets as widgets

    shown = {name: res for name, res in results.items() if res.png is not None}
    viewer = widgets.Tab(children=[widgets.Image(value=thumbnail(res.png), format="png")
                                   for res in shown.values()])
    for i, name in enumerate(shown):
        viewer.set_title(i, name.replace("_", " "))
    return viewer


def timings_table(results: Mapping[str, RenderResult], backend: str) -> str:
    """Markdown: each render's phases in seconds (:data:`TIMING_COLUMNS`), then the median
    total, the WebGL backend, the CPU count and the load average."""
    table = markdown_table(["sketch", *TIMING_COLUMNS],
                           [(name, *(f"{_seconds(res, k):.2f}" for k in TIMING_COLUMNS.values()))
                            for name, res in results.items()])
    totals = [_seconds(res, "total_s") for res in results.values()] or [0.0]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (table + f"\n\nMedian {statistics.median(totals):.2f} s per render on `{backend}`, "
            f"{os.cpu_count()} CPU cores, load average {load:.1f} while the chapter ran.")


@dataclass
class Determinism:
    """One sketch rendered with ``seed`` twice and with ``seed + 1`` once."""

    sketch: str
    seed: int
    images: tuple[np.ndarray, np.ndarray, np.ndarray]
    """RGB arrays: seed, seed again, seed + 1."""

    @property
    def same_seed_diff(self) -> int:
        """Pixels that differ between the two renders with the same seed."""
        return int(np.any(self.images[0] != self.images[1], axis=-1).sum())

    @property
    def other_seed_diff(self) -> int:
        """Pixels that differ between the renders with ``seed`` and ``seed + 1``."""
        return int(np.any(self.images[0] != self.images[2], axis=-1).sum())

    def __str__(self) -> str:
        height, width = self.images[0].shape[:2]
        return (f"{self.sketch}, {width}x{height} pixels\n"
                f"seed {self.seed} twice: {self.same_seed_diff} differ\n"
                f"seeds {self.seed} and {self.seed + 1}: {self.other_seed_diff} differ")

    def figure(self) -> Figure:
        """The three renders side by side, titled with their differing pixels."""
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.8))
        titles = [f"seed {self.seed}", f"seed {self.seed} again: {self.same_seed_diff} px differ",
                  f"seed {self.seed + 1}: {self.other_seed_diff} px differ"]
        for ax, image, title in zip(axes, self.images, titles):
            ax.imshow(image)
            ax.set_title(title, fontsize=10)
            ax.axis("off")
        fig.tight_layout()
        return fig


def determinism(renderer: Any, name: str, code: str, seed: int) -> Determinism:
    """Render ``code`` with ``seed``, ``seed`` and ``seed + 1`` (``renderer.render_many``)."""
    renders = renderer.render_many([code] * 3, seeds=[seed, seed, seed + 1])
    missing = [r.error or r.infra_error or "no picture" for r in renders if r.png is None]
    if missing:
        raise RuntimeError(f"{name} did not render: {missing[0]}")
    a, b, c = (decode_rgb(r.png) for r in renders)
    return Determinism(name, seed, (a, b, c))


def medium_summary(results: Mapping[str, RenderResult], same: Determinism, backend: str,
                   parameters: dict[str, Any]) -> dict[str, Any]:
    """The chapter's ``medium.json``: every example's outcome, timings and brush calls, and
    the determinism check."""
    return {
        "parameters": parameters,
        "versions": versions(),
        "backend": backend,
        "examples": [
            {"name": name, "ok": res.ok, "paint_fraction": round(res.paint_fraction, 4),
             "seconds": round(_seconds(res, "total_s"), 3), "timings": res.timings,
             "n_shapes": res.evidence.get("n_shapes", 0),
             "brush_calls": res.evidence.get("brush_calls", {}),
             "error": res.error or res.infra_error}
            for name, res in results.items()],
        "determinism": {"sketch": same.sketch,
                        "differing_pixels_same_seed": same.same_seed_diff,
                        "differing_pixels_other_seed": same.other_seed_diff},
        "identical_pixels": same.same_seed_diff == 0,
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
