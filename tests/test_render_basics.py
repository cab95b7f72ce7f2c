"""A sketch becomes a PNG: paint, determinism, lifecycles, errors, evidence."""

from __future__ import annotations

import numpy as np
import pytest

from watercolour.render.paint import decode_rgb

pytestmark = pytest.mark.browser


def pixels(result) -> np.ndarray:
    assert result.png is not None, result.to_dict()
    return decode_rgb(result.png).astype(np.int16)


def test_small_sketch_renders_with_paint(renderer, small_sketch):
    result = renderer.render(small_sketch, seed=1)
    assert result.ok, result.to_dict()
    assert (result.width, result.height) == (256, 256)
    assert 0.02 < result.paint_fraction < 0.9
    assert result.png.startswith(b"\x89PNG")
    assert result.evidence["brush_calls"]["circle"] == 4
    assert result.evidence["n_shapes"] == 4
    assert result.evidence["p5_calls"] == {}
    assert result.backend
    assert result.timings["draw_s"] > 0 and result.timings["total_s"] >= result.timings["draw_s"]


def test_same_seed_same_pixels_other_seed_differs(renderer, small_sketch):
    a = pixels(renderer.render(small_sketch, seed=7))
    b = pixels(renderer.render(small_sketch, seed=7))
    c = pixels(renderer.render(small_sketch, seed=8))
    assert int(np.abs(a - b).max()) == 0
    assert int((np.abs(a - c).max(axis=2) > 0).sum()) > 500


def test_math_random_and_clock_are_seeded(renderer):
    sketch = """
    function setup() {
      createCanvas(64, 64, WEBGL);
      background(Math.floor(Math.random() * 256), new Date().getUTCFullYear() - 1900, Date.now() % 251);
    }"""
    first = pixels(renderer.render(sketch, seed=3))
    second = pixels(renderer.render(sketch, seed=3))
    other = pixels(renderer.render(sketch, seed=4))
    assert (first == second).all()
    assert first[0, 0, 1] == 124 and first[0, 0, 2] == 1704067200000 % 251
    assert first[0, 0, 0] != other[0, 0, 0]


def test_setup_only_async_setup_and_endless_loop_all_finish(renderer):
    setup_only = """
    function setup() { createCanvas(128, 128, WEBGL); background(240);
      brush.noStroke(); brush.fill('#3060c0', 200); brush.circle(0, 0, 40); }"""
    async_setup = """
    async function setup() { createCanvas(128, 128, WEBGL); background(240);
      await new Promise(r => setTimeout(r, 50)); }
    function draw() { brush.noStroke(); brush.fill('#c03060', 200); brush.circle(0, 0, 40); }"""
    never_stops = """
    function setup() { createCanvas(128, 128, WEBGL); background(240); }
    function draw() { brush.noStroke(); brush.fill('#30c060', 200); brush.circle(0, 0, 40); }"""
    for sketch in (setup_only, async_setup, never_stops):
        result = renderer.render(sketch)
        assert result.ok, result.to_dict()
        assert result.paint_fraction > 0.05


def test_thrown_error_is_captured_with_its_message(renderer):
    result = renderer.render("function setup(){ createCanvas(64,64,WEBGL); notAFunction(); }")
    assert not result.ok and not result.timed_out and result.infra_error is None
    assert "notAFunction" in result.error


def test_syntax_error_is_reported(renderer):
    result = renderer.render("function setup( { createCanvas(64,64,WEBGL); ")
    assert result.error and "SyntaxError" in result.error
    assert result.infra_error is None


def test_paint_before_an_error_is_kept(renderer):
    sketch = """
    function setup() { createCanvas(128, 128, WEBGL); background(240); }
    function draw() {
      brush.noStroke(); brush.fill('#2040a0', 220); brush.circle(0, 0, 50);
      throw new Error('after painting');
    }"""
    result = renderer.render(sketch)
    assert "after painting" in result.error
    assert result.png is not None and result.paint_fraction > 0.1


def test_no_setup_no_draw_is_an_error_not_a_hang(renderer):
    result = renderer.render("const x = 1;")
    assert "neither setup() nor draw()" in result.error
    assert result.timings["total_s"] < 10


def test_bare_p5_calls_and_dom_writes_are_evidence(renderer):
    sketch = """
    function setup() { createCanvas(128, 128, WEBGL); background(240);
      const d = document.createElement('div'); d.textContent = 'hello'; document.body.appendChild(d); }
    function draw() { fill(255, 0, 0); window['ell' + 'ipse'](0, 0, 50, 50); rect(0, 0, 10, 10);
      brush.noStroke(); brush.fill('#000000', 200); brush.rect(-20, -20, 30, 30); noLoop(); }"""
    result = renderer.render(sketch)
    assert result.evidence["p5_calls"] == {"ellipse": 1, "rect": 1}
    assert result.evidence["brush_calls"]["rect"] == 1
    assert "div" in result.evidence["dom_writes"]


def test_dialogs_do_not_block(renderer):
    sketch = """
    function setup() { alert('hi'); confirm('sure?'); prompt('name');
      createCanvas(64, 64, WEBGL); background(10); }"""
    result = renderer.render(sketch)
    assert result.ok, result.to_dict()


def test_capture_cannot_be_spoofed_from_the_page(renderer):
    fake = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    sketch = f"""
    HTMLCanvasElement.prototype.toDataURL = () => '{fake}';
    HTMLCanvasElement.prototype.toBlob = (cb) => cb(null);
    CanvasRenderingContext2D.prototype.getImageData = () => null;
    Object.defineProperty(HTMLCanvasElement.prototype, 'width', {{ get() {{ return 1; }} }});
    document.querySelector = () => null;
    function setup() {{ createCanvas(96, 96, WEBGL); background(200, 30, 30); }}"""
    result = renderer.render(sketch)
    assert result.png is not None, result.to_dict()
    assert (result.width, result.height) == (96, 96)
    assert tuple(pixels(result)[48, 48]) == (200, 30, 30)


def test_console_messages_are_collected(renderer):
    result = renderer.render("function setup(){ createCanvas(32,32,WEBGL); console.log('hello from the sketch'); }")
    assert any("hello from the sketch" in line for line in result.console)
