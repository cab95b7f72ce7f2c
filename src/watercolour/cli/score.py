"""``watercolour score FILE [--pool PATH] [--subject S] [--seed N] [--json]``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour.cli.inputs import read_input
from watercolour.env.limits import MAX_REPLY_CHARS
from watercolour.flags import JSON, POOL, SEED, SUBJECT, command, flag, positional
from watercolour.pool.schema import DEFAULT_POOL
from watercolour.render import Renderer
from watercolour.rewards.record import RewardRecord, component_note

EXIT_REJECTED = 1
EXIT_UNAVAILABLE = 3


@dataclass
class ScoreFlags:
    """``watercolour score``'s flags."""

    file: Path = positional(type=Path, help="a reply (.md, .txt) or a sketch (.js), at most "
                            f"{MAX_REPLY_CHARS} characters (the server's limit)")
    pool: str | None = flag(like=POOL, help="the reference pool: a pool folder, build folder or "
                            f"Hub id (default WATERCOLOUR_POOL, else {DEFAULT_POOL})")
    subject: str | None = flag(like=SUBJECT, help="what was asked for (default: 'a peach "
                               "hibiscus')")
    seed: int = flag(like=SEED, help="the group seed: which references are drawn, and the "
                     "render seed")
    json: bool = flag(like=JSON, help='print {"reward": float or null, "components": {...}, '
                      '"gate": {...}, ...}')


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    command(
        verbs, name, ScoreFlags, run,
        help="score one reply or sketch with the reward",
        description="Score a model's reply (or a bare sketch) with the reward: gate, length, "
        "pairwise judge against references drawn from the pool, HPS. The mix and the backends "
        "come from the environment (WATERCOLOUR_JUDGE_WEIGHT, WATERCOLOUR_HPS_WEIGHT, "
        "WATERCOLOUR_JUDGE_BASE_URL / _PROVIDER, WATERCOLOUR_HPS_URL, ...); with no endpoint "
        "configured the embedded defaults score offline (the pool-fitted judge and the "
        "offline aesthetic scorer, banded on the pool's love tier). Exit codes: 0 scored, "
        "1 rejected by the gate (reward 0), "
        "3 unavailable (the browser, judge or scorer failed: reward null).",
    )


def run(args: argparse.Namespace) -> int:
    from watercolour.rewards import RewardConfig, Rewarder

    reply = read_input(args.file, "reply")  # before the judge is fitted or a cache written
    config = RewardConfig.from_env(pool=args.pool)
    with Renderer() as renderer:
        rewarder = Rewarder(config, renderer=renderer)
        evaluation = rewarder.evaluate(reply, subject=args.subject, seed=args.seed)
    return report(evaluation, args.json, print_human)


def report(evaluation: Any, as_json: bool, human: Callable[[RewardRecord], None]) -> int:
    """Print a scored rollout (JSON or ``human``) and return the verb's exit code: 0 scored,
    1 rejected, 3 unavailable (``score`` and ``client`` alike)."""
    if as_json:
        print(json.dumps(evaluation.to_dict(), indent=2, default=str))
    else:
        human(evaluation.record)
    if evaluation.status == "unavailable":
        return EXIT_UNAVAILABLE
    return EXIT_REJECTED if evaluation.status == "rejected" else 0


def number(value: Any, digits: int = 3) -> str:
    """A score for people: ``digits`` decimals, or a dash for a missing one."""
    return "  -  " if value is None else f"{value:.{digits}f}"


def print_components(record: RewardRecord) -> None:
    """One line per component: raw x weight = contribution, and what it found."""
    for name, part in record.components.items():
        weight = number(part.weight, 2) if part.weight is not None else "  - "
        print(f"  {name:<8}{number(part.raw)} x {weight} = {number(part.contribution, 4)}   "
              f"{component_note(name, part, record)}")


def print_human(record: RewardRecord) -> None:
    reward = record.reward
    head = "null" if reward is None else f"{reward:.4f}"
    print(f"reward {head} ({(record.mix or {}).get('name')} mix) - {record.status}")
    if record.unavailable:
        u = record.unavailable
        print(f"  unavailable: the {u.part} failed: {u.reason}", file=sys.stderr)
    if record.status == "rejected":
        print(f"  gate: {', '.join(record.violations)}")
    print_components(record)
    refs = record.references
    if refs:
        print(f"  references (seed {refs['seed']}): "
              + ", ".join(f"{i} ({t})" for i, t in zip(refs["ids"], refs["tiers"])))
