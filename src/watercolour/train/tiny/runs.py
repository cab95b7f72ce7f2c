"""The tiny painter's longer runs, and what of them the book reads (``results/tiny/<mix>/``).

    watercolour tiny runs --mix judge-led --pool runs/main/pool
    watercolour tiny runs --mix judge-led --pool runs/main/pool \
        --references-schedule linear:0.5:1.0 --name judge-led-curriculum
    watercolour tiny runs --config tiny-revise --mix judge-led \
        --pool runs/main/pool --name revise

trains ``tiny-cpu`` (60 steps of 2 prompts x 8 generations; ``--config``: another recipe, such
as ``tiny-revise``'s 2-turn episodes) into ``runs/tiny/<name>`` and publishes it into
``src/watercolour/results/tiny/<name>/`` (the name defaults to the mix) with
:func:`watercolour.train.publish.publish` (the curve, run.json, analysis, rollout summary,
contact sheet; a run of episodes also its revisions). ``--publish-only`` republishes an
existing run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from watercolour.flags import MIX, POOL, flag, parser_for, switch
from watercolour.pool.schema import DEFAULT_POOL
from watercolour.results import TINY
from watercolour.rewards.mix import PRESETS
from watercolour.train.publish import headline, publish

RESULTS = TINY
"""The committed runs, shipped with the package (:data:`watercolour.results.TINY`)."""


@dataclass
class TinyRunsFlags:
    """``watercolour tiny runs``'s flags (``--mix`` and ``--pool``: the shared
    flags of :mod:`watercolour.flags`)."""

    config: str = flag(default="tiny-cpu", help="the recipe (default tiny-cpu; tiny-revise: "
                       "2-turn episodes)")
    mix: str = flag(like=MIX, required=True, choices=tuple(PRESETS), help=None)
    pool: str | None = flag(like=POOL, help="the reference pool (default: the trainer's, "
                            f"WATERCOLOUR_POOL else {DEFAULT_POOL})")
    steps: int | None = flag(type=int, help="GRPO steps (default the recipe's max_steps)")
    references_schedule: str | None = flag(
        help="the references' tier mix by step (see watercolour train --help; default the "
        "trainer's, half love)")
    name: str | None = flag(help="the run's folder under --runs and --results (default the "
                            "mix)")
    runs: str = flag(default="runs/tiny", help="where the run itself goes")
    results: str = flag(default="src/watercolour/results/tiny",
                        help="where it is published (default src/watercolour/results/tiny: in "
                        "a checkout, the results shipped with the package)")
    publish_only: bool = switch()


def main(argv: list[str] | None = None, prog: str = "watercolour tiny runs") -> int:
    """Train the run (unless ``--publish-only``), publish it, print its headline."""
    args = parser_for(TinyRunsFlags, prog=prog,
                      description=__doc__.split("\n\n")[0]).parse_args(argv)
    name = args.name or args.mix
    run = Path(args.runs) / name
    if not args.publish_only:
        from watercolour.train.config import parse_args
        from watercolour.train.trainer import train

        flags = ["--config", args.config, "--mix", args.mix, "--out", str(run),
                 "--run-name", f"tiny-{name}"]
        if args.steps is not None:
            flags += ["--max-steps", str(args.steps), "--n-episodes", str(args.steps)]
        if args.references_schedule:
            flags += ["--references-schedule", args.references_schedule]
        if args.pool:
            flags += ["--pool", args.pool]
        if run.exists() and (run / "rollouts").exists():
            flags.append("--resume")
        train(*parse_args(flags))
    analysis = publish(run, Path(args.results) / name)
    print("\n".join(headline(analysis)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
