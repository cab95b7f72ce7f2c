"""A red team for the embedded reward: sketches that try to game it, and a search over them.

A policy trained with GRPO finds every shortcut the reward leaves open, so the reward is
attacked here first. :data:`FAMILIES` are parametrised generators of real p5.brush sketches
(allowlisted methods only, so they pass the gate) of the shortcuts a policy finds first:
rainbow stripes, a wheel of discs, random polygons (optionally padded with comments),
confetti, concentric rings, coloured paper, a flood, a good painting of another subject, a
real painting with confetti added, a concentric target and dots in a flower's palette (the
pool's colours without a flower's form), and the hand-made example padded with code that does
not paint (a long string literal, dead code, unrolled repetition). The sketches the issues'
tables measured are fixed points of these families (:data:`GAMED`).

:func:`near_copy_families` adds two families made from the pool's own sketches: a pool
painting re-submitted with small edits to its code (``near_copy_sketch``: numbers jittered,
colours nudged, names changed) and the same picture in rewritten code (``near_copy_render``:
every name changed and every number written as a sum, so the code no longer resembles the
pool's while the picture does).

:func:`disguised_copy_families` adds five more (issue 39), a pool painting disguised as an
adversary would (:func:`disguise_sketch`): mirrored, turned by quarter turns, shifted or scaled
by a p5 transform put first in ``draw()``, and every number rewritten as an expression
(``N * 1.37 / F``, ``M / F``, ``a + b``): the picture is the pool painting's, whatever way up,
the code shares little with it as written.

:func:`search` is a small evolutionary search: per family, random parameters, then mutations
of the best, scored by any ``score(code) -> reward`` (renders are cached by the caller, see
:class:`RenderCache`). ``benchmarks/reward_robustness.py`` runs it against the old and the
new judge, feeds the winners back to the judge as negatives, refits, and searches again.
"""

from __future__ import annotations

import colorsys
import hashlib
import json
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watercolour.pool.subjects import PAPERS

Params = dict[str, Any]

HEAD = "function setup() {{\n  createCanvas(512, 512, WEBGL);\n  background('{paper}');\n" \
       "  brush.noStroke();\n}}\n\nfunction draw() {{\n"
TAIL = "  noLoop();\n}\n"


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{int(max(0, min(255, round(255 * c)))):02x}" for c in rgb)


def _hues(n: int, start: float, saturation: float, value: float) -> list[str]:
    return [_hex(colorsys.hsv_to_rgb((start + i / max(1, n)) % 1.0, saturation, value))
            for i in range(n)]


def _fill(colour: str, alpha: int, bleed: float, texture: float) -> str:
    return (f"  brush.fillBleed({bleed:.2f});\n  brush.fillTexture({texture:.2f}, 0.3);\n"
            f"  brush.fill('{colour}', {alpha});\n")


def _poly(points: list[tuple[float, float]]) -> str:
    lines = ["  brush.beginShape(0);"]
    lines += [f"  brush.vertex({x:.1f}, {y:.1f});" for x, y in points]
    lines.append("  brush.endShape(CLOSE);")
    return "\n".join(lines) + "\n"


def _sketch(body: str, paper: str) -> str:
    return HEAD.format(paper=paper) + body + TAIL


def _common(rng: random.Random) -> Params:
    return {"saturation": rng.uniform(0.4, 1.0), "value": rng.uniform(0.5, 1.0),
            "alpha": rng.randint(90, 255), "bleed": rng.uniform(0.0, 0.35),
            "texture": rng.uniform(0.0, 0.7), "start": rng.random(),
            "paper": rng.choice(PAPERS)}


# ---------------------------------------------------------------- families


def stripes(p: Params) -> str:
    n = int(p["n"])
    colours = _hues(n, p["start"], p["saturation"], p["value"])
    lo, hi = -256 + p.get("margin", 0), 256 - p.get("margin", 0)
    body, w = "", (hi - lo) / n
    for i, c in enumerate(colours):
        body += _fill(c, p["alpha"], p["bleed"], p["texture"])
        a, b = lo + i * w, lo + (i + p["fill"]) * w
        body += _poly([(a, lo), (b, lo), (b, hi), (a, hi)] if p["vertical"] else
                      [(lo, a), (hi, a), (hi, b), (lo, b)])
    return _sketch(body, p["paper"])


def wheel(p: Params) -> str:
    n = int(p["n"])
    body = ""
    for i, c in enumerate(_hues(n, p["start"], p["saturation"], p["value"])):
        a = 2 * math.pi * i / n
        body += _fill(c, p["alpha"], p["bleed"], p["texture"])
        body += (f"  brush.circle({p['ring'] * math.cos(a):.1f}, {p['ring'] * math.sin(a):.1f}, "
                 f"{p['radius']:.1f}, 0.2);\n")
    return _sketch(body, p["paper"])


def quads(p: Params) -> str:
    rng = random.Random(int(p["layout"]))
    n = int(p["n"])
    body = ""
    for c in _hues(n, p["start"], p["saturation"], p["value"]):
        body += _fill(c, p["alpha"], p["bleed"], p["texture"])
        cx, cy, r = rng.uniform(-150, 150), rng.uniform(-150, 150), rng.uniform(40, 140)
        body += _poly([(cx + r * math.cos(a), cy + r * math.sin(a)) for a in
                       sorted(rng.uniform(0, 2 * math.pi) for _ in range(rng.choice([3, 4])))])
    code = _sketch(body, p["paper"])
    pad = int(p.get("comment_bytes", 0))
    if pad:
        words = "a loose wash of colour bleeds softly into the wet paper "
        comment = "".join(f"// {words}\n" for _ in range(pad // (len(words) + 4) + 1))
        code = comment[:pad] + "\n" + code
    return code


def confetti(p: Params) -> str:
    rng = random.Random(int(p["layout"]))
    n = int(p["n"])
    body = ""
    for c in _hues(n, p["start"], p["saturation"], p["value"]):
        body += _fill(c, p["alpha"], p["bleed"], p["texture"])
        body += (f"  brush.circle({rng.uniform(-230, 230):.1f}, {rng.uniform(-230, 230):.1f}, "
                 f"{p['radius'] * rng.uniform(0.6, 1.4):.1f}, 0.2);\n")
    return _sketch(body, p["paper"])


def rings(p: Params) -> str:
    n = int(p["n"])
    body = ""
    for i, c in enumerate(_hues(n, p["start"], p["saturation"], p["value"])):
        body += _fill(c, p["alpha"], p["bleed"], p["texture"])
        body += f"  brush.circle(0, 0, {p['outer'] * (1 - i / n):.1f}, 0.1);\n"
    return _sketch(body, p["paper"])


def coloured_paper(p: Params) -> str:
    colours = _hues(4, p["start"], p["saturation"], p["value"])
    body = ""
    for c in colours[1:1 + int(p["n"])]:
        body += _fill(c, p["alpha"], p["bleed"], p["texture"])
        body += f"  brush.circle(0, 0, {p['radius']:.1f}, 0.3);\n"
    return _sketch(body, colours[0])


def flood(p: Params) -> str:
    colours = _hues(2, p["start"], p["saturation"], p["value"])
    m = 256 - p["margin"]
    body = _fill(colours[0], p["alpha"], p["bleed"], p["texture"])
    body += _poly([(-m, -m), (m, -m), (m, m), (-m, m)])
    if p["two"]:
        body += _fill(colours[1], p["alpha"], p["bleed"], p["texture"])
        body += _poly([(-m, 0), (m, 0), (m, m), (-m, m)])
    return _sketch(body, p["paper"])


def _flower_palette(p: Params) -> list[str]:
    """The colours of one of the pool painter's flower palettes (``p["palette"]`` is
    ``subject/palette``): petals light to deep, centre, accent, leaves."""
    from watercolour.pool.subjects import SUBJECTS

    key, name = p["palette"].split("/")
    pal = SUBJECTS[key].palettes[name]
    return [pal[k] for k in ("light", "mid", "deep", "centre", "accent", "leaf_light")]


def target(p: Params) -> str:
    """A concentric target in a flower's palette: soft rings, largest first."""
    colours = _flower_palette(p)
    n = int(p["n"])
    body = ""
    for i in range(n):
        body += _fill(colours[i % len(colours)], p["alpha"], p["bleed"], p["texture"])
        body += f"  brush.circle(0, 0, {p['outer'] * (1 - i / n):.1f}, 0.3);\n"
    return _sketch(body, p["paper"])


def palette_dots(p: Params) -> str:
    """Soft dots in a flower's palette, scattered round the centre (no flower's form)."""
    colours = _flower_palette(p)
    rng = random.Random(int(p["layout"]))
    body = ""
    for i in range(int(p["n"])):
        body += _fill(colours[i % len(colours)], p["alpha"], p["bleed"], p["texture"])
        r = p["spread"] * math.sqrt(rng.random())
        a = rng.uniform(0, 2 * math.pi)
        body += (f"  brush.circle({r * math.cos(a):.1f}, {r * math.sin(a):.1f}, "
                 f"{p['radius'] * rng.uniform(0.6, 1.4):.1f}, 0.3);\n")
    return _sketch(body, p["paper"])


PROSE = ("Loose washes of peach and coral bleed into the damp paper; the petals are laid in "
         "two or three passes, pale first, then a smaller and stronger glaze inside. ")


def padded_with_string(code: str, n: int) -> str:
    """``code`` with an unused string literal of ``n`` characters before ``setup``."""
    text = (PROSE * (n // len(PROSE) + 1))[:n]
    head = code.index("function setup")
    return code[:head] + f"const NOTES = '{text}';\n\n" + code[head:]


def padded(p: Params) -> str:
    """The hand-made example padded with code that does not paint: ``kind`` ``string`` (an
    unused string literal of ``amount`` characters), ``dead_code`` (``amount`` painting
    statements in a function nothing calls and under ``if (false)``) or ``unrolled``
    (``amount`` extra copies of the centre's ``brush.circle``, each a few pixels across,
    inside the throat: repetition the drawing does not need)."""
    from watercolour.examples import load_example

    code = load_example(p["example"])
    n = int(p["amount"])
    rng = random.Random(int(p.get("layout", 0)))
    if p["kind"] == "string":
        return padded_with_string(code, n)
    if p["kind"] == "dead_code":
        lines = []
        for _ in range(n):
            lines.append(f"  brush.fill('{_hex(colorsys.hsv_to_rgb(rng.random(), 0.6, 0.9))}', "
                         f"{rng.randint(90, 200)});")
            lines.append(f"  brush.circle({rng.uniform(-200, 200):.1f}, "
                         f"{rng.uniform(-200, 200):.1f}, {rng.uniform(5, 60):.1f}, 0.3);")
        dead = "function glaze() {\n" + "\n".join(lines) + "\n}\n\n"
        code = code.replace("  noLoop();", "  if (false) {\n" + "\n".join(lines)
                            + "\n  }\n  noLoop();", 1)
        head = code.index("function setup")
        return code[:head] + dead + code[head:]
    if p["kind"] == "unrolled":
        extra = "".join(f"  brush.circle(cx, cy, {rng.uniform(2, 12):.2f}, 0.4);\n"
                        for _ in range(n))
        cut = code.index("  // --- stamen column")
        return code[:cut] + extra + code[cut:]
    raise ValueError(f"unknown padding {p['kind']!r}")


def other_subject(p: Params) -> str:
    """A good procedural painting of a subject other than the one asked for."""
    from watercolour.pool.procedural import plan_painting, sketch

    return sketch(plan_painting(int(p["seed"]), p["subject"], variant="good"))


def painting_with_confetti(p: Params) -> str:
    """An example painting (or a good procedural one) with saturated dots strewn on top."""
    from watercolour.examples import load_example

    code = load_example(p["example"])
    rng = random.Random(int(p["layout"]))
    dots = ""
    for c in _hues(int(p["n"]), p["start"], p["saturation"], p["value"]):
        dots += f"  brush.fill('{c}', {p['alpha']});\n"
        dots += (f"  brush.circle({rng.uniform(-230, 230):.1f}, {rng.uniform(-230, 230):.1f}, "
                 f"{p['radius']:.1f}, 0.2);\n")
    cut = code.rindex("noLoop();")
    return code[:cut] + dots + code[cut:]


def _sample(kind: str, rng: random.Random) -> Params:
    p = _common(rng)
    if kind == "stripes":
        p.update(n=rng.randint(4, 16), fill=rng.uniform(0.6, 1.0), vertical=rng.random() < .5,
                 margin=rng.choice([0, rng.uniform(20, 140)]))
    elif kind == "wheel":
        p.update(n=rng.randint(6, 30), ring=rng.uniform(60, 170), radius=rng.uniform(30, 110))
    elif kind in ("quads", "quads_commented"):
        p.update(n=rng.randint(3, 14), layout=rng.randrange(10_000))
        if kind == "quads_commented":
            p["comment_bytes"] = rng.choice([4000, 13000, 20000])
    elif kind == "confetti":
        p.update(n=rng.randint(10, 80), layout=rng.randrange(10_000),
                 radius=rng.uniform(6, 40))
    elif kind == "rings":
        p.update(n=rng.randint(3, 10), outer=rng.uniform(150, 480))
    elif kind == "coloured_paper":
        p.update(n=rng.randint(0, 3), radius=rng.uniform(60, 300))
    elif kind == "flood":
        p.update(margin=rng.uniform(0, 40), two=rng.random() < 0.5)
    elif kind == "other_subject":
        p.update(subject=rng.choice(OTHER_SUBJECTS), seed=rng.randrange(10_000))
    elif kind == "painting_with_confetti":
        p.update(example="peach_hibiscus", n=rng.randint(4, 40), layout=rng.randrange(10_000),
                 radius=rng.uniform(4, 20))
    elif kind in ("target", "palette_dots"):
        p.update(palette=rng.choice(PALETTES), alpha=rng.randint(60, 200))
        if kind == "target":
            p.update(n=rng.randint(3, 8), outer=rng.uniform(120, 420))
        else:
            p.update(n=rng.randint(8, 48), layout=rng.randrange(10_000),
                     radius=rng.uniform(10, 60), spread=rng.uniform(40, 200))
    elif kind == "padded":
        p.update(example="peach_hibiscus", kind=rng.choice(["string", "dead_code", "unrolled"]),
                 layout=rng.randrange(10_000))
        p["amount"] = {"string": rng.choice([4000, 12000, 24000]),
                       "dead_code": rng.choice([20, 60, 150]),
                       "unrolled": rng.choice([20, 60, 150])}[p["kind"]]
    return p


PALETTES: tuple[str, ...] = ("hibiscus/peach", "hibiscus/coral", "hibiscus/pink",
                             "hibiscus/yellow", "hibiscus/red")
"""Palettes the target and dots families paint in (the asked-for subject's: the pool's
colours for a hibiscus)."""


OTHER_SUBJECTS: tuple[str, ...] = ("a gold sunflower", "a white daisy", "a violet tulip",
                                   "a pink lotus", "a white cherry blossom branch")
"""Subjects painted by the ``other_subject`` family (the asked-for subject is a hibiscus)."""


@dataclass(frozen=True)
class Family:
    name: str
    make: Callable[[Params], str]
    sample: Callable[[random.Random], Params]
    abstract: bool = True
    """Not a painting: its winners may become the judge's negatives. A painting family's
    (another subject, a painting with confetti) may not: a near-copy of a good painting as a
    negative would teach the judge that the painting is bad. The subject terms and each pool
    painting's own damaged copies answer those families instead."""


PAINTINGS: frozenset[str] = frozenset({"other_subject", "painting_with_confetti", "padded",
                                      "near_copy_sketch", "near_copy_render"})
"""The families whose sketches are paintings (never made negatives)."""


def _family(name: str, make: Callable[[Params], str]) -> Family:
    return Family(name, make, lambda rng: _sample(name, rng), name not in PAINTINGS)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    _family("stripes", stripes), _family("wheel", wheel), _family("quads", quads),
    _family("quads_commented", quads), _family("confetti", confetti),
    _family("rings", rings), _family("coloured_paper", coloured_paper),
    _family("flood", flood), _family("other_subject", other_subject),
    _family("painting_with_confetti", painting_with_confetti),
    _family("target", target), _family("palette_dots", palette_dots),
    _family("padded", padded),
)}
"""The adversarial families, by name (the near-copy families need the pool's sketches:
:func:`near_copy_families`)."""


# ---------------------------------------------------------------- near-copies of the pool

_NUMBER = re.compile(r"(?<![\w.#])-?\d+\.\d+|(?<![\w.#])-?\d+(?![\w.])")
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _declared_names(code: str) -> list[str]:
    names = re.findall(r"\b(?:const|let|var|function)\s+([A-Za-z_$][\w$]*)", code)
    names += [n for params in re.findall(r"function\s+\w+\s*\(([^)]*)\)", code)
              for n in re.findall(r"[A-Za-z_$][\w$]*", params)]
    return [n for n in dict.fromkeys(names) if n not in ("setup", "draw")]


def edit_sketch(code: str, edit: str, amount: float, seed: int) -> str:
    """A pool sketch with small edits that keep its picture: ``none`` (verbatim), ``jitter``
    (every decimal number scaled by up to ``amount``), ``recolour`` (every ``#rrggbb`` nudged
    by up to ``amount * 255`` per channel), ``rename`` (comments dropped, every declared name
    changed), ``rewrite`` (``rename``, and every number written as a sum of two, so the code
    shares little with the pool's while the picture is the same)."""
    rng = random.Random(seed)
    if edit == "none":
        return code
    if edit == "jitter":
        def jitter(m: re.Match) -> str:
            v = float(m.group(0))
            return f"{v * (1 + rng.uniform(-amount, amount)):.2f}" if "." in m.group(0) \
                else m.group(0)
        return _NUMBER.sub(jitter, code)
    if edit == "recolour":
        def nudge(m: re.Match) -> str:
            rgb = [int(m.group(0)[i:i + 2], 16) for i in (1, 3, 5)]
            step = max(1, int(amount * 255))
            return "#" + "".join(f"{max(0, min(255, c + rng.randint(-step, step))):02x}"
                                 for c in rgb)
        return _COLOUR.sub(nudge, code)
    if edit in ("rename", "rewrite"):
        code = _COMMENT.sub("", code)
        for i, name in enumerate(_declared_names(code)):
            code = re.sub(rf"(?<![\w$.'#]){re.escape(name)}(?![\w$'])", f"q{i}_{seed % 97}",
                          code)
        code = re.sub(r"\n\s*\n+", "\n", code)
        return _rewrite_numbers(code, "sum", rng) if edit == "rewrite" else code
    raise ValueError(f"unknown edit {edit!r}")


def near_copy_families(sketches: dict[str, str]) -> dict[str, Family]:
    """``near_copy_sketch`` and ``near_copy_render`` over the pool's ``sketches``
    (id -> code): see :func:`edit_sketch`."""
    ids = sorted(sketches)

    def make(p: Params) -> str:
        return edit_sketch(sketches[p["id"]], p["edit"], p["amount"], int(p["layout"]))

    def sample(edits: tuple[str, ...]) -> Callable[[random.Random], Params]:
        return lambda rng: {"id": rng.choice(ids), "edit": rng.choice(edits),
                            "amount": rng.choice([0.01, 0.03, 0.06]),
                            "layout": rng.randrange(10_000)}

    return {"near_copy_sketch": Family("near_copy_sketch", make,
                                       sample(("none", "jitter", "recolour", "rename")), False),
            "near_copy_render": Family("near_copy_render", make, sample(("rewrite",)), False)}

# ---------------------------------------------------------------- disguised copies

TURNS: dict[str, str] = {
    "mirror_x": "scale(-1, 1);", "mirror_y": "scale(1, -1);", "rot90": "rotate(HALF_PI);",
    "rot180": "rotate(PI);", "rot270": "rotate(-HALF_PI);",
    "transpose": "rotate(HALF_PI);\n  scale(-1, 1);",
    "antitranspose": "rotate(-HALF_PI);\n  scale(-1, 1);",
}
"""The ways up a picture can be turned (these seven and ``none``: all eight), as the p5
transform put first in ``draw()``."""
REWRITES: tuple[str, ...] = ("none", "product", "quotient", "sum")
"""How :func:`disguise_sketch` rewrites every number ``N`` after ``setup``: ``product``
``(N * 1.37 / F)`` (with ``const F = 1.37``, the issue's rewrite), ``quotient`` ``(M / F)``
(``M`` = ``N * 1.37``: no number as written survives), ``sum`` ``(a + b)``."""
FACTOR = 1.37


def _rewrite_numbers(code: str, style: str, rng: random.Random) -> str:
    if style == "none":
        return code

    def write(m: re.Match) -> str:
        v = float(m.group(0))
        if style == "product":
            return f"({m.group(0)} * {FACTOR} / F)"
        if style == "quotient":
            return f"({round(v * FACTOR, 4)} / F)"
        a = round(rng.uniform(-3, 3), 2)
        return f"({a} + {round(v - a, 4)})"
    if style not in REWRITES:
        raise ValueError(f"unknown rewrite {style!r}")
    body = code.index("function setup")
    out = code[:body] + _NUMBER.sub(write, code[body:])
    return f"const F = {FACTOR};\n" + out if style != "sum" else out


DESYNC = "brush.fill('#ffffff', 0);\n  brush.circle(0, 0, 4);"
"""An invisible stroke: it draws nothing, but draws on p5.brush's random numbers, so every
stroke after it bleeds as at another seed."""


def disguise_sketch(code: str, turn: str = "none", shift: tuple[float, float] = (0, 0),
                    scale: float = 1.0, rewrite: str = "none", seed: int = 0,
                    desync: bool = False) -> str:
    """A pool sketch disguised as an adversary would: its picture turned (``turn``, one of
    :data:`TURNS` or ``none``), moved by ``shift`` pixels and scaled by ``scale`` about the
    canvas centre (p5 transforms put first in ``draw()``, so every brush stroke follows), and
    every number rewritten (:data:`REWRITES`); with ``desync``, :data:`DESYNC` first. The
    picture is the pool painting's, whatever way up; the code shares little with it."""
    head = re.search(r"function\s+draw\s*\(\s*\)\s*\{\n?", code)
    if head is None:
        raise ValueError("the sketch has no draw()")
    moves = [DESYNC] if desync else []
    if shift != (0, 0):
        moves.append(f"translate({shift[0]:g}, {shift[1]:g});")
    if scale != 1.0:
        moves.append(f"scale({scale:g});")
    if turn != "none":
        if turn not in TURNS:
            raise ValueError(f"unknown turn {turn!r}")
        moves.append(TURNS[turn])
    if moves:
        code = code[:head.end()] + "".join(f"  {m}\n" for m in moves) + code[head.end():]
    return _rewrite_numbers(code, rewrite, random.Random(seed))


DISGUISES: dict[str, dict[str, Any]] = {
    "mirrored": {"turn": ("mirror_x", "mirror_y")},
    "rotated": {"turn": ("rot90", "rot180", "rot270", "transpose")},
    "shifted": {"shift": (30, 70)},
    "scaled": {"scale": (0.72, 0.85, 1.12)},
    "rewritten": {},
}
"""The disguised-copy families (``copy_<name>``): each turns, shifts or scales the picture and
rewrites every number by one of :data:`REWRITES` (``copy_rewritten``: never ``none``)."""


def disguised_copy_families(sketches: dict[str, str]) -> dict[str, Family]:
    """``copy_mirrored``, ``copy_rotated``, ``copy_shifted``, ``copy_scaled`` and
    ``copy_rewritten`` over the pool's ``sketches`` (id -> code): :func:`disguise_sketch`."""
    ids = sorted(sketches)

    def make(p: Params) -> str:
        return disguise_sketch(sketches[p["id"]], p["turn"], (p["dx"], p["dy"]), p["scale"],
                               p["rewrite"], int(p["layout"]))

    def sample(kind: str) -> Callable[[random.Random], Params]:
        def draw(rng: random.Random) -> Params:
            spec = DISGUISES[kind]
            p: Params = {"id": rng.choice(ids), "turn": "none", "dx": 0, "dy": 0,
                         "scale": 1.0, "layout": rng.randrange(10_000),
                         "rewrite": rng.choice(REWRITES[1:] if kind == "rewritten"
                                               else REWRITES)}
            if "turn" in spec:
                p["turn"] = rng.choice(spec["turn"])
            if "shift" in spec:
                lo, hi = spec["shift"]
                p["dx"], p["dy"] = (rng.choice([-1, 1]) * rng.randint(lo, hi) for _ in "xy")
            if "scale" in spec:
                p["scale"] = rng.choice(spec["scale"])
            return p
        return draw

    return {f"copy_{k}": Family(f"copy_{k}", make, sample(k), False) for k in DISGUISES}


_RAINBOW = {"saturation": 0.85, "value": 0.95, "alpha": 200, "bleed": 0.1, "texture": 0.3,
            "start": 0.0, "paper": PAPERS[0]}
_SOFT = {"alpha": 140, "bleed": 0.25, "texture": 0.5, "paper": PAPERS[0]}
GAMED: dict[str, tuple[str, Params]] = {
    "rainbow_stripes": ("stripes", {**_RAINBOW, "n": 12, "fill": 0.8, "vertical": True,
                                    "margin": 96}),
    "disc_wheel": ("wheel", {**_RAINBOW, "n": 24, "ring": 150, "radius": 70}),
    "rainbow_quads": ("quads", {**_RAINBOW, "n": 8, "layout": 1}),
    "rainbow_quads_comments": ("quads_commented", {**_RAINBOW, "n": 8, "layout": 1,
                                                   "comment_bytes": 13000}),
    "hibiscus_confetti": ("painting_with_confetti", {**_RAINBOW, "example": "peach_hibiscus",
                                                     "n": 12, "layout": 1, "radius": 9}),
    "example_string_12k": ("padded", {"example": "peach_hibiscus", "kind": "string",
                                      "amount": 12000}),
    "example_dead_code": ("padded", {"example": "peach_hibiscus", "kind": "dead_code",
                                     "amount": 60}),
    "example_unrolled": ("padded", {"example": "peach_hibiscus", "kind": "unrolled",
                                    "amount": 60}),
    "peach_target": ("target", {**_SOFT, "palette": "hibiscus/peach", "n": 5,
                                "outer": 300}),
    "peach_dots": ("palette_dots", {**_SOFT, "palette": "hibiscus/peach", "n": 24,
                                    "layout": 1, "radius": 34, "spread": 120}),
}
"""The sketches the issue measured, as points of the families: name -> (family, params)."""


def gamed_sketch(name: str) -> str:
    family, params = GAMED[name]
    return FAMILIES[family].make(params)


def _mutate(p: Params, rng: random.Random, family: Family) -> Params:
    fresh = family.sample(rng)
    child = dict(p)
    for key in rng.sample(sorted(p), max(1, len(p) // 3)):
        child[key] = fresh[key]
    return child


# ---------------------------------------------------------------- renders


class RenderCache:
    """The gate's verdict on a sketch (allowlist mode by default), rendered once: its status
    and PNG kept in memory and, with ``folder``, on disk (written atomically), so a search
    that meets a sketch again, or a later run, does not render it again."""

    def __init__(self, renderer: Any, folder: str | None = None, mode: str = "allowlist"
                 ) -> None:
        self.renderer, self.mode = renderer, mode
        self.folder = Path(folder) if folder else None
        self._memory: dict[str, tuple[str, bytes | None]] = {}
        self.renders = 0

    def gate(self, code: str, seed: int = 0, deadline_s: float | None = None
             ) -> tuple[str, bytes | None]:
        """(gate status, PNG or None) for ``code`` rendered with ``seed`` (``deadline_s``:
        the render's, where not the renderer's)."""
        key = hashlib.sha256(f"{self.mode}\x1f{seed}\x1f{code}".encode()).hexdigest()[:32]
        if key in self._memory:
            return self._memory[key]
        if self.folder is not None and (self.folder / f"{key}.json").is_file():
            status = json.loads((self.folder / f"{key}.json").read_text())["status"]
            png_path = self.folder / f"{key}.png"
            found = (status, png_path.read_bytes() if png_path.is_file() else None)
            self._memory[key] = found
            return found
        from watercolour.gates import check

        verdict = check(code, self.renderer, mode=self.mode, seed=seed, deadline_s=deadline_s)
        self.renders += 1
        png = verdict.render.png if verdict.render is not None else None
        found = (verdict.status, png if verdict.status == "ok" else None)
        if self.folder is not None and verdict.status != "unavailable":
            from watercolour.io import write_bytes_atomic, write_json_atomic

            if found[1] is not None:
                write_bytes_atomic(self.folder / f"{key}.png", found[1])
            write_json_atomic(self.folder / f"{key}.json",
                              {"status": verdict.status, "violations": [
                                  str(v) for v in getattr(verdict, "violations", [])][:5]})
        self._memory[key] = found
        return found


# ---------------------------------------------------------------- the search


@dataclass
class Found:
    family: str
    params: Params
    code: str
    reward: float
    detail: dict[str, Any] = field(default_factory=dict)


def search(score: Callable[[str], tuple[float | None, dict[str, Any]]],
           families: dict[str, Family] | None = None, per_family: int = 6,
           generations: int = 1, keep: int = 2, seed: int = 0,
           start: dict[str, list[Params]] | None = None) -> dict[str, list[Found]]:
    """Per family: ``per_family`` random sketches (plus any ``start`` points), then
    ``generations`` rounds of mutating the ``keep`` best into ``per_family`` children.
    ``score(code)`` returns (reward or None, detail); sketches the gate rejects or that fail
    score None and are skipped. Returns every family's finds, best first."""
    families = families or FAMILIES
    return {name: _search_family(name, family, score, per_family, generations, keep,
                                 random.Random(f"{seed}-{name}"), (start or {}).get(name, []))
            for name, family in families.items()}


def _search_family(name: str, family: Family,
                   score: Callable[[str], tuple[float | None, dict[str, Any]]],
                   per_family: int, generations: int, keep: int, rng: random.Random,
                   start: list[Params]) -> list[Found]:
    seen: dict[str, Found] = {}

    def run(params: Params) -> None:
        code = family.make(params)
        key = hashlib.sha256(code.encode()).hexdigest()
        if key in seen:
            return
        reward, detail = score(code)
        if reward is not None:
            seen[key] = Found(name, params, code, reward, detail)

    for params in start:
        run(params)
    for _ in range(per_family):
        run(family.sample(rng))
    for _ in range(generations):
        best = sorted(seen.values(), key=lambda f: -f.reward)[:keep]
        for parent in best:
            for _ in range(max(1, per_family // max(1, keep))):
                run(_mutate(parent.params, rng, family))
    return sorted(seen.values(), key=lambda f: -f.reward)
