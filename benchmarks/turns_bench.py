"""Seconds per GRPO step of two-turn episodes against single-turn, side by side on this CPU.

The same policy (``builtin:tiny-painter-revise``, the cached warm start of the committed
revise run) runs ``--steps`` steps of ``tiny-cpu`` (one sketch an episode; ``--model`` set to
the reviser) and then of ``tiny-revise`` (sketch, critique, revision), with the same mix, pool,
sampling and rollouts a step, in one process and one browser. Stages from ``metrics.csv``
(:data:`train_bench.STAGES`); the first step of each is left out (warm-up). The figure is the
ratio, measured in one run; the absolute seconds vary ~2x between these machines.

    python benchmarks/turns_bench.py --pool runs/main/pool [--steps 4]

Writes ``benchmarks/results/turns-bench-<date>.json``.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from train_bench import RESULTS, STAGES, machine_and_load, recipe_arguments, run_tiny_recipe

POLICY = "builtin:tiny-painter-revise"
RUNS = {"single-turn": ("tiny-cpu", "--model", POLICY), "two-turn": ("tiny-revise",)}
"""What each side runs: a recipe and its extra flags (the same policy on both)."""


def steady_means(rows: list[dict]) -> dict[str, float]:
    """Mean seconds of the step and each stage over the steps after the first, and the mean
    completion length (tokens: both turns of an episode on the two-turn side)."""
    steady = rows[1:] or rows
    names = ("step_time", *STAGES, "completions/mean_length")
    return {k: round(statistics.mean(float(r[k]) for r in steady if r.get(k)), 3)
            for k in names if any(r.get(k) for r in steady)}


def main(argv: list[str] | None = None) -> int:
    args = recipe_arguments(__doc__, argv)

    from watercolour.io import write_json_atomic
    from watercolour.render import Renderer

    load_start = os.getloadavg()
    started = time.perf_counter()
    sides: dict[str, dict] = {}
    with Renderer(workers=1, deadline_s=30) as renderer:
        for name, (config, *extra) in RUNS.items():
            work = Path(tempfile.mkdtemp(prefix=f"turns-bench-{name}-"))
            try:
                rows, per_step = run_tiny_recipe(args.steps, args.mix, args.pool, renderer,
                                                 work, config, *extra)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            sides[name] = {"config": config, "flags": list(extra), "rollouts_per_step": per_step,
                           "per_step": [{k: r.get(k) for k in ("step", "step_time", *STAGES)}
                                        for r in rows],
                           "mean_seconds_steady": steady_means(rows)}
    single = sides["single-turn"]["mean_seconds_steady"]
    double = sides["two-turn"]["mean_seconds_steady"]
    ratio = {k: round(double[k] / single[k], 3) for k in ("step_time", *STAGES)
             if single.get(k) and double.get(k)}
    data = {
        **machine_and_load(load_start),
        "policy": POLICY, "steps": args.steps, "mix": args.mix,
        "sides": sides, "two_turn_over_single": ratio,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"turns-bench-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    write_json_atomic(path, data)
    for name, side in sides.items():
        m = side["mean_seconds_steady"]
        print(f"{name}: step {m['step_time']:.1f} s (" + ", ".join(
            f"{k[:-2]} {m[k]:.1f}" for k in STAGES if k in m) + ")")
    print(f"two-turn / single-turn: step x{ratio.get('step_time')}, "
          + ", ".join(f"{k[:-2]} x{v}" for k, v in ratio.items() if k != "step_time"))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
