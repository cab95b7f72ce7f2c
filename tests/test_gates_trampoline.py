"""Nothing runs unseen inside a brush call (issue 39): the brush trampoline, strings handed to
timers, computed names, and the render evidence as the second line of defence.

The attack sketches are the ``adversarial_*`` fixtures (their first line names the family);
each was admitted with status ok on the harness before this change. Static tests need no
browser; the rest render in a real one."""

from __future__ import annotations

import pytest
from gates_support import CASES, NoRenderer, fixture_text

from watercolour.examples import load_examples
from watercolour.gates import Floors, check, take_inventory
from watercolour.gates.verdict import runtime_findings

TRAMPOLINES = sorted(n for n in CASES if n.startswith(("adversarial_trampoline",
                                                       "adversarial_builtin")))
RUNTIME_CASES = sorted(n for n, c in CASES.items() if c.runtime)

HEAD = "function setup() {\n  createCanvas(256, 256, WEBGL);\n  background('#f6f0e4');\n}\n"


def sketch(body: str, extra: str = "") -> str:
    return extra + HEAD + "function draw() {\n" + body + "\n  noLoop();\n}\n"


# ---------------------------------------------------------------- the fixtures themselves
def test_every_new_attack_fixture_names_its_family():
    for name in [*TRAMPOLINES, "adversarial_settimeout_string.js", "adversarial_tojson_forgery.js"]:
        first = fixture_text(name).splitlines()[0]
        assert first.startswith("// family: "), name


def test_the_attacks_are_cheats_the_static_gate_alone_cannot_see_in_library_mode():
    """Each trampoline builds its names at run time: in library mode the code alone admits
    it, so only the render's evidence can reject it (which it must: test_runtime_...)."""
    for name in TRAMPOLINES:
        verdict = check(fixture_text(name), NoRenderer(), mode="library")
        assert verdict.status == "unavailable", (name, verdict.reasons)


# ---------------------------------------------------------------- computed names (static)
@pytest.mark.parametrize("code", [
    sketch("  window[['ell', 'ipse'].join('') + ''.trim()](0, 0, 9, 9);\n  brush.circle(0, 0, 9);"),
    sketch("  const k = pick();\n  brush[k](0, 0, 9);\n  brush.circle(0, 0, 9);",
           "function pick() { return 'rect'; }\n"),
    sketch("  this[name()](1, 2);\n  brush.circle(0, 0, 9);", "function name() { return 'x'; }\n"),
    sketch("  const w = window;\n  w[String.fromCharCode(101)](1);\n  brush.circle(0, 0, 9);"),
    sketch("  p5.prototype[key](1);\n  brush.circle(0, 0, 9);", "let key = 'ellipse';\n"),
    sketch("  Reflect.get(window, key)(1);\n  brush.circle(0, 0, 9);", "let key = 'ellipse';\n"),
    sketch("  Object.values(brush)[3](1);\n  brush.circle(0, 0, 9);"),
    sketch("  const { [key]: f } = window;\n  f(1);\n  brush.circle(0, 0, 9);", "let key = 'x';\n"),
    sketch("  with (window) { brush.circle(0, 0, 9); }"),
])
def test_an_unresolvable_computed_name_is_a_violation_in_allowlist_mode_only(code):
    allow = check(code, NoRenderer(), mode="allowlist")
    assert allow.violations == ["not_allowlisted"], allow.reasons
    assert "cannot be checked against the allowlist" in allow.reasons["not_allowlisted"]
    library = check(code, NoRenderer(), mode="library")
    assert library.status == "unavailable"  # reaches the browser: the evidence decides
    assert any("computed access" in note for note in library.notes), library.notes


@pytest.mark.parametrize("code, table, name", [
    (sketch("  window['ell' + 'ipse'](0, 0, 9, 9);"), "p5_primitives", "ellipse"),
    (sketch("  window[NAME](0, 0, 9, 9);", "const NAME = 'ell' + 'ipse';\n"), "p5_primitives", "ellipse"),
    (sketch("  self.window[['re', 'ct'].join('')](0, 0, 9, 9);"), "p5_primitives", "rect"),
    (sketch("  brush[`ci` + 'rcle'](0, 0, 9);"), "brush_calls", "circle"),
    (sketch("  brush[R](0, 0, 9, 9);", "const R = 'rect';\n"), "brush_calls", "rect"),
    (sketch("  const draw2 = brush.polygon;\n  draw2([[0, 0], [9, 9], [0, 9]]);"), "brush_references", "polygon"),
    (sketch("  new brush.Polygon([[0, 0], [9, 9], [0, 9]]).show();"), "brush_calls", "Polygon"),
    (sketch("  const gl = window['drawing' + 'Context'];"), "raw_canvas", "drawingContext"),
])
def test_a_resolvable_computed_name_reads_as_the_name(code, table, name):
    inv = take_inventory(code)
    assert name in getattr(inv, table), (table, getattr(inv, table))
    assert not inv.dynamic_access and not inv.dynamic_brush_access


def test_keys_that_look_constant_but_are_not_are_not_folded():
    """A ``const`` shadowed or reassigned elsewhere, a ``let``, a loop variable: not folded."""
    for code in (
        sketch("  brush[K](0, 0, 9);", "let K = 'circle';\n"),
        sketch("  for (const K of ['rect']) brush[K](0, 0, 9);", "const K = 'circle';\n"),
        sketch("  brush[K](0, 0, 9);", "const K = 'circle';\nfunction f(K) { return K; }\n"),
    ):
        inv = take_inventory(code)
        assert inv.dynamic_brush_access, code


def test_this_in_a_class_or_object_method_is_not_the_global_object():
    code = sketch("  const p = new Petal({ x: 1 });\n  brush.circle(p.x, 0, 9);",
                  "class Petal { constructor(o) { for (const k in o) this[k] = o[k]; } }\n"
                  "const bag = { get(k) { return this[k]; } };\n")
    inv = take_inventory(code)
    assert inv.dynamic_access == []
    assert check(code, NoRenderer(), mode="allowlist").status == "unavailable"


def test_honest_sketches_have_no_computed_access():
    from watercolour.pool.procedural import plan_painting
    from watercolour.pool.procedural import sketch as procedural

    codes = list(load_examples().values())
    codes += [procedural(plan_painting(seed, subject, variant=variant))
              for seed, subject, variant in [(0, "a peach hibiscus", "good"),
                                             (1, "a white daisy", "good"),
                                             (2, "a pink lotus", "flat"),
                                             (3, "a gold sunflower", "muddy")]]
    for code in codes:
        inv = take_inventory(code)
        assert not inv.dynamic_access and not inv.dynamic_brush_access
        assert not inv.brush_references and inv.outside_allowlist == []


# ---------------------------------------------------------------- the render's evidence


@pytest.mark.browser
@pytest.mark.parametrize("name", RUNTIME_CASES)
def test_the_runtime_evidence_alone_rejects_every_adversarial_fixture(name, renderer):
    """Static checks set aside: what the sketch did in the browser rejects it. (On the harness
    before issue 39, every trampoline, the string timer and the toJSON forgery came back
    clean.)"""
    case = CASES[name]
    verdict = check(fixture_text(name), renderer, mode="allowlist", render_rejected=True,
                    deadline_s=case.deadline_s)
    assert verdict.render is not None and not verdict.infrastructure_failure
    found, _ = runtime_findings(verdict.inventory, verdict.render, verdict.image, "allowlist",
                                Floors())
    got = {f.violation.value for f in found}
    assert set(case.runtime) <= got, (got, verdict.render.evidence, verdict.render.error)


@pytest.mark.browser
def test_a_trampoline_runs_once_in_the_sketchs_own_window(renderer):
    """The argument is coerced once, before the library's call, and what it draws is counted
    as the sketch's: one p5 call per coercion, not one per use inside the library."""
    code = sketch("  brush.noStroke();\n  brush.fill('#e8a07c', 150);\n  brush.circle(0, 0, r);",
                  "let n = 0;\nconst r = { valueOf() { n++; point(0, 0); return 30; } };\n")
    ev = renderer.render(code, seed=0).evidence
    assert ev["p5_calls"] == {"point": 1}
    assert ev["brush_calls"]["circle"] == 1


@pytest.mark.browser
def test_a_brush_call_made_inside_an_argument_is_the_sketchs_own(renderer):
    code = sketch("  brush.noStroke();\n  brush.fill('#e8a07c', 150);\n  brush.circle(0, 0, r);",
                  "const r = { valueOf() { brush.fill('#3b6ea5', 90); "
                  "brush['re' + 'ct'](-50, -50, 40, 40); return 30; } };\n")
    ev = renderer.render(code, seed=0).evidence
    assert ev["brush_calls"].get("rect") == 1 and ev["brush_calls"]["fill"] == 2


@pytest.mark.browser
def test_honest_arguments_keep_their_meaning(renderer):
    """Colour arrays, p5 colours, boxed numbers, nested point arrays and option bags reach
    p5.brush as they were: the same picture as the plain literals."""
    plain = sketch("  brush.noStroke();\n  brush.fill('#e8a07c', 150);\n  brush.circle(10, 0, 60);\n"
                   "  brush.fill([59, 110, 165], 120);\n  brush.circle(-40, 30, 40);")
    dressed = sketch("  brush.noStroke();\n  brush.fill(color('#e8a07c'), new Number(150));\n"
                     "  brush.circle(new Number(10), 0, { valueOf: () => 60 });\n"
                     "  brush.fill(new Proxy([59, 110, 165], {}), 120);\n"
                     "  brush.circle(-40, 30, 40);")
    a, b = renderer.render(plain, seed=3), renderer.render(dressed, seed=3)
    assert a.ok and b.ok, (a.error, b.error)
    assert a.png == b.png
    assert b.evidence["p5_calls"] == {} and b.evidence["raw_gl_calls"] == {}


@pytest.mark.browser
def test_library_mode_brush_api_with_arrays_and_options_still_works(renderer):
    code = sketch("  brush.noStroke();\n  brush.fill('#8fb26b', 140);\n"
                  "  brush.polygon([[-60, -60], [60, -50], [40, 60], [-50, 40]]);\n"
                  "  brush.set('HB', '#3b6ea5', 1);\n"
                  "  brush.spline([[-80, 80], [0, 40], [80, 90]], 0.5);")
    verdict = check(code, renderer, mode="library")
    assert verdict.passed, (verdict.reasons, verdict.error)
    assert {"polygon", "set", "spline"} <= set(verdict.methods_used)


@pytest.mark.browser
def test_p5_brush_classes_called_by_the_sketch_are_brush_calls(renderer):
    """The classes p5.brush exports (and the objects its calls return) paint too: counted
    under their own names, outside the allowlist."""
    code = sketch("  brush.noStroke();\n  brush.fill('#8fb26b', 140);\n"
                  "  const [plot] = brush.circle(0, 0, 30);\n  plot.show(60, 60, 1);\n"
                  "  new brush.Polygon([[-90, -90], [-40, -90], [-60, -40]]).fill('#3b6ea5', 120);")
    verdict = check(code, renderer, mode="library")
    used = verdict.render.evidence["brush_calls"]
    assert used.get("Plot.show") == 1 and used.get("Polygon") == 1 and used.get("Polygon.fill") == 1
    assert not verdict.for_mode("allowlist").passed


@pytest.mark.browser
@pytest.mark.parametrize("line", [
    "window[['set', 'Timeout'].join('')](\"brush.circle(0, 0, 40)\", 0);",
    "window[['set', 'Interval'].join('')]('0', 1000);",
    "(async function () {}).constructor('return 1');",
    "Object.getPrototypeOf(function* () {}).constructor('yield 1');",
    "document.body.setAttribute('onclick', 'brush.circle(0, 0, 9)');",
])
def test_code_compiled_from_a_string_is_dynamic_code_whatever_its_name(line, renderer):
    code = sketch("  brush.noStroke();\n  brush.fill('#e8a07c', 150);\n  brush.circle(0, 0, 40);\n  "
                  + line)
    ev = renderer.render(code, seed=0).evidence
    assert ev["dynamic_code"] >= 1, ev


@pytest.mark.browser
def test_a_setter_planted_on_object_prototype_cannot_swallow_a_count(renderer):
    code = sketch("  brush.noStroke();\n  brush.fill('#e8a07c', 150);\n  brush.circle(0, 0, 40);\n"
                  "  brush[['re', 'ct'].join('')](-90, -90, 30, 30);",
                  "Object.defineProperty(Object.getPrototypeOf({}), 'rect', "
                  "{ get() { return undefined; }, set() {}, configurable: true });\n")
    ev = renderer.render(code, seed=0).evidence
    assert ev["brush_calls"].get("rect") == 1


@pytest.mark.browser
def test_a_sketch_that_reads_the_raw_context_or_registers_an_addon_is_listed(renderer):
    code = sketch("  brush.noStroke();\n  brush.fill('#e8a07c', 150);\n  brush.circle(0, 0, 40);\n"
                  "  const gl = window[['drawing', 'Context'].join('')];\n"
                  "  document.querySelector('canvas').getContext('webgl2');\n"
                  "  p5.registerAddon(() => {});")
    ev = renderer.render(code, seed=0).evidence
    assert ev["raw_access"] == {"drawingContext": 1, "getContext": 1, "registerAddon": 1}


@pytest.mark.browser
def test_a_bound_raw_call_as_draw_is_not_the_sketchs_own_function(renderer):
    code = ("function setup() {\n  createCanvas(256, 256, WEBGL);\n  brush.noStroke();\n"
            "  brush.fill('#e8a07c', 150);\n  brush.circle(0, 0, 40);\n}\n"
            "var draw = Math.max.bind(null, 1);\n")
    ev = renderer.render(code, seed=0).evidence
    assert any("draw is not the sketch's own function" in t for t in ev["tampering"]), ev
