"""A short critique of a render from its own measurable properties: how much of the paper is
painted, how many shapes, how much of it lies on an outline, how dark, what went wrong. It
never mentions the references or the score, so a multi-turn policy learns to look at its
picture, not to chase the judge."""

from __future__ import annotations

from typing import Any

PAINT_LOW, PAINT_HIGH = 0.08, 0.75
EDGES_BUSY = 0.5
LUMA_DARK = 110.0
UNCHANGED = "The picture is the same as last turn's."
"""Said first when a revision renders to the very same picture as the turn before."""


def critique(gate: dict[str, Any]) -> str:
    """A few sentences about the render described by a gate verdict's ``to_dict()``."""
    if gate.get("infrastructure_failure"):
        return "The browser failed before the sketch could be seen; nothing to say about it."
    lines: list[str] = []
    violations = gate.get("violations") or []
    reasons = gate.get("reasons") or {}
    if violations:
        lines.append("The gate rejected the sketch: " + "; ".join(
            f"{v} ({reasons[v]})" if reasons.get(v) else v for v in violations) + ".")
    paint = gate.get("paint_fraction")
    shapes = gate.get("n_shapes")
    image = gate.get("image") or {}
    if paint is not None and gate.get("render") is not None:
        judgement = ("sparse: most of the paper is bare" if paint < PAINT_LOW else
                     "flooded: little paper shows through" if paint > PAINT_HIGH else
                     "balanced with the paper")
        lines.append(f"Paint covers {paint:.0%} of the canvas ({judgement}).")
    if shapes is not None and gate.get("render") is not None:
        lines.append(f"{shapes} filled brush shape{'s' if shapes != 1 else ''}"
                     + (" (the prompt asks for 15-30)." if not 15 <= shapes <= 30 else "."))
    edges = image.get("shape_edges")
    if edges is not None:
        lines.append(f"About {edges:.0%} of the canvas lies on a visible shape outline"
                     + (" (busy: many sharp borders)." if edges > EDGES_BUSY else "."))
    luma = image.get("mean_luma")
    if luma is not None and luma < LUMA_DARK:
        lines.append("The picture is dark overall; watercolour keeps the paper's light.")
    if gate.get("error"):
        lines.append(f"The sketch threw: {str(gate['error']).splitlines()[0][:200]}")
    return " ".join(lines) or "Nothing was rendered."
