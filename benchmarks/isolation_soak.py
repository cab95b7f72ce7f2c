"""A soak of the environment server's isolation: honest and adversarial sketches through one
server, and does any rollout change another's reward?

Two ``watercolour serve`` servers run side by side on the loopback, each with one browser and
its render cache off: *mixed* sees every step of a fixed pseudo-random sequence (honest replies
— the shipped example sketches — mixed with every adversarial family below), *honest* sees only
the honest steps, interleaved with the mixed server's, so the machine's load falls on both
alike. Every honest step's reward from the mixed server must equal the honest server's for the
same reply, subject and seed (and a sample is checked again in a fresh in-process browser);
each family's outcome is recorded; the mixed server's memory (its process and browsers) is
sampled as it goes. Reports the isolation's cost as the ratio of the two servers' seconds per
honest step, and writes ``benchmarks/results/isolation-soak-<date>.json``.

    python benchmarks/isolation_soak.py [--steps 500] [--pool DIR] [--deadline 15]
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from env_bench import reward_env, start_server

from watercolour.env import RemoteRewarder
from watercolour.examples import load_examples
from watercolour.flags import DEADLINE, OUT, POOL, SEED, flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.render import Renderer
from watercolour.render.processes import family_rss_mb
from watercolour.rewards import RewardConfig, Rewarder

RESULTS = Path(__file__).resolve().parent / "results"
SUBJECT = "a watercolour flower"
HONEST_SHARE = 0.5

ADVERSARIAL = {
    "websocket": """
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4'); brush.noStroke();
  try { new (globalThis['Web' + 'Socket'])('ws://127.0.0.1:1/x'); } catch (e) {}
  brush.fill('#b8323a', 180); brush.circle(0, 0, 80); }""",
    "busy_after_capture": """
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4'); brush.noStroke();
  brush.fill('#b8323a', 180); brush.circle(0, 0, 80);
  window['set' + 'Timeout'](() => { while (true) {} }, 50); }""",
    "leftover_timers_and_storage": """
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4'); brush.noStroke();
  localStorage.setItem('k', 'v'); window.name = 'dirty';
  window['set' + 'Interval'](() => { brush.fill('#000000', 255); brush.circle(0, 0, 200);
    redraw(); }, 1);
  brush.fill('#b8323a', 180); brush.circle(0, 0, 80); }""",
    "raw_webgl_raster": """
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4'); brush.noStroke(); }
function draw() { brush.fill('#f6f0e4', 1); brush.circle(0, 0, 1);
  const gl = window['drawing' + 'Context']; const n = 32, s = gl.drawingBufferWidth / n;
  gl.enable(gl.SCISSOR_TEST);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    gl['sci' + 'ssor'](i * s, j * s, s, s); gl.clearColor(0.6 + 0.3 * Math.sin(i / 5),
      0.4 + 0.3 * Math.cos(j / 4), 0.4, 1); gl['cl' + 'ear'](gl.COLOR_BUFFER_BIT); }
  gl.disable(gl.SCISSOR_TEST); noLoop(); }""",
    "repaint_after_capture": """
let drawn = false;
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4'); brush.noStroke();
  new window['Mutation' + 'Observer'](() => { if (!drawn) return;
    for (let k = 0; k < 6; k++) { brush.fill('#b8323a', 160); brush.circle(-80 + 32 * k, 0, 90); }
    redraw(); }).observe(document.body, { attributes: true, subtree: true }); }
function draw() { brush.fill('#b8323a', 200); brush.circle(0, 0, 2); drawn = true; noLoop(); }""",
    "forged_report": """
const J = window['JS' + 'ON'], real = J['strin' + 'gify'];
J['strin' + 'gify'] = function (v, ...r) { return real.call(this, v, ...r); };
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4'); brush.noStroke();
  brush.fill('#b8323a', 180); brush.circle(0, 0, 80); }""",
    "clock_seeded": """
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4'); brush.noStroke();
  const h = Math.floor(performance.now() * 1000 + parseInt(crypto.randomUUID().slice(0, 4), 16));
  brush.fill(['#b8323a', '#e08a5c', '#4a7a3a'][h % 3], 180);
  brush.circle((h % 60) - 30, 0, 80); }""",
    "typed_array_hoard": """
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4');
  const keep = []; for (let i = 0; i < 16; i++) { const a = new Uint8Array(256 * 1024 * 1024);
    a.fill(i + 1); keep.push(a); } window.keep = keep;
  brush.fill('#b8323a', 180); brush.circle(0, 0, 80); }""",
    "endless_loop": """
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4');
  brush.fill('#b8323a', 180); brush.circle(0, 0, 80); while (true) {} }""",
    "worker": """
function setup() { createCanvas(256, 256, WEBGL); background('#f6f0e4'); brush.noStroke();
  try { new window['Wor' + 'ker'](URL.createObjectURL(new Blob(['while(true){}']))); }
  catch (e) {}
  brush.fill('#b8323a', 180); brush.circle(0, 0, 80); }""",
}


def reply(code: str) -> str:
    return f"Here is my painting.\n\n```javascript\n{code.strip()}\n```\n"


def plan(steps: int, seed: int) -> list[tuple[str, str, int]]:
    """(kind, name, seed) per step: honest example sketches and every adversarial family, in a
    fixed pseudo-random order; each honest step has a seed of its own."""
    rng = random.Random(seed)
    examples, families = sorted(load_examples()), sorted(ADVERSARIAL)
    out = []
    for i in range(steps):
        if rng.random() < HONEST_SHARE:
            out.append(("honest", rng.choice(examples), 10_000 + i))
        else:
            out.append(("adversarial", families[i % len(families)], 10_000 + i))
    return out


def stop(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


@dataclass
class SoakFlags:
    """The soak's flags."""

    steps: int = flag(type=int, default=500, help="steps of the mixed server (500)")
    seed: int = flag(like=SEED, help="the sequence's seed (0)")
    pool: str | None = flag(like=POOL, help="a pool folder: the judge-led mix against it "
                            "(default: hps-only)")
    deadline: float = flag(like=DEADLINE, default=15.0,
                           help="render deadline in seconds on both servers (15)")
    fresh_checks: int = flag(type=int, default=8, help="honest steps checked again in a fresh "
                             "in-process browser (8)")
    out: Path | None = flag(like=OUT, help="the JSON file to write")


def main(argv: list[str] | None = None) -> int:
    args = parser_for(SoakFlags, description=__doc__.splitlines()[0]).parse_args(argv)
    env = {**reward_env(args.pool), "WATERCOLOUR_RENDER_WORKERS": "1",
           "WATERCOLOUR_RENDER_DEADLINE": str(args.deadline), "WATERCOLOUR_ENV_RENDER_CACHE": "0"}
    os.environ.update(env)  # the fresh-browser checks score as the servers do
    examples = load_examples()
    sequence = plan(args.steps, args.seed)
    logs = Path(tempfile.mkdtemp(prefix="isolation-soak-"))
    mixed_process, mixed_url = start_server(env, logs / "mixed.log")
    honest_process, honest_url = start_server(env, logs / "honest.log")
    report: dict = {
        "benchmark": "isolation-soak", "date": dt.datetime.now(dt.timezone.utc).isoformat(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "load_average_at_start": os.getloadavg(), "steps": args.steps, "seed": args.seed,
        "deadline_s": args.deadline, "mix": "judge-led" if args.pool else "hps-only",
        "families": sorted(ADVERSARIAL),
    }
    rows, memory, mismatches = [], [], []
    stopping = []  # SIGINT ends the soak early; what ran is still reported
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    seconds = {"mixed_all": 0.0, "mixed_honest": 0.0, "honest": 0.0}
    t_start = time.monotonic()
    try:
        with RemoteRewarder([mixed_url], timeout_s=600) as mixed, \
                RemoteRewarder([honest_url], timeout_s=600) as honest:
            for i, (kind, name, seed) in enumerate(sequence):
                if stopping:
                    break
                code = examples[name] if kind == "honest" else ADVERSARIAL[name]
                t = time.monotonic()
                got = mixed.evaluate(reply(code), SUBJECT, seed)
                took = time.monotonic() - t
                seconds["mixed_all"] += took
                row = {"step": i, "kind": kind, "name": name, "seed": seed,
                       "status": got.status, "reward": got.reward, "seconds": round(took, 3),
                       "violations": (got.to_dict().get("gate") or {}).get("violations")}
                if kind == "honest":
                    seconds["mixed_honest"] += took
                    t = time.monotonic()
                    reference = honest.evaluate(reply(code), SUBJECT, seed)
                    seconds["honest"] += time.monotonic() - t
                    row["honest_server_reward"] = reference.reward
                    if reference.reward != got.reward:
                        mismatches.append(row)
                rows.append(row)
                if i % 10 == 0 or i == len(sequence) - 1:
                    memory.append({"step": i, "mixed_server_mb": family_rss_mb(mixed_process.pid),
                                   "honest_server_mb": family_rss_mb(honest_process.pid)})
                    print(f"step {i}: {kind} {name} -> {got.status} {got.reward}; "
                          f"{len(mismatches)} mismatches; mixed server "
                          f"{memory[-1]['mixed_server_mb']:.0f} MB", flush=True)
    finally:
        stop(mixed_process)
        stop(honest_process)
    honest_rows = [r for r in rows if r["kind"] == "honest"]
    fresh = []
    config = RewardConfig.from_env()
    for row in honest_rows[: args.fresh_checks]:
        with Renderer(workers=1, deadline_s=120) as renderer:  # pixels do not depend on it
            evaluation = Rewarder(config, renderer=renderer).evaluate(
                reply(examples[row["name"]]), SUBJECT, row["seed"])
        fresh.append({"step": row["step"], "fresh_browser_reward": evaluation.reward,
                      "mixed_server_reward": row["reward"],
                      "equal": evaluation.reward == row["reward"]})
    by_family: dict[str, dict] = {}
    for row in rows:
        if row["kind"] != "adversarial":
            continue
        entry = by_family.setdefault(row["name"], {"steps": 0, "statuses": {}, "max_reward": 0.0,
                                                   "violations": {}})
        entry["steps"] += 1
        entry["statuses"][row["status"]] = entry["statuses"].get(row["status"], 0) + 1
        entry["max_reward"] = max(entry["max_reward"], row["reward"] or 0.0)
        for violation in row["violations"] or []:
            entry["violations"][violation] = entry["violations"].get(violation, 0) + 1
    n_honest = max(1, len(honest_rows))
    report.update({
        "wall_s": round(time.monotonic() - t_start, 1), "steps_run": len(rows),
        "honest_steps": len(honest_rows), "adversarial_steps": len(rows) - len(honest_rows),
        "honest_mismatches": mismatches, "honest_all_equal": not mismatches,
        "honest_unavailable": sum(r["status"] == "unavailable" for r in honest_rows),
        "fresh_browser_checks": fresh,
        "fresh_browser_all_equal": all(f["equal"] for f in fresh),
        "families_outcomes": by_family,
        "mixed_steps_per_minute": round(60 * len(rows) / seconds["mixed_all"], 2),
        "mixed_seconds_per_honest_step": round(seconds["mixed_honest"] / n_honest, 3),
        "honest_seconds_per_honest_step": round(seconds["honest"] / n_honest, 3),
        "honest_steps_per_minute": round(60 * n_honest / max(seconds["honest"], 1e-9), 2),
        "isolation_cost_ratio": round(seconds["mixed_honest"] / max(seconds["honest"], 1e-9), 4),
        "memory": memory,
        "mixed_server_peak_mb": max(m["mixed_server_mb"] for m in memory),
        "median_seconds_by_kind": {
            kind: statistics.median([r["seconds"] for r in rows if r["kind"] == kind] or [0])
            for kind in ("honest", "adversarial")},
        "load_average_at_end": os.getloadavg(),
        "rows": rows,
    })
    out = args.out or RESULTS / f"isolation-soak-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    write_json_atomic(out, report)
    print(f"{len(rows)} steps: honest equal {report['honest_all_equal']} "
          f"({len(mismatches)} mismatches), fresh-browser equal "
          f"{report['fresh_browser_all_equal']}; isolation cost x"
          f"{report['isolation_cost_ratio']:.3f} per honest step; peak "
          f"{report['mixed_server_peak_mb']:.0f} MB; {out}")
    return 0 if report["honest_all_equal"] and report["fresh_browser_all_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
