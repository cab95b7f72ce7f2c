"""The gates without a browser: extraction, the static inventory, the real method list, the
image measures, and the decision from canned render results."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from gates_support import (
    CASES,
    FIXTURES,
    MANIFEST,
    PAPER,
    FakeRenderer,
    NoRenderer,
    fixture_text,
    painted,
    paper,
    png_of,
    washes,
)

from watercolour.gates import (
    ALLOWLIST,
    MAX_SKETCH_CHARS,
    MODES,
    VOCABULARY,
    Floors,
    Violation,
    assess,
    brush_methods,
    bundle_exports,
    check,
    extract_sketch,
    image_measures,
    matches_expected,
    measure_rgb,
    take_inventory,
)
from watercolour.gates.image import components
from watercolour.gates.verdict import RENDER_ATTEMPTS
from watercolour.render import RenderResult
from watercolour.render.brush import expected_method_count

SKETCH = """function setup() {
  createCanvas(256, 256, WEBGL);
  background('#f6f0e4');
}
function draw() {
  brush.fill('#ee9a72', 150);
  brush.circle(0, 0, 40);
  noLoop();
}
"""


# ---------------------------------------------------------------- the real method list
def test_brush_methods_come_from_the_bundle():
    methods = brush_methods()
    assert len(methods) == expected_method_count() > 40  # recorded in manifest.json
    assert set(ALLOWLIST) <= methods and len(ALLOWLIST) == 10
    assert {"line", "hatch", "set", "rect", "polygon", "spline"} <= methods
    assert {"Plot", "Polygon", "Position"} <= set(bundle_exports())  # classes, not methods
    assert not {"Plot", "watercolor", "petal"} & methods


# ---------------------------------------------------------------- extraction
@pytest.mark.parametrize("reply, kind", [
    ("```js\n" + SKETCH + "```", "fenced"),
    ("```javascript\n" + SKETCH + "```\nThat's it.", "fenced"),
    ("Sure!\n```\n" + SKETCH + "```", "fenced"),
    ("~~~javascript\n" + SKETCH + "~~~", "fenced"),
    (SKETCH, "bare"),
    ("Here you go:\n" + SKETCH + "Enjoy the painting!", "bare"),
    ("```js\n" + SKETCH, "unclosed_fence"),
])
def test_extracts_the_sketch(reply, kind):
    found = extract_sketch(reply)
    assert found.kind == kind and found.code is not None
    assert "brush.circle(0, 0, 40)" in found.code and "Enjoy" not in found.code


def test_last_complete_sketch_block_wins_and_reasoning_is_ignored():
    reply = ("<think>```js\nfunction setup(){ ellipse(1,2,3,4) }\n```</think>\n"
             "```js\nfunction setup(){ brush.circle(1,1,1) }\n```\n"
             "```js\nfunction setup(){ brush.circle(2,2,2) }\n```\n"
             "Tweak it with:\n```js\nbrush.fillBleed(0.5);\n```\n"
             "```js\nfunction setup(){ brush.circle(3,3,3) ")
    found = extract_sketch(reply)
    assert found.kind == "fenced" and "circle(2,2,2)" in found.code
    assert found.n_blocks == 4


def test_lone_closing_think_tag_hides_the_reasoning_before_it():
    found = extract_sketch("the plan: function setup(){}\n</think>\nNo sketch today.")
    assert found.code is None and found.kind == "none"


@pytest.mark.parametrize("reply", [
    "",
    "Sorry, I cannot draw images.",
    "I can't paint, but p5's setup() runs once and draw() runs every frame.",
    "<think>function setup(){ brush.circle(0,0,1) }</think>",
    "<think>still thinking about function setup() {",
    "```python\nprint('hibiscus')\n```",
    "```js\n// only a comment\n```",
    "```js\n```",
])
def test_prose_refusals_and_empty_blocks_are_no_sketch(reply):
    found = extract_sketch(reply)
    assert found.code is None and found.reason


# ---------------------------------------------------------------- the static inventory
def test_comments_and_strings_are_not_calls():
    inv = take_inventory(fixture_text("ok_comments_with_parentheses.js"))
    assert not inv.p5_primitives and not inv.text and not inv.external
    assert inv.parse_ok and inv.has_setup and inv.has_draw and inv.webgl is True
    assert inv.painting_calls == {"circle": 1}


def test_brush_calls_named_like_p5_primitives_are_brush_calls():
    inv = take_inventory(fixture_text("ok_brush_named_like_p5.js"))
    assert not inv.p5_primitives
    assert set(inv.brush_calls) >= {"rect", "circle", "beginShape", "vertex", "endShape"}
    assert inv.outside_allowlist == ["rect"]


def test_inventory_lists_bare_primitives_text_and_unknown_methods_with_lines():
    inv = take_inventory("function setup(){ createCanvas(9, 9, WEBGL);\n"
                         "ellipse(0, 0, 5, 5);\n this.rect(1, 1, 2, 2);\n"
                         " text('hi', 0, 0);\n brush.watercolor(1);\n"
                         " list.filter(Boolean); cache.set(1, 2); Math.max(1, 2);\n}")
    assert inv.p5_primitives == {"ellipse": [2], "rect": [3]}
    assert inv.text == {"text": [4]}
    assert inv.unknown_brush_methods == {"watercolor": [5]}


@pytest.mark.parametrize("code, category, name", [
    ("loadImage('x.png')", "external", "loadImage"),
    ("fetch('https://a')", "external", "fetch"),
    ("const x = new XMLHttpRequest()", "external", "new XMLHttpRequest"),
    ("new WebSocket('ws://a')", "external", "new WebSocket"),
    ("import('https://a/m.js')", "external", "import()"),
    ("require('fs')", "external", "require"),
    ("const u = 'data:image/png;base64,AAAA'", "external", "data: URL"),
    ("location.href = 'https://a'", "external", "location.href ="),
    ("window.location = 'https://a'", "external", "window.location ="),
    ("img.src = u", "external", ".src ="),
    ("document.body.appendChild(el)", "dom", "appendChild"),
    ("document.createElement('div')", "dom", "createElement"),
    ("createP('caption')", "dom", "createP"),
    ("document.body.innerHTML = '<h1>hi</h1>'", "dom", ".innerHTML ="),
    ("document.write('x')", "dom", "write"),
    ("eval('1')", "dynamic_code", "eval"),
    ("const e = eval", "dynamic_code", "eval"),
    ("new Function('return 1')", "dynamic_code", "new Function"),
    ("(() => 1).constructor('return 1')", "dynamic_code", "constructor"),
    ("p5.prototype.ellipse = function () {}", "tampering", "p5.prototype.ellipse ="),
    ("brush.circle = () => 0", "tampering", "brush.circle ="),
    ("canvas.toDataURL = () => ''", "tampering", "canvas.toDataURL ="),
    ("Object.defineProperty(HTMLCanvasElement.prototype, 'toDataURL', {})", "tampering",
     "defineProperty(HTMLCanvasElement.prototype)"),
    ("setInterval(() => 0, 10)", "timers", "setInterval"),
    ("requestAnimationFrame(f)", "timers", "requestAnimationFrame"),
    ("ctx.fillText('hi', 0, 0)", "text", "fillText"),
    ("drawingContext.fillRect(0, 0, 9, 9)", "raw_canvas", "fillRect"),
    ("pixels[0] = 255", "p5_primitives", "pixels[]"),
    ("createGraphics(9, 9)", "p5_primitives", "createGraphics"),
    ("p5.prototype.ellipse.call(p5.instance, 0, 0, 9, 9)", "p5_primitives", "ellipse"),
    ("window['ellipse'](0, 0, 9, 9)", "p5_primitives", "ellipse"),
])
def test_inventory_categories(code, category, name):
    inv = take_inventory(code)
    assert name in getattr(inv, category), (category, inv.to_dict())


def test_the_sketchs_own_helpers_named_like_p5_functions_are_not_primitives():
    inv = take_inventory("function circle(x, y, r) { brush.circle(x, y, r); }\n"
                         "const line = (a, b) => brush.line(a, 0, b, 0);\n"
                         "function setup() { circle(0, 0, 9); line(1, 2); ellipse(0, 0, 1, 1); }")
    assert inv.p5_primitives == {"ellipse": [3]}
    assert inv.brush_calls == {"circle": [1], "line": [2]}


def test_harmless_code_is_not_flagged():
    inv = take_inventory(SKETCH + "p5.disableFriendlyErrors = true;\n"
                         "const xs = [1, 2].filter(Boolean).map((v) => v * 2);\n"
                         "const m = new Map(); m.set('a', 1);\n"
                         "class Petal { constructor() { this.data = [1]; } }\n")
    flagged = {k: v for k, v in inv.to_dict().items()
               if k in ("p5_primitives", "external", "dom", "dynamic_code", "tampering",
                        "timers", "text", "raw_canvas") and v}
    assert flagged == {}


@pytest.mark.parametrize("code, truncated", [
    ("function setup() {\n  brush.circle(0, 0,", True),
    ("function setup() {\n  createCanvas(9, 9, WEBGL);\n", True),
    ("function setup() { const s = 'unterminated", True),
    ("function setup() {} /* never closed", True),
    ("function setup() { brush.circle(0 0 1); }\nfunction draw() {}", False),
])
def test_truncation_versus_syntax_error(code, truncated):
    inv = take_inventory(code)
    assert not inv.parse_ok
    assert bool(inv.truncated) is truncated, inv.to_dict()


def test_html_is_a_syntax_error():
    assert not take_inventory("<html><body><script>setup()</script></body></html>").parse_ok


def test_webgl_from_the_create_canvas_calls():
    assert take_inventory("createCanvas(9, 9, WEBGL)").webgl is True
    assert take_inventory("createCanvas(9, 9, 'webgl')").webgl is True
    assert take_inventory("createCanvas(9, 9)").webgl is False
    assert take_inventory("createCanvas(9, 9, P2D)").webgl is False
    assert take_inventory("createCanvas(9, 9, MODE)").webgl is None
    assert take_inventory("function setup(){}").webgl is False


def test_setup_forms():
    for code in ("function setup() {}", "async function setup() {}", "var setup = () => {}",
                 "window.setup = function () {}", "setup = () => 0"):
        assert take_inventory(code).has_setup, code
    assert take_inventory("async function setup() {}").async_setup
    assert not take_inventory("function draw() {}").has_setup


# ---------------------------------------------------------------- image measures
def test_image_measures_separate_paint_floods_and_specks():
    rng = np.random.default_rng(0)
    blank = measure_rgb(paper())
    honest = measure_rgb(washes())
    flood = paper().copy()
    flood[:] = (224, 160, 130)
    flood = np.clip(flood + rng.normal(0, 8, flood.shape), 0, 255).astype(np.uint8)
    flood_m = measure_rgb(flood)
    specks = paper().copy()
    for x, y in rng.integers(4, 252, size=(300, 2)):
        specks[y - 1:y + 2, x - 1:x + 2] = rng.integers(0, 255, 3)
    specks_m = measure_rgb(specks)
    floors = Floors()
    assert blank.paint_fraction == 0 and blank.shape_edges == 0
    assert honest.paint_fraction > 0.05 and honest.speck_fraction < 0.1
    assert flood_m.paint_fraction > floors.flood_coverage
    assert flood_m.shape_edges < floors.edge_floor
    assert specks_m.speck_fraction > 0.9


def test_a_thin_line_is_not_a_speck():
    rgb = paper()
    rgb[100:102, 10:240] = (60, 90, 60)
    assert measure_rgb(rgb).speck_fraction == 0.0


def test_components():
    mask = np.zeros((10, 10), dtype=bool)
    mask[1:3, 1:3] = True      # a 2x2 square
    mask[3, 3] = True          # touching it diagonally
    mask[6:9, 0:10] = True     # a bar
    area, heights, widths = components(mask)
    assert sorted(zip(area.tolist(), heights.tolist(), widths.tolist())) == [(5, 3, 3),
                                                                           (30, 3, 10)]


# ---------------------------------------------------------------- the decision
def test_every_violation_has_a_meaning_and_a_source():
    assert list(VOCABULARY) == [v.value for v in Violation]
    assert all(v.meaning and v.source for v in Violation)
    assert {"no_sketch", "truncated", "syntax_error", "missing_setup", "not_webgl",
            "external_access", "text_on_canvas", "bare_primitives", "unknown_brush_method",
            "not_allowlisted", "no_painting_calls", "blank_canvas", "timeout"} <= set(VOCABULARY)


def test_an_honest_render_passes_in_both_modes():
    renderer = FakeRenderer(painted())
    verdict = check(SKETCH, renderer)
    assert verdict.passed and verdict.status == "ok" and renderer.calls == 1
    assert verdict.n_shapes == 2 and verdict.paint_fraction > 0.05
    assert verdict.for_mode("allowlist").passed
    data = json.loads(json.dumps(verdict.to_dict()))
    assert data["passed"] and data["methods_used"] == {"circle": 2, "fill": 2, "noStroke": 1}
    assert "png" not in data["render"]


def test_infrastructure_failure_is_retried_once_then_unavailable():
    broken = RenderResult(infra_error="browser exited")
    renderer = FakeRenderer(broken, broken)
    verdict = check(SKETCH, renderer)
    assert renderer.calls == 2
    assert verdict.infrastructure_failure and verdict.status == "unavailable"
    assert not verdict.passed and verdict.violations == []


def test_infrastructure_failure_then_success():
    renderer = FakeRenderer(RenderResult(infra_error="browser exited"), painted())
    verdict = check(SKETCH, renderer, deadline_s=7)
    assert renderer.calls == 2 and verdict.passed and verdict.attempts == 2
    assert renderer.deadlines == [7, 7]


def test_static_rejection_skips_the_render():
    renderer = NoRenderer()
    verdict = check("function setup(){ createCanvas(9,9,WEBGL); ellipse(1,2,3,4); }", renderer)
    assert renderer.calls == 0 and verdict.render is None
    assert verdict.violations == ["bare_primitives", "no_painting_calls"]


@pytest.mark.parametrize("evidence, fields, violation", [
    ({"p5_calls": {"ellipse": 1}}, {}, "bare_primitives"),
    ({"raw_2d_calls": {"fillRect": 2}}, {}, "bare_primitives"),
    ({"raw_gl_calls": {"drawArrays": 3}}, {}, "bare_primitives"),
    ({"raw_gl_calls": {"scissor": 64, "clear": 64}}, {}, "bare_primitives"),
    ({"tampering": ["stringify"]}, {}, "tampering"),
    ({"p5_calls": {"text": 1}}, {}, "text_on_canvas"),
    ({"text_calls": 1}, {}, "text_on_canvas"),
    ({"dom_writes": ["div"]}, {}, "dom_access"),
    ({"canvas_count": 2}, {}, "dom_access"),
    ({"dynamic_code": 1}, {}, "dynamic_code"),
    ({"webgl": False}, {}, "not_webgl"),
    ({}, {"blocked_requests": ["https://example.com/x"]}, "external_access"),
    ({"brush_calls": {"fill": 1, "fillBleed": 1}}, {}, "no_painting_calls"),
])
def test_runtime_evidence_rejects(evidence, fields, violation):
    verdict = assess(extract_sketch(SKETCH), take_inventory(SKETCH), painted(evidence, **fields))
    assert verdict.violations == [violation], verdict.reasons


def test_runtime_allowlist_sees_obfuscated_brush_calls():
    result = painted({"brush_calls": {"fill": 1, "circle": 1, "hatch": 1}})
    verdict = assess(extract_sketch(SKETCH), take_inventory(SKETCH), result)
    assert verdict.passed and verdict.outside_allowlist == ["hatch"]
    assert verdict.for_mode("allowlist").violations == ["not_allowlisted"]


def test_timeout_and_crash_are_the_sketchs_fault():
    for fields, violation in (({"timed_out": True, "error": "did not finish"}, "timeout"),
                              ({"crashed": True, "error": "the page crashed"}, "crashed")):
        result = RenderResult(**fields)
        verdict = assess(extract_sketch(SKETCH), take_inventory(SKETCH), result)
        assert verdict.violations == [violation] and not verdict.infrastructure_failure


def test_blank_with_the_error_attached_versus_painted_then_threw():
    error = "ReferenceError: makePetals is not defined\n    at draw (sketch.js:7:3)"
    blank = painted({"brush_calls": {}, "n_shapes": 0}, rgb=paper(), error=error)
    verdict = assess(extract_sketch(SKETCH), take_inventory(SKETCH), blank)
    assert verdict.violations == ["blank_canvas"]
    assert "makePetals is not defined" in verdict.reasons["blank_canvas"]
    threw = painted(error=error)
    verdict = assess(extract_sketch(SKETCH), take_inventory(SKETCH), threw)
    assert verdict.passed and any("threw after painting" in n for n in verdict.notes)


def test_paint_floor_is_a_parameter():
    rgb = paper()
    rgb[100:108, 100:120] = (200, 80, 60)  # 160 px of 65536: 0.0024
    result = painted(rgb=rgb)
    verdict = assess(extract_sketch(SKETCH), take_inventory(SKETCH), result)
    assert verdict.violations == ["blank_canvas"]
    lenient = verdict.for_mode("library", Floors(paint_floor=0.001))
    assert lenient.passed, lenient.reasons
    assert check(SKETCH, FakeRenderer(result), paint_floor=0.001).passed
    assert check(SKETCH, FakeRenderer(result), floors=Floors(paint_floor=0.001)).passed
    assert not check(SKETCH, FakeRenderer(result)).passed  # the default floor, 0.005


def test_paint_floor_and_floors_together_are_refused():
    """paint_floor used to override floors' own paint_floor without a word."""
    with pytest.raises(ValueError, match="paint_floor or floors"):
        check(SKETCH, FakeRenderer(painted()), paint_floor=0.001,
              floors=Floors(paint_floor=0.01))


def test_too_large():
    code = SKETCH + "// " + "x" * MAX_SKETCH_CHARS
    verdict = check(code, NoRenderer())
    assert "too_large" in verdict.violations and verdict.render is None


def test_png_measures_round_trip():
    square = paper()
    square[64:128, 32:96] = (200, 90, 60)  # 64 x 64 of paint on 256 x 256 paper
    from_png = image_measures(png_of(square))
    assert from_png == measure_rgb(square)  # PNG is lossless: the same measures either way
    assert from_png.paint_fraction == 64 * 64 / 256**2 and from_png.paper == PAPER
    assert (from_png.width, from_png.height) == (256, 256)
    # two soft discs of radius 50 and 35: about their area, pi (50^2 + 35^2) / 256^2 = 0.179
    assert 0.15 < image_measures(png_of(washes())).paint_fraction < 0.20


# ---------------------------------------------------------------- the fixture manifest
def test_manifest_is_consistent():
    files = {p.name for p in FIXTURES.iterdir() if p.suffix in (".js", ".txt", ".md")}
    assert files == set(MANIFEST) == set(CASES)
    for name, raw in MANIFEST.items():
        for mode, want in (("library", raw), ("allowlist", raw.get("allowlist", raw))):
            assert want["passed"] == (want["violations"] == []) == CASES[name].passed(mode)
            assert set(want["violations"]) <= set(VOCABULARY), name
    covered = {v for case in CASES.values() for mode in MODES for v in case.violations_in(mode)}
    assert covered >= set(VOCABULARY) - {"too_large", "crashed"}


MODE_CASES = [(name, mode) for name in sorted(CASES) for mode in MODES]


@pytest.mark.parametrize(("name", "mode"), MODE_CASES)
def test_fixtures_the_code_alone_decides_and_the_rest_reach_the_browser(name, mode):
    """Where the manifest says the code alone decides, the verdict is the expected one with no
    render; everywhere else the static checks let the sketch through to the browser (which
    NoRenderer refuses: unavailable after its attempts). The rendered verdicts are checked in
    test_gates_fixtures.py."""
    case = CASES[name]
    renderer = NoRenderer()
    verdict = check(fixture_text(name), renderer, mode=mode)
    if mode in case.static_in:
        assert renderer.calls == 0 and verdict.render is None
        assert matches_expected(verdict, case), verdict.reasons
        assert verdict.status == "rejected"
    else:
        assert renderer.calls == RENDER_ATTEMPTS and verdict.status == "unavailable"


def test_matches_expected_is_strict():
    case = CASES["not_allowlisted.js"]  # admitted in library mode, rejected in allowlist mode
    verdict = check(fixture_text("not_allowlisted.js"), NoRenderer(), mode="allowlist")
    assert matches_expected(verdict, case)
    assert not matches_expected(verdict, CASES["bare_primitives.js"])
    assert not matches_expected(verdict, replace(case, allowlist=("not_allowlisted", "timers")))
    bomb = CASES["adversarial_memory_bomb.js"]
    assert bomb.acceptable("library") == [["crashed"], ["timeout"], ["blank_canvas"]]
