"""How often does a tiny painter break its code? Seeded samples from each model at each
sampling setting, checked by the gate's static stage (extraction, parse, allowlist: what
rejects a broken sketch before any render), so a few hundred samples take minutes.

The runs' "fewer rollouts under 0.3 in the last third" check can only be met where the warm
start breaks some code at the recipe's sampling; this measures whether it does, and whether a
trained policy breaks more or less than its warm start on the same seeds.

    python benchmarks/gate_breakage.py [MODEL_DIR ...] [--samples 320] [--sampling 0.8,0.95 1,1]

With no model the cached warm start and both committed runs' ``runs/tiny/<mix>/final`` are
measured. Writes ``benchmarks/results/gate-breakage.json``.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from watercolour.flags import OUT, SEED, flag, parser_for, positional
from watercolour.gates.extract import extract_sketch
from watercolour.gates.inventory import take_inventory
from watercolour.gates.verdict import assess
from watercolour.io import write_json_atomic
from watercolour.train.tiny.evaluate import sample_replies

RESULTS = Path(__file__).resolve().parent / "results"
RUN_FINALS = ("runs/tiny/hps-only/final", "runs/tiny/judge-led/final")


def first_static_violation(reply: str) -> str | None:
    """The first violation (in the gate's order) the allowlist gate's static stage rejects
    ``reply`` for, or None."""
    extraction = extract_sketch(reply)
    inventory = take_inventory(extraction.code) if extraction.code is not None else None
    violations = assess(extraction, inventory, None, mode="allowlist").violations
    return violations[0] if violations else None


def breakage(model: str, samples: int, temperature: float, top_p: float, seed: int) -> dict:
    """Static-gate rejections among ``samples`` seeded replies of ``model``."""
    started = time.perf_counter()
    replies = sample_replies(model, n=samples, seed=seed, max_new_tokens=400,
                             temperature=temperature, top_p=top_p)
    reasons = collections.Counter(v for v in map(first_static_violation, replies) if v)
    broken = sum(reasons.values())
    return {"temperature": temperature, "top_p": top_p, "samples": samples,
            "broken": broken, "rate": round(broken / samples, 4),
            "reasons": dict(reasons.most_common()),
            "seconds": round(time.perf_counter() - started, 1)}


def parse_sampling(spec: str) -> tuple[float, float]:
    try:
        temperature, top_p = (float(x) for x in spec.split(","))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"--sampling takes TEMPERATURE,TOP_P, got {spec!r}"
                                         ) from err
    return temperature, top_p


@dataclass
class GateBreakageFlags:
    """The benchmark's flags."""

    models: list[str] = positional(nargs="*", help="model folders (default: the warm start and "
                                   "both runs' final policies)")
    samples: int = flag(type=int, default=320, help="a run's third: 20 steps x 16")
    sampling: list[tuple[float, float]] = flag(type=parse_sampling, nargs="+",
                                               default=[(0.8, 0.95), (1.0, 1.0)],
                                               help="TEMPERATURE,TOP_P pairs (default: the "
                                               "recipe's, then 1,1)")
    seed: int = flag(like=SEED, default=1000)
    out: Path = flag(like=OUT, default=RESULTS / "gate-breakage.json")


def main(argv: list[str] | None = None) -> int:
    from watercolour.models.tiny.warm_start import WarmStartConfig

    parser = parser_for(GateBreakageFlags, description=__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    warm = str(WarmStartConfig.from_env().folder())
    models = args.models or [warm, *RUN_FINALS]
    missing = [m for m in models if not Path(m, "config.json").is_file()]
    if missing:
        parser.error(f"no model in {', '.join(missing)} (train it first, or name the folders)")
    import torch

    torch.set_num_threads(min(2, os.cpu_count() or 1))
    report: dict = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python", "benchmarks/gate_breakage.py", *(argv or sys.argv[1:])]),
        "seed": args.seed, "models": {},
    }
    for model in models:
        name = "warm start" if model == warm else model
        report["models"][name] = [breakage(model, args.samples, t, p, args.seed)
                                  for t, p in args.sampling]
        for row in report["models"][name]:
            print(f"{name:28s} T {row['temperature']}, top-p {row['top_p']}: "
                  f"{row['broken']}/{row['samples']} broken {row['reasons']}", flush=True)
    write_json_atomic(args.out, report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
