"""Compact sketches for the tiny painter's warm start: the procedural painter's subjects,
palettes and petal outlines, written short enough (~300-400 tokens) for a ~4M-parameter model
to learn in minutes.

The pool's sketches (:mod:`watercolour.pool.procedural`) are written to look like a large
model's (~150 lines, ~750-1,170 tokens); a tiny model trained on them for 20 minutes passed the
gate 0 times in 32 (``../shared/reference/tiny-painter.md``). Here one ``shape`` helper lays any
outline, one ``wash`` helper sets the paint, and loops place the petals, so a sketch is ~40
lines. Only the ten allowlisted brush methods are written. Like the pool, the data is mixed:
mostly good paintings, some with one of the pool's flaws (flat, muddy, sparse, dark, off
centre), so the warm start leaves GRPO something to learn.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from watercolour.pool import colour as C
from watercolour.pool.procedural.plan import VARIANT_CYCLE, WEAK_VARIANTS
from watercolour.pool.subjects import CURVES, OUTLINES, PAPERS, SUBJECTS, Subject, subject_phrase
from watercolour.prompt import CANVAS_SIZE

SUBJECT_KEYS: tuple[str, ...] = tuple(SUBJECTS)
VARIANTS: tuple[str, ...] = ("good", *WEAK_VARIANTS)

HELPERS = """function shape(outline, x, y, a, len, wid, curve) {
  push();
  translate(x, y);
  rotate(a);
  brush.beginShape(curve);
  for (const [u, v] of outline) brush.vertex(u * len, v * wid);
  brush.endShape(CLOSE);
  pop();
}

function wash(col, alpha, bleed) {
  brush.fillBleed(bleed);
  brush.fillTexture(0.5, 0.4);
  brush.fill(col, alpha);
}
"""


@dataclass(frozen=True)
class CompactSketch:
    """One training sketch: what was asked for, which variant was painted, the code."""

    subject: str
    """The phrase the prompt uses (``"a peach hibiscus"``)."""
    variant: str
    code: str

    def reply(self) -> str:
        """The assistant's answer: the sketch in one fenced JavaScript block."""
        return f"```javascript\n{self.code}```"


def _n(v: float) -> str:
    r = round(v, 2)
    return str(int(r)) if r == int(r) else f"{r:.2f}".rstrip("0")


def _px(v: float) -> str:
    return str(round(v))


def _outline(points: tuple[tuple[float, float], ...]) -> str:
    return "[" + ", ".join(f"[{_n(u)}, {_n(v)}]" for u, v in points) + "]"


def _paint(colour: str, variant: str) -> str:
    if variant == "muddy":
        return C.mix(colour, C.MUD, 0.55)
    if variant == "dark":
        return C.darken(colour, 0.5)
    return colour


def _layers(subj: Subject, pal: dict[str, str], variant: str) -> list[tuple[str, int, float,
                                                                           float, float]]:
    """``(colour, alpha, length factor, width factor, bleed)`` per pass over the petals."""
    if variant == "flat":
        return [(pal["mid"], 205, 0.92, 0.88, 0.3)]
    alpha = 0.55 if variant == "sparse" else 1.0
    passes = [(pal["light"], round(125 * alpha), 1.0, 1.0, 0.3),
              (pal["mid"], round(170 * alpha), 0.78, 0.68, 0.2)]
    if subj.arrangement != "branch":
        deep = (0.45, 0.22) if subj.centre == "throat" else (0.5, 0.3)
        passes.append((pal["deep"], round(150 * alpha), *deep, 0.12))
    return passes


def _centre_lines(subj: Subject, pal: dict[str, str], variant: str) -> list[str]:
    p = CANVAS_SIZE * subj.length
    kinds = {"throat": [(pal["centre"], 170, 0.1)], "eye": [(pal["centre"], 200, 0.14)],
             "disc": [(pal["centre"], 200, 0.28), (pal["accent"], 180, 0.14)],
             "pod": [(pal["centre"], 190, 0.3), (pal["accent"], 160, 0.12)], "none": []}
    lines = []
    for colour, alpha, radius in kinds[subj.centre]:
        lines.append(f"  wash('{_paint(colour, variant)}', {alpha}, 0.15);")
        lines.append(f"  brush.circle(x, y, {_px(radius * p)} * s);")
    return lines


def _flower_function(subj: Subject, pal: dict[str, str], variant: str, n: int,
                     rng: random.Random) -> list[str]:
    p = CANVAS_SIZE * subj.length
    curve = _n(CURVES[subj.outline])
    if subj.arrangement == "fan":
        spread = subj.fan_spread
        start, step = -math.pi / 2 - spread, 2 * spread / max(1, n - 1)
    else:
        start, step = rng.uniform(0, 2 * math.pi), 2 * math.pi / n
    angle = f"{_n(start)} + i * {_n(step)}"
    lines = ["function flower(x, y, s) {",
             f"  const layers = [{', '.join(_layer(c, a, lf, wf, b, variant) for c, a, lf, wf, b in _layers(subj, pal, variant))}];",  # noqa: E501
             "  for (const [col, alpha, l, w, bleed] of layers) {",
             "    wash(col, alpha, bleed);",
             f"    for (let i = 0; i < {n}; i++) {{",
             f"      shape(PETAL, x, y, {angle}, {_px(p)} * s * l, {_px(p * subj.width)} * s * w, "
             f"{curve});",
             "    }",
             "  }"]
    if subj.arrangement == "rings":
        inner = max(3, n - 3)
        lines += [f"  wash('{_paint(pal['mid'], variant)}', 150, 0.2);",
                  f"  for (let i = 0; i < {inner}; i++) {{",
                  f"    shape(PETAL, x, y, {_n(start + 0.4)} + i * {_n(2 * math.pi / inner)}, "
                  f"{_px(0.6 * p)} * s, {_px(0.6 * p * subj.width)} * s, {curve});",
                  "  }"]
    lines += _centre_lines(subj, pal, variant)
    lines.append("}")
    return lines


def _layer(colour: str, alpha: int, lf: float, wf: float, bleed: float, variant: str) -> str:
    return f"['{_paint(colour, variant)}', {alpha}, {_n(lf)}, {_n(wf)}, {_n(bleed)}]"


def _flowers(subj: Subject, variant: str, rng: random.Random) -> list[tuple[float, float, float]]:
    """``(x, y, scale)`` of each flower, main first, around the canvas centre."""
    size = CANVAS_SIZE
    p = size * subj.length
    reach = 0.32 if variant == "off_centre" else 0.06
    x0, y0 = rng.uniform(-reach, reach) * size, rng.uniform(-reach, reach * 0.7) * size
    if variant == "off_centre":
        x0, y0 = math.copysign(max(abs(x0), 0.22 * size), x0), math.copysign(
            max(abs(y0), 0.18 * size), y0)
    if subj.arrangement == "fan":
        y0 += 0.06 * size
    scale = 0.6 if variant == "sparse" else rng.uniform(0.92, 1.08)
    flowers = [(x0, y0, scale)]
    count = 1 if variant == "sparse" else rng.randint(*subj.flowers)
    if subj.arrangement == "branch":
        slope = rng.uniform(-0.7, -0.3)
        for i in range(1, count):
            t = (i + 1) // 2 * (1 if i % 2 else -1) * rng.uniform(2.4, 3.0) * p
            flowers.append((x0 + t, y0 + t * slope, scale * rng.uniform(0.75, 0.95)))
        return flowers
    base = rng.uniform(0, 2 * math.pi)
    for i in range(1, count):
        s = scale * rng.uniform(0.55, 0.75)
        a = base + i * 2 * math.pi / max(2, count - 1) + rng.uniform(-0.3, 0.3)
        d = p * (1.0 + s) * rng.uniform(0.85, 1.0)
        x = max(-0.36 * size, min(0.36 * size, x0 + math.cos(a) * d))
        y = max(-0.36 * size, min(0.36 * size, y0 + math.sin(a) * d))
        flowers.append((x, y, s))
    return flowers


def _greens(subj: Subject, pal: dict[str, str], variant: str,
            flowers: list[tuple[float, float, float]], rng: random.Random) -> list[str]:
    """Stems, twig and leaves, painted before the flowers."""
    p = CANVAS_SIZE * subj.length
    x0, y0, s0 = flowers[0]
    lines: list[str] = []
    if subj.arrangement == "branch":
        ends = sorted(flowers, key=lambda f: f[0])
        (xa, ya, _), (xb, yb, _) = ends[0], ends[-1]
        length = math.hypot(xb - xa, yb - ya) + 2 * p
        angle = math.atan2(yb - ya, xb - xa)
        lines += [f"  wash('{_paint(pal['stem'], variant)}', 200, 0.1);",
                  f"  shape(LEAF, {_px(xa - p * math.cos(angle))}, {_px(ya - p * math.sin(angle))}"
                  f", {_n(angle)}, {_px(length)}, 14, 0.3);"]
        return lines
    if subj.stem:
        lines += [f"  wash('{_paint(pal['stem'], variant)}', 190, 0.1);"]
        for x, y, s in flowers:
            tilt = math.pi / 2 + rng.uniform(-0.12, 0.12)
            lines.append(f"  shape(LEAF, {_px(x)}, {_px(y)}, {_n(tilt)}, "
                         f"{_px(CANVAS_SIZE / 2 - y + 20)}, {_px(16 * s)}, 0.3);")
    leaves = rng.randint(*subj.leaves)
    if leaves:
        lines.append(f"  wash('{_paint(pal['leaf_light'], variant)}', 160, 0.25);")
        for k in range(leaves):
            a = (math.pi / 2 + rng.uniform(0.5, 1.1) * (1 if k % 2 else -1)
                 if subj.stem else rng.uniform(0, 2 * math.pi))
            lx, ly = (x0, y0 + p * 1.1) if subj.stem else (x0, y0)
            lines.append(f"  shape(LEAF, {_px(lx)}, {_px(ly)}, {_n(a)}, {_px(p * 1.15 * s0)}, "
                         f"{_px(p * 0.45 * s0)}, 0.5);")
    return lines


def compact_sketch(seed: int, subject: str | None = None, variant: str | None = None
                   ) -> CompactSketch:
    """The compact sketch of ``seed``: a subject key (``"hibiscus"``; None picks one, hibiscus
    twice as often) and a variant (None: ``VARIANT_CYCLE[seed % 10]``, half good)."""
    rng = random.Random(f"compact/{seed}")
    key = subject or rng.choice(["hibiscus", *SUBJECT_KEYS])
    if key not in SUBJECTS:
        raise ValueError(f"unknown subject {key!r}; choose from {', '.join(SUBJECT_KEYS)}")
    variant = variant or VARIANT_CYCLE[seed % len(VARIANT_CYCLE)]
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose from {', '.join(VARIANTS)}")
    subj = SUBJECTS[key]
    palette = rng.choice(sorted(subj.palettes))
    pal = subj.palettes[palette]
    n = rng.randint(*subj.petals)
    if variant == "sparse":
        n = max(3, n - 2)
    flowers = _flowers(subj, variant, rng)
    phrase = subject_phrase(key, palette)
    code = [f"// {phrase[0].upper() + phrase[1:]} in watercolour.",
            f"const PETAL = {_outline(OUTLINES[subj.outline])};",
            f"const LEAF = {_outline(OUTLINES['leaf'])};",
            "",
            "function setup() {",
            f"  createCanvas({CANVAS_SIZE}, {CANVAS_SIZE}, WEBGL);",
            f"  background('{rng.choice(PAPERS)}');",
            "  brush.scaleBrushes(1.5);",
            "  brush.noStroke();",
            "}",
            "",
            HELPERS,
            *_flower_function(subj, pal, variant, n, rng),
            "",
            "function draw() {",
            *_greens(subj, pal, variant, flowers, rng),
            *[f"  flower({_px(x)}, {_px(y)}, {_n(s)});" for x, y, s in flowers],
            "  noLoop();",
            "}"]
    return CompactSketch(phrase, variant, "\n".join(code) + "\n")


def compact_sketches(n: int, start: int = 0) -> list[CompactSketch]:
    """``n`` compact sketches, seeds ``start`` .. ``start + n - 1``."""
    return [compact_sketch(seed) for seed in range(start, start + n)]
