"""Pieces of the renderer that need no browser."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from watercolour.render import RenderConfig, paint_fraction
from watercolour.render.browser import classify_backend, find_chromium, launch_args
from watercolour.render.harness import harness_script, page_html
from watercolour.render.paint import decode_rgb, paper_colour
from watercolour.render.result import RenderResult
from watercolour.render.vendor import libraries, versions


def png_of(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array.astype(np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_vendored_libraries_match_their_manifest():
    libs = libraries()
    assert [lib.package for lib in libs] == ["p5", "p5.brush"]
    pinned = json.loads((Path(__file__).parents[1] / "js" / "package.json").read_text())
    assert versions() == pinned["dependencies"]  # the vendored bundles are the npm pins
    assert "registerAddon" in libs[1].code


def test_paint_fraction_counts_pixels_off_the_paper():
    canvas = np.full((100, 100, 3), (246, 240, 228))
    assert paint_fraction(canvas) == 0.0
    canvas[:25, :] = (200, 90, 60)
    assert paint_fraction(canvas) == pytest.approx(0.25)
    canvas[50, 50] = (248, 241, 229)  # within tolerance: still paper
    assert paint_fraction(canvas) == pytest.approx(0.25)
    assert paper_colour(canvas) == (246, 240, 228)


def test_decode_composites_transparency_over_white():
    rgba = np.zeros((4, 4, 4), dtype=np.uint8)
    rgb = decode_rgb(png_of(rgba))
    assert rgb.shape == (4, 4, 3) and (rgb == 255).all()


def test_one_render_is_decoded_once_and_shared_read_only():
    """The gate, the judge, the scorer and the copy check read the same bytes: the second
    decode is the first's array, which nobody can change; other bytes decode afresh."""
    red = np.zeros((4, 4, 3), dtype=np.uint8)
    red[..., 0] = 200
    png = png_of(red)
    first = decode_rgb(png)
    assert decode_rgb(bytes(bytearray(png))) is first       # equal bytes, another object
    assert decode_rgb(bytearray(png)) is first              # a mutable buffer is read too
    assert not first.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        first[0, 0, 0] = 0
    other = decode_rgb(png_of(red // 2))
    assert other is not first and int(other[0, 0, 0]) == 100 and int(first[0, 0, 0]) == 200


def test_config_rejects_bad_values(monkeypatch):
    with pytest.raises(ValueError, match="workers"):
        RenderConfig(workers=0)
    with pytest.raises(ValueError, match="deadline"):
        RenderConfig(deadline_s=0)
    with pytest.raises(ValueError, match="gl must be"):
        RenderConfig(gl="opengl")  # type: ignore[arg-type]
    monkeypatch.setenv("WATERCOLOUR_RENDER_DEADLINE", "soon")
    with pytest.raises(ValueError, match="WATERCOLOUR_RENDER_DEADLINE"):
        RenderConfig.from_env()


def test_config_reads_the_environment(monkeypatch):
    monkeypatch.setenv("WATERCOLOUR_RENDER_WORKERS", "3")
    monkeypatch.setenv("WATERCOLOUR_GL", "swiftshader")
    config = RenderConfig.from_env(deadline_s=12)
    assert (config.workers, config.gl, config.deadline_s) == (3, "swiftshader", 12)


def test_missing_explicit_chromium_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("WATERCOLOUR_CHROMIUM", "/nowhere/chrome")
    with pytest.raises(FileNotFoundError, match="/nowhere/chrome"):
        find_chromium()


def test_fast_flags_keep_the_2d_canvas_off_the_software_gpu():
    fast = launch_args("llvmpipe", 512, "m", [])
    assert "--disable-accelerated-2d-canvas" in fast and "--use-angle=gl-egl" in fast
    assert "--watercolour-worker=m" in fast
    old = launch_args("swiftshader", 512, "m", [], flags="predecessor")
    assert "--use-angle=swiftshader" in old and "--disable-accelerated-2d-canvas" not in old


def test_backend_names():
    assert classify_backend("ANGLE (Mesa/X.org, llvmpipe (LLVM 15.0.6 256 bits))") == "llvmpipe"
    assert classify_backend("ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device))") == "swiftshader"
    assert classify_backend(None) == "none"


def test_harness_is_seeded_and_loads_libraries_before_the_sketch():
    script = harness_script(42, "abc")
    assert "const SEED = 42;" in script and '"abc"' in script
    html = page_html(1, "n")
    order = [html.index(f'src="{path}"') for path in
             ("/__wc/lib/p5.min.js", "/__wc/lib/p5.brush.js", "/__wc/sketch.js")]
    assert order == sorted(order)


def test_result_serialises_without_png():
    result = RenderResult(png=b"\x89PNG...", width=2, height=2, error=None)
    data = json.loads(json.dumps(result.to_dict()))
    assert "png" not in data and data["png_bytes"] == 7 and data["ok"] is True
    assert RenderResult(infra_error="browser exited").infrastructure_failure
