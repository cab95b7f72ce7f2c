"""The procedural painter: writes p5.brush sketches itself, no model and no network.

It is the starter pool's painter (the embedded default of pool building), the source of the
negatives the gates and the offline judge are tested on, and later the supervised warm-start
data of the tiny policy. Every sketch uses only the ten allowlisted brush methods.

A painting is described by a :class:`Plan` (subject, palette, composition, layering, and the
flaws of its variant); :func:`sketch` writes the plan as JavaScript in one of three code
styles; :func:`revise` applies a critic's issues to a plan, which is how the painter takes part
in the three refinement rounds. Everything is deterministic given the seed.

Variants:

- ``good``: a large translucent wash on every petal, then a smaller, more opaque glaze inside,
  then a small dark accent; a composed, centred flower with leaves.
- ``flat`` (one opaque pass, no layering), ``muddy`` (over-mixed colours), ``sparse`` (a small
  flower lost on the paper), ``dark`` (over-dark, heavy paint), ``off_centre`` (the flower
  pushed against an edge): weaker paintings, as a model's first tries often are.

Negatives (:data:`NEGATIVES`): ``blank``, ``blob``, ``scribble``, ``faint``, ``grey``,
``off_canvas``.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from watercolour.pool import colour as C
from watercolour.pool.subjects import (
    CURVES,
    OUTLINES,
    PAPERS,
    SUBJECTS,
    Subject,
    find_subject,
    subject_phrase,
)

VARIANTS: tuple[str, ...] = ("good", "flat", "muddy", "sparse", "dark", "off_centre")
WEAK_VARIANTS: tuple[str, ...] = VARIANTS[1:]
NEGATIVES: tuple[str, ...] = ("blank", "blob", "scribble", "faint", "grey", "off_canvas")
STYLES: tuple[str, ...] = ("unrolled", "helpers", "loop")
"""Code styles: every vertex written out; helper functions called once per petal; data
arrays walked by loops."""

VARIANT_CYCLE: tuple[str, ...] = (
    "good", "flat", "good", "muddy", "good", "sparse", "good", "dark", "good", "off_centre",
)
"""The variant of seed ``s`` is ``VARIANT_CYCLE[s % 10]``: half good, half one of the flaws."""

SHAPE_BUDGET = 48
"""Roughly the most filled shapes one sketch paints (render time grows with it)."""


@dataclass
class Plan:
    """Everything that decides one painting. Plain data (JSON-serialisable)."""

    subject: str
    palette: str
    variant: str = "good"
    seed: int = 0
    size: int = 512
    style: str = "helpers"
    paper: str = PAPERS[0]
    n_flowers: int = 1
    n_petals: int = 5
    layers: int = 3
    """Passes per petal: 1 flat, 2 wash + glaze, 3 wash + glaze + accent."""
    scale: float = 1.0
    """Flower size relative to the subject's usual size."""
    offset: tuple[float, float] = (0.0, 0.0)
    """Where the main flower sits, as a fraction of the canvas from its centre."""
    alpha: float = 1.0
    """Opacity multiplier for every fill."""
    leaves: int = 2
    stem: bool = False
    mud: float = 0.0
    """How far every colour is mixed towards mud (0 clean, 1 all mud)."""
    dark: float = 0.0
    """How far every colour is darkened towards black."""
    grey: bool = False
    bleed: float = 0.3
    """Bleed of the first wash; later passes bleed less."""
    revisions: list[str] = field(default_factory=list)
    """The critic's issues this plan has already been revised for, in order."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["offset"] = list(self.offset)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        data = dict(data)
        data["offset"] = tuple(data.get("offset", (0.0, 0.0)))
        return cls(**data)

    @property
    def phrase(self) -> str:
        return subject_phrase(self.subject, self.palette)


@dataclass(frozen=True)
class Sketch:
    """A sketch the procedural painter wrote."""

    code: str
    subject: str
    """The phrase it paints: ``"a peach hibiscus"``."""
    variant: str
    seed: int
    plan: dict[str, Any]


# ---------------------------------------------------------------- planning


def _rng(*parts: object) -> random.Random:
    """A generator seeded by a string of parts: deterministic across runs and platforms."""
    return random.Random("/".join(str(p) for p in parts))


def plan_painting(
    seed: int,
    subject: str | None = None,
    variant: str | None = None,
    size: int = 512,
    style: str | None = None,
) -> Plan:
    """The plan for painting ``seed``.

    Args:
        seed: decides everything not given explicitly.
        subject: a phrase (``"a peach hibiscus"``) or a subject key; None picks one (hibiscus
            twice as often as any other).
        variant: one of :data:`VARIANTS` or :data:`NEGATIVES`; None takes
            ``VARIANT_CYCLE[seed % 10]``.
        size: canvas side in pixels.
        style: one of :data:`STYLES`; None picks one.
    """
    rng = _rng("plan", seed)
    if subject is None:
        keys = ["hibiscus", *SUBJECTS]
        subj = SUBJECTS[rng.choice(keys)]
        palette = rng.choice(sorted(subj.palettes))
    else:
        subj, named = (SUBJECTS[subject], None) if subject in SUBJECTS else find_subject(subject)
        palette = named or rng.choice(sorted(subj.palettes))
    if variant is None:
        variant = VARIANT_CYCLE[seed % len(VARIANT_CYCLE)]
    if variant not in VARIANTS and variant not in NEGATIVES:
        raise ValueError(f"unknown variant {variant!r}; choose from {VARIANTS + NEGATIVES}")
    if style is None:
        style = rng.choice(STYLES)
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; choose from {STYLES}")
    if size < 64:
        raise ValueError(f"canvas size must be at least 64 pixels, got {size}")

    plan = Plan(
        subject=subj.key, palette=palette, variant="good", seed=seed, size=size, style=style,
        paper=rng.choice(PAPERS),
        n_flowers=rng.randint(*subj.flowers),
        n_petals=rng.randint(*subj.petals),
        layers=3 if subj.arrangement != "branch" else 2,
        scale=rng.uniform(0.92, 1.08),
        offset=(rng.uniform(-0.06, 0.06), rng.uniform(-0.06, 0.04)),
        alpha=1.0,
        leaves=rng.randint(*subj.leaves),
        stem=subj.stem,
        bleed=rng.uniform(0.28, 0.4),
    )
    return _apply_variant(plan, variant, rng)


def _apply_variant(plan: Plan, variant: str, rng: random.Random) -> Plan:
    p = replace(plan, variant=variant)
    if variant == "flat":
        p.layers, p.bleed = 1, 0.06
    elif variant == "muddy":
        p.mud = rng.uniform(0.6, 0.8)
    elif variant == "sparse":
        p.scale, p.n_flowers, p.leaves, p.layers = rng.uniform(0.32, 0.42), 1, 0, 1
        p.stem = False
        p.n_petals = max(3, SUBJECTS[p.subject].petals[0] - 1)
        p.alpha = 0.75
    elif variant == "dark":
        p.dark, p.alpha = rng.uniform(0.6, 0.72), 1.7
    elif variant == "off_centre":
        p.offset = (rng.choice((-1, 1)) * rng.uniform(0.33, 0.4),
                    rng.choice((-1, 1)) * rng.uniform(0.3, 0.38))
        p.n_flowers = 1
    elif variant == "faint":
        p.alpha, p.scale, p.layers, p.leaves = 0.3, 0.7, 1, 0
    elif variant == "grey":
        p.grey = True
    elif variant == "off_canvas":
        p.offset = (rng.choice((-1, 1)) * 1.15, rng.choice((-1, 1)) * 1.1)
        p.n_flowers, p.leaves, p.stem = 1, 0, False
    return p


ISSUES: tuple[str, ...] = (
    "blank", "faint", "sparse", "crowded", "dark", "muddy", "grey", "flat", "off_centre",
)
"""What a critic can say is wrong, as the procedural painter understands it."""


def revise(plan: Plan, issues: list[str]) -> Plan:
    """The plan after taking the critic's ``issues`` on board (at most two fixes a round,
    the first-listed first): how the procedural painter refines across rounds."""
    p = replace(plan, revisions=[*plan.revisions])
    fixed = 0
    for issue in issues:
        if fixed == 2:
            break
        if issue in ("sparse", "faint", "blank"):
            p.scale = min(1.0, p.scale * 1.7 + 0.1)
            p.alpha = min(1.0, max(p.alpha * 1.5, 0.85))
            p.leaves = max(p.leaves, 1)
            p.layers = max(p.layers, 2)
        elif issue == "crowded":
            p.scale *= 0.85
        elif issue == "dark":
            p.dark *= 0.3
            p.alpha = min(p.alpha, 1.0) * 0.9
        elif issue in ("muddy", "grey"):
            p.mud *= 0.3
            p.grey = False
        elif issue == "flat":
            p.layers = min(3, p.layers + 1)
            p.bleed = max(p.bleed, 0.3)
        elif issue == "off_centre":
            p.offset = (p.offset[0] * 0.35, p.offset[1] * 0.35)
        else:
            continue
        p.revisions.append(issue)
        fixed += 1
    return p


# ---------------------------------------------------------------- scene


@dataclass(frozen=True)
class Fill:
    colour: str
    alpha: int
    bleed: float
    texture: float
    border: float


@dataclass
class Group:
    """Several copies of one outline in one fill: a layer of petals, a pair of leaves."""

    comment: str
    fill: Fill
    outline: str
    placements: list[tuple[float, float, float, float, float]]
    """``(x, y, angle, length, width)`` for each copy."""


@dataclass
class Free:
    """Shapes that are not copies of an outline: stems, branches, discs, dots."""

    comment: str
    fill: Fill
    polygons: list[list[tuple[float, float]]] = field(default_factory=list)
    circles: list[tuple[float, float, float]] = field(default_factory=list)
    curve: float = 0.3


Item = Group | Free


def _colour(plan: Plan, hex_colour: str) -> str:
    out = C.mix(hex_colour, C.MUD, plan.mud) if plan.mud else hex_colour
    if plan.dark:
        out = C.darken(out, plan.dark)
    if plan.grey:
        out = C.grey(out)
    return out


def _fill(plan: Plan, colour: str, alpha: float, bleed: float, texture: float,
          border: float) -> Fill:
    return Fill(_colour(plan, colour), int(max(4, min(255, round(alpha * plan.alpha)))),
                round(bleed, 2), round(texture, 2), round(border, 2))


def _layers(plan: Plan, subj: Subject, pal: dict[str, str]) -> list[tuple[str, Fill, float, float]]:
    """``(name, fill, length factor, width factor)`` for each pass over the petals."""
    if plan.layers == 1:
        return [("one flat pass", _fill(plan, pal["mid"], 205, plan.bleed, 0.15, 0.1), 0.92,
                 0.88)]
    glaze = pal["mid"]
    if plan.mud:
        glaze = C.mix(glaze, pal["leaf_dark"], 0.45 * plan.mud)
    passes = [
        ("a large, pale wash", _fill(plan, pal["light"], 125, plan.bleed, 0.5, 0.4), 1.0, 1.0),
        ("a smaller, stronger glaze inside it", _fill(plan, glaze, 170, plan.bleed * 0.6, 0.4,
                                                      0.5), 0.78, 0.68),
    ]
    if plan.layers >= 3:
        deep_len, deep_wid = (0.45, 0.22) if subj.centre == "throat" else (0.5, 0.3)
        passes.append(("the deep colour at the base", _fill(plan, pal["deep"], 150,
                                                            plan.bleed * 0.4, 0.6, 0.3),
                       deep_len, deep_wid))
    return passes


def _flower_positions(plan: Plan, subj: Subject, rng: random.Random
                      ) -> list[tuple[float, float, float]]:
    """``(x, y, scale)`` of each flower, main first, in canvas pixels around the centre."""
    s = plan.size
    length = subj.length * s * plan.scale
    x0, y0 = plan.offset[0] * s, plan.offset[1] * s
    if subj.arrangement == "fan":
        y0 += 0.06 * s  # upright flowers sit lower, their petals rise
    flowers = [(x0, y0, 1.0)]
    if subj.arrangement == "branch":
        # along a diagonal twig through the main flower
        slope = rng.uniform(-0.7, -0.3)
        for i in range(1, plan.n_flowers):
            t = (i + 1) // 2 * (1 if i % 2 else -1) * rng.uniform(2.4, 3.0) * length
            flowers.append((x0 + t, y0 + t * slope, rng.uniform(0.75, 0.95)))
        return flowers
    base = rng.uniform(0, 2 * math.pi)
    for i in range(1, plan.n_flowers):
        scale = rng.uniform(0.55, 0.75)
        angle = base + i * 2 * math.pi / max(2, plan.n_flowers - 1) + rng.uniform(-0.3, 0.3)
        dist = length * (1.0 + scale) * rng.uniform(0.85, 1.0)
        x, y = x0 + math.cos(angle) * dist, y0 + math.sin(angle) * dist
        if plan.variant not in ("off_centre", "off_canvas"):
            x = max(-0.36 * s, min(0.36 * s, x))
            y = max(-0.36 * s, min(0.36 * s, y))
        flowers.append((x, y, scale))
    return flowers


def _petal_angles(plan: Plan, subj: Subject, rng: random.Random, n: int) -> list[float]:
    if subj.arrangement == "fan":
        spread = subj.fan_spread
        if n == 1:
            return [-math.pi / 2]
        return [-math.pi / 2 - spread + 2 * spread * i / (n - 1) + rng.uniform(-0.05, 0.05)
                for i in range(n)]
    start = rng.uniform(0, 2 * math.pi)
    return [start + 2 * math.pi * i / n + rng.uniform(-0.08, 0.08) for i in range(n)]


def _wrap(angle: float) -> float:
    """An angle in (-pi, pi]."""
    return math.atan2(math.sin(angle), math.cos(angle))


def _quad_strip(points: list[tuple[float, float]], w0: float, w1: float
                ) -> list[tuple[float, float]]:
    """A tapered band along ``points`` (a stem, a twig), as one closed outline."""
    left, right = [], []
    last = len(points) - 1
    for i, (x, y) in enumerate(points):
        xa, ya = points[max(0, i - 1)]
        xb, yb = points[min(last, i + 1)]
        d = math.hypot(xb - xa, yb - ya) or 1.0
        nx, ny = -(yb - ya) / d, (xb - xa) / d
        w = w0 + (w1 - w0) * i / max(1, last)
        left.append((x + nx * w, y + ny * w))
        right.append((x - nx * w, y - ny * w))
    return left + right[::-1]


def _segments(points: list[tuple[float, float]], w0: float, w1: float
              ) -> list[list[tuple[float, float]]]:
    """A tapered band along ``points`` as one quad per segment."""
    band = _quad_strip(points, w0, w1)
    n = len(points)
    left, right = band[:n], band[n:][::-1]
    return [[left[i], left[i + 1], right[i + 1], right[i]] for i in range(n - 1)]


def build_scene(plan: Plan) -> list[Item]:
    """The plan laid out as groups of outlines and free shapes, in painting order."""
    subj = SUBJECTS[plan.subject]
    pal = subj.palettes[plan.palette]
    s = plan.size
    rng = _rng("scene", plan.seed, plan.subject)
    flowers = _flower_positions(plan, subj, rng)
    length = subj.length * s * plan.scale
    items: list[Item] = []

    # budget: secondary flowers lose passes first, then flowers go
    per_flower = plan.n_petals * (1 if subj.arrangement != "rings" else 2)
    layers_main = plan.layers
    layers_other = plan.layers
    while len(flowers) > 1 and per_flower * (layers_main + layers_other * (len(flowers) - 1)) \
            > SHAPE_BUDGET:
        if layers_other > min(2, layers_main):
            layers_other -= 1
        else:
            flowers.pop()
    if subj.arrangement == "branch":
        layers_main = layers_other = min(plan.layers, 2)

    # --- behind the flowers: twig, stems, leaves
    if subj.arrangement == "branch":
        (xa, ya, _), (xb, yb, _) = flowers[0], flowers[-1]
        dx, dy = (xb - xa, yb - ya) if len(flowers) > 1 else (s * 0.5, -s * 0.25)
        d = math.hypot(dx, dy) or 1.0
        ux, uy = dx / d, dy / d
        reach = s * 0.75
        twig = [(xa - ux * reach * 0.6 + t * ux * reach * 1.3, ya - uy * reach * 0.6
                 + t * uy * reach * 1.3 + math.sin(t * 3.0) * s * 0.03) for t in
                (0, 0.25, 0.5, 0.75, 1.0)]
        # segment by segment, as a brush travels along it: one long thin outline would
        # bleed into a fan
        items.append(Free("the twig, pale wash then darker core",
                          _fill(plan, C.lighten(pal["stem"], 0.25), 160, 0.15, 0.4, 0.3),
                          _segments(twig, s * 0.016, s * 0.008)))
        items.append(Free("", _fill(plan, pal["stem"], 200, 0.1, 0.5, 0.3),
                          _segments(twig, s * 0.009, s * 0.004)))
    if plan.stem:
        stems = []
        for x, y, k in flowers:
            bend = rng.uniform(-0.08, 0.08) * s
            bottom = s * 0.5 + 8
            pts = [(x + bend * t * t, y + (bottom - y) * t) for t in (0.0, 0.35, 0.7, 1.0)]
            stems.append(_quad_strip(pts, s * 0.011 * k + 1, s * 0.014 * k + 1))
        items.append(Free("stems", _fill(plan, pal["stem"], 175, 0.12, 0.4, 0.4), stems))
    if plan.leaves:
        leaf_places = []
        x0, y0, _ = flowers[0]
        for i in range(plan.leaves):
            if plan.stem:
                t = 0.45 + 0.2 * i
                side = 1 if i % 2 == 0 else -1
                lx, ly = x0, y0 + (s * 0.5 - y0) * t
                angle = -math.pi / 2 + side * rng.uniform(0.5, 0.9)
                leaf_len = length * rng.uniform(1.0, 1.3)
            elif subj.outline == "pointed":  # lotus pads float below the flower
                lx = x0 + (i - (plan.leaves - 1) / 2) * length * 1.3
                ly = y0 + length * 0.55
                angle = math.pi if i % 2 else 0.0
                leaf_len = length * rng.uniform(0.9, 1.1)
            else:
                angle = (math.pi / 2 + (i - (plan.leaves - 1) / 2) * 1.4
                         + rng.uniform(-0.25, 0.25))
                lx = x0 + math.cos(angle) * length * 0.35
                ly = y0 + math.sin(angle) * length * 0.35
                leaf_len = length * rng.uniform(0.95, 1.15)
            leaf_places.append((lx, ly, angle, leaf_len))
        outline = "pad" if subj.outline == "pointed" and not plan.stem else "leaf"
        ratio = 0.5 if outline == "pad" else 0.42
        items.append(Group("leaves: a light wash", _fill(plan, pal["leaf_light"], 120,
                                                         plan.bleed, 0.6, 0.4), outline,
                           [(x, y, a, n, n * ratio) for x, y, a, n in leaf_places]))
        if plan.layers >= 2:
            items.append(Group("then a darker, narrower one", _fill(
                plan, pal["leaf_dark"], 140, plan.bleed * 0.5, 0.5, 0.5), outline,
                [(x, y, a, n * 0.8, n * ratio * 0.62) for x, y, a, n in leaf_places]))

    # --- petals, one pass at a time over every flower
    petal_sets = []
    for fi, (x, y, k) in enumerate(flowers):
        frng = _rng("flower", plan.seed, fi)
        n = plan.n_petals if fi == 0 else max(3, plan.n_petals - frng.randint(0, 1))
        angles = _petal_angles(plan, subj, frng, n)
        lens = [length * k * frng.uniform(0.9, 1.05) for _ in angles]
        rings = [(angles, lens, 1.0)]
        if subj.arrangement == "rings":
            inner = [a + math.pi / n for a in angles[: max(3, n - 3)]]
            rings.append((inner, [v * 0.62 for v in lens[: len(inner)]], 0.8))
        if subj.arrangement == "fan" and subj.key == "lotus":
            inner = _petal_angles(plan, subj, frng, 3)
            rings.append(([-math.pi / 2 + (a + math.pi / 2) * 0.45 for a in inner],
                          [v * 0.75 for v in lens[:3]], 0.9))
        petal_sets.append((fi, x, y, rings))
    main_passes = _layers(plan, subj, pal)
    for pi, (name, fill, kl, kw) in enumerate(main_passes):
        placements = []
        for fi, x, y, rings in petal_sets:
            if pi >= (layers_main if fi == 0 else layers_other):
                continue
            for angles, lens, kr in rings:
                for a, ln in zip(angles, lens):
                    ln = ln * kr
                    placements.append((x, y, a, ln * kl, ln * subj.width * kw))
        if placements:
            placements = [(x, y, _wrap(a), ln, w) for x, y, a, ln, w in placements]
            items.append(Group(f"petals: {name}", fill, subj.outline, placements))

    # --- centres
    for fi, (x, y, k) in enumerate(flowers):
        r = length * k
        crng = _rng("centre", plan.seed, fi)
        if subj.centre == "throat":
            items.append(Free("the glowing throat" if fi == 0 else "", _fill(
                plan, pal["centre"], 165, 0.25, 0.5, 0.5), circles=[(x, y, r * 0.09)]))
            if plan.layers >= 2:
                ang = -math.pi / 4 + crng.uniform(-0.4, 0.4)
                col_len = r * 0.75
                tip = (x + math.cos(ang) * col_len, y + math.sin(ang) * col_len)
                items.append(Free("the stamen column", _fill(
                    plan, C.mix(pal["light"], pal["deep"], 0.4), 200, 0.1, 0.3, 0.3),
                    [_quad_strip([(x, y), tip], r * 0.035, r * 0.02)], curve=0.2))
                dots = [(tip[0] + math.cos(a) * r * 0.06, tip[1] + math.sin(a) * r * 0.06,
                         r * crng.uniform(0.025, 0.04)) for a in
                        (crng.uniform(0, 6.3) for _ in range(4))]
                items.append(Free("pollen at its tip", _fill(plan, pal["accent"], 205, 0.1,
                                                             0.3, 0.2), circles=dots))
        elif subj.centre == "disc":
            rr = r * (0.28 if subj.key == "daisy" else 0.42)
            items.append(Free("the disc" if fi == 0 else "", _fill(
                plan, pal["centre"], 200, 0.22, 0.45, 0.4), circles=[(x, y, rr)]))
            if plan.layers >= 2:
                items.append(Free("a darker core", _fill(plan, pal["accent"], 190, 0.12, 0.4,
                                                         0.3), circles=[(x, y, rr * 0.55)]))
        elif subj.centre == "eye":
            rr = r * (0.2 if subj.key != "cherry" else 0.22)
            items.append(Free("the dark eye" if fi == 0 else "", _fill(
                plan, pal["centre"], 200, 0.12, 0.4, 0.3), circles=[(x, y, rr)]))
            if plan.layers >= 2 and fi == 0:
                dots = [(x + math.cos(a) * rr * 1.4, y + math.sin(a) * rr * 1.4, rr * 0.25)
                        for a in (crng.uniform(0, 6.3) for _ in range(5))]
                items.append(Free("stamens around it", _fill(plan, pal["accent"], 190, 0.08,
                                                             0.3, 0.2), circles=dots))
        elif subj.centre == "pod":
            items.append(Free("the seed pod", _fill(plan, pal["centre"], 190, 0.15, 0.4, 0.4),
                              circles=[(x, y - r * 0.12, r * 0.12)]))
    return items


# ---------------------------------------------------------------- writing JavaScript


def _n(v: float) -> str:
    """A compact number: integers without a point, others with at most 2 decimals."""
    r = round(v, 2)
    if r == int(r):
        return str(int(r))
    return f"{r:.2f}".rstrip("0")


def _fill_lines(fill: Fill, indent: str = "  ") -> list[str]:
    return [
        f"{indent}brush.fillBleed({_n(fill.bleed)});",
        f"{indent}brush.fillTexture({_n(fill.texture)}, {_n(fill.border)});",
        f"{indent}brush.fill('{fill.colour}', {fill.alpha});",
    ]


def _outline_points(outline: str, x: float, y: float, angle: float, length: float,
                    width: float) -> list[tuple[float, float]]:
    ca, sa = math.cos(angle), math.sin(angle)
    return [(x + u * length * ca - v * width * sa, y + u * length * sa + v * width * ca)
            for u, v in OUTLINES[outline]]


def _polygon_lines(points: list[tuple[float, float]], curve: float, indent: str = "  "
                   ) -> list[str]:
    lines = [f"{indent}brush.beginShape({_n(curve)});"]
    lines += [f"{indent}brush.vertex({_n(x)}, {_n(y)});" for x, y in points]
    lines.append(f"{indent}brush.endShape(CLOSE);")
    return lines


def _free_lines(item: Free) -> list[str]:
    lines = [f"  // {item.comment}"] if item.comment else []
    lines += _fill_lines(item.fill)
    for poly in item.polygons:
        lines += _polygon_lines(poly, item.curve)
    for x, y, r in item.circles:
        lines.append(f"  brush.circle({_n(x)}, {_n(y)}, {_n(r)});")
    return lines


def _const_name(outline: str) -> str:
    return outline.upper()


def sketch(plan: Plan) -> str:
    """The plan written as a complete p5.js + p5.brush sketch."""
    if plan.variant in NEGATIVES and plan.variant in ("blank", "blob", "scribble"):
        return _negative_code(plan)
    items = build_scene(plan)
    outlines = sorted({i.outline for i in items if isinstance(i, Group)})
    head = [
        f"// {plan.phrase[0].upper() + plan.phrase[1:]} in watercolour.",
        "// Each petal is painted in passes: a large pale wash first, then smaller,",
        "// stronger colour inside it." if plan.layers > 1 else "// One pass per petal.",
        "",
        f"const PAPER = '{plan.paper}';",
    ]
    setup = [
        "",
        "function setup() {",
        f"  createCanvas({plan.size}, {plan.size}, WEBGL);",
        "  background(PAPER);",
        f"  brush.scaleBrushes({_n(1.5 * plan.size / 512)});",
        "  brush.noStroke();",
        "}",
        "",
    ]
    body: list[str] = []
    helpers: list[str] = []
    if plan.style == "unrolled":
        for item in items:
            if isinstance(item, Free):
                body += _free_lines(item)
                continue
            body.append(f"  // {item.comment}")
            body += _fill_lines(item.fill)
            for place in item.placements:
                body += _polygon_lines(_outline_points(item.outline, *place),
                                       CURVES[item.outline])
    else:
        for name in outlines:
            pts = ", ".join(f"[{_n(u)}, {_n(v)}]" for u, v in OUTLINES[name])
            head.append(f"const {_const_name(name)} = [{pts}];")
        helpers += [
            "",
            "// one outline, turned to `angle` and stretched to length x width",
            "function shape(outline, x, y, angle, len, wid, curve) {",
            "  push();",
            "  translate(x, y);",
            "  rotate(angle);",
            "  brush.beginShape(curve);",
            "  for (const [u, v] of outline) {",
            "    brush.vertex(u * len, v * wid);",
            "  }",
            "  brush.endShape(CLOSE);",
            "  pop();",
            "}",
            "",
            "function wash(col, alpha, bleed, texture, border) {",
            "  brush.fillBleed(bleed);",
            "  brush.fillTexture(texture, border);",
            "  brush.fill(col, alpha);",
            "}",
        ]
        for item in items:
            if isinstance(item, Free):
                body += _free_lines(item)
                continue
            f = item.fill
            body.append(f"  // {item.comment}")
            body.append(f"  wash('{f.colour}', {f.alpha}, {_n(f.bleed)}, {_n(f.texture)}, "
                        f"{_n(f.border)});")
            const, curve = _const_name(item.outline), _n(CURVES[item.outline])
            if plan.style == "helpers":
                for x, y, a, ln, w in item.placements:
                    body.append(f"  shape({const}, {_n(x)}, {_n(y)}, {_n(a)}, {_n(ln)}, "
                                f"{_n(w)}, {curve});")
            else:
                rows = ", ".join(f"[{_n(x)}, {_n(y)}, {_n(a)}, {_n(ln)}, {_n(w)}]"
                                 for x, y, a, ln, w in item.placements)
                body.append(f"  for (const [x, y, a, len, wid] of [{rows}]) {{")
                body.append(f"    shape({const}, x, y, a, len, wid, {curve});")
                body.append("  }")
    draw = ["function draw() {", *body, "  noLoop();", "}"]
    return "\n".join(head + setup + draw + helpers) + "\n"


# ---------------------------------------------------------------- negatives


def _negative_code(plan: Plan) -> str:
    s = plan.size
    rng = _rng("negative", plan.variant, plan.seed)
    lines = [
        f"// {plan.variant}",
        "function setup() {",
        f"  createCanvas({s}, {s}, WEBGL);",
        f"  background('{plan.paper}');",
        "  brush.noStroke();",
        "}",
        "",
        "function draw() {",
    ]
    pal = SUBJECTS[plan.subject].palettes[plan.palette]
    if plan.variant == "blank":
        lines.append("  brush.noFill();")
    elif plan.variant == "blob":
        lines += _fill_lines(Fill(pal["mid"], 235, 0.04, 0.1, 0.05))
        x, y = rng.uniform(-0.08, 0.08) * s, rng.uniform(-0.08, 0.08) * s
        lines.append(f"  brush.circle({_n(x)}, {_n(y)}, {_n(s * rng.uniform(0.3, 0.38))});")
    elif plan.variant == "scribble":
        colours = list(pal.values())
        for _ in range(rng.randint(18, 26)):
            lines += _fill_lines(Fill(rng.choice(colours), rng.randint(120, 230),
                                      round(rng.uniform(0.0, 0.1), 2), 0.2, 0.1))
            x, y = rng.uniform(-0.45, 0.45) * s, rng.uniform(-0.45, 0.45) * s
            pts = []
            for _ in range(rng.randint(3, 5)):
                x += rng.uniform(-0.3, 0.3) * s
                y += rng.uniform(-0.3, 0.3) * s
                pts.append((x, y))
                pts.append((x + rng.uniform(-4, 4), y + rng.uniform(2, 6)))
            lines += _polygon_lines(pts, 0.0)
    lines += ["  noLoop();", "}"]
    return "\n".join(lines) + "\n"


def negative(kind: str, seed: int, size: int = 512) -> Sketch:
    """A sketch the gates or the judge should reject: one of :data:`NEGATIVES`."""
    if kind not in NEGATIVES:
        raise ValueError(f"unknown negative {kind!r}; choose from {NEGATIVES}")
    plan = plan_painting(seed, variant=kind, size=size)
    return Sketch(sketch(plan), plan.phrase, kind, seed, plan.to_dict())


# ---------------------------------------------------------------- entry points


def generate(
    seed: int,
    subject: str | None = None,
    variant: str | None = None,
    size: int = 512,
    style: str | None = None,
) -> Sketch:
    """One sketch: :func:`plan_painting` then :func:`sketch`."""
    plan = plan_painting(seed, subject=subject, variant=variant, size=size, style=style)
    return Sketch(sketch(plan), plan.phrase, plan.variant, seed, plan.to_dict())


def starter_subjects(n: int, seed: int = 0) -> list[str]:
    """``n`` subject phrases for a starter pool: hibiscus in about a third of them, the other
    flowers sharing the rest; deterministic given ``seed``."""
    rng = _rng("subjects", seed)
    others = [k for k in SUBJECTS if k != "hibiscus"]
    out = []
    for i in range(n):
        key = "hibiscus" if i % 3 == 0 else others[(i - i // 3 - 1) % len(others)]
        subj = SUBJECTS[key]
        out.append(subject_phrase(key, rng.choice(sorted(subj.palettes))))
    return out
