"""``watercolour client --url URL FILE [--seed N] [--subject S] [--json]``: reset, step once
with the reply in FILE, print the observation. The quickest check of a deployed server."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from watercolour.cli.score import print_components, report
from watercolour.flags import JSON, SEED, SUBJECT, command, flag, positional
from watercolour.rewards.record import RewardRecord


@dataclass
class ClientFlags:
    """``watercolour client``'s flags."""

    file: Path = positional(type=Path, help="a reply (.md, .txt) or a sketch (.js)")
    url: list[str] = flag(required=True, action="append",
                          help="the server (http://host:port); repeat to spread over several")
    seed: int = flag(like=SEED, help="the group seed (default 0)")
    subject: str | None = flag(like=SUBJECT, help="what was asked for")
    timeout: float = flag(type=float, default=300.0,
                          help="seconds to wait for the step (default 300)")
    json: bool = flag(like=JSON, help='print {"reward": float or null, "status", "components", '
                      '...}')


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    command(
        verbs, name, ClientFlags, run,
        help="score one reply through a running server",
        description="Connect to a watercolour server, reset an episode (seed, subject), step "
        "once with the reply in FILE and print the observation. A server with a token gets it "
        "from WATERCOLOUR_ENV_TOKEN (Authorization: Bearer). Exit codes: 0 scored, 1 "
        "rejected by the gate (reward 0), 3 unavailable (the server, browser, judge or scorer "
        "failed: reward null).",
    )


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
