"""Revision examples for the tiny painter's warm start: a flawed compact sketch, the critique
the environment gives of its render, and the repaired sketch.

The procedural painter knows which flaw it drew, so the repair is free: for seed ``s`` the
flawed sketch is a weak variant (flat, muddy, sparse, dark, off centre, in turn) and the repair
is the good variant of the same seed (the same subject and palette). The critique is the one a
2-turn episode (:mod:`watercolour.train.episodes`) shows the policy: the render gated as the
environment gates it, then :func:`watercolour.env.critique.critique` of the verdict, inside
:func:`~watercolour.env.server.environment.revision_prompt`. Renders are slow (~1-2 s), so the
critiques of a set are rendered once, in one browser, and cached as JSON beside the warm starts
(``<cache>/tiny-painter/revisions/<key>.json``).

>>> examples = revision_examples(300, cache_dir)   # ~5-10 minutes the first time
>>> row = revision_row(pair, critique_text)        # no browser
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour.io import write_json_atomic
from watercolour.models.registry import TINY_PAINTER, cache_folder
from watercolour.models.tiny.sketches import CompactSketch, compact_sketch
from watercolour.pool.procedural.plan import WEAK_VARIANTS
from watercolour.prompt import user_prompt

SEED_OFFSET = 100_000
"""Revision seeds start here: their sketches are not the warm start's plain ones (seeds
0..N-1), so the repairs add new good paintings too."""
GATE_MODE = "allowlist"
"""The gate the tiny recipes run (``gate_mode: allowlist``): the critique is the one they see."""


@dataclass(frozen=True)
class RevisionPair:
    """One seed's flawed sketch and its repair (the good sketch of the same seed)."""

    seed: int
    flawed: CompactSketch
    repaired: CompactSketch


def revision_pair(index: int) -> RevisionPair:
    """The ``index``-th pair: seed ``SEED_OFFSET + index``, the weak variant
    ``WEAK_VARIANTS[index % 5]`` and the good sketch of that seed."""
    seed = SEED_OFFSET + index
    flawed = compact_sketch(seed, variant=WEAK_VARIANTS[index % len(WEAK_VARIANTS)])
    repaired = compact_sketch(seed, variant="good")
    return RevisionPair(seed, flawed, repaired)


def revision_pairs(n: int) -> list[RevisionPair]:
    """The first ``n`` pairs (no browser)."""
    return [revision_pair(i) for i in range(n)]


def revision_row(pair: RevisionPair, critique_text: str) -> dict[str, Any]:
    """A conversational prompt-completion row: the request, the flawed sketch, the revision
    prompt around ``critique_text``, then the repaired sketch (the completion: the only turn
    trained on)."""
    from watercolour.env.server.environment import revision_prompt

    return {"prompt": [{"role": "user", "content": user_prompt(pair.flawed.subject)},
                       {"role": "assistant", "content": pair.flawed.reply()},
                       {"role": "user", "content": revision_prompt(critique_text)}],
            "completion": [{"role": "assistant", "content": pair.repaired.reply()}]}


def critique_of(sketch: CompactSketch, renderer: Any, seed: int = 0) -> tuple[str, dict[str, Any]]:
    """What the environment says about ``sketch``'s render (rendered with ``seed``), and the
    gate verdict it says it of (``to_dict()``, without the sketch)."""
    from watercolour.env.critique import critique
    from watercolour.gates import check

    gate = check(sketch.reply(), renderer, mode=GATE_MODE, seed=seed).to_dict(include_sketch=False)
    return critique(gate), gate


def revisions_key(n: int) -> str:
    """A short hash of what decides a set's critiques: its sketches and the gate mode."""
    data = [GATE_MODE, *(p.flawed.reply() for p in revision_pairs(n))]
    return hashlib.sha256(json.dumps(data).encode()).hexdigest()[:16]


def revision_critiques(n: int, cache_dir: str | Path, log: Any = print) -> list[dict[str, Any]]:
    """``{"seed", "variant", "critique", "passed", "paint_fraction", "n_shapes"}`` of the
    first ``n`` pairs' flawed sketches: from the cache, else rendered in one browser (each
    with its own seed, so the set is deterministic) and cached atomically."""
    path = cache_folder(TINY_PAINTER, cache_dir) / "revisions" / f"{revisions_key(n)}.json"
    if path.is_file():
        return json.loads(path.read_text())["critiques"]
    from watercolour.render import Renderer

    started = time.perf_counter()
    out = []
    with Renderer() as renderer:
        for pair in revision_pairs(n):
            text, gate = critique_of(pair.flawed, renderer, seed=pair.seed)
            out.append({"seed": pair.seed, "variant": pair.flawed.variant, "critique": text,
                        "passed": gate["passed"], "paint_fraction": gate["paint_fraction"],
                        "n_shapes": gate["n_shapes"]})
    seconds = round(time.perf_counter() - started, 1)
    write_json_atomic(path, {"n": n, "gate_mode": GATE_MODE, "seconds": seconds,
                             "critiques": out})
    log(f"tiny painter: {n} revision critiques rendered in {seconds} s -> {path}")
    return out


def revision_rows(n: int, cache_dir: str | Path, log: Any = print) -> list[dict[str, Any]]:
    """``n`` revision rows (:func:`revision_row`), their critiques rendered once and cached."""
    critiques = revision_critiques(n, cache_dir, log)
    return [revision_row(pair, c["critique"]) for pair, c in zip(revision_pairs(n), critiques,
                                                                 strict=True)]
