"""Rendering speed, exactness and stability, three ways in one run.

(a) predecessor: a browser launched with only ``--use-angle=swiftshader`` (the published
    reproduction's setup), two renders of each sketch;
(b) naive: a fresh browser per render, with our flags;
(c) ours: the warm renderer pool (one page navigated per sketch);
(d) ours on the SwiftShader fallback (what runs where Mesa's llvmpipe is missing), for its
    speed and the pixel tolerance between repeated renders.

Every way renders the shipped example sketches (512x512) through the same harness, so the
difference is the browser set-up alone. Prints a table and writes
``benchmarks/results/render-<date>.json``.

    python benchmarks/render_bench.py [--repeats 5] [--skip-predecessor] [--memory 300]
                                      [--out FILE.json | --out DIR]
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from playwright.async_api import async_playwright

from watercolour.examples import load_examples
from watercolour.flags import OUT, flag, parser_for, switch
from watercolour.io import write_json_atomic
from watercolour.render import RenderConfig, Renderer, versions
from watercolour.render.paint import decode_rgb
from watercolour.render.processes import browser_rss_mb
from watercolour.render.result import RenderResult
from watercolour.render.worker import BrowserWorker

RESULTS = Path(__file__).resolve().parent / "results"
PREDECESSOR_DEADLINE_S = 90.0
STALL_CAPTURE_S = 1.0
TARGETS = {"median_s": 1.5, "p95_s": 2.5, "speedup_vs_predecessor": 20.0,
           "speedup_vs_naive": 1.3, "stalls": 0, "max_pixel_diff": 0}


def flatten(by_sketch: dict[str, list[RenderResult]]) -> list[RenderResult]:
    return [r for runs in by_sketch.values() for r in runs]


def summarise(results: list[RenderResult], deadline_s: float) -> dict:
    seconds = sorted(r.timings.get("total_s") or 0.0 for r in results)
    median = statistics.median(seconds)
    p95 = seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))]
    return {
        "renders": len(results),
        "failed": sum(not r.ok for r in results),
        "median_s": round(median, 3),
        "p95_s": round(p95, 3),
        "max_s": round(seconds[-1], 3),
        "renders_per_min": round(60.0 / statistics.mean(seconds), 2),
        "over_deadline": sum(s > deadline_s or r.timed_out for s, r in zip(seconds, results)),
        # A stall: queued GPU work surfacing in the capture, or a render far off the median.
        "stalls": sum(
            (r.timings.get("capture_s") or 0) > STALL_CAPTURE_S
            or (r.timings.get("total_s") or 0) > 3 * median
            for r in results
        ),
        "mean_sketch_s": round(
            statistics.mean(r.timings.get("sketch_s") or 0 for r in results), 3),
        "mean_load_s": round(statistics.mean(r.timings.get("load_s") or 0 for r in results), 3),
        "mean_capture_s": round(
            statistics.mean(r.timings.get("capture_s") or 0 for r in results), 3),
    }


def max_pixel_diff(by_sketch: dict[str, list[RenderResult]]) -> int:
    """Largest channel difference between repeated renders of the same sketch and seed."""
    worst = 0
    for runs in by_sketch.values():
        pictures = [decode_rgb(r.png).astype(np.int16) for r in runs if r.png is not None]
        for other in pictures[1:]:
            if other.shape != pictures[0].shape:
                return 255
            worst = max(worst, int(np.abs(other - pictures[0]).max()))
    return worst


def run_pool(sketches: dict[str, str], repeats: int, config: RenderConfig, label: str):
    by_sketch: dict[str, list[RenderResult]] = {name: [] for name in sketches}
    with Renderer(config) as renderer:
        backend = renderer.backend
        for round_ in range(repeats):
            for name, code in sketches.items():
                result = renderer.render(code, seed=0)
                by_sketch[name].append(result)
                print(f"  {label} {round_ + 1}/{repeats} {name:22s} "
                      f"{result.timings.get('total_s', 0):6.2f} s "
                      f"{'ok' if result.ok else result.error or result.infra_error}", flush=True)
    return by_sketch, backend


async def run_naive_async(sketches: dict[str, str], repeats: int, config: RenderConfig):
    by_sketch: dict[str, list[RenderResult]] = {name: [] for name in sketches}
    async with async_playwright() as pw:
        for round_ in range(repeats):
            for name, code in sketches.items():
                t0 = time.perf_counter()
                worker = BrowserWorker(pw, config, "llvmpipe", 0)
                await worker.start()
                result = await worker.render(code, seed=0)
                await worker.close()
                result.timings["total_s"] = time.perf_counter() - t0
                by_sketch[name].append(result)
                print(f"  naive {round_ + 1}/{repeats} {name:22s} "
                      f"{result.timings['total_s']:6.2f} s", flush=True)
    return by_sketch


def run_memory(sketches: dict[str, str], renders: int) -> dict:
    codes = list(sketches.values())
    samples = []
    with Renderer(workers=1, renders_per_browser=10**6) as renderer:
        marker = renderer._workers[0].marker
        for i in range(renders):
            renderer.render(codes[i % len(codes)], seed=i)
            if i % 25 == 0 or i == renders - 1:
                samples.append({"render": i + 1, "rss_mb": browser_rss_mb(marker)})
                print(f"  memory {i + 1}/{renders}: {samples[-1]['rss_mb']} MB", flush=True)
    half = len(samples) // 2
    first = statistics.mean(s["rss_mb"] for s in samples[1:half] or samples[:1])
    last = statistics.mean(s["rss_mb"] for s in samples[half:])
    return {"renders": renders, "samples": samples, "first_half_mean_mb": round(first, 1),
            "second_half_mean_mb": round(last, 1), "growth_ratio": round(last / first, 3)}


def output_path(out: Path | None, stamp: str) -> Path:
    """``--out`` as the report's file: a ``.json`` path as it is, a folder (existing, or any
    path without the ``.json`` suffix) gets ``render-<stamp>.json`` inside it."""
    name = f"render-{stamp}.json"
    if out is None:
        return RESULTS / name
    if out.is_dir() or out.suffix.lower() != ".json":
        return out / name
    return out


@dataclass
class RenderBenchFlags:
    """The benchmark's flags."""

    repeats: int = flag(type=int, default=5, help="renders per sketch for (c)")
    naive_repeats: int = flag(type=int, default=2)
    predecessor_repeats: int = flag(type=int, default=2)
    swiftshader_repeats: int = flag(type=int, default=2,
                                    help="renders per sketch on the SwiftShader fallback (0 "
                                    "skips)")
    skip_predecessor: bool = switch()
    memory: int = flag(type=int, default=0, help="also render N times for memory")
    out: Path | None = flag(like=OUT, help="a .json file, or a folder for render-<date>.json "
                            "(default benchmarks/results/)")


def main(argv: list[str] | None = None) -> int:
    args = parser_for(RenderBenchFlags, description=__doc__.splitlines()[0]).parse_args(argv)
    out = output_path(args.out, dt.datetime.now().strftime("%Y%m%d-%H%M%S"))
    out.parent.mkdir(parents=True, exist_ok=True)  # a bad --out fails now, not after the run

    sketches = load_examples()
    ours_config = RenderConfig.from_env()
    report: dict = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "load_average_at_start": os.getloadavg(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": sys.version.split()[0]},
        "libraries": versions(),
        "sketches": {n: c.count("\n") + 1 for n, c in sketches.items()},
        "targets": TARGETS,
        "ways": {},
    }

    print(f"(c) ours: warm pool, {args.repeats} renders of each of {len(sketches)} sketches")
    ours, backend = run_pool(sketches, args.repeats, ours_config, "ours")
    report["ways"]["ours"] = {"config": asdict(ours_config), "backend": backend,
                              **summarise(flatten(ours), ours_config.deadline_s),
                              "max_pixel_diff": max_pixel_diff(ours)}
    report["paint_fraction"] = {n: round(r[0].paint_fraction, 4) for n, r in ours.items()}
    report["n_shapes"] = {n: r[0].evidence.get("n_shapes") for n, r in ours.items()}

    print(f"(b) naive: a fresh browser per render, {args.naive_repeats} each")
    naive = asyncio.run(run_naive_async(sketches, args.naive_repeats, ours_config))
    report["ways"]["naive"] = {**summarise(flatten(naive), ours_config.deadline_s),
                               "max_pixel_diff": max_pixel_diff(naive)}

    if args.swiftshader_repeats:
        print(f"(d) ours on the SwiftShader fallback, {args.swiftshader_repeats} each")
        swift_config = RenderConfig.from_env(gl="swiftshader")
        swift, swift_backend = run_pool(sketches, args.swiftshader_repeats, swift_config, "swift")
        report["ways"]["ours_swiftshader"] = {
            "backend": swift_backend,
            **summarise(flatten(swift), swift_config.deadline_s),
            "max_pixel_diff": max_pixel_diff(swift),
            "max_pixel_diff_vs_llvmpipe": max_pixel_diff(
                {n: [ours[n][0], swift[n][0]] for n in sketches}),
        }

    if not args.skip_predecessor:
        print(f"(a) predecessor: --use-angle=swiftshader only, {args.predecessor_repeats} each")
        pred_config = RenderConfig(flags="predecessor", deadline_s=PREDECESSOR_DEADLINE_S)
        pred, pred_backend = run_pool(sketches, args.predecessor_repeats, pred_config, "pred")
        report["ways"]["predecessor"] = {
            "config": asdict(pred_config), "backend": pred_backend,
            **summarise(flatten(pred), PREDECESSOR_DEADLINE_S),
            "max_pixel_diff": max_pixel_diff(pred),
        }

    ways = report["ways"]
    speedups = {"vs_naive": round(ways["naive"]["median_s"] / ways["ours"]["median_s"], 2)}
    if "predecessor" in ways:
        speedups["vs_predecessor"] = round(
            ways["predecessor"]["median_s"] / ways["ours"]["median_s"], 2)
    report["speedups"] = speedups
    o = ways["ours"]
    report["meets_targets"] = {
        "median": o["median_s"] <= TARGETS["median_s"],
        "p95": o["p95_s"] <= TARGETS["p95_s"],
        "vs_naive": speedups["vs_naive"] >= TARGETS["speedup_vs_naive"],
        "vs_predecessor": speedups.get("vs_predecessor", 0) >= TARGETS["speedup_vs_predecessor"],
        "stalls": o["stalls"] == 0 and o["over_deadline"] == 0,
        "pixel_identical": o["max_pixel_diff"] == 0,
    }
    if args.memory:
        print(f"memory: {args.memory} renders in one browser")
        report["memory"] = run_memory(sketches, args.memory)

    report["load_average_at_end"] = os.getloadavg()
    write_json_atomic(out, report)
    print()
    header = ("way", "median", "p95", "max", "/min", "stalls", "maxdiff")
    print("{:12s} {:>8s} {:>8s} {:>8s} {:>7s} {:>6s} {:>7s}".format(*header))
    for name, w in ways.items():
        print(f"{name:12s} {w['median_s']:8.2f} {w['p95_s']:8.2f} {w['max_s']:8.2f} "
              f"{w['renders_per_min']:7.1f} {w['stalls']:6d} {w['max_pixel_diff']:7d}")
    print(f"speed-ups: {speedups}")
    print(f"targets met: {report['meets_targets']}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
