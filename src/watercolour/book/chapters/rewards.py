"""The plumbing of the chapter "Reward components": the rewarder the chapter scores with, its
tables and figures (the rubric, each term on the examples, the judge's votes, the mixes, a
failed scorer, the judge's consistency, the red team's record) and its ``rewards.json``."""

from __future__ import annotations

import random
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from watercolour.examples import load_examples
from watercolour.io import write_json_atomic
from watercolour.notebooks import markdown_table, shown_path, thumbnail
from watercolour.pool.choice import describe_pool
from watercolour.render import Renderer
from watercolour.render.paint import decode_rgb
from watercolour.rewards import (
    Evaluation,
    Mix,
    RewardConfig,
    Rewarder,
    consistency,
    length_score,
)
from watercolour.rewards.backends import make_judge
from watercolour.rewards.hps.client import HpsClient
from watercolour.rewards.mix import PRESETS
from watercolour.rewards.references import ReferencePool
from watercolour.rewards.rubric import RUBRIC
from watercolour.rewards.summary import mix_totals, vote_rows

SUBJECT = "a flower, in watercolour"
CHEAT = ("function setup() { createCanvas(512, 512, WEBGL); }\n"
         "function draw() { text('a beautiful watercolour', 0, 0); }")
"""A sketch that writes words on the canvas instead of painting."""
CONSISTENCY_KEYS = ("answered_rate", "repeat_agreement", "order_agreement",
                    "position_bias_rate", "first_rate", "self_first_rate")


def fence(code: str) -> str:
    return f"```javascript\n{code}\n```"


def score_text(value: float | None) -> str:
    return "None" if value is None else f"{value:.3f}"


def thumb(png: bytes, side: int = 160) -> np.ndarray:
    return decode_rgb(thumbnail(png, side))


@dataclass
class Scoring:
    """The chapter's rewarder and what it was built from."""

    pool_path: Path
    pool: ReferencePool
    described: str
    config: RewardConfig
    judge: Any
    rewarder: Rewarder
    renderer: Renderer
    fit_seconds: float
    names: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    group_seconds: float = 0.0

    def close(self) -> None:
        self.renderer.close()

    def describe(self, note: str = "") -> str:
        """The pool (a reader's path), why it was chosen (the pipeline's ``note``), the judge
        and the preference scorer, a line each."""
        lines = [f"pool {shown_path(self.pool_path)}: {self.described}, "
                 f"{len(self.pool.negatives)} negatives"]
        if note:
            lines.append(f"chosen by the book's pipeline: {note}")
        lines.append(f"judge: {self.judge.name} (ready in {self.fit_seconds:.1f} s); "
                     f"hps: {self.rewarder.backend('hps')}")
        return "\n".join(lines)


def open_scoring(pool_path: Path | None, out: Path, *, references: int, seed: int,
                 judge_base_url: str = "", judge_model: str = "", hps_url: str = ""
                 ) -> Scoring:
    """The judge-led rewarder on ``pool_path`` (a small starter pool built under ``out``
    when there is none), its judge fitted here, one browser started."""
    if pool_path is None or not pool_path.exists():
        from watercolour.pool.build import BuildConfig, build_pool

        pool_path = out / "starter-pool"
        build_pool(BuildConfig(out=str(pool_path), size=8, rounds=1, canvas=256, negatives=1,
                               progress=False))
    pool = ReferencePool.load(pool_path)
    config = RewardConfig(mix=Mix.preset("judge-led"), references=references, seed=seed,
                          judge_base_url=judge_base_url or None,
                          judge_model=judge_model or RewardConfig().judge_model,
                          hps_url=hps_url or None)
    start = time.monotonic()
    judge = make_judge(config, pool)
    fit_seconds = time.monotonic() - start
    renderer = Renderer(workers=1).start()
    rewarder = Rewarder(config, pool=pool, judge=judge, renderer=renderer)
    return Scoring(pool_path, pool, describe_pool(pool_path), config, judge, rewarder,
                   renderer, fit_seconds)


# ---------------------------------------------------------------- the rubric


def rubric_table() -> str:
    """The rubric as a Markdown table: each component, its role and its weight under each
    preset."""
    header = ["component", "what it measures", *PRESETS, "variable"]
    rows = [(f"`{c.name}`", c.role, *(f"{Mix.preset(p).weight(c.name):.2f}" for p in PRESETS),
             f"`{c.env}`" if c.env else "fixed") for c in RUBRIC]
    return markdown_table(header, rows)


def length_ramp_figure() -> Figure:
    tokens = np.arange(0, 7000, 10)
    fig = Figure(figsize=(6, 2.4))
    ax = fig.subplots()
    ax.plot(tokens, [length_score(t) for t in tokens])
    ax.set_xlabel("painting code's length (tokens; characters / 4 without a tokenizer)")
    ax.set_ylabel("length term")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- the examples


def score_examples(scoring: Scoring, n_examples: int) -> None:
    """The first ``n_examples`` shipped sketches and the cheat, scored as one group."""
    examples = dict(list(load_examples().items())[:n_examples])
    scoring.names = [*examples, "cheat (text on canvas)"]
    scoring.replies = [fence(code) for code in [*examples.values(), CHEAT]]
    start = time.monotonic()
    scoring.evaluations = scoring.rewarder.evaluate_group(scoring.replies, subject=SUBJECT,
                                                          seed=scoring.config.seed)
    scoring.group_seconds = time.monotonic() - start


def components_table(scoring: Scoring) -> str:
    """Each example's raw score per component the mix weighs, and its total."""
    parts = scoring.rewarder.mix.active()
    rows = [(name, e.status, *(score_text(e.record.raw(k)) for k in parts),
             score_text(e.reward)) for name, e in zip(scoring.names, scoring.evaluations)]
    return markdown_table(["sketch", "status", *parts,
                           f"total ({scoring.rewarder.mix.name})"], rows)


def paintings_figure(scoring: Scoring) -> Figure:
    shown = [(n, e) for n, e in zip(scoring.names, scoring.evaluations) if e.png is not None]
    fig = Figure(figsize=(2.6 * len(shown), 3))
    for ax, (name, e) in zip(fig.subplots(1, len(shown), squeeze=False)[0], shown):
        ax.imshow(thumb(e.png))
        ax.set_title(f"{name}\n{score_text(e.reward)}", fontsize=9)
        ax.axis("off")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- the judge


def references_figure(scoring: Scoring) -> Figure:
    """The first example beside the references its group drew."""
    first = scoring.evaluations[0]
    refs = first.record.references or {"ids": [], "tiers": []}
    fig = Figure(figsize=(2.4 * (len(refs["ids"]) + 1), 2.8))
    axes = fig.subplots(1, len(refs["ids"]) + 1, squeeze=False)[0]
    axes[0].imshow(thumb(first.png))
    axes[0].set_title(f"candidate: {scoring.names[0]}", fontsize=9)
    for ax, rid, tier in zip(axes[1:], refs["ids"], refs["tiers"]):
        ax.imshow(thumb(scoring.pool.get(rid).png))
        ax.set_title(f"{rid}\n({tier})", fontsize=8)
    for ax in axes:
        ax.axis("off")
    fig.tight_layout()
    return fig


def votes_table(evaluation: Evaluation) -> str:
    """Per reference: who won in each order, and whether both orders agree."""
    return markdown_table(
        ["reference", "tier", "candidate shown first", "reference shown first", "same winner"],
        [(r["reference"], r["tier"], r.get("candidate_first"), r.get("reference_first"),
          "yes" if r["agree"] else "no") for r in vote_rows(evaluation)])


# ---------------------------------------------------------------- the mixes


def mix_tables(scoring: Scoring) -> tuple[dict[str, dict[str, float | None]], str]:
    """Each example's total under every preset (from the same components), and the table."""
    totals = {name: mix_totals(e) for name, e in zip(scoring.names, scoring.evaluations)}
    table = markdown_table(["sketch", *PRESETS],
                           [(n, *(score_text(t[m]) for m in PRESETS))
                            for n, t in totals.items()])
    return totals, table


def mixes_figure(totals: dict[str, dict[str, float | None]]) -> Figure:
    names = list(totals)
    fig = Figure(figsize=(7, 3))
    ax = fig.subplots()
    width = 0.8 / len(PRESETS)
    for k, m in enumerate(PRESETS):
        ax.bar(np.arange(len(names)) + k * width, [t[m] or 0.0 for t in totals.values()],
               width, label=m)
    ax.set_xticks(np.arange(len(names)) + width, names, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("total reward")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- failures and consistency


def with_dead_scorer(scoring: Scoring) -> Evaluation:
    """The first example scored again with the HPS slot pointing at a port nobody serves."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    broken = Rewarder(scoring.config, pool=scoring.pool, judge=scoring.judge,
                      renderer=scoring.renderer, scorer=HpsClient(dead, timeout_s=2, retries=0))
    return broken.evaluate(scoring.replies[0], subject=SUBJECT, seed=scoring.config.seed)


def consistency_check(scoring: Scoring, pairs: int, seed: int) -> dict[str, Any]:
    """The judge on ``pairs`` love/okay pairs, twice and in both orders, and on a few
    pictures against themselves."""
    rng = random.Random(seed)
    love = [p.png for p in scoring.pool.tier("love")]
    okay = [p.png for p in scoring.pool.tier("okay")]
    chosen = [(rng.choice(love), rng.choice(okay)) for _ in range(pairs)]
    selfs = [rng.choice(love + okay) for _ in range(max(1, pairs // 4))]
    return consistency(scoring.judge, chosen, "a flower", repeats=2, self_pairs=selfs)


def consistency_table(check: dict[str, Any], judge_name: str) -> str:
    return markdown_table(["measure", judge_name], [(k, check[k]) for k in CONSISTENCY_KEYS])


# ---------------------------------------------------------------- the red team


def robustness_table(record: dict[str, Any] | None) -> str:
    """The benchmark's best reward per family, before the defences and now."""
    if record is None:
        return "run `benchmarks/reward_robustness.py` for the before/after table"
    after, before = record["after"], record["before"] or {}
    rows = [(name, before.get("families", {}).get(name, {}).get("reward", "-"), row["reward"])
            for name, row in after["families"].items()]
    rows += [("**peach_hibiscus example**", before.get("example", {}).get("reward", "-"),
              after["example"]["reward"]),
             ("**pool `love` median** (leave-one-out)", before.get("love_median", "-"),
              after["love_median"])]
    return markdown_table(["family (best found)", "before", "after"], rows)


def gamed_figure(scoring: Scoring, gamed: str) -> tuple[Figure, list[Evaluation]]:
    """The first example and a gamed sketch, scored as one group in a fresh browser."""
    example = scoring.replies[0]
    with Renderer(workers=1) as renderer:
        hacker = Rewarder(scoring.config, pool=scoring.pool, judge=scoring.judge,
                          renderer=renderer)
        pair = hacker.evaluate_group([example, fence(gamed)], subject=SUBJECT,
                                     seed=scoring.config.seed)
    fig = Figure(figsize=(5.2, 3))
    for ax, label, e in zip(fig.subplots(1, 2), [scoring.names[0], "gamed"], pair):
        ax.imshow(thumb(e.png))
        ax.set_title(f"{label}: {score_text(e.reward)}\njudge "
                     f"{score_text(e.record.raw('judge'))}, hps "
                     f"{score_text(e.record.raw('hps'))}", fontsize=9)
        ax.axis("off")
    fig.tight_layout()
    return fig, pair


# ---------------------------------------------------------------- the record


def write_results(scoring: Scoring, out: Path, *, parameters: dict[str, Any],
                  totals: dict[str, dict[str, float | None]], failed: Evaluation,
                  check: dict[str, Any], note: str) -> Path:
    """The chapter's ``rewards.json``."""
    results = {
        "parameters": {**parameters, "pool": str(scoring.pool_path)},
        "config": scoring.config.resolved(),
        "judge": scoring.judge.name, "hps": scoring.rewarder.backend("hps"),
        "pool": {"tiers": scoring.pool.counts(), "negatives": len(scoring.pool.negatives),
                 "described": scoring.described, "note": note},
        "fit_seconds": round(scoring.fit_seconds, 2),
        "group_seconds": round(scoring.group_seconds, 2),
        "examples": [{"name": n, "reward": e.reward, "status": e.status,
                      "components": {name: part.raw
                                     for name, part in e.record.components.items()},
                      "mixes": totals[n], "votes": vote_rows(e)}
                     for n, e in zip(scoring.names, scoring.evaluations)],
        "references": scoring.evaluations[0].record.references,
        "infrastructure_failure": {
            "reward": failed.reward, "status": failed.status,
            "unavailable": failed.record.unavailable.model_dump()
            if failed.record.unavailable else None},
        "consistency": {k: v for k, v in check.items() if k != "per_pair"},
    }
    return write_json_atomic(out / "rewards.json", results)
