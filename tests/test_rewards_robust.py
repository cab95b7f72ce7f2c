"""The embedded reward cannot be gamed by the shortcuts a policy finds first: the pool-bounded
judge, the banded scorer, the code-only length, on small generated paintings (no browser)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw
from robust_support import flower, flower_pool

from watercolour.rewards import draw_references, judge_candidate
from watercolour.rewards.hps.offline import (
    PoolBandedAestheticScorer,
    colourfulness,
    measurements,
)
from watercolour.rewards.judge.offline_judge import (
    PoolFittedJudge,
    held_out_accuracy,
    measure_groups,
    subject_key,
)
from watercolour.rewards.length import code_only, count_tokens, length_term
from watercolour.rewards.negatives import (
    ABSTRACT,
    FROM_PAINTING,
    disc_wheel,
    polygons,
    stripes,
    with_confetti,
)

HIBISCUS, SUNFLOWER = "a peach hibiscus", "a gold sunflower"


@pytest.fixture(scope="module")
def pool():
    return flower_pool(5)


@pytest.fixture(scope="module")
def judge(pool):
    return PoolFittedJudge.fit(pool, per_kind=4)


def _saturate(png: bytes, factor: float) -> bytes:
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.float32)
    grey = rgb.mean(axis=2, keepdims=True)
    out = np.clip(grey + factor * (rgb - grey), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(out).save(buffer, format="PNG")
    return buffer.getvalue()


def test_abstract_shortcuts_lose_to_a_love_painting_in_both_orders(judge):
    love = flower(20, HIBISCUS)
    shortcuts = {"stripes": stripes(12, 0), "wheel": disc_wheel(24, 0),
                 "quads": polygons(8, 0),
                 **{name: make(7) for name, make in ABSTRACT.items()}}
    for name, png in shortcuts.items():
        assert judge.compare(png, love, HIBISCUS).winner == "second", name
        assert judge.compare(love, png, HIBISCUS).winner == "first", name


def test_form_destroying_copies_lose_to_their_painting(judge):
    source = flower(21, HIBISCUS)
    for name, make in FROM_PAINTING.items():
        assert judge.quality(make(source, 3), HIBISCUS) < judge.quality(source, HIBISCUS), name


def test_confetti_added_to_a_painting_does_not_raise_it(judge):
    for seed in range(3):
        painting = flower(30 + seed, HIBISCUS)
        for n in (4, 12, 40):
            assert judge.quality(with_confetti(painting, n, seed), HIBISCUS) < \
                judge.quality(painting, HIBISCUS), (seed, n)


def test_the_subject_asked_for_matters(pool, judge):
    sunflower, hibiscus = flower(40, SUNFLOWER), flower(40, HIBISCUS)
    assert judge.quality(sunflower, HIBISCUS) < judge.quality(sunflower, SUNFLOWER)
    assert judge.quality(hibiscus, SUNFLOWER) < judge.quality(hibiscus, HIBISCUS)
    # a good sunflower loses to the hibiscus references it beats when asked for a sunflower
    refs = draw_references(flower_pool(5), 1, 4)
    wrong = judge_candidate(judge, sunflower, refs, HIBISCUS).score
    right = judge_candidate(judge, sunflower, refs, SUNFLOWER).score
    assert wrong < right
    assert subject_key("A Peach Hibiscus") == subject_key("a red hibiscus") == "hibiscus"
    assert subject_key("a blue iris") == "blue iris" and subject_key("") is None


def test_no_measurement_pays_beyond_the_pool(judge):
    """More saturation than any pool painting has stops paying: the linear terms are clipped
    to the pool's range and the distance terms only cost."""
    painting = flower(50, HIBISCUS)
    q = [judge.quality(_saturate(painting, f), HIBISCUS) for f in (1.0, 1.6, 2.5, 4.0)]
    assert q[3] < q[0] and q[2] < q[0]
    weights = judge.model.weights
    assert (weights[judge.model.constrained()] >= 0).all()
    std = judge.model.standardise(measure_groups(_saturate(painting, 4.0)))
    clipped = judge.model.terms(std, "hibiscus", [-1])[0][:len(judge.model.mean)]
    assert (clipped <= judge.model.high["stats"] + 1e-9).all()


def test_pool_paintings_are_measured_against_the_others(pool, judge):
    """A pool painting is never its own neighbour: a reference does not win by resembling
    itself, and an exact copy of it gains nothing."""
    painting = pool.tier("love")[0]
    row = judge.model.ids.index(painting.id)
    std = judge.model.standardise(measure_groups(painting.png))
    as_itself = judge.model.terms(std, "hibiscus", [row])[0] @ judge.model.weights
    as_stranger = judge.model.terms(std, "hibiscus", [-1])[0] @ judge.model.weights
    assert as_stranger > as_itself  # its own zero distance would flatter it
    assert judge.quality(painting.png, HIBISCUS) == pytest.approx(as_itself)


def test_the_fit_is_deterministic_and_serialisable(pool, judge):
    copy = PoolFittedJudge.from_json(judge.to_json())
    x = flower(60, SUNFLOWER)
    assert copy.quality(x, SUNFLOWER) == pytest.approx(judge.quality(x, SUNFLOWER))
    assert judge.model.fitted_on["subjects"] == 2
    assert PoolFittedJudge.fit(pool, per_kind=4).model.weights.tolist() == judge.model.weights.tolist()


def test_held_out_accuracy_meets_the_targets(pool):
    report = held_out_accuracy(pool, folds=3, per_kind=3)
    assert report["paintings"] == 20 and report["love_vs_okay"]["ordered_pairs"] > 0
    assert report["love_vs_okay"]["accuracy"] >= 0.85
    assert report["pool_vs_generated"]["accuracy"] >= 0.95


# ---------------------------------------------------------------- the scorer in HPS's slot


def test_the_banded_scorer_is_bounded_by_the_love_tier(pool):
    scorer = PoolBandedAestheticScorer.fit(pool)
    love = flower(70, HIBISCUS)
    assert scorer.value(love) > scorer.value(stripes(12, 0))
    assert scorer.value(love) > scorer.value(disc_wheel(24, 0))
    assert scorer.value(_saturate(love, 4.0)) < scorer.value(love)  # more colour is no better
    assert scorer.value(with_confetti(love, 30, 0)) <= scorer.value(love)
    blank = Image.new("RGB", (64, 64), (246, 240, 228))
    buffer = io.BytesIO()
    blank.save(buffer, format="PNG")
    assert scorer.value(buffer.getvalue()) == 0.0
    assert "not a learned preference model" in scorer.name


def test_colour_is_measured_on_the_paint_not_the_background():
    def disc_on(background: tuple[int, int, int]) -> bytes:
        image = Image.new("RGB", (128, 128), background)
        ImageDraw.Draw(image).ellipse((34, 34, 94, 94), fill=(236, 150, 120))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

    on_paper, on_magenta = disc_on((246, 240, 228)), disc_on((250, 20, 200))
    a, b = measurements(on_paper), measurements(on_magenta)
    assert a["colourful"] == pytest.approx(b["colourful"])  # the same paint
    whole = [colourfulness(np.asarray(Image.open(io.BytesIO(x)).convert("RGB")))
             for x in (on_paper, on_magenta)]
    assert whole[1] > 2 * whole[0]  # what a whole-picture measure would have paid for
    scorer = PoolBandedAestheticScorer()
    assert scorer.parts(on_magenta)["paper"] < 0.01 < scorer.parts(on_paper)["paper"] == 1.0


# ---------------------------------------------------------------- length


def test_comments_do_not_pay():
    code = "function setup() {\n  createCanvas(512, 512, WEBGL);\n}\n" * 20
    padded = "// a loose wash of colour\n" * 600 + "/* and\n more */\n" + code + "\n\n\n"
    assert count_tokens(padded) == count_tokens(code)
    assert length_term(padded)["raw"] == length_term(code)["raw"]
    reply = "Here is my painting, it's lovely.\n```javascript\n" + padded + "```\nEnjoy!"
    assert count_tokens(reply) == count_tokens(code)
    assert code_only("let s = 'a // b'; // gone\nlet t = \"/* kept */\";") == \
        "let s = 'a // b'; let t = \"/* kept */\";"
