"""The p5.brush API, in one place: the methods that exist, the allowlist and its signatures.

The methods are read from the vendored bundle: a UMD file whose factory ``function(t){ ... }``
ends with one long sequence of ``t.NAME = ...`` assignments, the library's public surface. It
is read with the same JavaScript parser the gates use (:mod:`watercolour.javascript`), so the
list follows the vendored version, never a hand-kept copy; ``manifest.json`` records how many
methods the vendored version has (:func:`expected_method_count`).

The allowlist (:data:`ALLOWLIST`) and its argument shapes (:data:`SIGNATURES`) are what the
system prompt lists (:mod:`watercolour.prompt`), what the gates enforce in ``allowlist`` mode
and what the procedural painter writes. Everything above the renderer imports them from here.
"""

from __future__ import annotations

from functools import cache

from watercolour.javascript import parse

ALLOWLIST: tuple[str, ...] = (
    "scaleBrushes", "noStroke", "fill", "noFill", "fillBleed", "fillTexture",
    "beginShape", "vertex", "endShape", "circle",
)
"""The 10 methods the system prompt allows: with them a sketch can only lay filled, bleeding
shapes. In ``library`` mode this is advice; in ``allowlist`` mode it is enforced."""

SIGNATURES: dict[str, str] = {
    "scaleBrushes": "brush.scaleBrushes(scale)",
    "noStroke": "brush.noStroke()",
    "fill": "brush.fill(color, opacity)",
    "noFill": "brush.noFill()",
    "fillBleed": "brush.fillBleed(strength)",
    "fillTexture": "brush.fillTexture(texture, border)",
    "beginShape": "brush.beginShape(curvature)",
    "vertex": "brush.vertex(x, y)",
    "endShape": "brush.endShape(CLOSE)",
    "circle": "brush.circle(x, y, radius)",
}
"""Each allowed method with its argument shape, as the prompt lists it."""

PAINTING_METHODS: frozenset[str] = frozenset({
    "circle", "rect", "polygon", "endShape", "arc", "line", "flowLine", "spline",
    "endStroke", "hatchArray", "massArray",
})
"""Methods that put paint on the canvas (the others set state or build a shape)."""

FILLED_SHAPE_METHODS: frozenset[str] = frozenset({"endShape", "circle", "rect", "polygon"})
"""Methods that close a filled shape while a brush fill is active (the harness's ``n_shapes``)."""


@cache
def bundle_exports() -> tuple[str, ...]:
    """Every name the vendored p5.brush bundle exports, in bundle order."""
    from watercolour.render.vendor import libraries

    code = next(lib.code for lib in libraries() if lib.package == "p5.brush")
    return tuple(_exports_of(code))


@cache
def brush_methods() -> frozenset[str]:
    """The real ``brush.*`` methods of the vendored bundle."""
    return frozenset(_methods(bundle_exports()))


def methods_in(code: str) -> frozenset[str]:
    """The methods a p5.brush bundle's source exports (``scripts/vendor_js.py`` counts them)."""
    return frozenset(_methods(_exports_of(code)))


def _methods(exports) -> list[str]:
    """The exports that are not classes (capitalised names, the same rule the render harness
    uses when it counts calls)."""
    return [name for name in exports if not name[:1].isupper()]


def expected_method_count() -> int:
    """How many methods the vendored p5.brush has, as ``manifest.json`` records it (written by
    ``scripts/vendor_js.py`` when the bundle is vendored)."""
    from watercolour.render.vendor import manifest

    return int(manifest()["p5.brush.js"]["methods"])


def _exports_of(code: str) -> list[str]:
    """Names ``N`` of the ``P.N = ...`` assignments made directly in the body of the UMD
    factory ``function(P){...}`` (the longest such list, if there are several factories)."""
    tree = parse(code)
    best: list[str] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("function_expression", "function", "arrow_function"):
            params = node.child_by_field_name("parameters")
            body = node.child_by_field_name("body")
            names = [c for c in (params.named_children if params else []) if c.type == "identifier"]
            if len(names) == 1 and body is not None and body.type == "statement_block":
                found = _assigned_members(body, names[0].text.decode())
                if len(found) > len(best):
                    best = found
                continue  # factories do not nest
        stack.extend(node.named_children)
    if not best:
        raise RuntimeError("could not find the export block of the vendored p5.brush bundle")
    return best


def _assigned_members(body, param: str) -> list[str]:
    names: list[str] = []
    for statement in body.named_children:
        if statement.type != "expression_statement":
            continue
        expr = statement.named_children[0] if statement.named_children else None
        items = _flatten_sequence(expr) if expr is not None else []
        for item in items:
            if item.type != "assignment_expression":
                continue
            left = item.child_by_field_name("left")
            if left is None or left.type != "member_expression":
                continue
            obj = left.child_by_field_name("object")
            prop = left.child_by_field_name("property")
            if obj is not None and prop is not None and obj.text.decode() == param:
                name = prop.text.decode()
                if name not in names:
                    names.append(name)
    return names


def _flatten_sequence(node) -> list:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type == "sequence_expression":
            stack.extend(reversed(n.named_children))
        else:
            out.append(n)
    return out
