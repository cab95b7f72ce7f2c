"""Near-copies of pool paintings: found whatever way up, and kept from out-earning painting.

The pool is the reward's standard, so a pool painting handed back scores as well as the pool's
best (0.95-0.997 in every mix, above the hand-made example, before this check); mirrored by a
``scale(-1, 1)`` with every number rewritten ``N * 1.37 / F`` it still scored 0.96 judge-led
on every seed (issue 39). A policy supervised on the pool's sketches could learn to recite
one. :class:`CopyDetector` compares a rollout with every pool painting two ways:

- **by sketch**: the share of the pool sketch's 8-token shingles found in the rollout's
  (:func:`sketch_tokens`: the tree-sitter tokens without comments, every name the sketch
  declares read as one placeholder, every constant numeric expression folded to its number:
  ``(120 * 1.37 / F)`` with ``const F = 1.37``, ``(87.6 / F)`` and ``(117 + 3)`` all read
  ``120``; strings and colours as written), each shingle weighted by its rarity in the pool
  (``log((n + 1) / df)``: the ``setup()`` and helpers every pool sketch shares weigh almost
  nothing, the painting's own numbers and colours weigh most). Containment, not Jaccard: a
  copy with something added (a transform first in ``draw()``, confetti, a padded string)
  still contains the pool painting; renaming, reformatting and re-commenting change nothing.
  The same share is also taken over the sketch's **numbers**, in runs of three, each number
  binned on a log scale (:func:`number_grams`), so moving every number by a few per cent does
  not hide the copy; the larger share counts;
- **by render**, for code that paints the pool's picture however it is written, in two steps:

  1. the **screen** (:func:`screen_similarity`): each picture in its own frame (a square about
     its paint's centre of mass, sized by the paint's radius, so shifts and scales do not
     count), compared each of the eight ways up (mirrors and quarter turns: the best counts),
     averaged with the likeness of the two pictures' colour histograms. A rollout this close
     to a pool painting's own render (:data:`RENDER_THRESHOLD`) is a copy. But the screen is
     not seed-proof: p5.brush's bleed moves a painting's edges by tens of pixels from one seed
     to the next, so one sketch rendered at two seeds can be less alike
     (:data:`COPIES_MIN_SCREEN`) than two distinct pool paintings are
     (:data:`POOL_MAX_SCREEN`), and no threshold on it tells a copy at another seed from a
     painting of its own. So the screen also picks which pool paintings to look
     at again: the :data:`CONFIRM` most alike at or above :data:`SCREEN_THRESHOLD`;
  2. **at the rollout's seed**: those pool paintings are re-rendered at the seed the rollout
     was rendered with (their own, trusted sketches; kept per painting and seed, so a group's
     rollouts, which share a seed, share them) and compared with the rollout aligned
     (:func:`aligned_similarity`: the pool painting turned, moved and scaled onto the
     rollout's paint, then compared pixel by pixel): at the same seed a copy is the pool
     painting's picture exactly, turned, shifted or scaled. The pool painting is re-rendered,
     not the rollout: a sketch that reads its random numbers could paint the copy only at
     seeds other than one fixed for the check.

A rollout at or above any threshold is a **near copy**: the rewarder records ``near_copy``
(which pool painting, which way: ``sketch``, ``render`` or ``render_at_seed``, the similarity
and the threshold) and zeroes the judge and HPS terms, so it earns the gate and length terms
only (at most 0.10, below any painting the judges like); its status stays ``ok`` (a copy is
neither the sketch breaking the rules nor the infrastructure failing).

**Where the thresholds sit** (measured by ``benchmarks/reward_robustness.py`` on the starter
pool, 96 paintings; recorded in ``benchmarks/results/reward-robustness-issue39.json`` as
``copies``: copies are six pool paintings, one of each subject, mirrored, turned, shifted,
scaled and rewritten, each at seeds 0, 1 and 2; distinct paintings are every pool painting
against the other 95, also rendered at seeds 0-2 and checked as a rollout is):

============================  ==========================  ===============  ==============
comparison                    distinct pool paintings     copies           threshold
============================  ==========================  ===============  ==============
sketch (share of shingles)    at most 0.380               at least 0.982   0.85
screen, the pool's render     at most 0.9695              about 1          0.985
screen, to re-render          (every one above: 90%)      at least 0.819   0.78
aligned, at the same seed     at most 0.9785              at least 0.996   0.987
============================  ==========================  ===============  ==============

(:data:`POOL_MAX_SKETCH`, :data:`POOL_MAX_SCREEN`, :data:`COPIES_MIN_SCREEN`,
:data:`POOL_MAX_SEED`, :data:`COPIES_MIN_SEED`.) Fresh procedural paintings reach 0.395 by
sketch, the hand-made examples 0.072 by sketch and 0.867 aligned; none is caught. The copy's
pool painting ranks at most 4th by the screen (:data:`CONFIRM` is 5). The distinct pair at
0.9785 is two near-twin cherry branches of the procedural painter rendered at one seed. A
policy that learned the pool's style (its helpers, its passes, its palettes) writes *new*
numbers and a new picture and stays below the thresholds, as every pool painting stays below
them measured against the others; only recitation crosses.

**What the render cannot see.** A copy whose strokes bleed as at another seed than the
rollout's: one invisible stroke first (it draws on p5.brush's random numbers) or a number
moved by a per cent changes how every later stroke bleeds, and such a copy is, to the
picture, the pool painting at an unknown seed, which no threshold tells from a painting of
its own. Those copies are caught by their sketch (numbers folded, shingles and number runs)
or not at all.

**Cost.** The screen is a few milliseconds a rollout; re-rendering is not: a painting in the
pool's style looks like several pool paintings (the pool's own, rendered at seeds 0-2:
:data:`RERENDERS_PER_ROLLOUT` re-renders each on average, 90% re-render at least one; fewer
per rollout where a group's rollouts, which share a seed, share them), each aligned
comparison 0.05-0.3 s of CPU. ``WATERCOLOUR_COPY_CONFIRM`` bounds the re-renders per rollout
(0: none, and a copy at a seed other than its pool render's escapes the render check).
"""

from __future__ import annotations

import functools
import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
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
RENDER_THRESHOLD = 0.985
"""Screen similarity (:func:`screen_similarity`) to a pool painting's own render at which a
rollout is a near copy without re-rendering anything."""
SCREEN_THRESHOLD = 0.78
"""Screen similarity at which a pool painting is re-rendered at the rollout's seed and
compared aligned (:func:`aligned_similarity`)."""
SEED_THRESHOLD = 0.987
"""Aligned similarity to a pool painting rendered at the rollout's seed at which a rollout is
a near copy."""
CONFIRM = 5
"""Pool paintings (the most alike above :data:`SCREEN_THRESHOLD`) re-rendered per rollout."""
POOL_MAX_SKETCH = 0.380
"""Measured (module docstring): the most two distinct pool paintings share by sketch."""
POOL_MAX_SCREEN = 0.9695
"""The screen similarity two distinct pool paintings reach at most (one at seeds 0-2)."""
COPIES_MIN_SCREEN = 0.819
"""The screen similarity a disguised copy reaches at least (at another seed)."""
POOL_MAX_SEED = 0.9785
"""The aligned similarity two distinct pool paintings reach at most at one seed."""
COPIES_MIN_SEED = 0.996
"""The aligned similarity a disguised copy reaches at least at its pool painting's seed."""
RERENDERS_PER_ROLLOUT = 3.5
"""Pool paintings re-rendered per rollout, on average, for the pool's own paintings."""
KINDS: tuple[str, ...] = ("sketch", "render", "render_at_seed")

_DECLARES = {"variable_declarator", "function_declaration", "formal_parameters",
             "generator_function_declaration", "class_declaration"}


@dataclass(frozen=True)
class NearCopy:
    """A rollout found to copy a pool painting."""

    kind: str
    """``sketch``, ``render`` (the screen, against the pool's render) or ``render_at_seed``
    (aligned, against the pool painting re-rendered at the rollout's seed): which comparison
    crossed its threshold."""
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


_FOLDABLE = {"number", "identifier", "unary_expression", "binary_expression",
             "parenthesized_expression"}
_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "/": lambda a, b: a / b if b else None, "%": lambda a, b: math.fmod(a, b) if b else None,
        "**": lambda a, b: a ** b if abs(b) <= 16 and abs(a) < 1e6 else None}


def _number(text: str) -> float | None:
    try:
        return float(text.replace("_", ""))
    except ValueError:
        try:
            return float(int(text.replace("_", ""), 0))
        except ValueError:
            return None


def _fold(node, consts: dict[str, float], depth: int = 0) -> float | None:
    """The value of a constant numeric expression (numbers, the sketch's numeric ``const``s,
    unary ``-``/``+``, ``+ - * / % **``, parentheses), or None."""
    if depth > 64 or node.type not in _FOLDABLE:
        return None
    if node.type == "number":
        return _number(node.text.decode("utf-8", "replace"))
    if node.type == "identifier":
        return consts.get(node.text.decode("utf-8", "replace"))
    if node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        return _fold(inner[0], consts, depth + 1) if len(inner) == 1 else None
    if node.type == "unary_expression":
        op, arg = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        v = _fold(arg, consts, depth + 1) if arg is not None else None
        if v is None or op is None or op.type not in ("-", "+"):
            return None
        return -v if op.type == "-" else v
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    op = node.child_by_field_name("operator")
    if left is None or right is None or op is None or op.type not in _OPS:
        return None
    a, b = _fold(left, consts, depth + 1), _fold(right, consts, depth + 1)
    if a is None or b is None:
        return None
    try:
        v = _OPS[op.type](a, b)
    except (OverflowError, ZeroDivisionError, ValueError):
        return None
    return v if v is not None and math.isfinite(v) else None


def _number_token(v: float) -> str:
    """A folded number as one token: six significant digits (``120.00000000000001`` and
    ``120`` are one number)."""
    return f"{v:.6g}" if v else "0"


def _numeric_consts(root) -> dict[str, float]:
    """The sketch's names bound once, by ``const``, to a constant numeric expression."""
    seen: dict[str, int] = {}
    found: dict[str, object] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "identifier" and n.parent is not None and (
                n.parent.type in _DECLARES or n.parent.type in ("formal_parameters",
                                                                 "assignment_expression")):
            name = n.text.decode("utf-8", "replace")
            seen[name] = seen.get(name, 0) + 1
            parent = n.parent
            if (parent.type == "variable_declarator" and parent.parent is not None
                    and parent.parent.type == "lexical_declaration"
                    and parent.parent.children[0].type == "const"):
                value = parent.child_by_field_name("value")
                if value is not None:
                    found[name] = value
        stack.extend(n.children)
    consts: dict[str, float] = {}
    for _ in range(4):  # consts defined from consts
        for name, value in found.items():
            if seen.get(name) == 1 and name not in consts:
                v = _fold(value, consts)
                if v is not None:
                    consts[name] = v
    return consts


def sketch_tokens(code: str) -> list[str]:
    """The sketch's tokens as tree-sitter reads them: comments dropped, every name the sketch
    declares (variables, functions, parameters) read as ``$``, every constant numeric
    expression folded to one number (``(120 * 1.37 / F)`` with ``const F = 1.37`` reads
    ``120``, as does ``(117 + 3)``), everything else as written."""
    root = parse(code).root_node
    consts = _numeric_consts(root)
    declared: set[str] = set()
    stack = [root]
    leaves: list = []  # tokens (str) and leaf nodes, read once every declared name is known
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if n.type == "identifier" and n.parent is not None and (
                n.parent.type in _DECLARES or n.parent.type == "formal_parameters"):
            declared.add(n.text.decode("utf-8", "replace"))
            leaves.append("$")
            continue
        if n.type in _FOLDABLE and (n.type != "identifier" or n.parent is None
                                    or n.parent.type != "variable_declarator"):
            v = _fold(n, consts)
            if v is not None:
                leaves.append(_number_token(v))
                continue
        if n.child_count == 0 or n.type == "string":
            leaves.append(n)
        else:
            stack.extend(reversed(n.children))
    return [t if isinstance(t, str) else "$" if (w := t.text.decode("utf-8", "replace"))
            in declared and t.type == "identifier" else w for t in leaves]


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


# ---------------------------------------------------------------- the picture, whatever way up

FRAME = 128
"""Side of the working picture: a render is blurred and shrunk to it before it is compared."""
BLUR = 1.0
"""The blur, in :data:`FRAME` pixels (4 pixels of a 512 canvas)."""
PAINT_FLOOR = 12
"""A pixel is paint where its channels differ from the paper's by more than this, summed."""
FRAME_RADII = 2.2
"""The paint's own frame: a square about the paint's centre of mass, this many times the
paint's radius (the root-mean-square distance of its mass from the centre) either side."""
THUMB = 32
"""Side of the frame as the screen compares it."""
COLOUR_BINS = 8
"""Bins per channel of the paint's colour histogram."""

TURNS: tuple[np.ndarray, ...] = tuple(
    np.array(m, dtype=np.float32) for m in (
        [[1, 0], [0, 1]], [[1, 0], [0, -1]], [[-1, 0], [0, 1]], [[-1, 0], [0, -1]],
        [[0, 1], [1, 0]], [[0, -1], [1, 0]], [[0, 1], [-1, 0]], [[0, -1], [-1, 0]]))
"""The eight ways up (the dihedral group of the square) as matrices on (y, x) offsets:
identity, the two mirrors, the half turn, the two diagonal mirrors and the quarter turns."""


@dataclass(frozen=True, eq=False)
class Paint:
    """A render's paint, measured once (:func:`paint_of`)."""

    image: np.ndarray
    """(:data:`FRAME`, :data:`FRAME`, 3): the blurred picture less its paper colour."""
    centre: np.ndarray
    """(y, x) of the paint's centre of mass, in :data:`FRAME` pixels."""
    radius: float
    """The root-mean-square distance of the paint's mass from its centre (0: bare paper)."""
    layout: np.ndarray
    """(8, 3 * :data:`THUMB` ** 2): the paint in its own frame, each way up, unit vectors."""
    colour: np.ndarray
    """(:data:`COLOUR_BINS` ** 3,): the square roots of the paint's colour histogram, unit."""
    key: str = ""
    """The render's SHA-256 (what :func:`paint_of` and :func:`aligned_similarity` keep it by)."""


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 1e-6 else np.zeros_like(v)


def _moments(image: np.ndarray) -> tuple[np.ndarray, float]:
    """(centre of mass (y, x), radius) of the paint in ``image`` (radius 0: none)."""
    mass = np.abs(image).sum(axis=2)
    mass = np.where(mass > PAINT_FLOOR, mass, 0.0)
    total = float(mass.sum())
    if total <= 0:
        return np.array([image.shape[0] / 2, image.shape[1] / 2], np.float32), 0.0
    ys = np.arange(image.shape[0], dtype=np.float64)[:, None]
    xs = np.arange(image.shape[1], dtype=np.float64)[None, :]
    cy, cx = float((mass * ys).sum() / total), float((mass * xs).sum() / total)
    radius = math.sqrt(float((mass * ((ys - cy) ** 2 + (xs - cx) ** 2)).sum() / total))
    return np.array([cy, cx], np.float32), radius


def warp(image: np.ndarray, source: np.ndarray, scale: float, turn: np.ndarray,
         target: np.ndarray, size: int = FRAME) -> np.ndarray:
    """``image`` moved, scaled and turned: output pixel ``q`` shows the source point
    ``source + scale * turn.T @ (q - target)`` (bilinear; paper, i.e. zeros, outside)."""
    h, w = image.shape[:2]
    qy, qx = np.mgrid[0:size, 0:size].astype(np.float32)
    dy, dx = qy - target[0], qx - target[1]
    m = turn.T * scale
    py = source[0] + m[0, 0] * dy + m[0, 1] * dx
    px = source[1] + m[1, 0] * dy + m[1, 1] * dx
    padded = np.zeros((h + 2, w + 2, image.shape[2]), np.float32)
    padded[1:-1, 1:-1] = image
    y0, x0 = np.floor(py), np.floor(px)
    fy, fx = (py - y0)[..., None], (px - x0)[..., None]
    y0, x0 = y0.astype(np.int64) + 1, x0.astype(np.int64) + 1  # in the padded image
    y1, x1 = np.clip(y0 + 1, 0, h + 1), np.clip(x0 + 1, 0, w + 1)
    y0, x0 = np.clip(y0, 0, h + 1), np.clip(x0, 0, w + 1)
    return ((1 - fy) * ((1 - fx) * padded[y0, x0] + fx * padded[y0, x1])
            + fy * ((1 - fx) * padded[y1, x0] + fx * padded[y1, x1]))


_PAINTS: OrderedDict[str, Paint] = OrderedDict()
_LOCK = threading.Lock()


def paint_of(png: bytes) -> Paint:
    """The render's :class:`Paint`. Cached by content."""
    key = hashlib.sha256(png).hexdigest()
    with _LOCK:
        if key in _PAINTS:
            return _PAINTS[key]
    rgb = decode_rgb(png)
    paper = np.array(paper_colour(rgb), dtype=np.float32)
    small = Image.fromarray(rgb).filter(ImageFilter.GaussianBlur(BLUR * rgb.shape[0] / FRAME)) \
        .resize((FRAME, FRAME), Image.BOX)
    pixels = np.asarray(small)
    image = pixels.astype(np.float32) - paper
    centre, radius = _moments(image)
    if radius > 0:
        half = FRAME / 2
        framed = warp(image, centre, radius * FRAME_RADII / half, TURNS[0],
                      np.array([half - 0.5, half - 0.5], np.float32), FRAME)
        k = FRAME // THUMB
        thumb = framed.reshape(THUMB, k, THUMB, k, 3).mean(axis=(1, 3))
    else:
        thumb = np.zeros((THUMB, THUMB, 3), np.float32)
    layout = np.stack([_unit(t.reshape(-1)) for t in _dihedral(thumb)]).astype(np.float32)
    mass = np.abs(image).sum(axis=2)
    painted = mass > PAINT_FLOOR
    bins = (pixels[painted].astype(np.int64) * COLOUR_BINS) // 256
    index = (bins[:, 0] * COLOUR_BINS + bins[:, 1]) * COLOUR_BINS + bins[:, 2]
    hist = np.bincount(index, weights=mass[painted], minlength=COLOUR_BINS ** 3)
    colour = _unit(np.sqrt(hist)).astype(np.float32)
    paint = Paint(image, centre, radius, layout, colour, key)
    with _LOCK:
        _PAINTS[key] = paint
        if len(_PAINTS) > 1024:
            _PAINTS.popitem(last=False)
    return paint


def _dihedral(square: np.ndarray) -> list[np.ndarray]:
    """``square`` (y, x, ...) each of the eight ways up."""
    flip_x = square[:, ::-1]
    return [square, flip_x, square[::-1], square[::-1, ::-1],
            np.swapaxes(square, 0, 1), np.swapaxes(flip_x, 0, 1),
            np.swapaxes(square[::-1], 0, 1), np.swapaxes(square[::-1, ::-1], 0, 1)]


def screen_similarity(a: Paint, b: Paint) -> float:
    """How alike two pictures' paint is, whatever way up, wherever and however large (each in
    its own frame): the mean of the layout's cosine similarity (the best of the eight ways up)
    and the colour histograms'. Seed-blind: measured between renders at different seeds."""
    layout = float((a.layout @ b.layout[0]).max())
    return 0.5 * (layout + float(a.colour @ b.colour))


def _shrink(image: np.ndarray, k: int) -> np.ndarray:
    h, w = image.shape[0] // k, image.shape[1] // k
    return image[:h * k, :w * k].reshape(h, k, w, k, -1).mean(axis=(1, 3))


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(_unit(a.reshape(-1)) @ _unit(b.reshape(-1)))


def _place(pool: np.ndarray, rollout: np.ndarray, turn: np.ndarray, rounds: int,
           start: tuple[np.ndarray, float] | None = None) -> tuple[np.ndarray, float, float]:
    """Where ``pool``'s paint, turned by ``turn``, lies on ``rollout``'s: (place, scale) for
    :func:`warp`, found by matching the paint's centre and radius, then again on what of it is
    left inside the canvas, ``rounds`` times; and the cosine similarity there."""
    source, pool_radius = _moments(pool)
    target, radius = _moments(rollout)
    place, scale = start if start is not None else (target.copy(), pool_radius / radius)
    for _ in range(rounds):
        centre, moved_radius = _moments(warp(pool, source, scale, turn, place,
                                             rollout.shape[0]))
        if moved_radius <= 0:
            break
        place = place + (target - centre)
        scale *= moved_radius / radius
    return place, scale, _cosine(warp(pool, source, scale, turn, place, rollout.shape[0]),
                                 rollout)


REFINE_STEPS: tuple[tuple[float, float], ...] = ((1.0, 0.01), (0.5, 0.005), (0.25, 0.0025))
"""The placement's last steps: (pixels, share of the scale), coarse to fine."""


def _refine(pool: np.ndarray, rollout: np.ndarray, turn: np.ndarray, place: np.ndarray,
            scale: float) -> float:
    """The cosine similarity at the best placement near (``place``, ``scale``): a pattern
    search over the shift and the scale, by :data:`REFINE_STEPS`."""
    source, _ = _moments(pool)

    def at(p: np.ndarray, k: float) -> float:
        return _cosine(warp(pool, source, k, turn, p, rollout.shape[0]), rollout)

    best = at(place, scale)
    for step, share in REFINE_STEPS:
        moves = [(np.array(d, np.float32), 1.0) for d in
                 ((step, 0), (-step, 0), (0, step), (0, -step))]
        moves += [(np.zeros(2, np.float32), 1 + share), (np.zeros(2, np.float32), 1 / (1 + share))]
        improved = True
        while improved:
            improved = False
            for shift, grow in moves:
                sim = at(place + shift, scale * grow)
                if sim > best + 1e-6:
                    best, place, scale, improved = sim, place + shift, scale * grow, True
    return best


ALIGN_TURNS = 3
"""The ways up :func:`aligned_similarity` tries: the most alike by the screen's layout."""
COARSE = 4
""":func:`aligned_similarity` places the paint on pictures shrunk this many times first."""
REFINE_FROM = 0.95
"""Placements at least this alike are refined (:func:`_refine`); a copy's is above 0.98."""


def aligned_similarity(pool: Paint, rollout: Paint) -> float:
    """The cosine similarity of ``rollout``'s paint and ``pool``'s moved, scaled and turned
    onto it: the best of the :data:`ALIGN_TURNS` ways up the screen's layout finds most
    alike, each placed by matching the paint's centre and radius, then again on what of it is
    left inside the canvas (paint pushed off the edge is measured on the part both show),
    first on pictures shrunk :data:`COARSE` times; a placement at least :data:`REFINE_FROM`
    alike is refined by a search over the shift and scale. For renders at the same seed: a
    copy, however turned, shifted or scaled, reaches about 1. Kept by the two renders."""
    if pool.radius <= 0 or rollout.radius <= 0:
        return 0.0
    key = (pool.key, rollout.key)
    with _LOCK:
        if key in _ALIGNED:
            return _ALIGNED[key]
    sim = _aligned(pool, rollout)
    if pool.key and rollout.key:
        with _LOCK:
            _ALIGNED[key] = sim
            if len(_ALIGNED) > 4096:
                _ALIGNED.popitem(last=False)
    return sim


_ALIGNED: OrderedDict[tuple[str, str], float] = OrderedDict()
PLACE_ROUNDS = 16
"""Rounds of placing the paint on the shrunk pictures (paint pushed off the canvas converges
slowly)."""


def _aligned(pool: Paint, rollout: Paint) -> float:
    order = np.argsort(-(pool.layout @ rollout.layout[0]), kind="stable")[:ALIGN_TURNS]
    small_pool, small_rollout = _shrink(pool.image, COARSE), _shrink(rollout.image, COARSE)
    placed = []
    for i in order:
        place, scale, _ = _place(small_pool, small_rollout, TURNS[i], PLACE_ROUNDS)
        # the coarse placement, in full-size pixels (pixel centres: (p + 0.5) * k - 0.5)
        start = ((place + 0.5) * COARSE - 0.5, scale)
        place, scale, sim = _place(pool.image, rollout.image, TURNS[i], 2, start)
        placed.append((sim, int(i), place, scale))
    sim, i, place, scale = max(placed, key=lambda p: p[0])
    if sim >= REFINE_FROM:
        sim = max(sim, _refine(pool.image, rollout.image, TURNS[i], place, scale))
    return sim


# ---------------------------------------------------------------- the detector


class CopyDetector:
    """Compares rollouts with a pool's paintings (see the module docstring).

    Args:
        sketches: pool id -> sketch source (paintings without one are compared by render).
        renders: pool id -> PNG.
        sketch_threshold, render_threshold: above 1, that comparison is off (the render
            threshold turns both render comparisons off).
        render: ``render(code, seed) -> PNG or None``: renders a pool sketch at a rollout's
            seed (None: the pool's own renders only).
        confirm: pool paintings re-rendered per rollout at most (0: none).
        screen_threshold, seed_threshold: see :data:`SCREEN_THRESHOLD`, :data:`SEED_THRESHOLD`.
    """

    def __init__(self, sketches: dict[str, str], renders: dict[str, bytes],
                 sketch_threshold: float = SKETCH_THRESHOLD,
                 render_threshold: float = RENDER_THRESHOLD,
                 render: Callable[[str, int], bytes | None] | None = None,
                 confirm: int = CONFIRM, screen_threshold: float = SCREEN_THRESHOLD,
                 seed_threshold: float = SEED_THRESHOLD) -> None:
        self.sketch_threshold = sketch_threshold
        self.render_threshold = render_threshold
        self.screen_threshold, self.seed_threshold = screen_threshold, seed_threshold
        self.confirm = confirm if render is not None else 0
        self._render = render
        self._sketches = {pid: code for pid, code in sketches.items() if code}
        tokens = {pid: list(_tokens(code)) for pid, code in self._sketches.items()}
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
        paints = [paint_of(renders[i]) for i in self._ids]
        self._layout = np.stack([p.layout[0] for p in paints]) if paints \
            else np.zeros((0, 3 * THUMB * THUMB), np.float32)
        self._colour = np.stack([p.colour for p in paints]) if paints \
            else np.zeros((0, COLOUR_BINS ** 3), np.float32)
        self._at_seed: OrderedDict[tuple[str, int], Paint | None] = OrderedDict()
        self._at_seed_lock = threading.Lock()
        self.rerenders = 0
        """Pool paintings rendered at a rollout's seed so far."""

    @classmethod
    def from_pool(cls, pool, sketch_threshold: float = SKETCH_THRESHOLD,
                  render_threshold: float = RENDER_THRESHOLD,
                  render: Callable[[str, int], bytes | None] | None = None,
                  **options: Any) -> CopyDetector:
        """From a :class:`~watercolour.rewards.references.ReferencePool` (its paintings'
        sketches and PNGs)."""
        return cls({p.id: p.sketch for p in pool.paintings if getattr(p, "sketch", None)},
                   {p.id: p.png for p in pool.paintings}, sketch_threshold, render_threshold,
                   render, **options)

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

    def screen(self, png: bytes | None, exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
        """(pool id, :func:`screen_similarity`) for every pool painting but ``exclude``, the
        most alike first."""
        if png is None or not self._ids:
            return []
        paint = paint_of(png)
        layout = (self._layout @ paint.layout.T).max(axis=1)
        sims = 0.5 * (layout + self._colour @ paint.colour)
        skip = set(exclude)
        return [(self._ids[i], round(float(sims[i]), 4)) for i in np.argsort(-sims, kind="stable")
                if self._ids[i] not in skip]

    def render_similarity(self, png: bytes | None, exclude: Iterable[str] = ()
                          ) -> tuple[str | None, float]:
        """(pool id, screen similarity) of the pool painting ``png`` looks most like."""
        ranked = self.screen(png, exclude)
        return ranked[0] if ranked else (None, 0.0)

    def pool_at_seed(self, pid: str, seed: int) -> Paint | None:
        """The pool painting ``pid`` rendered at ``seed`` (None: no sketch, or it did not
        render). Kept for the last 256 (painting, seed) pairs asked."""
        key = (pid, int(seed))
        with self._at_seed_lock:
            if key in self._at_seed:
                self._at_seed.move_to_end(key)
                return self._at_seed[key]
        code = self._sketches.get(pid)
        png = self._render(code, int(seed)) if code and self._render is not None else None
        paint = paint_of(png) if png else None
        with self._at_seed_lock:
            self.rerenders += 1
            self._at_seed[key] = paint
            if len(self._at_seed) > 256:
                self._at_seed.popitem(last=False)
        return paint

    def seed_similarity(self, png: bytes | None, seed: int, exclude: Iterable[str] = (),
                        ranked: list[tuple[str, float]] | None = None
                        ) -> tuple[str | None, float]:
        """(pool id, :func:`aligned_similarity`) of the pool painting most like ``png`` when
        rendered at ``seed``, among the :attr:`confirm` most alike by the screen at or above
        :attr:`screen_threshold` (those with a sketch)."""
        if png is None or not self.confirm:
            return None, 0.0
        ranked = self.screen(png, exclude) if ranked is None else ranked
        candidates = [pid for pid, sim in ranked
                      if sim >= self.screen_threshold and pid in self._sketches][:self.confirm]
        paint = paint_of(png)
        best: tuple[str | None, float] = (None, 0.0)
        for pid in candidates:
            theirs = self.pool_at_seed(pid, seed)
            sim = aligned_similarity(theirs, paint) if theirs is not None else 0.0
            if sim > best[1]:
                best = (pid, round(sim, 4))
        return best

    def check(self, code: str | None, png: bytes | None, exclude: Iterable[str] = (),
              seed: int | None = None) -> NearCopy | None:
        """The near copy ``code`` / ``png`` (rendered at ``seed``) is, or None (``exclude``:
        pool ids to skip; without ``seed``, nothing is re-rendered)."""
        exclude = list(exclude)
        found: list[NearCopy] = []
        if self.sketch_threshold <= 1:
            pid, sim = self.sketch_similarity(code, exclude)
            if pid is not None and sim >= self.sketch_threshold:
                found.append(NearCopy("sketch", pid, sim, self.sketch_threshold))
        if self.render_threshold <= 1 and png is not None:
            ranked = self.screen(png, exclude)
            if ranked and ranked[0][1] >= self.render_threshold:
                found.append(NearCopy("render", *ranked[0], self.render_threshold))
            elif seed is not None and not found:
                pid, sim = self.seed_similarity(png, seed, exclude, ranked)
                if pid is not None and sim >= self.seed_threshold:
                    found.append(NearCopy("render_at_seed", pid, sim, self.seed_threshold))
        return max(found, key=lambda c: c.similarity - c.threshold) if found else None
