"""How long the starter pool takes to build, and what it holds.

    python benchmarks/pool_build.py                       # 100 paintings, 3 rounds, 512 px
    python benchmarks/pool_build.py --size 24 --canvas 256

Builds into a fresh folder (``--out``, default a temporary one), then writes the timings,
the machine, the render statistics and the pool statistics to
``benchmarks/results/pool-build.json``.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from watercolour.flags import OUT, SEED, flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.pool.build import BuildConfig, build_pool
from watercolour.pool.dataset import load_pool, pool_stats

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class PoolBuildFlags:
    """The benchmark's flags (its own defaults: the starter pool's build at full size)."""

    size: int = flag(type=int, default=100)
    rounds: int = flag(type=int, default=3)
    canvas: int = flag(type=int, default=512)
    negatives: int = flag(type=int, default=1)
    workers: int = flag(type=int, default=1)
    concurrency: int = flag(type=int, default=2)
    seed: int = flag(like=SEED)
    out: Path | None = flag(like=OUT, help="build folder (kept)")
    results: Path = flag(type=Path, default=RESULTS / "pool-build.json")


def main() -> None:
    args = parser_for(PoolBuildFlags, description=__doc__.splitlines()[0]).parse_args()

    out = args.out or Path(tempfile.mkdtemp(prefix="pool-build-"))
    if args.out is not None and out.exists():
        shutil.rmtree(out)
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    start = time.monotonic()
    result = build_pool(BuildConfig(
        out=str(out), size=args.size, rounds=args.rounds, canvas=args.canvas,
        negatives=args.negatives, render_workers=args.workers, concurrency=args.concurrency,
        seed=args.seed))
    wall = time.monotonic() - start
    stats = pool_stats(load_pool(out))
    s = result.summary
    report = {
        "what": "watercolour pool build (procedural painter, offline critic, synthetic tiers)",
        "parameters": vars(args) | {"out": str(out), "results": str(args.results)},
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "load_average_before": load_before,
                    "load_average_after": os.getloadavg()[0] if hasattr(os, "getloadavg")
                    else None},
        "seconds": round(wall, 1),
        "seconds_per_painting": round(wall / args.size, 2),
        "generations": s["generations"],
        "renders": s["renders"],
        "render_cache_hits": s["render_cache_hits"],
        "render_seconds": s["render_seconds"],
        "score_by_round": s["score_by_round"],
        "pool": stats,
        "tiers_by_variant": s["pool"]["variants_by_tier"],
        "left_out": s["pool"]["left_out"],
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_json_atomic(args.results, report)
    print(json.dumps({k: report[k] for k in ("seconds", "seconds_per_painting", "renders",
                                             "render_cache_hits", "score_by_round")}
                     | {"tiers": stats["tiers"]}, indent=2))
    if args.out is None:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
