"""Near-copies of pool paintings: found, and kept from out-earning painting.

The pool is the reward's standard, so a pool painting handed back scores as well as the pool's
best (0.95-0.997 in every mix, above the hand-made example, before this check). A policy
supervised on the pool's sketches could learn to recite one. :class:`CopyDetector` compares a
rollout with every pool painting two ways:

- **by sketch**: the share of the pool sketch's 8-token shingles found in the rollout's
  (:func:`sketch_tokens`: the tree-sitter tokens without comments, every name the sketch
  declares read as one placeholder, numbers and colours as written), each shingle weighted
  by its rarity in the pool (``log((n + 1) / df)``: the ``setup()`` and helpers every pool
  sketch shares weigh almost nothing, the painting's own numbers and colours weigh most).
  Containment, not Jaccard: a copy with something added (confetti, a padded string) still
  contains the pool painting; renaming, reformatting and re-commenting change nothing. The
  same share is also taken over the sketch's **numbers**, in runs of three, each number
  binned on a log scale (:func:`number_grams`), so moving every number by a few per cent does
  not hide the copy; the larger share counts;
- **by render**: the cosine similarity of the two pictures' paint (:func:`render_vector`:
  a 32 x 32 thumbnail, blurred, less its paper colour), so rewritten code that paints the same
  picture (every number written as a sum, the names changed) and small numeric edits are
  caught as well.

A rollout at or above either threshold is a **near copy**: the rewarder records
``near_copy`` (which pool painting, which way, the similarity and the threshold) and zeroes
the judge and HPS terms, so it earns the gate and length terms only (at most 0.10, below any
painting the judges like); its status stays ``ok`` (a copy is neither the sketch breaking the
rules nor the infrastructure failing).

**Where the thresholds sit** (measured by ``benchmarks/reward_robustness.py`` on the starter
pool, 96 paintings, and recorded in its results as ``copies``): distinct pool paintings, the
same procedural painter writing the same kinds of flower with the same helpers, share at most
:data:`POOL_MAX_SKETCH` of each other's shingles and reach a render similarity of at most
:data:`POOL_MAX_RENDER`; a pool sketch rendered with another seed, renamed, recoloured by a few
units, or with its numbers moved by up to 6%, reaches at least 0.9 by one measure or the
other (measured: see :data:`POOL_MAX_SKETCH`). :data:`SKETCH_THRESHOLD` (0.85) and
:data:`RENDER_THRESHOLD` (0.91) sit in those gaps, the sketch one nearer the copies: a
policy that learned the pool's style (its helpers, its passes, its
palettes) writes *new* numbers and a new picture and stays below them, as every pool painting
stays below them measured against the others; only recitation crosses.
"""

from __future__ import annotations

import functools
import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageFilter

from watercolour.javascript import parse
from watercolour.render.paint import decode_rgb, paper_colour

SHINGLE = 8
"""Tokens per shingle."""
SKETCH_THRESHOLD = 0.85
"""Share of a pool sketch's shingles a rollout may contain before it is a near copy."""
RENDER_THRESHOLD = 0.91
"""Render similarity to a pool painting at which a rollout is a near copy."""
POOL_MAX_SKETCH = 0.597
POOL_MAX_RENDER = 0.8968
"""The highest similarity between two distinct pool paintings of the starter pool (each
measured against the other 95; median 0.256 and 0.736). Fresh procedural paintings (seeds
200-214, hibiscus and sunflower) reach 0.683 by sketch. Copies with the edits above: by
sketch at least 0.982 (numbers moved by 6%: 0.982; verbatim, renamed, recoloured: 1.0), a
verbatim or rewritten copy re-rendered with another seed at least 0.923 by render."""
THUMB = 32
KINDS: tuple[str, ...] = ("sketch", "render")

_DECLARES = {"variable_declarator", "function_declaration", "formal_parameters",
             "generator_function_declaration", "class_declaration"}


@dataclass(frozen=True)
class NearCopy:
    """A rollout found to copy a pool painting."""

    kind: str
    """``sketch`` or ``render``: which comparison crossed its threshold."""
    painting: str
    """The pool painting's id."""
    similarity: float
    threshold: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------- the measurements


@functools.lru_cache(maxsize=512)
def _tokens(code: str) -> tuple[str, ...]:
    return tuple(sketch_tokens(code))


def sketch_tokens(code: str) -> list[str]:
    """The sketch's tokens as tree-sitter reads them: comments dropped, every name the sketch
    declares (variables, functions, parameters) read as ``$``, everything else as written."""
    root = parse(code).root_node
    declared: set[str] = set()
    stack = [root]
    leaves = []
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if n.type == "identifier" and n.parent is not None and (
                n.parent.type in _DECLARES or n.parent.type == "formal_parameters"):
            declared.add(n.text.decode("utf-8", "replace"))
        if n.child_count == 0 or n.type in ("string", "number"):
            leaves.append(n)
        else:
            stack.extend(reversed(n.children))
    return ["$" if (t := n.text.decode("utf-8", "replace")) in declared
            and n.type == "identifier" else t for n in leaves]


def shingles(tokens: list[str], k: int = SHINGLE) -> set[int]:
    if len(tokens) < k:
        return {hash(tuple(tokens))} if tokens else set()
    return {hash(tuple(tokens[i:i + k])) for i in range(len(tokens) - k + 1)}


NUMBER_BIN = math.log(1.15)
"""Width of a number's bin on a log scale (15%); with a second grid offset by half a bin, two
numbers within 7% of each other share a bin on at least one grid."""
NUMBER_GRAM = 3


def number_grams(tokens: list[str]) -> list[frozenset[tuple]]:
    """The sketch's numbers in order, as runs of :data:`NUMBER_GRAM`, each run the set of its
    binnings (every choice of grid per number): a run and its copy with every number moved by
    up to 7% share at least one binning."""
    values = []
    for t in tokens:
        try:
            x = float(t)
        except ValueError:
            continue
        if x == 0:
            values.append(((0, 0), (1, 0)))
            continue
        q = math.log(abs(x)) / NUMBER_BIN
        sign = 1 if x > 0 else -1
        values.append(((0, sign * math.floor(q)), (1, sign * math.floor(q + 0.5))))
    grams = []
    for i in range(len(values) - NUMBER_GRAM + 1):
        combos: list[tuple] = [()]
        for v in values[i:i + NUMBER_GRAM]:
            combos = [(*c, b) for c in combos for b in v]
        grams.append(frozenset(hash(c) for c in combos))
    return grams


_VECTORS: OrderedDict[str, np.ndarray] = OrderedDict()
_LOCK = threading.Lock()


def render_vector(png: bytes) -> np.ndarray:
    """The picture's paint as a unit vector: blurred, a :data:`THUMB` square, less the paper
    colour (all zeros for bare paper). Cached by content."""
    key = hashlib.sha256(png).hexdigest()
    with _LOCK:
        if key in _VECTORS:
            return _VECTORS[key]
    rgb = decode_rgb(png)
    paper = np.array(paper_colour(rgb), dtype=np.float32)
    small = Image.fromarray(rgb).filter(ImageFilter.GaussianBlur(rgb.shape[0] / 128)) \
        .resize((THUMB, THUMB), Image.BOX)
    v = (np.asarray(small, dtype=np.float32) - paper).reshape(-1)
    norm = float(np.linalg.norm(v))
    v = v / norm if norm > 1e-6 else np.zeros_like(v)
    with _LOCK:
        _VECTORS[key] = v
        if len(_VECTORS) > 4096:
            _VECTORS.popitem(last=False)
    return v


# ---------------------------------------------------------------- the detector


class CopyDetector:
    """Compares rollouts with a pool's paintings (see the module docstring).

    Args:
        sketches: pool id -> sketch source (paintings without one are compared by render).
        renders: pool id -> PNG.
        sketch_threshold, render_threshold: above 1, that comparison is off.
    """

    def __init__(self, sketches: dict[str, str], renders: dict[str, bytes],
                 sketch_threshold: float = SKETCH_THRESHOLD,
                 render_threshold: float = RENDER_THRESHOLD) -> None:
        self.sketch_threshold = sketch_threshold
        self.render_threshold = render_threshold
        tokens = {pid: list(_tokens(code)) for pid, code in sketches.items() if code}
        self._shingles = {pid: s for pid, t in tokens.items() if (s := shingles(t))}
        self._grams = {pid: g for pid, t in tokens.items() if (g := number_grams(t))}
        gram_df: dict[int, int] = {}
        for grams in self._grams.values():
            for h in set().union(*grams):
                gram_df[h] = gram_df.get(h, 0) + 1
        m = len(self._grams)
        self._gram_weight = {pid: [math.log((m + 1) / min(gram_df[h] for h in g)) for g in grams]
                             for pid, grams in self._grams.items()}
        df: dict[int, int] = {}
        for theirs in self._shingles.values():
            for sh in theirs:
                df[sh] = df.get(sh, 0) + 1
        n = len(self._shingles)
        self._weight = {sh: math.log((n + 1) / d) for sh, d in df.items()}
        self._total = {pid: sum(self._weight[sh] for sh in theirs)
                       for pid, theirs in self._shingles.items()}
        self._ids = list(renders)
        self._matrix = np.stack([render_vector(renders[i]) for i in self._ids]) \
            if renders else np.zeros((0, 3 * THUMB * THUMB), np.float32)

    @classmethod
    def from_pool(cls, pool, sketch_threshold: float = SKETCH_THRESHOLD,
                  render_threshold: float = RENDER_THRESHOLD) -> CopyDetector:
        """From a :class:`~watercolour.rewards.references.ReferencePool` (its paintings'
        sketches and PNGs)."""
        return cls({p.id: p.sketch for p in pool.paintings if getattr(p, "sketch", None)},
                   {p.id: p.png for p in pool.paintings}, sketch_threshold, render_threshold)

    def __len__(self) -> int:
        return len(self._ids)

    def sketch_similarity(self, code: str | None, exclude: Iterable[str] = ()
                          ) -> tuple[str | None, float]:
        """(pool id, share of its shingles ``code`` contains) for the pool sketch it contains
        most of."""
        if not code or not self._shingles:
            return None, 0.0
        tokens = list(_tokens(code))
        mine = shingles(tokens)
        my_grams: set[int] = set().union(*number_grams(tokens))
        skip = set(exclude)
        best: tuple[str | None, float] = (None, 0.0)
        for pid, theirs in self._shingles.items():
            if pid in skip or self._total[pid] <= 0:
                continue
            share = sum(self._weight[sh] for sh in mine & theirs) / self._total[pid]
            weights = self._gram_weight.get(pid, [])
            if weights and sum(weights) > 0:
                got = sum(w for g, w in zip(self._grams[pid], weights) if g & my_grams)
                share = max(share, got / sum(weights))
            if share > best[1]:
                best = (pid, share)
        return best[0], round(best[1], 4)

    def render_similarity(self, png: bytes | None, exclude: Iterable[str] = ()
                          ) -> tuple[str | None, float]:
        """(pool id, cosine similarity) of the pool painting ``png`` looks most like."""
        if png is None or not len(self._ids):
            return None, 0.0
        sims = self._matrix @ render_vector(png)
        skip = set(exclude)
        order = [i for i in np.argsort(-sims) if self._ids[i] not in skip]
        if not order:
            return None, 0.0
        return self._ids[order[0]], round(float(sims[order[0]]), 4)

    def check(self, code: str | None, png: bytes | None, exclude: Iterable[str] = ()
              ) -> NearCopy | None:
        """The near copy ``code`` / ``png`` is, or None (``exclude``: pool ids to skip)."""
        exclude = list(exclude)
        found: list[NearCopy] = []
        if self.sketch_threshold <= 1:
            pid, sim = self.sketch_similarity(code, exclude)
            if pid is not None and sim >= self.sketch_threshold:
                found.append(NearCopy("sketch", pid, sim, self.sketch_threshold))
        if self.render_threshold <= 1:
            pid, sim = self.render_similarity(png, exclude)
            if pid is not None and sim >= self.render_threshold:
                found.append(NearCopy("render", pid, sim, self.render_threshold))
        return max(found, key=lambda c: c.similarity - c.threshold) if found else None
