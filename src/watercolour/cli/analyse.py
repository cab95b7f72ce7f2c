"""``watercolour analyse CURVE.csv [--rollouts PATH] [--gallery DIR] [--plots DIR] [--json]``:
what a run did, by thirds (and a static gallery of its rollouts, and its curves as PNGs)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from watercolour.analysis import PUBLISHED, analyse, published_curve
from watercolour.analysis.rollout_gallery import write_rollout_gallery
from watercolour.errors import InputError
from watercolour.flags import JSON, command, flag, positional


@dataclass
class AnalyseFlags:
    """``watercolour analyse``'s flags."""

    curve: str = positional(help="a per-step curve CSV, or the name of a published curve")
    rollouts: Path | None = flag(type=Path, help="the run's rollouts: a .jsonl file or a "
                                 "datasets folder")
    gallery: Path | None = flag(type=Path, metavar="DIR",
                                help="also write a static, sortable HTML gallery of the rollouts "
                                "into DIR")
    plots: Path | None = flag(type=Path, metavar="DIR",
                              help="also write the curves the book shows as PNGs into DIR: "
                              "reward.png, components.png, coverage.png, step-time.png (those "
                              "the curve has columns for)")
    window: int = flag(type=int, default=10, help="steps in the plots' rolling means (10)")
    json: bool = flag(like=JSON, help='print {"thirds": {column: {"first", "middle", "last"}}, '
                      '"findings": {...}, "rollouts": {...} | null, "notes": [...]}')


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    command(
        verbs, name, AnalyseFlags, run,
        help="analyse a training run's curve (and rollouts)",
        description="From a per-step curve CSV (TRL's column names plus component means such "
        "as judge_mean, hps_mean or quality_mean, length_mean, paint_fraction_mean) and, when "
        "given, the run's rollouts: the first / middle / last third means of every column, the "
        "reward's slope t-statistic, paint coverage change, collapsed groups, step time; with "
        "rollouts also bad paintings (reward < 0.3) per third, best-of-step vs median, the "
        "share of the mean's gain from bad paintings becoming rare, the ceiling, n_shapes vs "
        "reward and the reference draw's effect. Missing columns are skipped with a note. "
        f"CURVE may also name a published curve: {', '.join(PUBLISHED)}.",
    )


def run(args: argparse.Namespace) -> int:
    curve = published_curve(args.curve) if args.curve in PUBLISHED else Path(args.curve)
    result = analyse(curve, args.rollouts)
    if args.gallery is not None:
        if args.rollouts is None:
            raise InputError("--gallery needs --rollouts")
        page = write_rollout_gallery(args.rollouts, args.gallery)
        result.notes.append(f"rollout gallery: {page}")
    if args.plots is not None:
        from watercolour.analysis import read_curve
        from watercolour.analysis.plots import write_plots

        if args.window < 1:
            raise InputError(f"--window must be at least 1, not {args.window}")
        name = args.curve if args.curve in PUBLISHED else Path(args.curve).stem
        written = write_plots(read_curve(curve), args.plots, args.window, name=name)
        result.notes.append(f"plots: {', '.join(str(p) for p in written)}")
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print("\n".join(result.summary_lines()))
    return 0
