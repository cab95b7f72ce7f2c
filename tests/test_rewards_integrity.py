"""Reward integrity (issue 25): the length term counts what paints, a near-copy of a pool
painting does not out-earn painting, and the offline scorer in the HPS slot knows the subject.

Real sketches (the hand-made examples, the procedural painter's, the red team's), real parses
(tree-sitter), and where the picture matters real renders in headless Chromium."""

from __future__ import annotations

import pytest
from robust_support import flower, flower_pool

from watercolour.analysis.redteam import edit_sketch, gamed_sketch, padded, padded_with_string
from watercolour.examples import load_example
from watercolour.rewards import Mix, RewardConfig, Rewarder, draw_references
from watercolour.rewards.copies import SKETCH_THRESHOLD, CopyDetector
from watercolour.rewards.hps.offline import PoolBandedAestheticScorer
from watercolour.rewards.length import count_tokens, length_term, painting_code
from watercolour.rewards.references import ReferencePool, subject_key

EXAMPLE = load_example("peach_hibiscus")

# ---------------------------------------------------------------- length: padding does not pay


@pytest.mark.parametrize("kind, amount", [("string", 4000), ("string", 24000),
                                          ("dead_code", 20), ("dead_code", 150),
                                          ("unrolled", 20), ("unrolled", 150)])
def test_padding_the_example_does_not_raise_its_length(kind, amount):
    code = padded({"example": "peach_hibiscus", "kind": kind, "amount": amount, "layout": 3})
    assert len(code) > len(EXAMPLE) + 500
    assert count_tokens(code) == count_tokens(EXAMPLE)
    assert length_term(code) == length_term(EXAMPLE)


def test_the_issues_padded_copy_earns_nothing_for_its_string():
    assert length_term(gamed_sketch("example_string_12k")) == length_term(EXAMPLE)
    long_string = padded_with_string(EXAMPLE, 12000)
    assert "Loose washes" in long_string and "Loose washes" not in painting_code(long_string)


def test_strings_count_as_empty_except_short_colours():
    code = ("function draw() {\n  brush.fill('#f4b891', 150);\n  background('white');\n"
            "  let note = 'a very long caption that paints nothing at all';\n"
            "  brush.fill(`rgba(${note.length}, 0, 0, 1)`, 80);\n}\n")
    text = painting_code(code)
    assert "'#f4b891'" in text and "'white'" in text
    assert "caption" not in text and "rgba" not in text and "note.length" in text


def test_dead_code_is_dropped_and_live_code_kept():
    code = """
const USED = '#aa3344';
const UNUSED = [1, 2, 3, 4, 5, 6, 7, 8];
let onlyWritten = 0;
function setup() { createCanvas(512, 512, WEBGL); }
function draw() {
  onlyWritten = 5;
  petal(USED);
  if (false) { brush.circle(0, 0, 40); }
  if (0) { brush.circle(1, 1, 41); } else { brush.circle(2, 2, 42); }
  while (false) { brush.vertex(9, 9); }
  noLoop();
  return;
  brush.circle(3, 3, 43);
}
function petal(c) { brush.fill(c, 120); }
function neverCalled() { brush.fill('#123456', 50); helper(); }
function helper() { brush.circle(7, 7, 7); }
"""
    text = painting_code(code)
    for kept in ("USED", "petal(USED)", "brush.fill(c,120)", "brush.circle(2,2,42)",
                 "noLoop()"):
        assert kept in text, kept
    for dropped in ("UNUSED", "onlyWritten", "brush.circle(0,0,40)", "brush.circle(1,1,41)",
                    "vertex", "brush.circle(3,3,43)", "neverCalled", "helper", "'#123456'"):
        assert dropped not in text, dropped


def test_a_loop_and_its_unrolled_form_count_alike():
    head = "function setup() { createCanvas(512, 512, WEBGL); }\nfunction draw() {\n"
    loop = head + ("  for (let i = 0; i < 5; i++) {\n"
                   "    brush.circle(40 * i - 80, 0, 30, 0.4);\n  }\n}\n")
    unrolled = head + "".join(f"  brush.circle({40 * i - 80}, 0, 30, 0.4);\n"
                              for i in range(5)) + "}\n"
    copied = head + "".join(f"  brush.circle({40 * i - 80}, 0, 30, 0.4);\n"
                            for i in range(200)) + "}\n"
    assert count_tokens(unrolled) == count_tokens(copied) <= count_tokens(loop)


def test_long_lists_and_operator_chains_are_bounded():
    def base(items: str) -> str:
        return f"function draw() {{\n  const P = [{items}];\n  brush.vertex(P.length, 0);\n}}\n"

    short = base("1, 2, 3")
    long = base(", ".join(str(i) for i in range(10_000)))
    assert count_tokens(long) == count_tokens(base("1, 2, 3, 4"))
    assert len(painting_code(short)) < len(painting_code(long))  # four of a shape count
    chain = "function draw() {\n  brush.circle(0, 0, " + " + ".join(["1"] * 5000) + ");\n}\n"
    assert count_tokens(chain)[0] < 30
    nested = "function draw() {\n  brush.circle(0, 0, " + "(" * 20000 + "1" + ")" * 20000 + \
        ");\n}\n"
    assert count_tokens(nested)[0] == 0  # too deep to read: nothing counts


def test_a_richer_sketch_still_counts_more():
    """Code that does something new pays: the example without its stamen column (and the
    call) counts less than the example; a sunflower and a lotus written differently count
    differently; and a new kind of statement added to a sketch counts."""
    cut = EXAMPLE.index("// The stamen column") if "// The stamen column" in EXAMPLE else \
        EXAMPLE.index("function stamenColumn")
    poorer = EXAMPLE[:cut].replace("  stamenColumn(cx, cy);\n", "")
    assert count_tokens(poorer)[0] < count_tokens(EXAMPLE)[0] - 40
    assert length_term(poorer)["raw"] < length_term(EXAMPLE)["raw"]
    richer = EXAMPLE.replace("  noLoop();", "  // a second, cooler glaze over the leaves\n"
                             "  brush.fillBleed(0.35);\n  brush.fillTexture(0.7, 0.2);\n"
                             "  brush.fill(LEAF_DARK, 60);\n"
                             "  for (let k = 0; k < 3; k++) {\n"
                             "    brush.circle(cx + 60 * cos(k * 2.1), cy + 60 * sin(k * 2.1),"
                             " 18 + 4 * k, 0.5);\n  }\n  noLoop();", 1)
    assert count_tokens(richer)[0] > count_tokens(EXAMPLE)[0]
    assert length_term(richer)["raw"] > length_term(EXAMPLE)["raw"]


def test_the_hand_made_examples_sit_on_the_ramp():
    for name in ("peach_hibiscus", "sunflower", "lotus", "tulips", "red_poppies"):
        raw = length_term(load_example(name))["raw"]
        assert 0.1 < raw < 0.4, (name, raw)


# ---------------------------------------------------------------- near copies


def _procedural(seed: int, subject: str = "a peach hibiscus") -> str:
    from watercolour.pool.procedural import plan_painting, sketch

    return sketch(plan_painting(seed, subject, variant="good"))


def _sketch_pool(n: int = 6) -> ReferencePool:
    """Pool rows carrying real procedural sketches (pictures: generated flowers; the sketch
    comparison does not look at them)."""
    rows = [{"id": f"p{i}", "tier": "love" if i % 2 else "okay", "subject": "a peach hibiscus",
             "sketch": _procedural(i), "png": flower(i)} for i in range(n)]
    return ReferencePool.from_rows(rows, source="sketches")


def test_a_pool_sketch_handed_back_is_a_near_copy_by_sketch():
    pool = _sketch_pool()
    detector = CopyDetector.from_pool(pool)
    code = pool.get("p3").sketch
    for edit, amount in (("none", 0), ("rename", 0), ("recolour", 0.02)):
        copy = edit_sketch(code, edit, amount, 5)
        pid, sim = detector.sketch_similarity(copy)
        assert pid == "p3" and sim >= SKETCH_THRESHOLD, (edit, sim)
        found = detector.check(copy, None)
        assert found is not None and found.kind == "sketch" and found.painting == "p3"
    assert detector.sketch_similarity(padded_with_string(code, 12000))[1] >= SKETCH_THRESHOLD
    # another painting by the same painter, with the same helpers, is not a copy
    for seed in (20, 21, 22):
        fresh = _procedural(seed)
        assert detector.sketch_similarity(fresh)[1] < SKETCH_THRESHOLD, seed
        assert detector.check(fresh, None) is None
    # a pool painting measured against the others is not a copy of any of them
    for p in pool.paintings:
        assert detector.check(p.sketch, None, exclude=[p.id]) is None


def test_a_near_copy_is_found_by_its_render(renderer):
    """Rewritten code (names changed, every number a sum) paints the same picture, at another
    render seed: found by render (the sketch comparison off: the pool painting re-rendered at
    the rollout's seed); a painting of the same subject by the same painter is not."""
    code = _procedural(1)

    def render(sketch: str, seed: int) -> bytes:
        return renderer.render(sketch, seed=seed).png

    pool = ReferencePool.from_rows([
        {"id": "copied", "tier": "love", "subject": "a peach hibiscus", "sketch": code,
         "png": render(code, 3)},
        {"id": "other", "tier": "okay", "subject": "a peach hibiscus", "sketch": _procedural(2),
         "png": render(_procedural(2), 3)}])
    detector = CopyDetector.from_pool(pool, sketch_threshold=2.0, render=render)
    rewritten = edit_sketch(code, "rewrite", 0.0, 1)
    png = render(rewritten, 0)
    assert detector.render_similarity(png)[0] == "copied"
    found = detector.check(rewritten, png, seed=0)
    assert found is not None and found.kind in ("render", "render_at_seed")
    assert found.painting == "copied" and found.similarity >= found.threshold
    fresh = _procedural(30)
    assert detector.check(fresh, render(fresh, 0), seed=0) is None


def test_the_rewarder_pays_a_near_copy_gate_and_length_only(renderer):
    code = _procedural(1)
    pngs = {i: renderer.render(_procedural(i), seed=0).png for i in (1, 2, 3, 4)}
    pool = ReferencePool.from_rows([
        {"id": f"p{i}", "tier": "love" if i < 3 else "okay", "subject": "a peach hibiscus",
         "sketch": _procedural(i), "png": png} for i, png in pngs.items()])
    config = RewardConfig.from_env({}, mix=Mix.preset("hps-only"))
    rewarder = Rewarder(config, pool=pool, renderer=renderer)
    reply = f"```javascript\n{code}\n```"
    copied, painted, broken = rewarder.evaluate_group(
        [reply, EXAMPLE, "function setup() { createCanvas(512, 512, WEBGL); }"],
        subject="a peach hibiscus", seed=0)
    record = copied.to_dict()
    assert copied.status == "ok" and record["near_copy"]["painting"] == "p1"
    assert record["components"]["hps"]["raw"] == 0.0
    assert record["components"]["hps"]["zeroed"] == "near_copy"
    assert record["components"]["hps"]["called"] is False
    length = record["components"]["length"]["raw"]
    assert copied.reward == pytest.approx(0.05 + 0.05 * length) and copied.reward <= 0.1
    assert painted.status == "ok" and painted.to_dict()["near_copy"] is None
    assert painted.reward > 0.5 > copied.reward
    assert broken.status == "rejected" and broken.reward == 0.0  # three outcomes, as before
    assert broken.to_dict()["near_copy"] is None


def test_the_copy_thresholds_are_settings():
    config = RewardConfig.from_env({"WATERCOLOUR_COPY_SKETCH": "2",
                                    "WATERCOLOUR_COPY_RENDER": "0.99"})
    assert (config.copy_sketch, config.copy_render) == (2.0, 0.99)
    assert RewardConfig.from_env({}).copy_sketch == SKETCH_THRESHOLD
    pool = _sketch_pool()
    off = CopyDetector.from_pool(pool, sketch_threshold=2.0, render_threshold=2.0)
    assert off.check(pool.get("p1").sketch, pool.get("p1").png) is None


# ---------------------------------------------------------------- the subject


def test_references_are_drawn_from_the_asked_subject():
    pool = flower_pool(3)
    for seed in range(10):
        refs = draw_references(pool, seed, 4, subject="a gold sunflower")
        assert all(subject_key(p.subject) == "sunflower" for p in refs.paintings)
        assert refs.tiers == ["love", "love", "okay", "okay"]
        assert draw_references(pool, seed, 4, subject="a red rose").ids == \
            draw_references(pool, seed, 4).ids  # a subject the pool lacks: the whole pool
    thin = ReferencePool([p for p in pool.paintings if p.id != "sunflower-love-1"
                          and p.id != "sunflower-love-2"])
    refs = draw_references(thin, 0, 4, subject="a gold sunflower")
    assert [subject_key(p.subject) for p in refs.paintings][:2].count("sunflower") == 1


def _dots(seed: int, size: int = 160) -> bytes:
    """Soft dots in the hibiscus palette, heaped round the centre (no flower's form)."""
    import io
    import math
    import random

    from PIL import Image, ImageDraw, ImageFilter

    rng = random.Random(seed)
    image = Image.new("RGBA", (size, size), (246, 240, 228, 255))
    colours = [(240, 170, 130), (236, 140, 110), (150, 40, 50), (110, 160, 90)]
    for i in range(24):
        sheet = Image.new("RGBA", (size, size), (0, 0, 0, 0))
        r = size * 0.3 * math.sqrt(rng.random())
        a = rng.uniform(0, 2 * math.pi)
        x, y, d = size / 2 + r * math.cos(a), size / 2 + r * math.sin(a), size * 0.07
        ImageDraw.Draw(sheet).ellipse((x - d, y - d, x + d, y + d),
                                      fill=(*colours[i % 4], 120))
        image = Image.alpha_composite(image, sheet.filter(ImageFilter.GaussianBlur(1.5)))
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def test_the_offline_scorer_knows_the_subject():
    pool = flower_pool(5)
    scorer = PoolBandedAestheticScorer.fit(pool)
    blind = PoolBandedAestheticScorer(scorer.bands)
    hibiscus = flower(11, "a peach hibiscus")
    sunflower = flower(11, "a gold sunflower")
    as_asked = scorer.score([hibiscus], "a peach hibiscus, a watercolour painting")[0].unit
    assert as_asked > 0.8
    assert scorer.value(sunflower, "a gold sunflower") > 0.8
    assert scorer.value(sunflower, "a peach hibiscus") < as_asked - 0.2
    assert scorer.value(hibiscus, "a gold sunflower") < as_asked - 0.2
    assert blind.value(sunflower, "a peach hibiscus") == blind.value(sunflower)  # as it was
    dots = [_dots(s) for s in range(4)]
    assert max(scorer.value(d, "a peach hibiscus") for d in dots) < as_asked
    details = scorer.details(sunflower, "a peach hibiscus")
    assert details["subject_factor"] < 0.5
    assert details["distances"]["other"] < details["distances"]["own"]


def test_a_near_copy_scored_alone_is_still_ok_with_its_render_terms_zeroed(renderer):
    # no rollout of the group is asked for its render terms: the copy still earns gate and
    # length, never "unavailable" (the render terms did not fail; they were not owed)
    pngs = {i: renderer.render(_procedural(i), seed=0).png for i in (1, 2, 3, 4)}
    pool = ReferencePool.from_rows([
        {"id": f"p{i}", "tier": "love" if i < 3 else "okay", "subject": "a peach hibiscus",
         "sketch": _procedural(i), "png": png} for i, png in pngs.items()])
    for mix in ("hps-only", "judge-led"):
        rewarder = Rewarder(RewardConfig.from_env({}, mix=Mix.preset(mix)), pool=pool,
                            renderer=renderer)
        alone = rewarder.evaluate(f"```javascript\n{_procedural(1)}\n```",
                                  subject="a peach hibiscus", seed=0)
        assert alone.status == "ok" and alone.record.near_copy["painting"] == "p1", mix
        for name in rewarder.mix.active():
            if name not in ("gate", "length"):
                assert alone.record.components[name].raw == 0.0
                assert alone.record.components[name].zeroed == "near_copy"
        length = alone.record.raw("length")
        assert alone.reward == pytest.approx(0.05 + 0.05 * length)
