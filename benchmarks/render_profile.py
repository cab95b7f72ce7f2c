"""Where a render's time goes once the browser flags are right.

Five questions, one run, on the shipped example sketches:
1. what isolation costs: every render has a browser context of its own (opened while the
   previous result is used); the seconds a render spends outside the sketch's own JavaScript
   (taking its context, loading the page and libraries, capture and measurement), back to back;
2. canvas size: the same sketches at 256, 512, 768 and 1024 pixels (``pixelDensity``);
3. what p5.brush spends its JavaScript time on (V8's sampling profiler, self time);
4. how much of a render is p5.brush's own 2D-canvas work: the same sketches with one part of
   it switched off (rasterising the fill masks, the mask outlines, the texture erase dots).
   Measurement only: those pictures are wrong, which is why the paint fraction is reported;
5. which process burns the CPU: seconds of CPU per render in Chromium's renderer (JavaScript
   and the 2D canvas, one thread), GPU process (the WebGL blend passes on llvmpipe) and browser,
   for the examples and for an empty sketch (the fixed cost of a render).

Prints a summary and writes ``benchmarks/results/render-profile-<date>.json``.

    python benchmarks/render_profile.py [--repeats 3]
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from playwright.async_api import async_playwright

from watercolour.examples import load_examples
from watercolour.flags import OUT, flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.render import RenderConfig, Renderer
from watercolour.render.processes import browser_processes
from watercolour.render.worker import BrowserWorker

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = (256, 512, 768, 1024)
EMPTY_SKETCH = "function setup() { createCanvas(512, 512, WEBGL); background(255); }"
CTX2D = "OffscreenCanvasRenderingContext2D.prototype"
SWITCHED_OFF = {
    "mask_raster": f"{CTX2D}.drawImage = function () {{}};",
    "mask_outlines": f"{CTX2D}.stroke = function () {{}};",
    "erase_dots": f"{CTX2D}.arc = function () {{}};",
}
"""p5.brush paints each fill's layers into an OffscreenCanvas mask and copies it out with
``drawImage`` (which is where Skia rasterises the recorded paths) before blending it into WebGL."""
CANVAS = re.compile(r"createCanvas\(\s*512\s*,\s*512\s*,\s*WEBGL\s*\)\s*;?")


def at_size(code: str, size: int) -> str:
    """The sketch drawn at ``size`` pixels: same picture, more pixels (p5's pixel density)."""
    return CANVAS.sub(f"createCanvas(512, 512, WEBGL); pixelDensity({size / 512});", code, 1)


def median_seconds(renderer: Renderer, codes: list[str], repeats: int) -> dict:
    totals, sketch, paint, context = [], [], [], []
    for _ in range(repeats):
        for code in codes:
            result = renderer.render(code, seed=0)
            if not result.ok:
                raise RuntimeError(f"render failed: {result.error or result.infra_error}")
            totals.append(result.timings["total_s"])
            sketch.append(result.timings.get("sketch_s") or 0.0)
            context.append(result.timings.get("context_s") or 0.0)
            paint.append(result.paint_fraction)
    return {"median_total_s": round(statistics.median(totals), 3),
            "median_sketch_s": round(statistics.median(sketch), 3),
            "median_outside_sketch_s": round(statistics.median(
                t - s for t, s in zip(totals, sketch)), 3),
            "median_context_s": round(statistics.median(context), 3),
            "median_paint_fraction": round(statistics.median(paint), 3), "renders": len(totals)}


def cpu_seconds_by_kind(marker: str) -> dict[str, float]:
    """CPU seconds so far of one browser's processes, by Chromium process type."""
    by_kind: dict[str, float] = collections.defaultdict(float)
    for process in browser_processes(marker):
        by_kind[process.kind] += process.cpu_s
    return by_kind


def cpu_per_render(renderer: Renderer, codes: list[str]) -> dict:
    """Wall and CPU seconds per render, split by Chromium process; run it on a quiet machine."""
    renderer.render(codes[0], seed=0)
    marker = renderer._workers[0].marker
    before, t0 = cpu_seconds_by_kind(marker), time.perf_counter()
    for code in codes:
        renderer.render(code, seed=0)
    wall = (time.perf_counter() - t0) / len(codes)
    after = cpu_seconds_by_kind(marker)
    cpu = {kind: round((after[kind] - before.get(kind, 0.0)) / len(codes), 3) for kind in after}
    return {"wall_s": round(wall, 3), "cpu_s": {k: v for k, v in cpu.items() if v > 0.005},
            "cpu_total_s": round(sum(cpu.values()), 3), "cores": os.cpu_count()}


class ProfiledWorker(BrowserWorker):
    """A worker whose every page runs V8's sampling profiler from the moment it opens (each
    render has a context of its own, so one profile per page), collected as it closes."""

    profiles: ClassVar[dict[int, Any]] = {}
    nodes: ClassVar[list[dict]] = []

    async def _open_context(self):
        context, page = await super()._open_context()
        cdp = await context.new_cdp_session(page)
        await cdp.send("Profiler.enable")
        await cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        await cdp.send("Profiler.start")
        ProfiledWorker.profiles[id(context)] = cdp
        return context, page

    @staticmethod
    async def _close_context(context) -> None:
        cdp = ProfiledWorker.profiles.pop(id(context), None)
        if cdp is not None:
            try:
                ProfiledWorker.nodes += (await cdp.send("Profiler.stop"))["profile"]["nodes"]
            except Exception:  # a page that crashed or was closed with its browser
                pass
        await BrowserWorker._close_context(context)


async def profile(codes: list[str]) -> list[dict]:
    """Self time per function over one render of each sketch, from V8's sampling profiler
    (idle time and the page's setup left out)."""
    by_function: collections.Counter[str] = collections.Counter()
    async with async_playwright() as pw:
        worker = ProfiledWorker(pw, RenderConfig(), "llvmpipe", 0)
        await worker.start()
        await worker.render(codes[0], 0)  # warm the browser
        ProfiledWorker.nodes = []
        for code in codes:
            await worker.render(code, 0)
        await worker.close()
    for node in ProfiledWorker.nodes:
        frame = node["callFrame"]
        if frame["functionName"] in ("(idle)", "(root)"):
            continue
        library = frame["url"].rsplit("/", 1)[-1] or "(native)"
        by_function[f"{frame['functionName'] or '(anonymous)'} [{library}]"] += node.get(
            "hitCount", 0)
    total = sum(by_function.values()) or 1
    return [{"function": name, "share": round(hits / total, 4)}
            for name, hits in by_function.most_common(15)]


@dataclass
class RenderProfileFlags:
    """The benchmark's flags."""

    repeats: int = flag(type=int, default=3)
    out: Path | None = flag(like=OUT)


def main(argv: list[str] | None = None) -> int:
    args = parser_for(RenderProfileFlags,
                      description=__doc__.splitlines()[0]).parse_args(argv)
    codes = list(load_examples().values())
    report: dict = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}

    with Renderer(RenderConfig.from_env()) as renderer:
        report["isolation"] = median_seconds(renderer, codes, args.repeats)
    print(f"isolation                {report['isolation']}", flush=True)

    sizes = {}
    with Renderer(RenderConfig.from_env()) as renderer:
        for size in SIZES:
            sizes[str(size)] = median_seconds(
                renderer, [at_size(c, size) for c in codes], max(1, args.repeats - 1))
            print(f"{size:5d} px {sizes[str(size)]}", flush=True)
    base = sizes["512"]["median_sketch_s"]
    for entry in sizes.values():
        entry["sketch_time_vs_512"] = round(entry["median_sketch_s"] / base, 3)
    report["canvas_size"] = sizes

    report["profile_self_time"] = asyncio.run(profile(codes))
    for row in report["profile_self_time"]:
        print(f"{100 * row['share']:5.1f}%  {row['function']}")

    parts = {}
    with Renderer(RenderConfig.from_env()) as renderer:
        parts["everything"] = median_seconds(renderer, codes, args.repeats)
        for label, prefix in SWITCHED_OFF.items():
            parts[f"without_{label}"] = median_seconds(
                renderer, [f"{prefix}\n{code}" for code in codes], args.repeats)
        for label, entry in parts.items():
            entry["saved_s"] = round(parts["everything"]["median_total_s"]
                                     - entry["median_total_s"], 3)
            print(f"{label:24s} {entry}", flush=True)
        report["switched_off"] = parts
        report["cpu_per_render"] = cpu_per_render(renderer, codes)
        report["cpu_per_render_empty_sketch"] = cpu_per_render(renderer, [EMPTY_SKETCH] * 8)
    print(f"cpu per render           {report['cpu_per_render']}")
    print(f"  an empty sketch        {report['cpu_per_render_empty_sketch']}")

    report["load_average_at_end"] = os.getloadavg()
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = args.out or RESULTS / f"render-profile-{stamp}.json"
    write_json_atomic(out, report)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
