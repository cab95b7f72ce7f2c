"""The negatives drawn by their own code (``blank``, ``blob``, ``scribble``): sketches the gates
or the judge should reject. The other negatives (``faint``, ``grey``, ``off_canvas``) are plan
variants written like any painting."""

from __future__ import annotations

from watercolour.pool.procedural.plan import Plan, seeded_rng
from watercolour.pool.procedural.scene import Fill
from watercolour.pool.procedural.writer import fill_lines, num, polygon_lines
from watercolour.pool.subjects import SUBJECTS

DRAWN: tuple[str, ...] = ("blank", "blob", "scribble")
"""The negatives :func:`negative_code` writes."""


def negative_code(plan: Plan) -> str:
    s = plan.size
    rng = seeded_rng("negative", plan.variant, plan.seed)
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
        lines += fill_lines(Fill(pal["mid"], 235, 0.04, 0.1, 0.05))
        x, y = rng.uniform(-0.08, 0.08) * s, rng.uniform(-0.08, 0.08) * s
        lines.append(f"  brush.circle({num(x)}, {num(y)}, {num(s * rng.uniform(0.3, 0.38))});")
    elif plan.variant == "scribble":
        colours = list(pal.values())
        for _ in range(rng.randint(18, 26)):
            lines += fill_lines(Fill(rng.choice(colours), rng.randint(120, 230),
                                      round(rng.uniform(0.0, 0.1), 2), 0.2, 0.1))
            x, y = rng.uniform(-0.45, 0.45) * s, rng.uniform(-0.45, 0.45) * s
            pts = []
            for _ in range(rng.randint(3, 5)):
                x += rng.uniform(-0.3, 0.3) * s
                y += rng.uniform(-0.3, 0.3) * s
                pts.append((x, y))
                pts.append((x + rng.uniform(-4, 4), y + rng.uniform(2, 6)))
            lines += polygon_lines(pts, 0.0)
    lines += ["  noLoop();", "}"]
    return "\n".join(lines) + "\n"
