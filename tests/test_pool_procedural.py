"""The procedural painter: deterministic, only the ten allowlisted methods, and its sketches
really paint (rendered in the session's browser)."""

from __future__ import annotations

import re

import pytest

from watercolour.pool import procedural as P
from watercolour.pool.critic import CritiqueRequest, OfflineCritic
from watercolour.pool.painters import Attempt, PaintRequest, ProceduralPainter
from watercolour.pool.subjects import SUBJECTS, find_subject
from watercolour.render.brush import ALLOWLIST as BRUSH_ALLOWLIST

ALLOWLIST = set(BRUSH_ALLOWLIST)


def _brush_methods(code: str) -> set[str]:
    return set(re.findall(r"\bbrush\.(\w+)\s*\(", code))


def test_same_seed_same_sketch_and_seeds_differ():
    a = P.generate(11, size=256)
    assert P.generate(11, size=256) == a
    others = {P.generate(s, size=256).code for s in range(12)}
    assert len(others) == 12


def test_every_subject_variant_style_and_negative_uses_only_the_allowlist():
    codes = []
    for i, key in enumerate(SUBJECTS):
        for style in P.STYLES:
            for variant in P.VARIANTS:
                codes.append(P.generate(i, subject=key, variant=variant, style=style).code)
    codes += [P.negative(kind, 3).code for kind in P.NEGATIVES]
    for code in codes:
        methods = _brush_methods(code)
        assert methods <= ALLOWLIST, methods - ALLOWLIST
        assert "createCanvas(512, 512, WEBGL)" in code
        assert "function setup()" in code and "function draw()" in code
        assert "noLoop();" in code
        assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in re.findall(r"'(#[^']*)'", code))
    assert len(set(codes)) > 0.9 * len(codes)


def test_sketch_sizes_are_like_the_tiny_painter_data():
    lines = [len(P.generate(s, size=512).code.splitlines()) for s in range(40)]
    assert min(lines) >= 25 and max(lines) <= 700
    assert 60 <= sorted(lines)[len(lines) // 2] <= 400


def test_variants_follow_the_cycle_and_subjects_are_read_from_phrases():
    assert [P.plan_painting(s).variant for s in range(10)] == list(P.VARIANT_CYCLE)
    plan = P.plan_painting(4, subject="a peach hibiscus")
    assert (plan.subject, plan.palette) == ("hibiscus", "peach")
    assert find_subject("three yellow tulips")[0].key == "tulip"
    assert find_subject("a pelican")[0].key == "hibiscus"  # unknown: the project's subject
    starters = P.starter_subjects(12)
    assert sum("hibiscus" in s for s in starters) == 4
    assert len({find_subject(s)[0].key for s in starters}) == len(SUBJECTS)
    with pytest.raises(ValueError, match="unknown variant"):
        P.plan_painting(0, variant="beautiful")


def test_revise_fixes_what_the_critic_names():
    dark = P.plan_painting(7, subject="hibiscus", variant="dark")
    better = P.revise(dark, ["dark"])
    assert better.dark < dark.dark and better.revisions == ["dark"]
    flat = P.plan_painting(1, subject="poppy", variant="flat")
    assert P.revise(P.revise(flat, ["flat"]), ["flat"]).layers == 3
    off = P.plan_painting(9, variant="off_centre")
    assert abs(P.revise(off, ["off_centre"]).offset[0]) < abs(off.offset[0])
    assert P.revise(off, ["nonsense"]) == off
    # at most two fixes a round
    assert len(P.revise(dark, ["dark", "muddy", "flat"]).revisions) == 2


def test_the_painter_replays_its_history():
    painter = ProceduralPainter()
    first = painter.paint(PaintRequest("a red hibiscus", seed=7, size=256))
    assert first.meta["variant"] == "dark"
    history = [Attempt(1, first.code, "too dark", ["dark"])]
    second = painter.paint(PaintRequest("a red hibiscus", seed=7, round=2, history=history,
                                        size=256))
    assert second.code != first.code and second.meta["revisions"] == ["dark"]
    # stateless: the same request gives the same sketch
    assert painter.paint(PaintRequest("a red hibiscus", 7, 2, history, size=256)) == second


# ---------------------------------------------------------------- rendered


@pytest.mark.browser
def test_sketches_render_with_paint_and_negatives_do_not_look_right(renderer):
    goods = [P.generate(0, subject=key, variant="good", size=256, style=style)
             for key, style in (("hibiscus", "unrolled"), ("daisy", "helpers"),
                                ("cherry", "loop"))]
    negatives = [P.negative(kind, 1, size=256) for kind in ("blank", "faint", "grey")]
    results = renderer.render_many([s.code for s in goods + negatives], seeds=0)
    critic = OfflineCritic()
    for sketch, res in zip(goods, results[:3]):
        assert res.ok, res.error
        assert res.width == 256
        assert 0.04 < res.paint_fraction < 0.7, (sketch.subject, res.paint_fraction)
        assert res.evidence["n_shapes"] >= 8
        assert set(res.evidence["brush_calls"]) <= ALLOWLIST
        c = critic.critique(CritiqueRequest(sketch.subject, res.png))
        assert c.score > 0.6, (sketch.subject, c)
    blank, faint, grey = results[3:]
    assert blank.ok and blank.paint_fraction == 0
    assert faint.ok and critic.critique(CritiqueRequest("x", faint.png)).issues[0] in (
        "blank", "faint", "sparse")
    assert "grey" in critic.critique(CritiqueRequest("x", grey.png)).issues
    # the same sketch renders the same pixels: the pool is reproducible
    again = renderer.render(goods[0].code, seed=0)
    assert again.png == results[0].png
