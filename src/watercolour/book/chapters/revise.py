"""Chapter 06's section "Seeing what it drew": the committed run of 2-turn episodes
(``results/tiny/revise/``, :mod:`watercolour.train.tiny.runs`) by turn, one of its episodes turn
by turn, and what the revisions changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from watercolour.analysis import read_curve
from watercolour.analysis.findings import MIN_SLOPE_T
from watercolour.analysis.thirds import THIRDS
from watercolour.notebooks import markdown_table

RUN = "revise"
"""The committed run's folder under the results."""
MIN_PAIRED_T = 3.0
"""The issue's target: over the last third, the revision beats the first attempt with a paired
t over the steps at least this (and the last turn's reward rises with a slope t of
:data:`~watercolour.analysis.findings.MIN_SLOPE_T`)."""


def committed_run(committed: Path) -> Path | None:
    """The committed run's folder, or ``None`` when it is not among the results."""
    folder = committed / RUN
    return folder if (folder / "analysis.json").is_file() else None


def read_analysis(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "analysis.json").read_text(encoding="utf-8"))


def turn_curves_figure(folder: Path, window: int = 10) -> Figure:
    """Left: each turn's mean reward per step (dots) and its rolling mean; right: the share of
    episodes whose revision scored higher than the first attempt, per step and rolling."""
    curve = read_curve(folder / "metrics.csv")
    figure = Figure(figsize=(12, 3.6))
    left, right = figure.subplots(1, 2)
    for column, label in (("reward_turn1", "first attempt"), ("reward_turn2", "revision")):
        dots = left.plot(curve["step"], curve[column], ".", alpha=0.4)[0]
        left.plot(curve["step"], curve[column].rolling(window, min_periods=1).mean(), "-",
                  color=dots.get_color(), label=f"{label} (rolling {window})")
    left.set(title="Reward by turn", xlabel="step", ylabel="mean reward of the turn")
    left.legend(loc="lower right", fontsize=8)
    beats = curve["revision_beats_first"]
    right.plot(curve["step"], beats, ".", alpha=0.4)
    right.plot(curve["step"], beats.rolling(window, min_periods=1).mean(), "-")
    right.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
    right.set(title="Revisions that beat their first attempt", xlabel="step",
              ylabel="share of episodes", ylim=(0, 1))
    figure.tight_layout()
    return figure


def turns_table(analysis: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Per turn: the reward by thirds and its slope t; then the revision minus the first attempt
    by third with its paired t over the steps, and the share of revisions that scored higher
    (Markdown), with the chapter's record of them."""
    curve = analysis["turns"]["curve"]
    rows = []
    for name, by in curve["by_turn"].items():
        label = "first attempt" if name == "reward_turn1" else f"turn {name[-1]} (revision)"
        rows.append([label, *(_fmt(by[t]) for t in THIRDS), _fmt(by["slope"]["t"], 1)])
    gain = curve["revision_gain"]
    rows.append(["revision minus first attempt (paired t)",
                 *(f"{_fmt(gain[t]['mean'], 3, sign=True)} (t {_fmt(gain[t]['t'], 1)})"
                   for t in THIRDS), ""])
    beats = curve.get("revision_beats_first") or {}
    if beats:
        rows.append(["share of revisions scoring higher", *(_fmt(beats.get(t), 2)
                                                          for t in THIRDS), ""])
    table = markdown_table(["", "first third", "middle", "last third", "slope t"], rows)
    last = curve["by_turn"][list(curve["by_turn"])[-1]]
    record = {"by_turn": {n: {t: b[t] for t in THIRDS} | {"slope_t": b["slope"]["t"]}
                          for n, b in curve["by_turn"].items()},
              "revision_gain": {t: gain[t] for t in THIRDS},
              "targets": targets_met(gain["last"]["t"], last["slope"]["t"])}
    return table, record


def quoted_figures(analysis: dict[str, Any]) -> dict[str, str]:
    """The committed run's figures the chapter's prose quotes (glue name -> text), computed from
    its analysis: the revision's mean gain and paired t by third and over the run, the share of
    episodes it scored higher, each turn's slope t, the rejections, repairs and breakages."""
    turns = analysis["turns"]
    curve, rollouts = turns["curve"], turns["rollouts"]
    gain, by_turn = curve["revision_gain"], curve["by_turn"]
    last_turn = str(curve["turns"])
    figures = {f"revise-gain-{t}": _fmt(gain[t]["mean"], 2, sign=True) for t in THIRDS}
    figures |= {f"revise-gain-t-{t}": _fmt(gain[t]["t"], 1) for t in THIRDS}
    figures |= {"revise-gain-t-all": _fmt(gain["all"]["t"], 1),
                "revise-steps": str(gain["all"]["n"]),
                "revise-steps-third": str(gain["last"]["n"]),
                "revise-higher": f"{rollouts['all']['revision_higher']:.0%}",
                "revise-slope-t-first": _fmt(by_turn["reward_turn1"]["slope"]["t"], 1),
                "revise-slope-t-last": _fmt(by_turn[f"reward_turn{last_turn}"]["slope"]["t"], 1),
                "revise-episodes": f"{rollouts['all']['episodes']:,}",
                "revise-rejected-first": str(rollouts["outcomes_by_turn"]["1"].get("rejected", 0)),
                "revise-rejected-last": str(rollouts["outcomes_by_turn"][last_turn]
                                            .get("rejected", 0)),
                "revise-repaired": str(rollouts["all"]["repaired"]),
                "revise-broken": str(rollouts["all"]["broken"]),
                "revise-broken-last-third": str(rollouts["by_third"]["last"]["broken"])}
    return figures


def glue_quoted(analysis: dict[str, Any]) -> dict[str, str]:
    """Glue :func:`quoted_figures` for the chapter's prose; returns them."""
    from myst_nb import glue

    figures = quoted_figures(analysis)
    for name, text in figures.items():
        glue(name, text, display=False)
    return figures


def targets_met(paired_t: float | None, slope_t: float | None) -> dict[str, bool | None]:
    """The issue's two targets: the last third's paired t and the last turn's slope t."""
    return {"revision_beats_first_in_last_third": None if paired_t is None
            else paired_t >= MIN_PAIRED_T,
            "last_turn_rises": None if slope_t is None else slope_t >= MIN_SLOPE_T}


def changes_table(analysis: dict[str, Any]) -> str:
    """What the revisions did by third (Markdown): episodes with a revision, the share that
    repeated the sketch, rejected sketches repaired, passing ones broken, and the mean change in
    shapes and paint coverage of the revisions that rendered."""
    found = analysis["turns"]["rollouts"]["by_third"]
    rows = [[t, str(found[t]["episodes"]), _fmt(found[t]["unchanged_sketch"], 2),
             _fmt(found[t]["revision_higher"], 2), _fmt(found[t]["revision_lower"], 2),
             str(found[t]["repaired"]), str(found[t]["broken"]),
             _fmt(found[t]["n_shapes_change"], 1, sign=True),
             _fmt(found[t]["paint_fraction_change"], 3, sign=True)] for t in THIRDS]
    return markdown_table(["third", "episodes", "same sketch again", "revision higher",
                           "revision lower", "rejected -> repaired", "passed -> broken",
                           "shapes (change)", "paint coverage (change)"], rows)


def episode_markdown(folder: Path) -> str:
    """The committed episode turn by turn (Markdown): each turn's reward and status, the first
    sketch whole and each revision as the lines it changed, and what the environment said of
    a turn's render before the next turn."""
    path = folder / "episode.json"
    if not path.is_file():
        return "The committed run has no episode to show."
    episode = json.loads(path.read_text(encoding="utf-8"))
    parts = [f"Step {episode['step']}, episode {episode['index']} of group "
             f"{episode['group']} ({episode.get('subject') or 'the subject'}):"]
    last = len(episode["turns"])
    before = None
    for turn in episode["turns"]:
        name = "First attempt" if turn["turn"] == 1 else f"Turn {turn['turn']} (revision)"
        parts.append(f"**{name}**: {turn['status']}, reward {_fmt(turn['reward'])}.")
        sketch = (turn["sketch"] or "").strip()
        if before is None:
            parts.append(f"```javascript\n{sketch}\n```")
        else:
            parts.append("The lines the revision changed (`-` the turn before, `+` this one):")
            parts.append(f"```diff\n{changed_lines(before, sketch)}\n```")
        before = sketch
        if turn["turn"] < last:
            parts.append("What the environment said of its render (the next turn's prompt):\n\n"
                         + "\n".join(f"> {line}" for line in
                                     (turn["critique"] or "").strip().splitlines()))
    return "\n\n".join(parts)


def changed_lines(before: str, after: str) -> str:
    """The lines of ``after`` that differ from ``before``, as a unified diff without context
    (the whole of ``after`` when nothing is shared; "(no change)" when they are equal)."""
    import difflib

    if before == after:
        return "(no change)"
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return "\n".join(line for line in diff if not line.startswith(("---", "+++")))


def episode_figure(folder: Path) -> Figure | None:
    """The committed episode's renders side by side, titled with their turn and reward."""
    from PIL import Image

    path = folder / "episode.json"
    if not path.is_file():
        return None
    turns = json.loads(path.read_text(encoding="utf-8"))["turns"]
    figure = Figure(figsize=(3.2 * len(turns), 3.4))
    axes = figure.subplots(1, len(turns), squeeze=False)[0]
    for ax, turn in zip(axes, turns):
        ax.axis("off")
        name = "first attempt" if turn["turn"] == 1 else "revision"
        ax.set_title(f"{name}: {_fmt(turn['reward'])}", fontsize=9)
        if turn["png"] and (folder / turn["png"]).is_file():
            ax.imshow(Image.open(folder / turn["png"]).convert("RGB"))
    figure.tight_layout()
    return figure


EVALUATIONS = (("sft-eval-revise.json", "the warm start"),
               ("revise/final-eval.json", "after the run"))
"""The committed evaluations in episodes (a file under the results) and the policy each
sampled (``watercolour tiny evaluate ... --turns 2``)."""


def evaluation_table(committed: Path) -> tuple[str, dict[str, Any]]:
    """The warm start and the trained policy in fresh episodes on the same seeds (Markdown):
    per turn how many passed the gate and the mean reward, and the revision against the first
    attempt episode by episode; with the chapter's record of them ("" when neither exists)."""
    rows, record = [], {}
    for name, label in EVALUATIONS:
        path = committed / name
        if not path.is_file():
            continue
        result = json.loads(path.read_text(encoding="utf-8"))
        first, last = result["by_turn"]["1"], result["by_turn"][str(result["turns"])]
        r = result["revision"]
        rows.append([label, f"{first['passed']}/{result['samples']}",
                     _fmt(first["mean_reward"]), f"{last['passed']}/{result['samples']}",
                     _fmt(last["mean_reward"]),
                     f"{r['higher']} / {r['lower']} / {r['same']}",
                     f"{_fmt(r['mean_gain'], 3, sign=True)} (t {_fmt(r['paired_t'], 1)})"])
        record[label] = {"first": first["mean_reward"], "revision": last["mean_reward"],
                         "revision_vs_first": r}
    if not rows:
        return "", record
    return markdown_table(["policy", "first attempt passed", "first attempt reward",
                           "revision passed", "revision reward",
                           "revision higher / lower / same", "mean gain (paired t)"],
                          rows), record


def _fmt(value: float | None, digits: int = 3, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"
