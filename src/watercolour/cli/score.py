"""``watercolour score FILE [--pool PATH] [--subject S] [--seed N] [--json]``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watercolour.cli.inputs import read_input
from watercolour.pool.schema import DEFAULT_POOL
from watercolour.render import Renderer

EXIT_REJECTED = 1
EXIT_UNAVAILABLE = 3


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    p = verbs.add_parser(
        name,
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
    p.add_argument("file", type=Path, help="a reply (.md, .txt) or a sketch (.js)")
    p.add_argument("--pool", default=None,
                   help="the reference pool: a pool folder, build folder or Hub id (default "
                   f"WATERCOLOUR_POOL, else {DEFAULT_POOL})")
    p.add_argument("--subject", default=None, help="what was asked for (default: "
                   "'a peach hibiscus')")
    p.add_argument("--seed", type=int, default=0,
                   help="the group seed: which references are drawn, and the render seed")
    p.add_argument("--json", action="store_true",
                   help='print {"reward": float or null, "components": {...}, "gate": {...}, '
                   '...}')
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from watercolour.rewards import RewardConfig, Rewarder

    reply = read_input(args.file, "reply")  # before the judge is fitted or a cache written
    config = RewardConfig.from_env(pool=args.pool)
    with Renderer() as renderer:
        rewarder = Rewarder(config, renderer=renderer)
        evaluation = rewarder.evaluate(reply, subject=args.subject, seed=args.seed)
    return report(evaluation, args.json, print_human)


def report(evaluation: Any, as_json: bool, human: Callable[[dict[str, Any]], None]) -> int:
    """Print a scored rollout (JSON or ``human``) and return the verb's exit code: 0 scored,
    1 rejected, 3 unavailable (``score`` and ``client`` alike)."""
    data = evaluation.to_dict()
    if as_json:
        print(json.dumps(data, indent=2, default=str))
    else:
        human(data)
    if evaluation.status == "unavailable":
        return EXIT_UNAVAILABLE
    return EXIT_REJECTED if evaluation.status == "rejected" else 0


def number(value: Any, digits: int = 3) -> str:
    """A score for people: ``digits`` decimals, or a dash for a missing one."""
    return "  -  " if value is None else f"{value:.{digits}f}"


def print_human(data: dict[str, Any]) -> None:
    mix = data["mix"]
    reward = data["reward"]
    head = "null" if reward is None else f"{reward:.4f}"
    print(f"reward {head} ({mix['name']} mix) - {data['status']}")
    if data.get("unavailable"):
        u = data["unavailable"]
        print(f"  unavailable: the {u['part']} failed: {u['reason']}", file=sys.stderr)
    if data["status"] == "rejected":
        print(f"  gate: {', '.join(data['gate']['violations'])}")
    c = data["components"]
    notes = {
        "length": f"{c['length'].get('tokens')} tokens ({c['length'].get('counted_by')})",
        "judge": (f"{c['judge'].get('wins')}/{c['judge'].get('answered')} wins of "
                  f"{c['judge'].get('asked')} asked; {c['judge'].get('backend')}"
                  if c["judge"].get("called") else "not asked"),
        "hps": (f"mu {number(c['hps'].get('mu'))}; {c['hps'].get('backend')}"
                if c["hps"].get("called") else "not asked"),
        "gate": f"paint {data['gate']['paint_fraction']:.3f}, {data['gate']['n_shapes']} shapes",
    }
    for name in ("gate", "length", "judge", "hps"):
        part = c[name]
        print(f"  {name:<7}{number(part['raw'])} x {part['weight']:.2f} = "
              f"{number(part['contribution'], 4)}   {notes[name]}")
    refs = data.get("references")
    if refs:
        print(f"  references (seed {refs['seed']}): "
              + ", ".join(f"{i} ({t})" for i, t in zip(refs["ids"], refs["tiers"])))
