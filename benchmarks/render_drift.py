"""Does a warm browser slow down as it renders? Two renderers side by side, one never
recycled and one recycled every ``--recycle`` renders, take turns rendering the same
sequence of the tiny painter's training sketches (``watercolour.models.tiny.sketches``, the
code the tiny painter learns to write); per render: seconds and the browser's resident memory.

Taking turns puts both under the same machine load and the same sketches, so the ratios of
their times are the figures to read (each arm's own late/early ratio also moves with the
sketches and the load); absolute times vary about 2x between machines. Target: recycling is
no slower on average, its restarts included.

    python benchmarks/render_drift.py [--renders 300] [--recycle 100] [--window 50]

Writes ``benchmarks/results/render-drift-<date>.json``.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from watercolour.flags import OUT, flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.models.tiny.sketches import compact_sketches
from watercolour.render import Renderer
from watercolour.render.processes import browser_rss_mb

RESULTS = Path(__file__).resolve().parent / "results"
TARGET_MEAN_RATIO = 1.0  # never-recycled mean / recycled mean (restarts included): >= this


def windows(seconds: list[float], size: int) -> list[float]:
    """Mean seconds of each consecutive ``size`` renders."""
    return [round(statistics.mean(seconds[i:i + size]), 3)
            for i in range(0, len(seconds) - size + 1, size)]


def slope_per_100(seconds: list[float]) -> float:
    """Least-squares change in seconds per 100 renders."""
    xs = range(len(seconds))
    return round(statistics.linear_regression(xs, seconds).slope * 100, 4)


@dataclass
class RenderDriftFlags:
    """The benchmark's flags."""

    renders: int = flag(type=int, default=300, help="renders per browser")
    recycle: int = flag(type=int, default=100,
                        help="the recycled browser is replaced after this many renders")
    window: int = flag(type=int, default=50, help="renders averaged per window")
    out: Path | None = flag(like=OUT, help="a .json file")


def main(argv: list[str] | None = None) -> int:
    parser = parser_for(RenderDriftFlags, description=__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    if args.renders < 2 * args.window or args.recycle < 1 or args.window < 1:
        parser.error("need --renders >= 2 x --window, and positive --recycle and --window")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = args.out or RESULTS / f"render-drift-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)

    codes = [s.code for s in compact_sketches(args.renders)]
    arms = {"never_recycled": 10**9, f"recycled_every_{args.recycle}": args.recycle}
    seconds: dict[str, list[float]] = {name: [] for name in arms}
    rss: dict[str, list[dict]] = {name: [] for name in arms}
    load_start = os.getloadavg()
    renderers = {name: Renderer(workers=1, renders_per_browser=n).start()
                 for name, n in arms.items()}
    try:
        for i, code in enumerate(codes):
            for name, renderer in renderers.items():
                result = renderer.render(code, seed=i)
                if not result.ok:
                    raise RuntimeError(f"{name} render {i} failed: {result.error}")
                seconds[name].append(result.timings["total_s"])
                if i % 25 == 0 or i == len(codes) - 1:
                    rss[name].append({"render": i + 1, "rss_mb": browser_rss_mb(
                        renderer._workers[0].marker)})
            if (i + 1) % 25 == 0:
                print(f"  {i + 1}/{len(codes)}: " + ", ".join(
                    f"{n} {statistics.mean(s[-25:]):.2f} s" for n, s in seconds.items()),
                    flush=True)
    finally:
        for renderer in renderers.values():
            renderer.close()

    report: dict = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python", "benchmarks/render_drift.py", *(argv or sys.argv[1:])]),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": sys.version.split()[0]},
        "load_average_at_start": load_start,
        "load_average_at_end": os.getloadavg(),
        "renders": args.renders, "window": args.window, "arms": {},
    }
    for name in arms:
        w = windows(seconds[name], args.window)
        report["arms"][name] = {
            "renders_per_browser": arms[name], "mean_s": round(statistics.mean(seconds[name]), 3),
            "window_means_s": w, "late_vs_early": round(w[-1] / w[0], 3),
            "slope_s_per_100_renders": slope_per_100(seconds[name]), "rss_mb": rss[name]}
    never, recycled = (report["arms"][n] for n in arms)
    report["late_window_ratio_never_vs_recycled"] = round(
        never["window_means_s"][-1] / recycled["window_means_s"][-1], 3)
    report["mean_ratio_never_vs_recycled"] = round(never["mean_s"] / recycled["mean_s"], 3)
    report["target_mean_ratio_never_vs_recycled"] = TARGET_MEAN_RATIO
    report["meets_target"] = report["mean_ratio_never_vs_recycled"] >= TARGET_MEAN_RATIO
    write_json_atomic(out, report)
    for name, arm in report["arms"].items():
        print(f"{name:22s} mean {arm['mean_s']:.2f} s  windows {arm['window_means_s']}  "
              f"late/early {arm['late_vs_early']}  slope {arm['slope_s_per_100_renders']} s/100")
    print(f"late window, never / recycled: {report['late_window_ratio_never_vs_recycled']}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
