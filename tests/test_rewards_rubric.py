"""The rubric: the pigment term, declared once in ``watercolour.rewards.rubric``, reaches every
consumer (the mix and its variable, the rewarder's record, the TRL functions, the per-step
metrics, the rollout log, the environment's observation, the CLI) with no code of its own
there."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest
from conftest import SMALL_SKETCH
from PIL import Image, ImageDraw
from rewards_support import PAPER, ReplayRenderer, painting, pool

from watercolour import settings
from watercolour.rewards import Mix, MixError, RewardConfig, Rewarder, RewardSetupError
from watercolour.rewards.judge.offline_judge import PoolFittedJudge
from watercolour.rewards.pigment import PigmentBands, coverage
from watercolour.rewards.record import RewardRecord
from watercolour.rewards.references import ReferencePool
from watercolour.rewards.rubric import NAMES, RUBRIC, WEIGHTED, Component, component
from watercolour.rewards.terms import TERMS, Group, Setup
from watercolour.rewards.trl import RewardFunctions

PIGMENT_ENV = {"WATERCOLOUR_JUDGE_WEIGHT": "0.5", "WATERCOLOUR_HPS_WEIGHT": "0.3",
               "WATERCOLOUR_PIGMENT_WEIGHT": "0.1"}
REPLY = f"My painting.\n\n```javascript\n{SMALL_SKETCH}\n```\n"


def _png(colour: tuple[int, int, int], size: int = 128) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _wash(share: float, size: int = 128) -> bytes:
    """Paper with a flat blue wash over about ``share`` of it (a band across the middle)."""
    image = Image.new("RGB", (size, size), PAPER)
    top = round(size * (1 - share) / 2)
    ImageDraw.Draw(image).rectangle((0, top, size, size - top), fill=(90, 120, 200))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


# ---------------------------------------------------------------- the declarations


def test_every_component_is_declared_once_with_a_role():
    assert NAMES == ("gate", "length", "judge", "hps", "pigment")
    assert WEIGHTED == ("judge", "hps", "pigment")
    assert [c.name for c in RUBRIC if c.vetoes] == ["gate"]
    assert all(c.role for c in RUBRIC)
    assert component("pigment").env == "WATERCOLOUR_PIGMENT_WEIGHT"
    with pytest.raises(KeyError, match="the rubric has gate, length"):
        component("beauty")
    with pytest.raises(ValueError, match="a fixed weight or a variable"):
        Component("both", "x", weight=0.1, env="X")


def test_every_component_has_its_term():
    assert tuple(TERMS) == NAMES


def test_a_term_builds_from_the_configuration_and_the_pool_and_scores_a_group_alone():
    ref = pool(6, 6)
    term = TERMS["pigment"](Setup(RewardConfig(mix=Mix.from_env(PIGMENT_ENV)), ref))
    love = ref.tier("love")[0].png
    (score,) = term.score(Group(["a reply"], [], [0], [love], "a rose", None))
    assert score.raw == pytest.approx(PigmentBands.fit(ref).score(love, "a rose")[0])
    assert term.backend == "love-tier coverage bands"


def test_the_rewarder_keeps_the_term_of_each_weighed_component():
    rewarder = Rewarder(RewardConfig(mix=Mix.preset("hps-only")), pool=pool(4, 4))
    assert list(rewarder.terms) == ["gate", "length", "hps"]
    assert rewarder.backend("gate") == "chromium" and rewarder.backend("judge") is None
    assert rewarder.backend("length") == "characters / 4"
    assert rewarder.backend("hps").startswith("offline-aesthetic (bands fitted to the pool's")


def test_the_pigment_weight_is_a_documented_variable_that_defaults_to_zero():
    rows = {name: (where, default) for name, where, default, _ in settings.variables()}
    assert rows["WATERCOLOUR_PIGMENT_WEIGHT"] == ("Mix.pigment", "`0` (judge-led)")
    assert "WATERCOLOUR_PIGMENT_WEIGHT" in settings.variables_table()
    assert Mix.from_env({}).weight("pigment") == 0.0
    mix = Mix.from_env(PIGMENT_ENV)
    assert mix.name == "custom" and mix.active() == list(NAMES)
    assert sum(mix.weights.values()) == pytest.approx(1.0)
    assert Mix.from_env({"WATERCOLOUR_PIGMENT_WEIGHT": "0"}).name == "judge-led"


@pytest.mark.parametrize("env, message", [
    ({"WATERCOLOUR_PIGMENT_WEIGHT": "0.1"}, r"must sum to 0.90.*0.1 \(pigment\)"),
    ({**PIGMENT_ENV, "WATERCOLOUR_PIGMENT_WEIGHT": "much"}, "PIGMENT_WEIGHT must be a number"),
    ({**PIGMENT_ENV, "WATERCOLOUR_PIGMENT_WEIGHT": "-0.1"}, "between 0 and 0.90"),
])
def test_a_bad_pigment_weight_is_a_clear_error(env, message):
    with pytest.raises(MixError, match=message):
        Mix.from_env(env)


# ---------------------------------------------------------------- the term


def test_the_pigment_band_comes_from_the_love_tier_and_costs_both_ways():
    ref = pool(6, 6)
    bands = PigmentBands.fit(ref)
    love = [coverage(p.png) for p in ref.tier("love")]
    assert bands.overall.low <= sorted(love)[len(love) // 2] <= bands.overall.high
    inside, found = bands.score(ref.tier("love")[0].png, "a rose")
    assert inside == pytest.approx(1.0, abs=0.2) and found["band_low"] == bands.overall.low
    flood, _ = bands.score(_wash(0.95), "a rose")  # nearly every pixel painted
    bare, _ = bands.score(painting(0, "blank"), "a rose")  # no paint at all
    assert flood < 0.2 and bare < 0.2 and inside > max(flood, bare) + 0.5


def test_a_subject_with_its_own_love_paintings_gets_its_own_band():
    rows = [{"id": f"rose-{i}", "tier": "love", "subject": "a red rose",
             "png": painting(i, "love", 128)} for i in range(3)]
    rows += [{"id": f"wash-{i}", "tier": "love", "subject": "a thin blue line",
              "png": _wash(0.05)} for i in range(3)]
    bands = PigmentBands.fit(ReferencePool.from_rows(rows))
    assert bands.band("a red rose").low > 0.25 and bands.band("a thin blue line").high < 0.1
    assert bands.band("a tulip") == bands.overall
    sparse, _ = bands.score(_wash(0.05), "a red rose")
    assert sparse < 0.1 < bands.score(_wash(0.05), "a thin blue line")[0]


def test_the_pigment_term_needs_love_paintings():
    okay_only = ReferencePool.from_rows([{"id": "o", "tier": "okay", "png": _png((1, 2, 3))}])
    with pytest.raises(ValueError, match="needs love paintings"):
        PigmentBands.fit(okay_only)


# ---------------------------------------------------------------- every consumer


@pytest.fixture(scope="module")
def pigment_rewarder(renderer):
    ref = pool(4, 4)
    return Rewarder(RewardConfig(mix=Mix.from_env(PIGMENT_ENV)), pool=ref,
                    judge=PoolFittedJudge.fit(ref), renderer=ReplayRenderer(renderer))


@pytest.mark.browser
def test_the_pigment_term_flows_into_the_record_and_the_total(pigment_rewarder):
    evaluation = pigment_rewarder.evaluate(REPLY, "a rose", seed=3)
    record = evaluation.record
    part = record.components["pigment"]
    assert part.called and part.weight == 0.1 and 0.0 <= part.raw <= 1.0
    assert part.backend == "love-tier coverage bands" and part.role.startswith("paint coverage")
    assert part.details["coverage"] == pytest.approx(record.paint_fraction, abs=0.05)
    assert record.reward == pytest.approx(sum(p.contribution for p in
                                              record.components.values()), abs=1e-5)
    assert "pigment" in record.latency_s
    wire = RewardRecord.from_dict(json.loads(json.dumps(evaluation.to_dict())))
    assert wire.components["pigment"].details == part.details


@pytest.mark.browser
def test_trl_gets_a_pigment_function_and_its_weight(pigment_rewarder):
    functions = RewardFunctions(pigment_rewarder)
    assert [f.__name__ for f in functions.functions()] == list(NAMES)
    assert functions.weights() == [0.05, 0.05, 0.5, 0.3, 0.1]
    column = functions.functions()[-1]([REPLY], prompts=["p"])
    assert column[0] == functions.evaluations([REPLY], prompts=["p"])[0].component("pigment")


@pytest.mark.browser
def test_metrics_the_rollout_log_and_the_cli_show_pigment(pigment_rewarder, tmp_path):
    from watercolour.cli.score import print_human
    from watercolour.train.metrics import COLUMNS
    from watercolour.train.reward_source import batch_metrics
    from watercolour.train.rollouts import RolloutLog

    evaluation = pigment_rewarder.evaluate(REPLY, "a rose", seed=3)
    assert "rewards/pigment/mean" in COLUMNS and "pigment_mean" in COLUMNS
    metrics = batch_metrics([evaluation], pigment_rewarder.mix.weights)
    assert metrics["pigment_mean"] == evaluation.record.components["pigment"].raw
    log = RolloutLog(tmp_path)
    log.append(["p"], [REPLY], [evaluation], 0)
    row = log.records()[0]
    assert row["components"]["pigment"] == evaluation.record.components["pigment"].raw
    out = io.StringIO()
    with redirect_stdout(out):
        print_human(evaluation.record)
    line = next(x for x in out.getvalue().splitlines() if x.strip().startswith("pigment"))
    assert "x 0.10" in line and "coverage" in line


def test_the_pigment_term_without_a_pool_is_a_setup_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = RewardConfig(mix=Mix.from_weights(hps=0.8, pigment=0.1))
    with pytest.raises(RewardSetupError, match="pigment term needs a pool"):
        Rewarder(config)


def test_a_mix_is_a_preset_or_weights_as_the_flags_take_it():
    from watercolour.train.config import parse_args

    assert Mix.parse("hps-led") == Mix.preset("hps-led")
    assert Mix.parse("judge=0.5, hps=0.3, pigment=0.1") == Mix.from_env(PIGMENT_ENV)
    for text, message in [("beauty-led", "unknown mix 'beauty-led'.*judge=W,hps=W,pigment=W"),
                          ("judge=0.5,hps=lots", "weight of 'hps' must be a number"),
                          ("judge=0.5,colour=0.4", "unknown weighted component"),
                          ("judge=0.5,hps=0.3", "must sum to 0.90")]:
        with pytest.raises(MixError, match=message):
            Mix.parse(text)
    run, _ = parse_args(["--config", "smoke-4b", "--mix", "judge=0.5,hps=0.3,pigment=0.1"])
    assert run.reward_config().mix.weight("pigment") == 0.1  # a flag reaches the recipe's run
