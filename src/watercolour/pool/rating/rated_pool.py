"""From ratings to a pool: the counts, the rows of the paintings rated ``love`` or ``okay``, and
the validated pool folder."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from watercolour.pool.rating.items import Item
from watercolour.pool.rating.log import RATINGS, RatingLog
from watercolour.pool.schema import TIERS, sha256, validate_rows


def rating_summary(items: Sequence[Item], log: RatingLog) -> dict[str, Any]:
    ratings = log.ratings()
    counts = Counter(ratings.get(i.id, "unrated") for i in items)
    return {"items": len(items), "rated": len(items) - counts.get("unrated", 0),
            **{k: counts.get(k, 0) for k in (*RATINGS, "unrated")}}


def rated_rows(items: Iterable[Item], log: RatingLog) -> list[dict[str, Any]]:
    """Pool rows for the paintings rated ``love`` or ``okay`` (``reject`` stays out)."""
    standing = log.replay()[0]
    rows = []
    for item in items:
        event = standing.get(item.id)
        if event is None or event["action"] not in TIERS:
            continue
        m = item.meta
        rows.append({
            "id": item.id, "tier": event["action"], "subject": m.get("subject"),
            "sketch": item.sketch, "painter": m.get("painter"), "round": m.get("round"),
            "critique": m.get("critique"), "seed": m.get("seed"),
            "paint_fraction": m.get("paint_fraction"), "n_shapes": m.get("n_shapes"),
            "rated_at": event.get("at"), "rated_by": event.get("rater", "person"),
            "sha256": sha256(item.png), "png": item.png,
        })
    return rows


def check_enough_for_references(rows: Sequence[dict[str, Any]], references: int,
                                source: str) -> None:
    """The judge draws ``references // 2`` paintings from ``love`` and the rest from ``okay``
    for every group: a rated pool with fewer is refused, with the counts it has."""
    from watercolour.errors import InputError

    have = Counter(r["tier"] for r in rows)
    need = {"love": references // 2, "okay": references - references // 2}
    short = [f"{need[t]} {t} (have {have.get(t, 0)})" for t in need if have.get(t, 0) < need[t]]
    if short:
        raise InputError(f"{source}: the judge draws {references} references a group, so a "
                         f"pool needs at least {' and '.join(short)}; rate more paintings")


def write_rated_pool(items: Sequence[Item], log: RatingLog, folder: str | os.PathLike[str],
                     references: int | None = None) -> Path:
    """Validate the rated paintings as a pool and write the pool folder (atomically: a crash
    leaves the old folder or the new one). With ``references``, refuse a pool too small for
    the judge's draw of that many references per group."""
    from watercolour.pool.dataset import default_card, write_pool_folder

    rows = rated_rows(items, log)
    if references is not None:
        check_enough_for_references(rows, references, f"the ratings in {log.path}")
    validate_rows([{"id": r["id"], "tier": r["tier"], "image": r["png"]} for r in rows],
                  source=f"the ratings in {log.path}")
    note = f"Rated by {log.rater} with the watercolour rating widget."
    return write_pool_folder(rows, folder, card=default_card(len(rows), note))


def refresh_rated_pool(items: Sequence[Item], log: RatingLog, folder: str | os.PathLike[str],
                       references: int) -> tuple[Path | None, str]:
    """Keep the pool folder in step with the log: write it (atomically) when the ratings so
    far give the judge enough ``love`` and ``okay`` paintings for ``references`` a group, else
    remove an older one, which the log no longer backs. Rating half the paintings is enough:
    the log keeps every rating, and the next call adds the rest. Returns the folder (``None``
    when there is no pool) and one sentence saying which."""
    import shutil

    from watercolour.errors import InputError

    target = Path(folder)
    summary = rating_summary(items, log)
    rated = f"{summary['love']} love, {summary['okay']} okay of {summary['rated']} rated"
    try:
        write_rated_pool(items, log, target, references=references)
    except InputError as err:
        if target.exists():
            shutil.rmtree(target)
        return None, f"no rated pool ({rated}): {err}"
    return target, f"rated pool written to {target} ({rated})"
