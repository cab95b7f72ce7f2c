"""A finished GRPO run's published form: what the book reads of it.

    watercolour publish --run runs/smollm2 --out src/watercolour/results/smollm2/judge-led

writes into ``--out``: ``metrics.csv`` (one row per step), ``run.json`` (the resolved
configuration), ``analysis.json`` (:func:`watercolour.analysis.analyse` of the curve and the
rollouts; for a run rewarded by the pool-fitted judge also ``yardstick``, every admitted
rollout on that judge's fixed scale: :mod:`watercolour.analysis.yardstick`, which needs the
run's pool where ``run.json`` names it), ``rollouts-summary.json`` (per step and per third:
outcomes, rewards, n_shapes, paint) and ``contact-sheet.png`` (one row per step-third: the
paintings nearest that third's median reward). A run of episodes of several turns also gets
``turns`` in its analysis (each turn's reward by thirds, the revision's paired gain),
``by_turn`` in its rollout summary (the rest of which, like the contact sheet, is of each
episode's last turn), ``revisions.png`` (first attempts over their revisions) and
``episode.json`` with ``episode-t1.png``, ``episode-t2.png`` (one episode of the last third,
turn by turn: :mod:`watercolour.train.tiny.episode_results`). The tiny painter's runs are
published by ``watercolour tiny runs`` (:mod:`watercolour.train.tiny.runs`), which trains and
then calls :func:`publish`.
"""

from __future__ import annotations

import io
import math
import os
import shutil
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from watercolour.analysis.findings import describe_learning
from watercolour.analysis.report import turn_lines
from watercolour.analysis.thirds import THIRDS
from watercolour.flags import flag, parser_for
from watercolour.io import write_bytes_atomic, write_json_atomic
from watercolour.train.tiny.episode_results import paste_cell


def rollout_summary(rollouts: pd.DataFrame) -> dict[str, Any]:
    """Per step and per third: rollouts, outcomes, reward mean / median / best, n_shapes."""
    from watercolour.analysis import third_of_steps

    frame = rollouts.copy()
    frame["third"] = third_of_steps(frame["step"]).to_numpy()

    def block(part: pd.DataFrame) -> dict[str, Any]:
        rewards = part["reward"].dropna()
        ok = part[part["status"] == "ok"]
        return {"rollouts": len(part),
                "ok": int((part["status"] == "ok").sum()),
                "rejected": int((part["status"] == "rejected").sum()),
                "unavailable": int((part["status"] == "unavailable").sum()),
                "below_0_3": int((rewards < 0.3).sum()),
                "reward_mean": _r(rewards.mean()), "reward_median": _r(rewards.median()),
                "reward_best": _r(rewards.max()),
                "n_shapes_mean": _r(ok["n_shapes"].mean()) if "n_shapes" in ok else None,
                "paint_fraction_mean": _r(ok["paint_fraction"].mean())
                if "paint_fraction" in ok else None}

    from watercolour.train.tiny.evaluate import rejection_reasons

    reasons = rejection_reasons(list(v) if v is not None else None
                                for v in frame.loc[frame["status"] == "rejected", "violations"])
    return {"rollouts": len(frame),
            "by_third": {t: block(frame[frame["third"] == t]) for t in THIRDS},
            "by_step": {int(s): block(part) for s, part in frame.groupby("step")},
            "rejection_reasons": reasons}


def _r(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else \
        round(float(value), 4)


def contact_sheet(rollouts: pd.DataFrame, source: str | Path, per_third: int = 6,
                  size: int = 160) -> bytes:
    """One row per step-third: the ``per_third`` scored paintings nearest that third's median
    reward, left to right by reward (a PNG)."""
    from PIL import Image, ImageDraw

    from watercolour.analysis import third_of_steps
    from watercolour.analysis.rollouts import rollout_png

    frame = rollouts.copy()
    frame["third"] = third_of_steps(frame["step"]).to_numpy()
    label_w = 90
    sheet = Image.new("RGB", (label_w + per_third * size, 3 * size), "white")
    draw = ImageDraw.Draw(sheet)
    for row, third in enumerate(THIRDS):
        part = frame[(frame["third"] == third) & (frame["status"] == "ok")].copy()
        draw.text((6, row * size + size // 2 - 12), f"{third}\nthird", fill="black")
        if part.empty:
            continue
        median = statistics.median(part["reward"].dropna())
        part["distance"] = (part["reward"] - median).abs()
        chosen = part.nsmallest(per_third, "distance").sort_values("reward")
        for col, (_, item) in enumerate(chosen.iterrows()):
            paste_cell(sheet, rollout_png(item.get("png"), source),
                       (label_w + col * size, row * size), size,
                       f"s{int(item['step'])} {item['reward']:.2f}")
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG")
    return buffer.getvalue()


def publish(run: str | Path, out: str | Path) -> dict[str, Any]:
    """Write what the book reads of the run in ``run`` into ``out``; returns the analysis."""
    from watercolour.analysis import analyse, read_rollouts
    from watercolour.analysis.turns import has_turns, last_turns

    run, out = Path(run), Path(out)
    source = run / "rollouts" / "rollouts.jsonl"
    if not source.is_file():
        source = run / "rollouts"
    out.mkdir(parents=True, exist_ok=True)
    for name in ("metrics.csv", "run.json"):
        shutil.copyfile(run / name, out / f".{name}.tmp")
        (out / f".{name}.tmp").replace(out / name)
    rollouts = read_rollouts(source, pictures=True)
    analysis = analyse(run / "metrics.csv", rollouts).to_dict()
    measured = judge_yardstick(run, rollouts, source)
    if isinstance(measured, str):
        analysis["notes"].append(measured)
    elif measured is not None:
        analysis["yardstick"] = measured
    write_json_atomic(out / "analysis.json", analysis)
    episodes = has_turns(rollouts)
    scored = last_turns(rollouts) if episodes else rollouts
    summary = rollout_summary(scored)
    if episodes:
        summary["by_turn"] = {int(t): rollout_summary(part)["by_third"]
                              for t, part in rollouts.groupby("turn")}
        publish_episodes(rollouts, source, out)
    write_json_atomic(out / "rollouts-summary.json", summary)
    write_bytes_atomic(out / "contact-sheet.png", contact_sheet(scored, source))
    return analysis


def judge_yardstick(run: Path, rollouts: pd.DataFrame, source: Path
                    ) -> dict[str, Any] | str | None:
    """:func:`watercolour.analysis.yardstick.yardstick` of a run rewarded by the pool-fitted
    judge (fitted again on the pool its ``run.json`` names, or read from the judge's cache);
    ``None`` for another judge; a note (str) when the pool cannot be read."""
    import json

    from watercolour.analysis.yardstick import yardstick
    from watercolour.rewards.judge.cache import read_judge_cache
    from watercolour.rewards.judge.offline_judge import PoolFittedJudge
    from watercolour.rewards.references import ReferencePool

    reward = json.loads((run / "run.json").read_text()).get("reward") or {}
    if reward.get("judge") != "pool-fitted":
        return None
    try:
        pool = ReferencePool.load(reward["pool"])
    except (KeyError, TypeError, FileNotFoundError, ValueError) as err:
        return f"the judge's yardstick skipped: the run's pool cannot be read ({err})"
    judge = PoolFittedJudge.fit_cached(pool, read_judge_cache(os.environ))
    return yardstick(rollouts, source, judge, pool)


def publish_episodes(rollouts: pd.DataFrame, source: Path, out: Path) -> None:
    """``revisions.png`` and ``episode.json`` (with its renders) of a run of episodes."""
    from watercolour.train.tiny.episode_results import (
        episode_record,
        revision_sheet,
        scored_pairs,
        typical_episode,
    )

    pairs = scored_pairs(rollouts)
    write_bytes_atomic(out / "revisions.png", revision_sheet(pairs, source))
    episode = typical_episode(rollouts, pairs)
    if episode is not None:
        write_json_atomic(out / "episode.json", episode_record(episode, source, out))


def headline(analysis: dict[str, Any]) -> list[str]:
    """The run's headline: reward by thirds and its slope t, the same of the sketches that
    passed the gate, the learning checks (and a run of episodes' turns, and the judge's
    yardstick where the run has one)."""
    from watercolour.analysis.yardstick import describe as describe_yardstick

    f = analysis["findings"]
    reward = f.get("reward") or {}
    slope = f.get("reward_slope") or {}
    passed = (analysis.get("rollouts") or {}).get("passed") or {}
    p = passed.get("reward") or {}
    return [f"reward by thirds {reward.get('first')} -> {reward.get('middle')} -> "
            f"{reward.get('last')}; slope t {slope.get('t')}",
            f"the sketches that passed the gate: {p.get('first')} -> {p.get('middle')} -> "
            f"{p.get('last')}; slope t {(passed.get('slope') or {}).get('t')}",
            f"learning checks: {describe_learning(f, analysis.get('rollouts') or {})}",
            *([describe_yardstick(analysis["yardstick"])] if "yardstick" in analysis else []),
            *turn_lines(analysis.get("turns"))]


@dataclass
class PublishFlags:
    """``watercolour publish``'s flags."""

    run: Path = flag(type=Path, required=True, help="the run's folder (watercolour train's "
                     "--out: metrics.csv, run.json, rollouts/)")
    out: Path = flag(type=Path, required=True, help="where its published form goes")


def main(argv: list[str] | None = None, prog: str = "watercolour publish") -> int:
    """Publish ``--run`` into ``--out``; print its headline."""
    from watercolour.errors import InputError

    args = parser_for(PublishFlags, prog=prog,
                      description=__doc__.split("\n\n")[0]).parse_args(argv)
    missing = [name for name in ("metrics.csv", "run.json", "rollouts")
               if not (args.run / name).exists()]
    if missing:
        raise InputError(f"{args.run} is not a finished run: no {', '.join(missing)}")
    analysis = publish(args.run, args.out)
    print("\n".join(headline(analysis)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
