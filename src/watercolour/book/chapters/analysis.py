"""Chapter 08, "Analysis of a run": the plumbing behind its cells (which curves to read, the
tables and lines that report :func:`watercolour.analysis.analyse`'s results, the JSON the
chapter writes), so the chapter shows the analysis and its figures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from watercolour.analysis import (
    Analysis,
    analyse,
    published_curve,
    read_curve,
    write_rollout_gallery,
)
from watercolour.notebooks import markdown_table, resolve_path, shown_path

THIRDS_COLUMNS = ("reward", "judge_mean", "hps_mean", "quality_mean", "length_mean",
                  "paint_fraction_mean", "frac_reward_zero_std", "completions/mean_length")
"""The curve's columns the by-thirds table shows (those a run has)."""

OWN_RUN = "this run"
"""The name of a run given by its curve (not a published one)."""


def runs_to_analyse(curve: str = "", compare: str = "",
                    default: str = "hps-led") -> dict[str, Path]:
    """Run name -> curve CSV, the run analysed first: ``curve`` (named :data:`OWN_RUN`; a
    relative path from the project root, :func:`~watercolour.notebooks.resolve_path`) or the
    published ``default``, then the published ``compare`` when given."""
    runs = {OWN_RUN: resolve_path(curve)} if curve else {default: published_curve(default)}
    if compare:
        runs[compare] = published_curve(compare)
    return runs


@dataclass
class Runs:
    """The runs the chapter reads: the one analysed first, the published one set beside it."""

    paths: dict[str, Path]
    """Run name -> its curve CSV (:func:`runs_to_analyse`)."""
    results: dict[str, Analysis]
    curves: dict[str, pd.DataFrame]
    rollouts: Path | None
    """The analysed run's rollouts, when given."""

    @property
    def main(self) -> str:
        """The run analysed (the rollouts, when given, are its own)."""
        return next(iter(self.paths))


def read_runs(curve: str = "", compare: str = "", rollouts: str = "") -> Runs:
    """Read and analyse the curves :func:`runs_to_analyse` names; ``rollouts`` (a relative
    path from the project root, or absolute) belong to the first."""
    paths = runs_to_analyse(curve, compare)
    source = resolve_path(rollouts) if rollouts else None
    main = next(iter(paths))
    return Runs(paths, {name: analyse(path, source if name == main else None)
                        for name, path in paths.items()},
                {name: read_curve(path) for name, path in paths.items()}, source)


def write_gallery(runs: Runs, folder: Path) -> str:
    """The analysed run's rollouts as a static gallery in ``folder``; its page as a reader's
    path (:func:`~watercolour.notebooks.shown_path`)."""
    assert runs.rollouts is not None, "no rollouts given"
    return shown_path(write_rollout_gallery(runs.rollouts, folder,
                                            title=f"Rollouts of {runs.main}"))


def thirds_table(results: dict[str, Analysis],
                 columns: tuple[str, ...] = THIRDS_COLUMNS) -> str:
    """Per run and column (of ``columns`` it has, with every third): the first, middle and last
    third's mean and the change, as Markdown."""
    rows = []
    for name, result in results.items():
        for column in columns:
            t = result.thirds.get(column)
            if t and None not in t.values():
                rows.append([name, f"`{column}`", f"{t['first']:.3f}", f"{t['middle']:.3f}",
                             f"{t['last']:.3f}", f"{t['last'] - t['first']:+.3f}"])
    return markdown_table(["run", "column", "first third", "middle", "last third", "change"],
                          rows)


def describe_slopes(results: dict[str, Analysis]) -> str:
    """A line per run with the reward's slope per step, its t-statistic and the steps."""
    lines = []
    for name, result in results.items():
        s = result.findings.get("reward_slope", {})
        if s.get("t") is not None:
            lines.append(f"{name}: reward slope {s['slope']:+.5f} per step, t = {s['t']:.1f} "
                         f"over {s['n']} steps")
    return "\n".join(lines)


def describe_collapse_and_time(results: dict[str, Analysis]) -> str:
    """Per run: the steps with a collapsed group (and the largest share) and, when logged, the
    median step time and the run's hours."""
    lines = []
    for name, result in results.items():
        c, t = result.findings.get("collapsed"), result.findings.get("step_time")
        if c:
            lines.append(f"{name}: {c['steps_with_collapse']} steps with a collapsed group "
                         f"(largest share {c['max']})")
        if t:
            lines.append(f"{name}: a step took {t['median_s'] / 60:.1f} min (median), "
                         f"{t['total_h']:.1f} h for the run")
    return "\n".join(lines)


def describe_rollouts(result: Analysis) -> str:
    """What the run's rollouts say (bad paintings by third, where the mean's gain came from,
    best-of-step against the median, the ceiling, shapes against reward), then the analysis'
    notes; without rollouts, how to give them."""
    r = result.rollouts
    if r is None:
        lines = ["No rollouts given (the published curves come without them); set `rollouts` "
                 "to a run's rollouts dataset to see these numbers."]
    else:
        bad = r["bad"]
        lines = [f"{r['rollouts']} rollouts, {r['unavailable']} unavailable; below 0.3 by third: "
                 + " -> ".join(f"{bad[t]['count']}" + ("" if bad[t]["share"] is None else
                                                        f" ({bad[t]['share']:.0%})")
                               for t in bad)]
        gain = r["bad_becoming_rare"]
        if gain["share"] is not None:
            lines.append(f"mean gain {gain['gain']:+.3f}: {gain['from_fewer_bad']:+.3f} from "
                         f"fewer bad paintings ({gain['share']:.0%}), "
                         f"{gain['from_better_paintings']:+.3f} from better ones")
        moved = [r["best_vs_median"][k]["moved"] for k in ("best", "median")]
        if None not in moved:  # a run of fewer than three steps has no thirds to compare
            lines.append(f"best-of-step moved {moved[0]:+.3f}, the median {moved[1]:+.3f}")
        lines.append(f"ceiling: {r['ceiling']['mean_if_all_good']}; n_shapes vs reward: "
                     f"{r.get('n_shapes_correlation')}")
    return "\n".join(lines + [f"note: {note}" for note in result.notes])


def summary(results: dict[str, Analysis], *, mode: str, curve: Path, rollouts: str = "",
            compare: str = "", window: int = 10,
            gallery: Path | None = None) -> dict[str, Any]:
    """What the chapter writes to ``analysis.json``: its parameters (``gallery``'s
    ``index.html`` only with ``rollouts``; an empty parameter as ``None``) and every run's
    analysis."""
    page = str(gallery / "index.html") if rollouts and gallery is not None else None
    return {"parameters": {"mode": mode, "curve": str(curve), "rollouts": rollouts or None,
                           "gallery": page, "compare": compare or None, "window": window},
            "runs": {name: result.to_dict() for name, result in results.items()}}
