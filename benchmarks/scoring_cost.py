"""What scoring a rendered group costs, with and without the shared PNG decode.

    python benchmarks/scoring_cost.py

A rollout's render is read by the gate's image measures, the judge's measurements, the
scorer's, the pigment term and the near-copy check; :func:`watercolour.render.paint.decode_rgb`
keeps the last few decodes so the same bytes are decoded once. This benchmark renders the
example sketches once (the gate, allowlist mode), then scores them as a group with
:meth:`watercolour.rewards.Rewarder.evaluate_group` (the embedded judge-led reward, the gate's
verdicts given) ``--rounds`` times with the decode kept and as many without, alternating. Each
scoring sees fresh pictures (each render with a few small dots added where no scoring has
added them before, so no measurement cache answers). Writes ``benchmarks/results/scoring-cost.json``
with the machine's load and the render times, so the ratio of scoring to rendering is measured
in the same run.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour.flags import flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.notebooks import shown_path

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class ScoringCostBench:
    """What the benchmark scores."""

    pool: str = flag(default="runs/main/pool", help="the reward's pool (the main command's)")
    rounds: int = flag(type=int, default=8, help="groups scored in each condition")
    results: Path = flag(type=Path, default=RESULTS / "scoring-cost.json",
                         help="where the JSON goes")


def fresh_verdicts(verdicts: list[Any], round_: int) -> list[Any]:
    """The verdicts with each render's PNG made new (three small dots added)."""
    from watercolour.rewards.negatives import with_confetti

    out = []
    for i, v in enumerate(verdicts):
        png = with_confetti(v.render.png, 3, seed=10_000 * round_ + i, radius=0.005)
        out.append(dataclasses.replace(v, render=dataclasses.replace(v.render, png=png)))
    return out


def main(argv: list[str] | None = None) -> int:
    from watercolour.examples import example_names, load_example
    from watercolour.gates import check
    from watercolour.render import Renderer, paint
    from watercolour.rewards import RewardConfig, Rewarder

    args = parser_for(ScoringCostBench, description=__doc__.split("\n\n")[0]).parse_args(argv)
    if args.rounds < 1:
        raise SystemExit("--rounds must be at least 1")
    rewarder = Rewarder(RewardConfig(pool=args.pool, gate_mode="allowlist"))  # judge-led
    sketches = [load_example(name) for name in example_names()][:6]
    renderer = Renderer(workers=1).start()
    try:
        render_s, verdicts = [], []
        for code in sketches:
            t = time.monotonic()
            verdicts.append(check(code, renderer, mode="allowlist", seed=0))
            render_s.append(time.monotonic() - t)
    finally:
        renderer.close()
    if any(v.status != "ok" for v in verdicts):
        raise SystemExit("an example sketch did not pass the gate")
    kept, unkept = paint._decode, paint._decode.__wrapped__
    rewarder.evaluate_group(sketches, verdicts=fresh_verdicts(verdicts, 0))  # warm-up
    seconds: dict[str, list[float]] = {"decode kept": [], "decode each time": []}
    for r in range(1, args.rounds + 1):
        for name, decode in (("decode kept", kept), ("decode each time", unkept))[::(-1) ** r]:
            group = fresh_verdicts(verdicts, 2 * r + (name == "decode kept"))
            paint._decode = decode
            kept.cache_clear()
            t = time.monotonic()
            rewarder.evaluate_group(sketches, verdicts=group)
            seconds[name].append((time.monotonic() - t) / len(group))
    paint._decode = kept
    per_rollout = {k: round(statistics.median(v), 4) for k, v in seconds.items()}
    render = statistics.median(render_s)
    record = {
        "command": "python benchmarks/scoring_cost.py" + (f" {' '.join(argv)}" if argv else ""),
        "machine": {"cpus": os.cpu_count(), "load_1m_start": round(os.getloadavg()[0], 2),
                    "python": platform.python_version()},
        "pool": shown_path(args.pool), "rounds": args.rounds, "group": len(sketches),
        "score_s_per_rollout_median": per_rollout,
        "score_s_per_rollout_all": {k: [round(x, 4) for x in v] for k, v in seconds.items()},
        "render_s_median": round(render, 3),
        "score_share_of_render": {k: round(v / render, 3) for k, v in per_rollout.items()},
        "speedup": round(per_rollout["decode each time"] / per_rollout["decode kept"], 3),
    }
    write_json_atomic(args.results, record)
    print(f"scoring a rollout: {per_rollout['decode kept']} s with the decode kept, "
          f"{per_rollout['decode each time']} s without ({record['speedup']}x); a render "
          f"{record['render_s_median']} s; written {shown_path(args.results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
