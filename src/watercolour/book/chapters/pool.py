"""The plumbing of the chapter "Building the pool": a sketch's opening, the round-by-round grid
of a build, the tiers' figure, the rehearsal's scripted ratings, the rated pool and the
chapter's ``pool.json``."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from watercolour.notebooks import shown_path
from watercolour.pool.log import GenerationLog
from watercolour.pool.rating import Item, RatingLog, rating_summary
from watercolour.pool.tiers import LOVE_SHARE, OKAY_FLOOR, RULE


def sketch_opening(code: str, title: str, lines: int = 30) -> str:
    """Markdown: ``title``, the sketch's length and its first ``lines`` lines."""
    all_lines = code.splitlines()
    head = "\n".join(all_lines[:lines])
    return (f"{title}, {len(all_lines)} lines; the first {min(lines, len(all_lines))}:\n\n"
            f"```javascript\n{head}\n```")


def revised_first(build_dir: str | os.PathLike[str], rounds: int) -> list[str]:
    """The build's paintings, those whose sketch changed in a later round (a fresh render, not
    one reused from the round before) first."""
    records = {r["id"]: r for r in GenerationLog(Path(build_dir) / "log").records()}
    paintings = sorted({r["painting_id"] for r in records.values()
                        if r.get("kind") == "painting"})
    changed = [p for p in paintings
               if any(not records.get(f"{p}-r{k}", {}).get("render", {}).get("cached_from")
                      for k in range(2, rounds + 1))]
    return changed + [p for p in paintings if p not in changed]


def rounds_grid(build_dir: str | os.PathLike[str], rounds: int,
                shown: Sequence[str]) -> Figure:
    """One row per painting in ``shown``, one column per round: each render titled with its
    subject, variant, critic score and the issues the critic named."""
    import matplotlib.pyplot as plt
    from PIL import Image

    log = GenerationLog(Path(build_dir) / "log")
    fig, axes = plt.subplots(max(1, len(shown)), rounds,
                             figsize=(3.2 * rounds, 3.6 * max(1, len(shown))), squeeze=False)
    for row, pid in zip(axes, shown):
        for k, ax in enumerate(row, start=1):
            ax.axis("off")
            rec = log.get(f"{pid}-r{k}")
            png = log.png(rec) if rec is not None else None
            if rec is None or png is None:
                continue
            ax.imshow(Image.open(io.BytesIO(png)))
            variant = (rec.get("painter_meta") or {}).get("variant", "")
            issues = ", ".join(rec["issues"]) or "no issues"
            ax.set_title(f"{rec['subject'][2:]} ({variant}), round {k}\n"
                         f"score {rec['score']:.2f}: {issues}", fontsize=8)
    fig.tight_layout()
    return fig


def tiers_text(stats: Mapping[str, Any], build_summary: Mapping[str, Any]) -> str:
    """Markdown: the tier rule with its constants, the pool's tiers and what was left out."""
    pool = build_summary["pool"]
    return (f"Rule `{RULE}`: floor {OKAY_FLOOR}, love share {LOVE_SHARE:.0%}. "
            f"**{stats['rows']} paintings: love {stats['tiers']['love']}, okay "
            f"{stats['tiers']['okay']}.** Left out: {pool['left_out'] or 'none'}. "
            f"Variants per tier: {pool['variants_by_tier']}.")


def tiers_figure(pool: Any, cols: int = 6) -> Figure:
    """Two rows, ``love`` then ``okay``: up to ``cols`` paintings of each tier."""
    import matplotlib.pyplot as plt

    tiers = list(pool["tier"])
    cols = max(1, min(cols, max(tiers.count("love"), tiers.count("okay"))))
    fig, axes = plt.subplots(2, cols, figsize=(2.2 * cols, 4.8), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for r, tier in enumerate(("love", "okay")):
        for c, i in enumerate([i for i, t in enumerate(tiers) if t == tier][:cols]):
            axes[r][c].imshow(pool[i]["image"])
            axes[r][c].set_title(f"{tier}: {pool[i]['subject'][2:]}", fontsize=8)
    fig.tight_layout()
    return fig


def script_ratings(items: Sequence[Item], path: str | os.PathLike[str],
                   tiers: Mapping[str, str], count: int) -> RatingLog:
    """A rehearsal's stand-in for a person: rate items as ``tiers`` says (``reject`` for an
    item not in it) under the name ``book-script`` until that rater has ``count`` ratings
    in the log at ``path``; a rerun adds none."""
    script = RatingLog(path, rater="book-script")
    for item in items:
        if len(script.ratings()) >= count:
            break
        if item.id not in script.ratings():
            script.record(item.id, tiers.get(item.id, "reject"))
    return script


def describe_build(result: Any, seconds: float) -> str:
    """Two lines on a build (``result``: a ``BuildResult``): its generations (new ones,
    renders reused, time), then the pool's size and tiers."""
    return (f"{result.generations} generations ({result.new_generations} new this run, "
            f"{result.summary['render_cache_hits']} renders reused) in {seconds:.1f} s\n"
            f"pool: {result.pool_rows} paintings, love {result.tiers['love']}, "
            f"okay {result.tiers['okay']}")


def rated_pool(items: Sequence[Item], log: RatingLog, rated_dir: Path,
               references: int) -> tuple[Path | None, str]:
    """The pool made from the ratings in ``log``, written to ``rated_dir`` when they allow the
    judge's draw of ``references`` (:func:`watercolour.pool.rating.refresh_rated_pool`), and
    what happened, in a sentence that names the folder and the log as the page shows them."""
    from watercolour.pool.choice import describe_pool
    from watercolour.pool.rating import refresh_rated_pool

    path, said = refresh_rated_pool(items, log, rated_dir, references)
    for where in (rated_dir, log.path):  # the page names them as the reader's paths
        said = said.replace(str(where), shown_path(where))
    return path, said + (f"\n{shown_path(path)}: {describe_pool(path)}" if path else "")


def pool_summary(result: Any, build_seconds: float, stats: Mapping[str, Any],
                 items: Sequence[Item], log: RatingLog, rated: Mapping[str, Any],
                 shown: Sequence[str], parameters: dict[str, Any]) -> dict[str, Any]:
    """The chapter's ``pool.json``: the build (``result``: a ``BuildResult``), the pool's
    stats, the ratings and the rated pool (``rated``: path, said, references)."""
    s = result.summary
    return {
        "parameters": parameters,
        "build_seconds": round(build_seconds, 2),
        "generations": result.generations,
        "new_generations": result.new_generations,
        "render_cache_hits": s["render_cache_hits"],
        "score_by_round": s["score_by_round"],
        "pool": dict(stats),
        "tier_rule": RULE,
        "negatives": s["negatives"],
        "rating": rating_summary(items, log),
        "rated_pool": dict(rated),
        "grid": list(shown),
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
