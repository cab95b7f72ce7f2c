"""Where the offline judge cannot follow: soft dots in a hibiscus's palette, against the pool.

    python benchmarks/judge_blind_spot.py --pool runs/main/pool      # ~5 min on 2 cores

The red team's ``gamed:peach_dots`` (24 soft discs in the pool painter's peach hibiscus
palette, scattered round the centre; :mod:`watercolour.analysis.redteam`) out-scores the
hand-made example under the pool-fitted judge on seeds 1 and 2. This measures why, at seeds
0-2:

1. every measurement the judge makes of a picture (``measure_groups``: the paint statistics and
   the form groups) against the range of the pool's ``love`` paintings of the subject: how many
   lie outside that range, for the dots and for the example;
2. the judge's latent quality of both, beside the subject's ``love`` and ``okay`` paintings;
3. the judge refitted with ``--negatives`` renders of the dots' own family as negatives (other
   layouts, sizes, densities and alphas, in the palettes of every subject: what training on the
   family gives), and the latents again.

Writes ``benchmarks/results/judge-blind-spot.json``.
"""

from __future__ import annotations

import os
import platform
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from watercolour.analysis.redteam import FAMILIES, GAMED, RenderCache, gamed_sketch
from watercolour.examples import load_example
from watercolour.flags import POOL, SEED, flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.pool.subjects import SUBJECTS
from watercolour.render import Renderer
from watercolour.rewards.judge.offline_judge import (
    GROUP_NAMES,
    PoolFittedJudge,
    measure_groups,
)
from watercolour.rewards.references import ReferencePool, subject_key

RESULTS = Path(__file__).resolve().parent / "results"
SUBJECT = "a peach hibiscus"
SEEDS = (0, 1, 2)


@dataclass
class BlindSpotFlags:
    """The benchmark's flags."""

    pool: str = flag(like=POOL, required=True, help="pool folder, build folder or Hub id")
    negatives: int = flag(type=int, default=32, help="renders of the dots' family to refit on")
    seed: int = flag(like=SEED)
    results: Path = flag(type=Path, default=RESULTS / "judge-blind-spot.json")


def measurements(png: bytes) -> np.ndarray:
    """Every number the judge measures of a picture, in :data:`GROUP_NAMES` order."""
    groups = measure_groups(png)
    return np.concatenate([np.atleast_1d(groups[g]) for g in GROUP_NAMES])


def family_params(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` dense soft-dot sketches' parameters: the gamed sketch's brush settings with other
    palettes, layouts (never its own), counts, sizes, spreads and alphas."""
    rng = random.Random(seed)
    palettes = [f"{key}/{name}" for key, s in SUBJECTS.items() for name in s.palettes]
    gamed = GAMED["peach_dots"][1]
    out = []
    while len(out) < n:
        layout = rng.randrange(10_000)
        if layout == gamed["layout"]:
            continue
        out.append({**gamed, "palette": rng.choice(palettes), "n": rng.randint(14, 40),
                    "layout": layout, "radius": rng.uniform(22, 48),
                    "spread": rng.uniform(60, 150), "alpha": rng.randint(100, 180)})
    return out


def summary(values: list[float]) -> dict[str, float]:
    a = np.array(values)
    return {"min": round(float(a.min()), 3), "median": round(float(np.median(a)), 3),
            "max": round(float(a.max()), 3), "n": len(a)}


def latents(judge: PoolFittedJudge, pool: ReferencePool, key: str,
            renders: dict[str, list[bytes]]) -> dict[str, Any]:
    """The judge's latent quality of the subject's love and okay paintings (leave-one-out),
    and of each render, per seed; whether the dots beat the example on each seed."""
    out: dict[str, Any] = {
        tier: summary([judge.quality(p.png, SUBJECT) for p in pool.paintings
                       if p.tier == tier and subject_key(p.subject) == key])
        for tier in ("love", "okay")}
    for name, pngs in renders.items():
        out[name] = [round(judge.quality(png, SUBJECT), 3) for png in pngs]
    out["dots_above_example"] = [d > e for d, e in zip(out["dots"], out["example"])]
    return out


def main() -> None:
    args = parser_for(BlindSpotFlags, description=__doc__.splitlines()[0]).parse_args()
    start = time.monotonic()
    load = os.getloadavg()
    pool = ReferencePool.load(args.pool)
    key = subject_key(SUBJECT)
    params = family_params(args.negatives, args.seed)
    with Renderer(workers=1) as renderer:
        cache = RenderCache(renderer, None, mode="allowlist")
        renders = {"example": [cache.gate(load_example("peach_hibiscus"), s)[1] for s in SEEDS],
                   "dots": [cache.gate(gamed_sketch("peach_dots"), s)[1] for s in SEEDS]}
        family = [cache.gate(FAMILIES["palette_dots"].make(p), 0)[1] for p in params]
    family = [png for png in family if png is not None]

    love = np.stack([measurements(p.png) for p in pool.paintings
                     if p.tier == "love" and subject_key(p.subject) == key])
    low, high = love.min(axis=0), love.max(axis=0)
    outside = {name: [int(((m < low) | (m > high)).sum())
                      for m in (measurements(png) for png in pngs)]
               for name, pngs in renders.items()}

    fitted = time.monotonic()
    judge = PoolFittedJudge.fit(pool)
    refit = PoolFittedJudge.fit(pool, negatives=family)
    record = {
        "subject": SUBJECT, "seeds": list(SEEDS), "pool": args.pool,
        "love_paintings": len(love), "measurements": int(love.shape[1]),
        "outside_love_range": outside,
        "judge": latents(judge, pool, key, renders),
        "refit_on_family": {"negatives": len(family), "params_seed": args.seed,
                            **latents(refit, pool, key, renders)},
        "fit_s": round(time.monotonic() - fitted, 1),
        "seconds": round(time.monotonic() - start, 1),
        "machine": {"cpus": os.cpu_count(), "loadavg_start": [round(x, 2) for x in load],
                    "python": platform.python_version()},
    }
    write_json_atomic(args.results, record)
    print(f"outside the love range of {record['measurements']} measurements: "
          f"dots {outside['dots']}, example {outside['example']}")
    for name in ("judge", "refit_on_family"):
        r = record[name]
        print(f"{name}: dots {r['dots']} example {r['example']} love {r['love']} "
              f"dots above the example {r['dots_above_example']}")


if __name__ == "__main__":
    main()
