"""Scene geometry: a plan laid out as groups of petal outlines and free shapes (stems, leaves,
discs), in painting order, within the shape budget."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from watercolour.pool import colour as C
from watercolour.pool.procedural.plan import SHAPE_BUDGET, Plan, seeded_rng
from watercolour.pool.subjects import SUBJECTS, Subject


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
    rng = seeded_rng("scene", plan.seed, plan.subject)
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
        frng = seeded_rng("flower", plan.seed, fi)
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
        crng = seeded_rng("centre", plan.seed, fi)
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
