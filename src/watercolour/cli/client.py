"""``watercolour client --url URL FILE [--seed N] [--subject S] [--json]``: reset, step once
with the reply in FILE, print the observation. The quickest check of a deployed server."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from watercolour.cli.score import print_components, report
from watercolour.rewards.record import RewardRecord


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    p = verbs.add_parser(
        name,
        help="score one reply through a running server",
        description="Connect to a watercolour server, reset an episode (seed, subject), step "
        "once with the reply in FILE and print the observation. A server with a token gets it "
        "from WATERCOLOUR_ENV_TOKEN (Authorization: Bearer). Exit codes: 0 scored, 1 "
        "rejected by the gate (reward 0), 3 unavailable (the server, browser, judge or scorer "
        "failed: reward null).",
    )
    p.add_argument("file", type=Path, help="a reply (.md, .txt) or a sketch (.js)")
    p.add_argument("--url", required=True, action="append",
                   help="the server (http://host:port); repeat to spread over several")
    p.add_argument("--seed", type=int, default=0, help="the group seed (default 0)")
    p.add_argument("--subject", default=None, help="what was asked for")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds to wait for the step (default 300)")
    p.add_argument("--json", action="store_true",
                   help='print {"reward": float or null, "status", "components", ...}')
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from watercolour.env.client import RemoteRewarder
    from watercolour.errors import read_text

    reply = read_text(args.file, "reply")
    with RemoteRewarder(args.url, timeout_s=args.timeout, retries=1) as rewarder:
        evaluation = rewarder.evaluate(reply, subject=args.subject, seed=args.seed)
    return report(evaluation, args.json, print_human)


def print_human(record: RewardRecord) -> None:
    env = record.env or {}
    reward = record.reward
    print(f"reward {'null' if reward is None else f'{reward:.4f}'} - {record.status} "
          f"(from {env.get('url')})")
    if record.unavailable:
        u = record.unavailable
        print(f"  unavailable: the {u.part} failed: {u.reason}", file=sys.stderr)
        return
    if record.status == "rejected":
        print(f"  gate: {', '.join(record.violations)}")
    print_components(record)
    if env.get("critique"):
        print(f"  critique: {env['critique']}")
