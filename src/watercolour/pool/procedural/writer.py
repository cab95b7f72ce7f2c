"""Writing a scene as JavaScript, in three code styles (:data:`~.plan.STYLES`): every vertex
written out (``unrolled``), a helper function called once per petal (``helpers``), data arrays
walked by loops (``loop``). Only the ten allowlisted brush methods are written."""

from __future__ import annotations

import math

from watercolour.pool.procedural.plan import Plan
from watercolour.pool.procedural.scene import Fill, Free, Group, build_scene
from watercolour.pool.subjects import CURVES, OUTLINES


def num(v: float) -> str:
    """A compact number: integers without a point, others with at most 2 decimals."""
    r = round(v, 2)
    if r == int(r):
        return str(int(r))
    return f"{r:.2f}".rstrip("0")


def fill_lines(fill: Fill, indent: str = "  ") -> list[str]:
    return [
        f"{indent}brush.fillBleed({num(fill.bleed)});",
        f"{indent}brush.fillTexture({num(fill.texture)}, {num(fill.border)});",
        f"{indent}brush.fill('{fill.colour}', {fill.alpha});",
    ]


def _outline_points(outline: str, x: float, y: float, angle: float, length: float,
                    width: float) -> list[tuple[float, float]]:
    ca, sa = math.cos(angle), math.sin(angle)
    return [(x + u * length * ca - v * width * sa, y + u * length * sa + v * width * ca)
            for u, v in OUTLINES[outline]]


def polygon_lines(points: list[tuple[float, float]], curve: float, indent: str = "  "
                   ) -> list[str]:
    lines = [f"{indent}brush.beginShape({num(curve)});"]
    lines += [f"{indent}brush.vertex({num(x)}, {num(y)});" for x, y in points]
    lines.append(f"{indent}brush.endShape(CLOSE);")
    return lines


def _free_lines(item: Free) -> list[str]:
    lines = [f"  // {item.comment}"] if item.comment else []
    lines += fill_lines(item.fill)
    for poly in item.polygons:
        lines += polygon_lines(poly, item.curve)
    for x, y, r in item.circles:
        lines.append(f"  brush.circle({num(x)}, {num(y)}, {num(r)});")
    return lines


def _const_name(outline: str) -> str:
    return outline.upper()


def write_sketch(plan: Plan) -> str:
    """The plan's scene written as a complete p5.js + p5.brush sketch, in the plan's style."""
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
        f"  brush.scaleBrushes({num(1.5 * plan.size / 512)});",
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
            body += fill_lines(item.fill)
            for place in item.placements:
                body += polygon_lines(_outline_points(item.outline, *place),
                                       CURVES[item.outline])
    else:
        for name in outlines:
            pts = ", ".join(f"[{num(u)}, {num(v)}]" for u, v in OUTLINES[name])
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
            body.append(f"  wash('{f.colour}', {f.alpha}, {num(f.bleed)}, {num(f.texture)}, "
                        f"{num(f.border)});")
            const, curve = _const_name(item.outline), num(CURVES[item.outline])
            if plan.style == "helpers":
                for x, y, a, ln, w in item.placements:
                    body.append(f"  shape({const}, {num(x)}, {num(y)}, {num(a)}, {num(ln)}, "
                                f"{num(w)}, {curve});")
            else:
                rows = ", ".join(f"[{num(x)}, {num(y)}, {num(a)}, {num(ln)}, {num(w)}]"
                                 for x, y, a, ln, w in item.placements)
                body.append(f"  for (const [x, y, a, len, wid] of [{rows}]) {{")
                body.append(f"    shape({const}, x, y, a, len, wid, {curve});")
                body.append("  }")
    draw = ["function draw() {", *body, "  noLoop();", "}"]
    return "\n".join(head + setup + draw + helpers) + "\n"
