"""The paintings to rate: from a build's log (the final round of each painting) or from a pool."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Item:
    """One painting to rate."""

    id: str
    png: bytes
    sketch: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    """Provenance carried into the pool: subject, painter, round, critique, seed, ..."""


def items_from_build(folder: str | os.PathLike[str]) -> list[Item]:
    """The final round of every painting a build logged (what a person rates), in log order."""
    from watercolour.pool.log import GenerationLog

    root = Path(folder)
    log = GenerationLog(root / "log" if (root / "log").is_dir() else root)
    records = [r for r in log.records() if r.get("kind") == "painting" and r.get("png")]
    last: dict[str, dict[str, Any]] = {}
    for r in records:
        if r["round"] >= last.get(r["painting_id"], {}).get("round", 0):
            last[r["painting_id"]] = r
    items = []
    for r in last.values():
        png = log.png(r)
        if png is None:
            continue
        items.append(Item(r["id"], png, r.get("sketch") or "", {
            "subject": r.get("subject"), "painter": r.get("painter"), "round": r.get("round"),
            "critique": r.get("critique"), "seed": r.get("seed"),
            "paint_fraction": (r.get("render") or {}).get("paint_fraction"),
            "n_shapes": (r.get("render") or {}).get("n_shapes"), "score": r.get("score"),
        }))
    return items


def items_from_pool(pool) -> list[Item]:
    """The rows of a pool (a ``datasets.Dataset``, or anything :func:`load_pool` takes), to
    rate again: e.g. the published pool, to make its tiers yours."""
    from datasets import Image

    from watercolour.pool.dataset import load_pool
    from watercolour.pool.schema import image_bytes

    dataset = pool if hasattr(pool, "column_names") else load_pool(pool, check=False)
    raw = dataset.cast_column("image", Image(decode=False))
    items = []
    for i, row in enumerate(raw):
        data = image_bytes(row["image"])
        if data is None:
            continue
        meta = {k: row.get(k) for k in ("subject", "painter", "round", "critique", "seed",
                                         "paint_fraction", "n_shapes", "tier")}
        items.append(Item(str(row.get("id") or f"row-{i}"), data, row.get("sketch") or "",
                          meta))
    return items
