"""The static inventory of a sketch, read with a real JavaScript parser (tree-sitter).

Only code counts: comments and strings are never calls (``// the centre (300, 300)`` is not a
call, and ``brush.rect(...)`` is not p5's bare ``rect(...)``). The parser tolerates broken input,
so a truncated or malformed sketch still gets an inventory, with its errors located.

Everything found is recorded as ``name -> [line, ...]`` (1-based lines of the call sites), so a
reason can point at the line. A computed name on the global object, p5 or ``brush``
(``window['ell' + 'ipse']``, ``brush[NAME]`` with ``const NAME = 'rect'``) is read as the name
it resolves to when its key is built from string literals and ``const`` strings alone; any other
key cannot be read here, and is listed (``dynamic_access``, ``dynamic_brush_access``): allowlist
mode rejects it, library mode notes it. Static checks can still be dodged (a name built by a
function, ``eval``): the render's runtime evidence is the second source the verdict uses.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from tree_sitter import Node

from watercolour.javascript import parse, text
from watercolour.render.brush import ALLOWLIST, PAINTING_METHODS, brush_methods, bundle_exports

MAX_SKETCH_CHARS = 100_000
"""Longer sketches are rejected as ``too_large`` (a reply is at most ~8k tokens, ~30 kB)."""

P5_PRIMITIVES = frozenset({
    "ellipse", "circle", "rect", "square", "line", "triangle", "quad", "arc", "point", "curve",
    "bezier", "beginShape", "vertex", "endShape", "bezierVertex", "curveVertex",
    "quadraticVertex", "splineVertex", "beginContour", "endContour", "image", "plane", "box",
    "sphere", "cylinder", "cone", "ellipsoid", "torus", "model", "set", "updatePixels", "copy",
    "blend", "filter", "createGraphics", "createImage", "createFramebuffer", "createShader",
    "createFilterShader", "shader", "texture",
})
"""p5's own drawing functions (and off-screen buffers and shaders that bypass p5.brush). The
first block matches the render harness's runtime list."""

AMBIGUOUS_PRIMITIVES = frozenset({"set", "copy", "filter", "box"})
"""Also common JavaScript method names (``Map.set``, ``Array.filter``): primitives only when
called bare or on the global object, never as ``someObject.filter(...)``."""

EXTERNAL_CALLS = frozenset({
    "loadImage", "loadFont", "loadJSON", "loadBytes", "loadStrings", "loadTable", "loadXML",
    "loadModel", "loadShader", "loadSound", "loadBlob", "loadFilterShader", "httpGet", "httpPost",
    "httpDo", "fetch", "importScripts", "require", "sendBeacon", "open", "saveCanvas", "save",
    "saveFrames",
})
EXTERNAL_CONSTRUCTORS = frozenset({
    "XMLHttpRequest", "WebSocket", "EventSource", "Image", "FontFace", "Worker", "SharedWorker",
    "Request", "BroadcastChannel", "RTCPeerConnection", "webkitRTCPeerConnection", "Audio",
})
NAVIGATION_CALLS = frozenset({"assign", "replace", "reload"})
DOM_CREATORS = frozenset({
    "createDiv", "createP", "createSpan", "createElement", "createImg", "createA",
    "createButton", "createInput", "createSelect", "createCheckbox", "createRadio",
    "createSlider", "createVideo", "createAudio", "createCapture", "createFileInput",
    "createColorPicker",
})
DOM_METHODS = frozenset({
    "createElement", "createElementNS", "appendChild", "insertAdjacentHTML",
    "insertAdjacentElement", "insertAdjacentText", "replaceChildren", "insertBefore",
    "attachShadow", "replaceWith", "showModal", "requestFullscreen",
})
DOM_PROPERTIES = frozenset({"innerHTML", "outerHTML", "innerText", "textContent", "outerText"})
RAW_CANVAS_METHODS = frozenset({
    "fillRect", "strokeRect", "drawImage", "putImageData", "drawArrays", "drawElements",
    "drawArraysInstanced", "drawElementsInstanced", "transferFromImageBitmap",
})
RAW_GL_METHODS = frozenset({
    "scissor", "clearColor", "clearBufferfv", "clearBufferiv", "clearBufferuiv", "clearBufferfi",
    "texImage2D", "texSubImage2D", "texImage3D", "texSubImage3D", "copyTexImage2D",
    "copyTexSubImage2D", "compressedTexImage2D", "readPixels", "blitFramebuffer", "colorMask",
    "bufferData", "bufferSubData", "shaderSource", "drawRangeElements",
})
"""WebGL calls that put pixels on a canvas (or read them back) without p5.brush: the render
harness counts the same calls at run time when the sketch makes them itself."""
RAW_CONTEXT_NAMES = frozenset({"drawingContext", "_renderer"})
"""p5's handles on the raw WebGL context and its renderer internals: reaching for them is
painting past the library (``drawingContext.clear()``, ``_renderer.GL.scissor(...)``)."""
TEXT_METHODS = frozenset({"fillText", "strokeText"})
TIMER_CALLS = frozenset({
    "setInterval", "setTimeout", "requestAnimationFrame", "requestIdleCallback",
})
TAMPER_CALLS = frozenset({
    "defineProperty", "defineProperties", "setPrototypeOf", "__defineGetter__",
    "__defineSetter__",
})
CAPTURE_PROPERTIES = frozenset({
    "toDataURL", "toBlob", "getContext", "getImageData", "readPixels", "captureStream",
    "transferToImageBitmap",
})
TAMPER_TARGET = re.compile(
    r"prototype|\bbrush\b|\bp5\b|HTMLCanvasElement|CanvasRenderingContext|WebGL|"
    r"\bwindow\b|\bdocument\b|\bglobalThis\b|\bcanvas\b|\bnavigator\b|\blocation\b"
)
GLOBAL_OBJECTS = frozenset({
    "window", "globalThis", "self", "this", "top", "parent", "frames", "p5.instance",
    "document.defaultView",
})
BRUSH_OBJECTS = frozenset({"brush", "window.brush", "globalThis.brush", "self.brush"})
GLOBAL_NAMES = ("window", "globalThis", "self", "top", "parent", "frames")
"""Names of the global object (``window.self.top`` is still the global object)."""
P5_OBJECTS = frozenset({"p5", "p5.prototype", "p5.instance"})
"""p5's constructor, its prototype and the running sketch's instance: their members are p5's
drawing functions and raw handles."""
ENUMERATING_CALLS = frozenset({"values", "entries", "getOwnPropertyDescriptors"})
"""``Object.values(window)`` and the like hand over every member without naming one."""
KEYED_CALLS = frozenset({"get", "getOwnPropertyDescriptor"})
"""``Reflect.get(window, key)``, ``Object.getOwnPropertyDescriptor(brush, key)``: a member
read by a key, as ``window[key]`` is."""
HARMLESS_P5_SETTINGS = frozenset({"disableFriendlyErrors"})
OPENERS = {"{": "}", "(": ")", "[": "]", "${": "}"}
CLOSERS = frozenset({"}", ")", "]"})

Lines = dict[str, list[int]]


@dataclass
class Inventory:
    """What a sketch contains, found without running it."""

    n_chars: int = 0
    n_lines: int = 0
    syntax_errors: list[str] = field(default_factory=list)
    """``"line 12: unexpected `)`"``, one per error the parser recovered from."""
    truncated: str | None = None
    """Why the code looks cut off (None when it does not)."""
    has_setup: bool = False
    has_draw: bool = False
    async_setup: bool = False
    canvases: list[dict[str, Any]] = field(default_factory=list)
    """Each ``createCanvas`` call: ``line``, ``args`` (source text) and ``webgl``
    (True / False / None when the renderer argument is not a literal)."""
    brush_calls: Lines = field(default_factory=dict)
    """Real p5.brush methods called as ``brush.NAME(...)``."""
    unknown_brush_methods: Lines = field(default_factory=dict)
    """``brush.NAME(...)`` where p5.brush has no NAME."""
    dynamic_brush_access: list[int] = field(default_factory=list)
    """``brush[expr]`` with a key that cannot be resolved here: which method is used shows only
    at run time (allowlist mode rejects it)."""
    brush_references: Lines = field(default_factory=dict)
    """Real p5.brush members read without being called here (``const r = brush.rect``,
    ``brush['re' + 'ct']``): in allowlist mode they count as calls."""
    p5_primitives: Lines = field(default_factory=dict)
    raw_canvas: Lines = field(default_factory=dict)
    text: Lines = field(default_factory=dict)
    external: Lines = field(default_factory=dict)
    dom: Lines = field(default_factory=dict)
    dynamic_code: Lines = field(default_factory=dict)
    tampering: Lines = field(default_factory=dict)
    timers: Lines = field(default_factory=dict)
    dynamic_access: list[int] = field(default_factory=list)
    """``window[expr]``, ``this[expr]``, ``p5.prototype[expr]``, ``Reflect.get(window, expr)``,
    ``Object.values(window)``, ``with (window)``: a member of the global object or p5 whose
    name cannot be resolved here (allowlist mode rejects it; library mode notes it)."""
    brush_aliased: bool = False
    """``brush`` is used other than as ``brush.NAME(...)`` (``const b = brush``, passed to a
    function): some of its calls may be invisible to the static count."""

    # ------------------------------------------------------------------ derived
    @property
    def parse_ok(self) -> bool:
        return not self.syntax_errors

    @property
    def too_large(self) -> bool:
        return self.n_chars > MAX_SKETCH_CHARS

    @property
    def webgl(self) -> bool | None:
        """True when every ``createCanvas`` asks for WEBGL; False when there is none or one
        is 2D; None when a renderer argument is not a literal."""
        if not self.canvases:
            return False
        flags = [c["webgl"] for c in self.canvases]
        if any(f is False for f in flags):
            return False
        return None if any(f is None for f in flags) else True

    @property
    def painting_calls(self) -> dict[str, int]:
        return {m: len(v) for m, v in self.brush_calls.items() if m in PAINTING_METHODS}

    @property
    def outside_allowlist(self) -> list[str]:
        """p5.brush members called or referenced that the prompt's 10 do not include."""
        return sorted({m for m in (*self.brush_calls, *self.brush_references)
                       if m not in ALLOWLIST})

    def counts(self, category: str) -> dict[str, int]:
        return {name: len(lines) for name, lines in getattr(self, category).items()}

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(parse_ok=self.parse_ok, webgl=self.webgl, painting_calls=self.painting_calls,
                    outside_allowlist=self.outside_allowlist)
        return data


def take_inventory(code: str) -> Inventory:
    """Parse ``code`` and list what it does (see :class:`Inventory`)."""
    inv = Inventory(n_chars=len(code), n_lines=code.count("\n") + (not code.endswith("\n")))
    tree = parse(code)
    _Walker(inv, code).walk(tree.root_node)
    return inv


def _add(table: Lines, name: str, node: Node) -> None:
    table.setdefault(name, []).append(node.start_point[0] + 1)


def _line(node: Node) -> int:
    return node.start_point[0] + 1


def _literal_string(node: Node | None) -> str | None:
    if node is not None and node.type == "string":
        return text(node)[1:-1]
    if node is not None and node.type == "template_string" and not any(
            c.type == "template_substitution" for c in node.named_children):
        return text(node)[1:-1]
    return None


def _fold(node: Node | None, consts: dict[str, Node], depth: int) -> str | None:
    """See :meth:`_Walker.fold`."""
    if node is None or depth > 20:
        return None
    literal = _literal_string(node)
    if literal is not None:
        return literal
    kind = node.type
    if kind == "parenthesized_expression" and node.named_children:
        return _fold(node.named_children[-1], consts, depth + 1)
    if kind == "binary_expression" and text(node.child_by_field_name("operator")) == "+":
        left = _fold(node.child_by_field_name("left"), consts, depth + 1)
        right = _fold(node.child_by_field_name("right"), consts, depth + 1)
        return None if left is None or right is None else left + right
    if kind == "identifier" and text(node) in consts:
        return _fold(consts[text(node)], consts, depth + 1)
    if kind == "call_expression":  # ['re', 'ct'].join('')
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is None or fn.type != "member_expression" or args is None \
                or text(fn.child_by_field_name("property")) != "join":
            return None
        array = fn.child_by_field_name("object")
        if array is None or array.type != "array":
            return None
        parts = [_fold(item, consts, depth + 1) for item in array.named_children]
        sep = _fold(args.named_children[0], consts, depth + 1) if args.named_children else ","
        return None if sep is None or any(p is None for p in parts) else sep.join(parts)
    return None


def _same(a: Node, b: Node) -> bool:
    return (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


def _object_kind(source: str, aliases: dict[str, str]) -> str | None:
    """``global``, ``p5`` or ``brush`` for the source text of an object expression."""
    source = re.sub(r"\s+", "", source)
    if source in aliases:
        return _object_kind(aliases[source], {})
    if source == "this" or source == "document.defaultView":
        return "global"
    parts = source.split(".")
    while len(parts) > 1 and parts[0] in GLOBAL_NAMES:
        parts = parts[1:]
    rest = ".".join(parts)
    if rest in GLOBAL_NAMES or rest == "document.defaultView":
        return "global"
    if rest == "brush":
        return "brush"
    if rest in P5_OBJECTS:
        return "p5"
    return None


def _inside_object_method(node: Node) -> bool:
    """Is ``node`` inside a class body or an object literal's method (where ``this`` is that
    object, not the global one)?"""
    parent = node.parent
    while parent is not None:
        if parent.type in ("class_body", "method_definition"):
            return True
        parent = parent.parent
    return False


def _constants_and_aliases(root: Node) -> tuple[dict[str, Node], dict[str, str]]:
    """Names declared once, with ``const``, bound to an expression (for folding keys), and
    names bound to the global object, p5 or brush (``const w = window``), whatever the
    declaration."""
    counts: dict[str, int] = {}
    consts: dict[str, Node] = {}
    aliases: dict[str, str] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "variable_declarator":
            name_node = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if name_node is not None and name_node.type == "identifier":
                name = text(name_node)
                counts[name] = counts.get(name, 0) + 1
                parent = node.parent
                is_const = parent is not None and parent.type == "lexical_declaration" and \
                    any(c.type == "const" for c in parent.children)
                if is_const and value is not None:
                    consts[name] = value
                if value is not None and text(value) != "this" \
                        and _object_kind(text(value), {}) is not None:
                    aliases[name] = re.sub(r"\s+", "", text(value))
        elif node.type in ("assignment_expression",):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and left.type == "identifier":
                counts[text(left)] = counts.get(text(left), 0) + 2  # reassigned: never folded
                if right is not None and text(right) != "this" \
                        and _object_kind(text(right), {}) is not None:
                    aliases[text(left)] = re.sub(r"\s+", "", text(right))
        elif node.type == "formal_parameters":
            for child in node.named_children:
                if child.type == "identifier":
                    counts[text(child)] = counts.get(text(child), 0) + 2
        elif node.type == "for_in_statement":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                counts[text(left)] = counts.get(text(left), 0) + 2
        stack.extend(node.named_children)
    consts = {name: value for name, value in consts.items() if counts.get(name) == 1}
    return consts, aliases


class _Walker:
    def __init__(self, inv: Inventory, code: str) -> None:
        self.inv = inv
        self.code = code
        self.end = len(code.rstrip().encode("utf-8"))
        self.balance: list[tuple[str, int]] = []
        self.brush_refs = 0
        self.own_functions: set[str] = set()
        self.consts: dict[str, Node] = {}
        self.aliases: dict[str, str] = {}
        self.errors: list[tuple[Node, str]] = []

    # ---------------------------------------------------------------- traversal
    def walk(self, root: Node) -> None:
        self.own_functions = _declared_functions(root)
        self.consts, self.aliases = _constants_and_aliases(root)
        stack = [root]
        while stack:
            node = stack.pop()
            if node.is_missing:
                self.errors.append((node, f"line {_line(node)}: missing `{node.type}`"))
                continue
            if node.type == "ERROR":
                snippet = text(node).strip().splitlines()[0][:40] if text(node).strip() else ""
                self.errors.append((node, f"line {_line(node)}: unexpected `{snippet}`"))
            elif node.type.startswith("jsx_") and node.type in ("jsx_element",
                                                                 "jsx_self_closing_element"):
                self.errors.append((node, f"line {_line(node)}: HTML/JSX is not JavaScript"))
            self.visit(node)
            if node.child_count == 0:
                self.token(node)
            stack.extend(reversed(node.children))
        self.finish()

    def token(self, node: Node) -> None:
        kind = node.type
        if kind in OPENERS:
            self.balance.append((kind, _line(node)))
        elif kind in CLOSERS and self.balance and OPENERS[self.balance[-1][0]] == kind:
            self.balance.pop()

    def finish(self) -> None:
        inv = self.inv
        tail = [n for n, _ in self.errors if n.end_byte >= self.end]
        if self.balance:
            opener, line = self.balance[-1]
            inv.truncated = (f"{len(self.balance)} bracket(s) never closed "
                             f"(the last `{opener}` opened on line {line})")
        elif tail:
            inv.truncated = f"the code stops mid-statement (line {_line(tail[0])})"
        direct = (sum(map(len, inv.brush_calls.values()))
                  + sum(map(len, inv.brush_references.values()))
                  + sum(map(len, inv.unknown_brush_methods.values()))
                  + len(inv.dynamic_brush_access))
        inv.brush_aliased = self.brush_refs > direct
        inv.syntax_errors = [msg for _, msg in sorted(self.errors, key=lambda e: e[0].start_byte)]

    # ---------------------------------------------------------------- node kinds
    def visit(self, node: Node) -> None:
        kind = node.type
        if kind == "call_expression":
            self.call(node)
        elif kind == "new_expression":
            self.new(node)
        elif kind in ("assignment_expression", "augmented_assignment_expression"):
            self.assignment(node)
        elif kind in ("function_declaration", "generator_function_declaration"):
            self.declaration(node)
        elif kind == "variable_declarator":
            name = text(node.child_by_field_name("name"))
            if name in ("setup", "draw"):
                self.define(name, node.child_by_field_name("value"))
            self.destructure(node)
        elif kind == "with_statement":
            self.inv.dynamic_access.append(_line(node))
        elif kind == "member_expression":
            self.member(node)
        elif kind in ("string", "template_string"):
            lowered = text(node).lower()
            if "data:" in lowered:
                _add(self.inv.external, "data: URL", node)
            if "javascript:" in lowered:
                _add(self.inv.external, "javascript: URL", node)
        elif kind in ("import_statement", "export_statement"):
            _add(self.inv.external, kind.split("_")[0], node)
        elif kind == "identifier" and text(node) == "brush":
            self.brush_refs += 1
        elif kind in ("identifier", "property_identifier") and text(node) in RAW_CONTEXT_NAMES:
            _add(self.inv.raw_canvas, text(node), node)
        elif kind == "identifier" and text(node) == "eval":
            parent = node.parent
            if parent is None or parent.type != "call_expression":
                _add(self.inv.dynamic_code, "eval", node)
        elif kind == "subscript_expression":
            self.subscript(node)

    # ---------------------------------------------------------------- computed names
    def fold(self, node: Node | None) -> str | None:
        """The string ``node`` always evaluates to, when it is built from string literals and
        ``const`` strings alone (``'ell' + 'ipse'``, ``NAME``, ``['re', 'ct'].join('')``)."""
        return _fold(node, self.consts, 0)

    def target_kind(self, node: Node | None) -> str | None:
        """``global``, ``p5`` or ``brush`` when ``node`` is one of those objects (or an alias
        of one), else None."""
        if node is None:
            return None
        kind = _object_kind(text(node), self.aliases)
        if kind == "global" and text(node) == "this" and _inside_object_method(node):
            return None  # ``this`` in a class or object method is that object
        return kind

    def subscript(self, node: Node) -> None:
        """``O[key]`` on the global object, p5 or brush: resolved to ``O.name`` when the key
        folds to a string; listed as a computed access when it does not."""
        target = self.target_kind(node.child_by_field_name("object"))
        index = node.child_by_field_name("index")
        if target is None or index is None or index.type == "number":
            return
        name = self.fold(index)
        if name is None:
            (self.inv.dynamic_brush_access if target == "brush"
             else self.inv.dynamic_access).append(_line(node))
            return
        self.named_member(node, target, name)

    def member(self, node: Node) -> None:
        """``brush.NAME`` read without a call (calls are classified in :meth:`call`)."""
        target = self.target_kind(node.child_by_field_name("object"))
        if target != "brush":
            return
        self.named_member(node, target, text(node.child_by_field_name("property")))

    def named_member(self, node: Node, target: str, name: str) -> None:
        parent = node.parent
        callee = None if parent is None else parent.child_by_field_name(
            "function" if parent.type == "call_expression" else "constructor")
        called = parent is not None and parent.type in ("call_expression", "new_expression") \
            and callee is not None and _same(callee, node)
        if target == "brush":
            if parent is not None and parent.type == "new_expression" and called:
                self.brush_member(name, node, call=True)
            elif not called:
                self.brush_member(name, node, call=False)
        elif name in RAW_CONTEXT_NAMES and node.type == "subscript_expression":
            _add(self.inv.raw_canvas, name, node)

    def brush_member(self, name: str, node: Node, call: bool) -> None:
        exports = bundle_exports()
        if name not in exports and name not in brush_methods():
            if not name.startswith("_"):
                _add(self.inv.unknown_brush_methods, name, node)
            return
        _add(self.inv.brush_calls if call else self.inv.brush_references, name, node)

    def destructure(self, node: Node) -> None:
        """``const {[key]: f} = window`` is ``window[key]``; ``const {rect} = brush`` reads
        ``brush.rect``."""
        pattern, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if pattern is None or pattern.type != "object_pattern":
            return
        target = self.target_kind(value)
        if target is None:
            return
        for child in pattern.named_children:
            key = child.child_by_field_name("key") if child.type == "pair_pattern" else child
            if key is None:
                continue
            if key.type == "computed_property_name":
                inner = key.named_children[0] if key.named_children else None
                name = self.fold(inner)
            elif key.type in ("property_identifier", "shorthand_property_identifier_pattern",
                              "identifier"):
                name = text(key)
            elif key.type == "string":
                name = _literal_string(key)
            else:
                continue
            if name is None:
                (self.inv.dynamic_brush_access if target == "brush"
                 else self.inv.dynamic_access).append(_line(key))
            elif target == "brush":
                self.brush_member(name, key, call=False)
            elif name in RAW_CONTEXT_NAMES:
                _add(self.inv.raw_canvas, name, key)

    def declaration(self, node: Node) -> None:
        name = text(node.child_by_field_name("name"))
        if name in ("setup", "draw"):
            self.define(name, node)

    def define(self, name: str, value: Node | None) -> None:
        if name == "setup":
            self.inv.has_setup = True
            if value is not None and any(c.type == "async" for c in value.children):
                self.inv.async_setup = True
        else:
            self.inv.has_draw = True

    # ---------------------------------------------------------------- calls
    def call(self, node: Node) -> None:
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        arg_nodes = args.named_children if args is not None else []
        if fn is None:
            return
        if fn.type == "import":
            _add(self.inv.external, "import()", node)
            return
        if fn.type == "member_expression" and text(fn.child_by_field_name("property")) in (
                "call", "apply", "bind"):
            target = fn.child_by_field_name("object")
            if target is not None and target.type in ("identifier", "member_expression",
                                                      "subscript_expression"):
                fn = target
                arg_nodes = arg_nodes[1:]
        obj_text, name = self.callee(fn)
        if name is None:
            return
        self.keyed(node, obj_text, name, arg_nodes)
        self.classify(node, obj_text, name, arg_nodes)

    def keyed(self, node: Node, obj: str | None, name: str, args: list[Node]) -> None:
        """``Reflect.get(window, key)`` reads ``window[key]``; ``Object.values(brush)`` hands
        over every member at once."""
        if obj not in ("Reflect", "Object") or not args:
            return
        target = self.target_kind(args[0])
        if target is None:
            return
        lines = self.inv.dynamic_brush_access if target == "brush" else self.inv.dynamic_access
        if name in ENUMERATING_CALLS:
            lines.append(_line(node))
        elif name in KEYED_CALLS and len(args) > 1:
            key = self.fold(args[1])
            if key is None:
                lines.append(_line(node))
            elif target == "brush":
                self.brush_member(key, args[1], call=False)
            elif key in RAW_CONTEXT_NAMES:
                _add(self.inv.raw_canvas, key, node)

    def callee(self, fn: Node) -> tuple[str | None, str | None]:
        """(object source or None for a bare call, method name or None if computed). The
        object is given as the global object, p5 or brush it names when it is one (or an
        alias of one), so ``w['ell' + 'ipse'](...)`` with ``const w = window`` is ``ellipse``."""
        if fn.type == "identifier":
            return None, text(fn)
        if fn.type == "member_expression":
            obj = fn.child_by_field_name("object")
            return self.object_text(obj), text(fn.child_by_field_name("property"))
        if fn.type == "subscript_expression":
            obj = fn.child_by_field_name("object")
            return self.object_text(obj), self.fold(fn.child_by_field_name("index"))
        return None, None

    def object_text(self, obj: Node | None) -> str:
        kind = self.target_kind(obj)
        source = text(obj)
        if kind == "brush":
            return "brush"
        if kind == "global":
            return "window"
        if kind == "p5" and source in self.aliases:
            return self.aliases[source]
        return source

    def classify(self, node: Node, obj: str | None, name: str, args: list[Node]) -> None:
        inv = self.inv
        bare = obj is None or obj in GLOBAL_OBJECTS or obj.endswith(".prototype")
        if obj in BRUSH_OBJECTS:
            known = name in brush_methods()
            _add(inv.brush_calls if known else inv.unknown_brush_methods, name, node)
            return
        if bare and name == "createCanvas":
            renderer = args[2] if len(args) > 2 else None
            inv.canvases.append({"line": _line(node),
                                 "args": text(node.child_by_field_name("arguments"))[:120],
                                 "webgl": _is_webgl(renderer)})
        for table, label in self.kinds(obj, name, bare, args):
            _add(table, label, node)

    def kinds(self, obj: str | None, name: str, bare: bool,
              args: list[Node]) -> list[tuple[Lines, str]]:
        """The inventory tables a call ``obj.name(args)`` belongs in (often none)."""
        inv = self.inv
        out: list[tuple[Lines, str]] = []
        if obj is None and name in self.own_functions:
            return out  # the sketch's own helper named like a p5 function: not p5's
        drawn_text = name == "text" and (bare or len(args) >= 3)
        if drawn_text or name in TEXT_METHODS:
            out.append((inv.text, name))
        elif name in RAW_CANVAS_METHODS or (
                obj is not None and (name in RAW_GL_METHODS or name == "getContext")):
            out.append((inv.raw_canvas, name))
        elif name in P5_PRIMITIVES and (bare or (
                name not in AMBIGUOUS_PRIMITIVES and not _is_library_object(obj or ""))):
            out.append((inv.p5_primitives, name))
        if (bare and name in EXTERNAL_CALLS) or name in ("sendBeacon", "fetch"):
            out.append((inv.external, name))
        if obj is not None and obj.split(".")[-1] == "location" and name in NAVIGATION_CALLS:
            out.append((inv.external, f"location.{name}"))
        writes_document = name in ("write", "writeln") and obj == "document"
        appends_to_page = name in ("append", "prepend") and bool(
            re.search(r"\b(document|body|head)\b", obj or ""))
        if (bare and name in DOM_CREATORS) or name in DOM_METHODS or writes_document \
                or appends_to_page:
            out.append((inv.dom, name))
        if (bare and name in ("eval", "Function")) or name == "constructor":
            out.append((inv.dynamic_code, name))
        if bare and name in TIMER_CALLS:
            out.append((inv.timers, name))
            if args and args[0].type in ("string", "template_string"):
                out.append((inv.dynamic_code, f"{name}(string)"))
        if name in TAMPER_CALLS or (obj in ("Object", "Reflect") and name in ("assign", "set")):
            target = text(args[0]) if args else ""
            if TAMPER_TARGET.search(target):
                out.append((inv.tampering, f"{name}({target[:40]})"))
        return out

    def new(self, node: Node) -> None:
        ctor = node.child_by_field_name("constructor")
        name = text(ctor).split(".")[-1] if ctor is not None else ""
        if name == "Function":
            _add(self.inv.dynamic_code, "new Function", node)
        elif name in EXTERNAL_CONSTRUCTORS:
            _add(self.inv.external, f"new {name}", node)
        elif name == "OffscreenCanvas":
            _add(self.inv.raw_canvas, "new OffscreenCanvas", node)

    # ---------------------------------------------------------------- assignments
    def assignment(self, node: Node) -> None:
        inv = self.inv
        left = node.child_by_field_name("left")
        if left is None:
            return
        target = text(left)
        last = target.split(".")[-1]
        if left.type == "identifier":
            if target in ("setup", "draw"):
                self.define(target, node.child_by_field_name("right"))
            elif target in ("brush", "p5"):
                _add(inv.tampering, f"{target} =", node)
            elif target == "location":
                _add(inv.external, "location =", node)
            return
        if left.type == "subscript_expression":
            obj = text(left.child_by_field_name("object"))
            if obj == "pixels" or obj.endswith(".pixels"):
                _add(inv.p5_primitives, "pixels[]", node)
            elif obj in BRUSH_OBJECTS or obj.endswith(".prototype") or obj in ("p5",):
                _add(inv.tampering, f"{obj}[...] =", node)
            return
        if left.type != "member_expression":
            return
        obj = text(left.child_by_field_name("object"))
        if obj in GLOBAL_OBJECTS and last in ("setup", "draw"):
            self.define(last, node.child_by_field_name("right"))
        elif _tampers(target, obj, last):
            _add(inv.tampering, f"{target} =", node)
        elif last == "location" or obj.split(".")[-1] == "location":
            _add(inv.external, f"{target} =", node)
        elif last in ("src", "srcset", "href"):
            _add(inv.external, f".{last} =", node)
        elif last in DOM_PROPERTIES:
            _add(inv.dom, f".{last} =", node)


def _declared_functions(root: Node) -> set[str]:
    """Names the sketch defines as functions itself (``function circle() {}``,
    ``const line = () => ...``)."""
    names: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("function_declaration", "generator_function_declaration"):
            names.add(text(node.child_by_field_name("name")))
        elif node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            if value is not None and value.type in ("function_expression", "arrow_function",
                                                    "function"):
                names.add(text(node.child_by_field_name("name")))
        stack.extend(node.named_children)
    return names


def _tampers(target: str, obj: str, last: str) -> bool:
    """Does assigning to ``target`` (= ``obj.last``) redefine library or browser internals?"""
    globals_ = {f"{g}.{lib}" for g in GLOBAL_OBJECTS for lib in ("brush", "p5")}
    return (
        ".prototype" in target or target.startswith("prototype")
        or obj in BRUSH_OBJECTS or target in globals_
        or (obj == "p5" and last not in HARMLESS_P5_SETTINGS)
        or last in CAPTURE_PROPERTIES
    )


def _is_library_object(obj: str) -> bool:
    """Objects whose methods share a p5 primitive's name without being one (Math.*)."""
    return obj in ("Math", "Object", "Array", "JSON", "Number", "String", "console")


def _is_webgl(node: Node | None) -> bool | None:
    if node is None:
        return False
    source = text(node).strip()
    literal = _literal_string(node)
    if literal is not None:
        return literal.lower() == "webgl"
    if source == "WEBGL" or source.endswith(".WEBGL"):
        return True
    if source in ("P2D", "WEBGPU") or source.endswith((".P2D", ".WEBGPU")):
        return False
    return None
