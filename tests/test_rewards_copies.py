"""Near copies whatever way up (issue 39): a pool painting mirrored, turned, shifted or scaled,
its numbers rewritten as expressions, is still a copy, on every seed; distinct pool paintings
and the hand-made examples are not.

The sketch comparison folds constant arithmetic (no browser); the picture comparison is checked
on generated pictures turned by PIL (no browser) and on real renders in headless Chromium,
where a copy rendered at one seed is compared with the pool painting re-rendered at that seed.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image
from robust_support import flower

from watercolour.analysis.redteam import (
    REWRITES,
    TURNS,
    disguise_sketch,
    disguised_copy_families,
    edit_sketch,
)
from watercolour.examples import example_names, load_example
from watercolour.rewards.copies import (
    RENDER_THRESHOLD,
    SEED_THRESHOLD,
    SKETCH_THRESHOLD,
    CopyDetector,
    aligned_similarity,
    paint_of,
    screen_similarity,
    sketch_tokens,
)
from watercolour.rewards.references import ReferencePool

SUBJECT = "a peach hibiscus"


def _procedural(seed: int, subject: str = SUBJECT) -> str:
    from watercolour.pool.procedural import plan_painting, sketch

    return sketch(plan_painting(seed, subject, variant="good"))


# ---------------------------------------------------------------- the sketch: numbers folded


def test_numbers_written_as_expressions_read_as_the_numbers():
    code = _procedural(3)
    plain = sketch_tokens(code)
    for rewrite in REWRITES[1:]:
        rewritten = disguise_sketch(code, rewrite=rewrite, seed=5)
        assert rewritten != code
        tokens = sketch_tokens(rewritten)
        assert [t for t in tokens if t not in ("const", "$", "=", "1.37", ";")] == \
            [t for t in plain if t not in ("const", "$", "=", "1.37", ";")], rewrite
    folded = sketch_tokens("const F = 2;\nconst G = F * 3;\nfunction draw() {\n"
                           "  brush.circle((7 * 2 / F), -(1 + 2), G / 4, x + 1);\n}\n")
    assert folded[folded.index("circle") + 2:][:9] == ["7", ",", "-3", ",", "1.5", ",", "x",
                                                       "+", "1"]
    # a name bound twice is no constant; a division by zero is no number
    twice = sketch_tokens("const F = 2;\nfunction f(F) { return F * 2; }\nlet y = 1 / 0;\n")
    assert "4" not in twice and "/" in twice


def test_a_mirrored_number_rewritten_copy_is_a_copy_by_sketch():
    """The issue's copy: every number ``N * 1.37 / F``, ``scale(-1, 1)`` first in ``draw()``
    (scored 0.957 / 0.962 / 0.960 judge-led before); and the other rewrites and turns."""
    sketches = {f"p{i}": _procedural(i) for i in range(6)}
    detector = CopyDetector(sketches, {})
    for turn in ("mirror_x", "rot90", "transpose"):
        for rewrite in REWRITES[1:]:
            copy = disguise_sketch(sketches["p2"], turn, rewrite=rewrite, seed=1)
            pid, sim = detector.sketch_similarity(copy)
            assert pid == "p2" and sim >= SKETCH_THRESHOLD, (turn, rewrite, sim)
    for seed in (20, 21, 22):  # the same painter's new paintings are not
        assert detector.sketch_similarity(_procedural(seed))[1] < SKETCH_THRESHOLD


def test_the_disguise_families_write_copies_of_pool_sketches():
    import random

    from watercolour.gates import take_inventory

    sketches = {"p1": _procedural(1), "p2": _procedural(2)}
    families = disguised_copy_families(sketches)
    assert set(families) == {"copy_mirrored", "copy_rotated", "copy_shifted", "copy_scaled",
                             "copy_rewritten"}
    rng = random.Random(0)
    for name, family in families.items():
        assert not family.abstract  # a copy of a painting is never a negative
        for _ in range(3):
            params = family.sample(rng)
            code = family.make(params)
            inv = take_inventory(code)
            assert inv.has_setup and inv.has_draw and not inv.syntax_errors, name
            if name in ("copy_mirrored", "copy_rotated"):  # the turn, its numbers folded
                turn = sketch_tokens(TURNS[params["turn"]])
                tokens = sketch_tokens(code)
                assert any(tokens[i:i + len(turn)] == turn for i in range(len(tokens))), name
            if name == "copy_mirrored":
                assert params["turn"] in ("mirror_x", "mirror_y")
            if name == "copy_rewritten":
                assert params["rewrite"] != "none"


# ---------------------------------------------------------------- the picture: whatever way up


def _turned(png: bytes, how: str) -> bytes:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    paper = image.getpixel((0, 0))
    w, h = image.size
    if how == "mirror_x":
        image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    elif how == "mirror_y":
        image = image.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    elif how == "rot90":
        image = image.transpose(Image.Transpose.ROTATE_90)
    elif how == "transpose":
        image = image.transpose(Image.Transpose.TRANSPOSE)
    elif how.startswith("shift"):
        dx = int(how[5:])
        canvas = Image.new("RGB", (w, h), paper)
        canvas.paste(image, (dx, -dx // 2))
        image = canvas
    elif how.startswith("scale"):
        k = float(how[5:])
        small = image.resize((int(w * k), int(h * k)), Image.LANCZOS)
        canvas = Image.new("RGB", (w, h), paper)
        canvas.paste(small, ((w - small.width) // 2, (h - small.height) // 2))
        image = canvas
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize("how", ["mirror_x", "mirror_y", "rot90", "transpose", "shift18",
                                 "scale0.8"])
def test_a_picture_turned_moved_or_scaled_is_still_itself(how):
    original = flower(4)
    copy = _turned(original, how)
    assert copy != original
    assert screen_similarity(paint_of(original), paint_of(copy)) >= RENDER_THRESHOLD, how
    assert aligned_similarity(paint_of(original), paint_of(copy)) >= SEED_THRESHOLD, how
    detector = CopyDetector({}, {"copied": original, "other": flower(5, "a gold sunflower")})
    found = detector.check(None, copy)
    assert found is not None and found.painting == "copied" and found.kind == "render"


# ---------------------------------------------------------------- real renders, every seed


@pytest.fixture(scope="module")
def rendered(renderer):
    """Three hibiscus paintings by the pool's painter (the pool holds their renders at seed 7)
    and two detectors that re-render them at a rollout's seed: in full, and by render alone
    (the sketch comparison off). Renders are kept: (code, seed) -> PNG."""
    codes = {f"p{i}": _procedural(i) for i in (1, 2, 3)}
    kept: dict[tuple[str, int], bytes] = {}

    def render(code: str, seed: int) -> bytes | None:
        if (code, seed) not in kept:
            kept[code, seed] = renderer.render(code, seed=seed).png
        return kept[code, seed]

    pool = ReferencePool.from_rows([
        {"id": pid, "tier": "love", "subject": SUBJECT, "sketch": code,
         "png": render(code, 7)} for pid, code in codes.items()])
    return (codes, render, CopyDetector.from_pool(pool, render=render),
            CopyDetector.from_pool(pool, sketch_threshold=2.0, render=render))


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("seed", [0, 1])
def test_a_mirrored_rewritten_pool_copy_is_caught_by_render_on_every_seed(rendered, seed):
    """The issue's copy (every number ``N * 1.37 / F``, ``scale(-1, 1)``), rendered at a seed
    other than the pool's: caught by its picture alone, against p2 re-rendered at that seed."""
    codes, render, detector, by_render = rendered
    copy = disguise_sketch(codes["p2"], "mirror_x", rewrite="product")
    png = render(copy, seed)
    found = by_render.check(copy, png, seed=seed)
    assert found is not None and found.painting == "p2", found
    assert found.kind in ("render", "render_at_seed") and found.similarity >= SEED_THRESHOLD
    found = detector.check(copy, png, seed=seed)
    assert found is not None and found.painting == "p2"


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("kw", [{"turn": "rot90", "rewrite": "quotient"},
                                {"shift": (50, -40), "rewrite": "sum"},
                                {"scale": 0.8}])
def test_rotated_shifted_and_scaled_copies_are_caught_by_render(rendered, kw):
    codes, render, _, by_render = rendered
    copy = disguise_sketch(codes["p3"], **kw)
    found = by_render.check(copy, render(copy, 0), seed=0)
    assert found is not None and found.painting == "p3", (kw, found)


@pytest.mark.slow
@pytest.mark.browser
def test_distinct_pool_paintings_and_the_examples_are_not_copies(rendered):
    codes, render, detector, _ = rendered
    for pid, code in codes.items():  # each at seed 0, the others re-rendered there
        assert detector.check(code, render(code, 0), exclude=[pid], seed=0) is None, pid
    for name in example_names():
        code = load_example(name)
        assert detector.check(code, render(code, 0), seed=0) is None, name


def test_without_a_seed_or_a_renderer_nothing_is_rerendered():
    asked = []
    detector = CopyDetector({"p1": _procedural(1)}, {"p1": flower(1)},
                            render=lambda code, seed: asked.append(seed))
    assert detector.check(None, flower(2, "a gold sunflower")) is None and asked == []
    assert CopyDetector({"p1": _procedural(1)}, {"p1": flower(1)}).confirm == 0
    edited = edit_sketch(_procedural(1), "rename", 0, 3)
    found = detector.check(edited, flower(2, "a gold sunflower"), seed=4)
    assert found is not None and found.kind == "sketch" and asked == []


def test_copy_confirm_is_a_setting_that_bounds_the_rerenders():
    """``WATERCOLOUR_COPY_CONFIRM`` reaches the rewarder's detector and caps the pool paintings
    re-rendered per rollout (0: none)."""
    from watercolour.rewards import Mix, RewardConfig, Rewarder
    from watercolour.rewards.copies import CONFIRM

    assert RewardConfig.from_env({}).copy_confirm == CONFIRM
    assert RewardConfig.from_env({"WATERCOLOUR_COPY_CONFIRM": "2"}).copy_confirm == 2
    assert RewardConfig.from_env({"WATERCOLOUR_COPY_CONFIRM": "0"}).resolved()["copy_confirm"] == 0
    with pytest.raises(ValueError):
        RewardConfig.from_env({"WATERCOLOUR_COPY_CONFIRM": "-1"})
    pool = ReferencePool.from_rows([
        {"id": f"p{i}", "tier": "love", "subject": SUBJECT, "sketch": _procedural(i),
         "png": flower(i)} for i in range(4)])

    class Renderer:  # a pool painting re-rendered is the pool's own picture
        def __init__(self) -> None:
            self.asked: list[int] = []

        def render(self, code, seed):
            self.asked.append(seed)
            return type("R", (), {"png": flower(1)})()

    for confirm, most in ((2, 2), (0, 0)):
        config = RewardConfig.from_env({"WATERCOLOUR_COPY_CONFIRM": str(confirm),
                                        "WATERCOLOUR_COPY_SKETCH": "2"},
                                       mix=Mix.preset("hps-only"))
        renderer = Renderer()
        detector = Rewarder(config, pool=pool, renderer=renderer).copies
        assert detector.confirm == confirm
        detector.screen_threshold = -1.0  # every pool painting looks alike: only the cap bounds
        assert detector.check(None, flower(2, "a gold sunflower"), seed=7) is None
        assert len(renderer.asked) == most and set(renderer.asked) <= {7}
