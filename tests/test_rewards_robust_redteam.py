"""The red team: its sketch families are real allowlisted p5.brush sketches, its search keeps
the best, its render cache renders once; and a gamed sketch rendered in real Chromium loses."""

from __future__ import annotations

import random

import pytest
from robust_support import flower, flower_pool

from watercolour.analysis.redteam import FAMILIES, GAMED, RenderCache, gamed_sketch, search
from watercolour.gates import take_inventory
from watercolour.render.brush import ALLOWLIST
from watercolour.rewards.judge.offline_judge import PoolFittedJudge
from watercolour.rewards.length import length_term


def test_every_family_writes_allowlisted_sketches():
    rng = random.Random(0)
    for name, family in FAMILIES.items():
        for _ in range(3):
            code = family.make(family.sample(rng))
            inv = take_inventory(code)
            assert inv.has_setup and inv.has_draw and not inv.syntax_errors, name
            assert set(inv.brush_calls) <= set(ALLOWLIST), (name, set(inv.brush_calls))
            assert not inv.unknown_brush_methods, name


def test_the_issues_gamed_sketches_are_points_of_the_families():
    assert set(GAMED) >= {"rainbow_stripes", "disc_wheel", "rainbow_quads",
                          "rainbow_quads_comments", "hibiscus_confetti", "example_string_12k",
                          "example_dead_code", "example_unrolled", "peach_target",
                          "peach_dots"}
    quads, padded = gamed_sketch("rainbow_quads"), gamed_sketch("rainbow_quads_comments")
    assert len(padded) - len(quads) >= 13000
    assert length_term(padded) == length_term(quads)  # the comments earn nothing
    assert gamed_sketch("disc_wheel").count("brush.circle(") == 24
    assert gamed_sketch("hibiscus_confetti") == gamed_sketch("hibiscus_confetti")


def test_the_search_keeps_the_best_and_starts_from_given_points():
    def score(code: str):  # a stand-in reward: more brush calls score higher
        return code.count("brush."), {}

    families = {k: FAMILIES[k] for k in ("stripes", "wheel")}
    start = {"wheel": [GAMED["disc_wheel"][1]]}
    found = search(score, families, per_family=3, generations=1, seed=1, start=start)
    assert set(found) == {"stripes", "wheel"}
    for finds in found.values():
        rewards = [f.reward for f in finds]
        assert rewards == sorted(rewards, reverse=True) and len(rewards) >= 3
    assert gamed_sketch("disc_wheel") in [f.code for f in found["wheel"]]
    again = search(score, families, per_family=3, generations=1, seed=1, start=start)
    assert [f.code for f in again["stripes"]] == [f.code for f in found["stripes"]]


@pytest.mark.slow
@pytest.mark.browser
def test_a_rendered_gamed_sketch_passes_the_gate_and_loses(renderer, tmp_path):
    cache = RenderCache(renderer, str(tmp_path / "renders"), mode="allowlist")
    code = gamed_sketch("rainbow_stripes")
    status, png = cache.gate(code, seed=0)
    assert status == "ok" and png is not None
    assert cache.gate(code, seed=0) == (status, png) and cache.renders == 1
    assert RenderCache(None, str(tmp_path / "renders")).gate(code, seed=0)[1] == png  # disk
    judge = PoolFittedJudge.fit(flower_pool(4), per_kind=3)
    love = flower(9, "a peach hibiscus")
    assert judge.compare(png, love, "a peach hibiscus").winner == "second"
    assert judge.compare(love, png, "a peach hibiscus").winner == "first"
