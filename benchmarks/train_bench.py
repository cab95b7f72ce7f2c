"""Seconds per GRPO step, split into generation, rendering, scoring and the update; and the
rendering share a 35B step would have with our renderer and N browsers.

(a) The tiny painter's recipe on this CPU (``watercolour/recipes/tiny-cpu.yaml``: the cached
    warm start of ``builtin:tiny-painter``, the rollouts a step the recipe sets, the allowlist gate;
    ``--mix`` judge-led by default, which needs ``--pool``), rewards in process with a real
    headless Chromium. Stages from ``metrics.csv``: ``generation_s``,
    ``render_s`` (the gate stage: static checks + renders), ``scoring_s`` (the rest of the
    reward), ``update_s`` (``step_time`` minus both).
(b) The example sketches (20-40 watercolour fills at 512², the size of a large model's
    sketch) rendered by the same browser, side by side: the render time a 35B rollout would
    take here.
(c) The projection: the reproduction's step of 8 rollouts took 15-18 minutes, 70-80% of it
    rendering at 69-96 s a render (one browser, software WebGL). Its non-rendering time is
    then step x (1 - share) = 180-324 s. With our renderer a step's rendering is
    ceil(8 / N) x our render time (N browsers; a render keeps ~2 cores busy, so N browsers
    need ~2N cores, which an H200 job's CPU has), and its share is
    rendering / (rendering + non-rendering).

    python benchmarks/train_bench.py [--steps 4] [--mix judge-led] [--pool runs/main/pool]

Writes ``benchmarks/results/train-bench-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from watercolour.flags import MIX, POOL, flag, parser_for

RESULTS = Path(__file__).resolve().parent / "results"

REPRODUCTION = {"step_minutes": (15, 18), "render_share": (0.70, 0.80),
                "render_s": (69, 96), "rollouts_per_step": 8}
WORKERS = (1, 2, 4, 8)
TARGET_SHARE_AT_8 = 0.05
STAGES = ("generation_s", "render_s", "scoring_s", "update_s")
TARGET_STEP_S = 25.0
"""The tiny painter's GRPO step on 2 cores (issue target), or the split says what bounds it."""


def run_tiny_recipe(steps: int, mix: str, pool: str | None, renderer, work: Path,
                    config: str = "tiny-cpu", *extra: str) -> tuple[list[dict], int]:
    """The recipe's (``config``, then the flags in ``extra``) metrics rows for ``steps``
    steps, and its rollouts a step."""
    import csv

    from watercolour.train.config import parse_args
    from watercolour.train.trainer import train

    flags = ["--config", config, "--max-steps", str(steps), "--n-episodes", str(steps),
             "--mix", mix, "--save-steps", str(steps + 1), "--out", str(work / "run"), *extra]
    if pool:
        flags += ["--pool", pool]
    run, training = parse_args(flags)
    train(run, training, renderer=renderer, log=lambda *a: None)
    with open(work / "run/metrics.csv", newline="") as handle:
        return list(csv.DictReader(handle)), int(training.generation_batch_size)


def render_examples(renderer) -> list[float]:
    from watercolour.examples import load_examples

    seconds = []
    for code in load_examples().values():
        result = renderer.render(code, seed=0)
        seconds.append(float(result.timings.get("total_s") or 0.0))
    return seconds


def projection(render_s: float) -> dict:
    lo_step, hi_step = (m * 60 for m in REPRODUCTION["step_minutes"])
    lo_share, hi_share = REPRODUCTION["render_share"]
    non_render = (lo_step * (1 - hi_share), hi_step * (1 - lo_share))  # 180 .. 324 s
    n = REPRODUCTION["rollouts_per_step"]
    out = {}
    for workers in WORKERS:
        rendering = math.ceil(n / workers) * render_s
        shares = [rendering / (rendering + other) for other in non_render]
        out[str(workers)] = {"rendering_s": round(rendering, 2),
                             "share_min": round(min(shares), 4),
                             "share_max": round(max(shares), 4)}
    return {"non_rendering_s": [round(x, 1) for x in non_render], "by_workers": out,
            "meets_target_at_8": out["8"]["share_max"] < TARGET_SHARE_AT_8}


@dataclass
class RecipeBenchFlags:
    """What a benchmark of the tiny recipes' steps takes."""

    steps: int = flag(type=int, default=4)
    mix: str = flag(like=MIX, default="judge-led")
    pool: str | None = flag(like=POOL)


def recipe_arguments(doc: str, argv: list[str] | None) -> argparse.Namespace:
    """:class:`RecipeBenchFlags` parsed from ``argv`` (``doc``'s first paragraph is the
    description)."""
    return parser_for(RecipeBenchFlags, description=doc.split("\n\n")[0]).parse_args(argv)


def machine_and_load(load_start: tuple[float, float, float]) -> dict:
    """The date, the machine, and its load averages at the start and now."""
    return {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "python": platform.python_version()},
            "load_average_at_start": list(load_start),
            "load_average_at_end": list(os.getloadavg())}


def main(argv: list[str] | None = None) -> int:
    args = recipe_arguments(__doc__, argv)

    from watercolour.io import write_json_atomic
    from watercolour.render import Renderer

    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="train-bench-"))
    started = time.perf_counter()
    try:
        with Renderer(workers=1, deadline_s=30) as renderer:
            rows, rollouts_per_step = run_tiny_recipe(args.steps, args.mix, args.pool,
                                                      renderer, work)
            example_s = render_examples(renderer)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_step = []
    for row in rows:
        entry = {k: float(row[k]) for k in ("step_time", *STAGES) if row.get(k)}
        entry["step"] = int(row["step"])
        entry["gate_pass_rate"] = float(row["gate_pass_rate"] or 0)
        per_step.append(entry)
    steady = per_step[1:] or per_step  # step 0 includes warm-up
    mean_stage = {k: round(statistics.mean(s[k] for s in steady), 3) for k in
                  ("step_time", *STAGES)}
    shares = {k: round(mean_stage[k] / mean_stage["step_time"], 3) for k in STAGES}
    render_median = statistics.median(example_s)
    data = {
        **machine_and_load(load_start),
        "recipe": {"config": "tiny-cpu", "model": "builtin:tiny-painter", "steps": args.steps,
                   "rollouts_per_step": rollouts_per_step, "mix": args.mix,
                   "gate_mode": "allowlist",
                   "reward": "in process, 1 browser"},
        "target_step_s": TARGET_STEP_S,
        "meets_step_target": None,
        "per_step": per_step,
        "mean_seconds_steady": mean_stage,
        "share_steady": shares,
        "seconds_per_rollout": round(mean_stage["step_time"] / rollouts_per_step, 3),
        "example_render_s": {"median": round(render_median, 3),
                             "p95": round(sorted(example_s)[round(0.95 * (len(example_s) - 1))],
                                          3), "n": len(example_s)},
        "reproduction": REPRODUCTION,
        "projection_35b_step": projection(render_median),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    data["meets_step_target"] = mean_stage["step_time"] <= TARGET_STEP_S
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"train-bench-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    write_json_atomic(path, data)
    print(f"step of {rollouts_per_step} rollouts {mean_stage['step_time']:.2f} s (steady): "
          + ", ".join(f"{k[:-2]} {mean_stage[k]:.2f} s ({shares[k]:.0%})" for k in STAGES))
    print(f"example render here: median {render_median:.2f} s")
    for workers, p in data["projection_35b_step"]["by_workers"].items():
        print(f"35B step, {workers} browser(s): rendering {p['rendering_s']:.1f} s = "
              f"{p['share_min']:.1%}-{p['share_max']:.1%} of the step")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
