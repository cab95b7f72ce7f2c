"""The environment server's cost: a group of replies scored (a) in process and (b) through a
``watercolour serve`` server on the loopback, side by side in one run.

(a) is ``Rewarder.evaluate_group`` as a trainer calls it, and (a') the same rewarder with one
thread per reply, as the server runs its sessions. All use the same reward configuration and
browser count; the replies are the shipped
example sketches (eight of them, 512x512, 20-40 watercolour fills). Rounds alternate
in-process and server groups, each round its own seed (nothing is served from the cache) and
the other path first,
then the server scores the last group again to show the render cache. Reports seconds per
group, the server's overhead ratio (target < 1.10), the renders in flight at once, the cache
hits, and whether both paths gave the same rewards; writes
``benchmarks/results/env-bench-<date>.json``.

    python benchmarks/env_bench.py [--rounds 2] [--browsers N] [--pool DIR]
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from watercolour.env import RemoteRewarder
from watercolour.env.config import default_browsers
from watercolour.env.ports import free_port
from watercolour.examples import load_examples
from watercolour.flags import OUT, POOL, flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.render import Renderer
from watercolour.rewards import RewardConfig, Rewarder

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
TARGET_OVERHEAD = 1.10
SUBJECT = "a watercolour flower"


def replies(n: int) -> list[str]:
    sketches = list(load_examples().items())
    return [f"My {name.replace('_', ' ')}.\n\n```javascript\n{code}\n```\n"
            for name, code in (sketches * (n // len(sketches) + 1))[:n]]


def reward_env(pool: str | None) -> dict[str, str]:
    if pool:
        return {"WATERCOLOUR_POOL": pool, "WATERCOLOUR_JUDGE_WEIGHT": "",
                "WATERCOLOUR_HPS_WEIGHT": ""}
    return {"WATERCOLOUR_JUDGE_WEIGHT": "0", "WATERCOLOUR_HPS_WEIGHT": "0.9"}  # hps-only


def start_server(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    with open(log, "w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "watercolour", "serve", "--port", str(port), "--log-level",
             "warning"], stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited: " + log.read_text()[-2000:])
        try:
            with urllib.request.urlopen(url + "/health", timeout=2):
                return process, url
        except OSError:
            time.sleep(0.5)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError("the server did not come up in 300 s")


def stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/stats", timeout=10) as reply:
        return json.loads(reply.read())


def summary(evaluations) -> dict:
    """Outcomes, and the seconds spent per stage summed over the group (the gate's time
    beyond its render is the image measurement, which the server overlaps with renders)."""
    stages = {}
    for stage in ("gate", "render", "hps", "judge"):
        values = [(e.to_dict().get("latency_s") or {}).get(stage) for e in evaluations]
        stages[stage] = round(sum(v for v in values if v), 3)
    return {"statuses": [e.status for e in evaluations],
            "rewards": [e.reward for e in evaluations], "stage_seconds_summed": stages}


@dataclass
class EnvBenchFlags:
    """The benchmark's flags."""

    replies: int = flag(type=int, default=8, help="replies per group (8)")
    rounds: int = flag(type=int, default=2, help="in-process/server pairs (2)")
    browsers: int = flag(type=int, default=default_browsers(),
                         help="browsers on both paths (one per two cores)")
    pool: str | None = flag(like=POOL, help="a pool folder: the judge-led mix against it "
                            "(default: hps-only)")
    out: Path | None = flag(like=OUT, help="the JSON file to write")


def main(argv: list[str] | None = None) -> int:
    args = parser_for(EnvBenchFlags, description=__doc__.splitlines()[0]).parse_args(argv)
    group = replies(args.replies)
    env = {**reward_env(args.pool), "WATERCOLOUR_RENDER_WORKERS": str(args.browsers),
           "WATERCOLOUR_RENDER_DEADLINE": "60"}
    report: dict = {
        "benchmark": "env", "date": dt.datetime.now(dt.timezone.utc).isoformat(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "load_average_at_start": os.getloadavg(),
        "replies": args.replies, "browsers": args.browsers,
        "mix": "judge-led" if args.pool else "hps-only", "target_overhead": TARGET_OVERHEAD,
        "rounds": [],
    }
    log = Path(tempfile.mkdtemp(prefix="env-bench-")) / "server.log"
    t = time.monotonic()
    process, url = start_server(env, log)
    report["server_start_s"] = round(time.monotonic() - t, 2)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        config = RewardConfig.from_env()
        with Renderer(workers=args.browsers, deadline_s=60) as renderer, \
                RemoteRewarder([url], timeout_s=600) as remote:
            rewarder = Rewarder(config, renderer=renderer)
            for r in range(args.rounds):
                seed = 1000 + r
                before = stats(url)
                # alternate which path goes first, so a change in the machine's load does
                # not always fall on the same one
                order = ("local", "threads", "server") if r % 2 == 0 else \
                    ("server", "threads", "local")
                for path in order:
                    t = time.monotonic()
                    if path == "local":
                        local = rewarder.evaluate_group(group, SUBJECT, seed)
                        in_process_s = time.monotonic() - t
                    elif path == "threads":  # one rollout per thread, as the server runs them
                        with concurrent.futures.ThreadPoolExecutor(len(group)) as pool:
                            threaded = list(pool.map(
                                lambda reply, s=seed: rewarder.evaluate(reply, SUBJECT, s),
                                group))
                        threads_s = time.monotonic() - t
                    else:
                        served = remote.evaluate_group(group, SUBJECT, seed)
                        server_s = time.monotonic() - t
                after = stats(url)
                diffs = [abs(a.reward - b.reward) for a, b in zip(local, served)
                         if a.reward is not None and b.reward is not None]
                report["rounds"].append({
                    "seed": seed, "first": "in_process" if r % 2 == 0 else "server",
                    "in_process_s": round(in_process_s, 3),
                    "server_s": round(server_s, 3),
                    "in_process_threads_s": round(threads_s, 3),
                    "overhead_ratio": round(server_s / in_process_s, 4),
                    "overhead_ratio_vs_threads": round(server_s / threads_s, 4),
                    "in_process": summary(local), "server": summary(served),
                    "in_process_threads": summary(threaded),
                    "max_reward_difference": max(diffs) if diffs else None,
                    "renders": after["render_cache"]["misses"]
                    - before["render_cache"]["misses"],
                })
                print(f"round {r}: in process {in_process_s:.1f} s, in process with a thread "
                      f"per reply {threads_s:.1f} s, server {server_s:.1f} s "
                      f"(x{server_s / in_process_s:.3f}, x{server_s / threads_s:.3f})", flush=True)
            before = stats(url)
            t = time.monotonic()
            repeat = remote.evaluate_group(group, SUBJECT, 1000 + args.rounds - 1)
            repeat_s = time.monotonic() - t
            after = stats(url)
        ratios = [r["overhead_ratio"] for r in report["rounds"]]
        report.update({
            "in_process_s_per_group": statistics.median(r["in_process_s"]
                                                        for r in report["rounds"]),
            "server_s_per_group": statistics.median(r["server_s"] for r in report["rounds"]),
            "overhead_ratio_median": round(statistics.median(ratios), 4),
            "overhead_ratio_vs_threads_median": round(statistics.median(
                r["overhead_ratio_vs_threads"] for r in report["rounds"]), 4),
            "meets_target": statistics.median(ratios) < TARGET_OVERHEAD,
            "repeat_group": {"seconds": round(repeat_s, 3), **summary(repeat),
                             "cache_hits": after["render_cache"]["hits"]
                             - before["render_cache"]["hits"],
                             "renders": after["render_cache"]["misses"]
                             - before["render_cache"]["misses"]},
            "server_stats": {k: after[k] for k in ("peak_sessions", "peak_parallel_steps",
                                                   "render_cache", "outcomes", "browsers")},
            "renders_in_flight_peak": after["render_cache"]["peak_in_flight"],
            "renders_in_parallel": min(after["render_cache"]["peak_in_flight"],
                                       args.browsers),
        })
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
    report["load_average_at_end"] = os.getloadavg()
    out = args.out or RESULTS / f"env-bench-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    write_json_atomic(out, report)
    print(f"in process {report['in_process_s_per_group']:.1f} s/group, server "
          f"{report['server_s_per_group']:.1f} s/group: overhead x"
          f"{report['overhead_ratio_median']:.3f} (target < x{TARGET_OVERHEAD}); repeat group "
          f"{report['repeat_group']['seconds']:.2f} s with {report['repeat_group']['cache_hits']}"
          f" cache hits; {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
