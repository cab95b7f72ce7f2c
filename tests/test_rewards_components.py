"""The reward's arithmetic, without a browser or a server: the length ramp, the mixes and
their environment variables, the reference draw, both-order pairwise scoring, the
consistency check and the None semantics of the total."""

from __future__ import annotations

import pytest
from rewards_support import AlwaysFirst, Failing, painting, pool

from watercolour.examples import load_example
from watercolour.rewards import (
    Mix,
    MixError,
    RewardConfig,
    combine,
    consistency,
    draw_references,
    group_seed,
    judge_candidate,
    length_score,
    length_term,
)
from watercolour.rewards.judge.base import Vote
from watercolour.rewards.length import painting_code
from watercolour.rewards.mix import PRESETS

# ---------------------------------------------------------------- length


@pytest.mark.parametrize("tokens, expected", [
    (0, 0.0), (149, 0.0), (150, 0.0), (675, 0.5), (1200, 1.0), (4500, 1.0), (6000, 1.0),
    (6001, 0.0), (20000, 0.0),
])
def test_the_length_ramp(tokens, expected):
    assert length_score(tokens) == pytest.approx(expected)


def test_length_counts_characters_over_four_without_a_tokenizer():
    term = length_term("x" * 3000)
    assert term == {"raw": pytest.approx((750 - 150) / 1050), "tokens": 750,
                    "counted_by": "chars/4"}


def test_length_uses_the_policys_tokenizer_when_given():
    class Chars:
        def encode(self, text, add_special_tokens=False):
            return list(text)

    code = load_example("peach_hibiscus")
    term = length_term(code, Chars())
    assert term["tokens"] == len(painting_code(code)) and term["counted_by"] == "tokenizer"
    assert term["raw"] == 1.0  # ~1,600 characters: past the ramp's end


# ---------------------------------------------------------------- mixes


def test_the_three_presets_differ_only_in_the_judge_split():
    for name, weights in PRESETS.items():
        mix = Mix.preset(name)
        assert mix.name == name
        assert mix.weight("gate") == mix.weight("length") == 0.05
        assert (mix.weight("judge"), mix.weight("hps")) == (weights["judge"], weights["hps"])
        assert mix.weight("pigment") == 0.0  # the presets leave the pigment term out
        assert sum(mix.weights.values()) == pytest.approx(1.0)
    assert Mix.preset("hps-only").active() == ["gate", "length", "hps"]


def test_the_mix_comes_from_two_environment_variables():
    assert Mix.from_env({}).name == "judge-led"
    env = {"WATERCOLOUR_JUDGE_WEIGHT": "0.3", "WATERCOLOUR_HPS_WEIGHT": "0.6"}
    assert Mix.from_env(env).name == "hps-led"
    assert Mix.from_env({"WATERCOLOUR_JUDGE_WEIGHT": "0", "WATERCOLOUR_HPS_WEIGHT": "0.9"}
                        ).name == "hps-only"
    custom = Mix.from_env({"WATERCOLOUR_JUDGE_WEIGHT": "0.45", "WATERCOLOUR_HPS_WEIGHT": "0.45"})
    assert custom.name == "custom" and custom.weight("judge") == 0.45


@pytest.mark.parametrize("env, message", [
    ({"WATERCOLOUR_JUDGE_WEIGHT": "0.6"}, "WATERCOLOUR_HPS_WEIGHT is not"),
    ({"WATERCOLOUR_HPS_WEIGHT": "0.6"}, "WATERCOLOUR_JUDGE_WEIGHT is not"),
    ({"WATERCOLOUR_JUDGE_WEIGHT": "lots", "WATERCOLOUR_HPS_WEIGHT": "0.3"}, "must be a number"),
    ({"WATERCOLOUR_JUDGE_WEIGHT": "nan", "WATERCOLOUR_HPS_WEIGHT": "0.3"}, "finite"),
    ({"WATERCOLOUR_JUDGE_WEIGHT": "-0.1", "WATERCOLOUR_HPS_WEIGHT": "1.0"}, "between 0 and"),
    ({"WATERCOLOUR_JUDGE_WEIGHT": "0.6", "WATERCOLOUR_HPS_WEIGHT": "0.6"}, "must sum to 0.90"),
])
def test_invalid_weights_are_a_clear_error(env, message):
    with pytest.raises(MixError, match=message):
        Mix.from_env(env)


def test_the_reward_config_reads_its_variables_and_rejects_bad_ones():
    config = RewardConfig.from_env({"WATERCOLOUR_JUDGE_WEIGHT": "0.3",
                                    "WATERCOLOUR_HPS_WEIGHT": "0.6",
                                    "WATERCOLOUR_REFERENCES": "6",
                                    "WATERCOLOUR_HPS_URL": "http://127.0.0.1:1",
                                    "WATERCOLOUR_HPS_RANGE": "-1,9"})
    assert config.mix.name == "hps-led" and config.references == 6
    assert config.judge_backend == "pool-fitted" and config.hps_backend == "hpsv3-service"
    assert config.hps_mapping.unit(4.0) == pytest.approx(0.5)
    assert RewardConfig.from_env({"WATERCOLOUR_JUDGE_BASE_URL": "http://x/v1"}
                                 ).judge_backend == "openai"
    for env, message in [({"WATERCOLOUR_REFERENCES": "four"}, "must be an integer"),
                         ({"WATERCOLOUR_HPS_TIMEOUT": "-3"}, "must be positive"),
                         ({"WATERCOLOUR_HPS_RANGE": "9,1"}, "lo < hi"),
                         ({"WATERCOLOUR_JUDGE": "oracle"}, "WATERCOLOUR_JUDGE must be one of"),
                         ({"WATERCOLOUR_GATE_MODE": "lenient"}, "WATERCOLOUR_GATE_MODE must be one of")]:
        with pytest.raises(ValueError, match=message):
            RewardConfig.from_env(env)


# ---------------------------------------------------------------- references


def test_references_are_half_love_half_okay_seeded_and_recorded():
    p = pool(5, 7)
    a = draw_references(p, seed=11)
    assert a.tiers.count("love") == 2 and a.tiers.count("okay") == 2
    assert draw_references(p, seed=11).ids == a.ids
    draws = {tuple(draw_references(p, seed=s).ids) for s in range(20)}
    assert len(draws) > 5
    assert a.to_dict() == {"seed": 11, "ids": a.ids, "tiers": a.tiers}
    odd = draw_references(p, seed=1, n=3)
    assert odd.tiers.count("okay") == 2 and odd.tiers.count("love") == 1
    with pytest.raises(ValueError, match="has 1 'love'"):
        draw_references(pool(1, 5), seed=0, n=4)


def test_group_seeds_are_stable_and_distinct():
    assert group_seed(0, 3, "paint a rose") == group_seed(0, 3, "paint a rose")
    assert group_seed(0, 3, "paint a rose") != group_seed(0, 4, "paint a rose")
    assert 0 <= group_seed("x") < 2**63


# ---------------------------------------------------------------- both orders


class Oracle:
    """Prefers the candidate (a known picture), whatever the order."""

    name = "oracle"

    def __init__(self, favourite: bytes) -> None:
        self.favourite = favourite

    def compare(self, first, second, subject):
        return Vote("first" if first == self.favourite else "second")


def test_both_orders_cancel_position_bias():
    refs = draw_references(pool(4, 4), seed=3)
    candidate = painting(99)
    result = judge_candidate(AlwaysFirst(), candidate, refs, "a rose")
    assert (result.asked, result.answered, result.wins, result.score) == (8, 8, 4, 0.5)
    orders = [v["order"] for v in result.votes]
    assert orders == ["candidate_first", "reference_first"] * 4
    assert [v["reference"] for v in result.votes[::2]] == refs.ids
    assert judge_candidate(Oracle(candidate), candidate, refs, "a rose").score == 1.0


def test_unanswered_comparisons_are_dropped_and_below_half_is_none():
    refs = draw_references(pool(4, 4), seed=3)
    half = judge_candidate(Failing(lambda i: i % 2 == 0), painting(1), refs, "x")
    # only the reference-first answers came back, each for the first picture (the reference)
    assert (half.asked, half.answered, half.score) == (8, 4, 0.0)  # exactly half: scored
    less = judge_candidate(Failing(lambda i: i < 5), painting(1), refs, "x")
    assert less.answered == 3 and less.score is None and less.unavailable
    assert all(v["error"] for v in less.votes[:5])


def test_a_judge_that_raises_only_loses_its_votes():
    class Raising:
        name = "raising"

        def compare(self, first, second, subject):
            raise ConnectionError("boom")

    result = judge_candidate(Raising(), painting(1), draw_references(pool(2, 2), 0), "x")
    assert result.score is None and "ConnectionError" in result.votes[0]["error"]


# ---------------------------------------------------------------- consistency


def test_consistency_reports_agreement_and_position_bias():
    pairs = [(painting(i), painting(50 + i, "okay")) for i in range(3)]
    biased = consistency(AlwaysFirst(), pairs, "x", repeats=2, self_pairs=[painting(1)])
    assert biased["repeat_agreement"] == 1.0
    assert biased["order_agreement"] == 0.0 and biased["position_bias_rate"] == 1.0
    assert biased["first_rate"] == 1.0 and biased["self_first_rate"] == 1.0
    fair = consistency(Oracle(pairs[0][0]), pairs[:1], "x", repeats=2)
    assert fair["order_agreement"] == 1.0 and fair["position_bias_rate"] == 0.0
    assert fair["answered_rate"] == 1.0


# ---------------------------------------------------------------- the total


def test_the_total_and_its_none_semantics():
    mix = Mix.preset("judge-led")
    total, status, missing, parts = combine(
        mix, {"gate": 1.0, "length": 0.5, "judge": 0.75, "hps": 0.4})
    assert status == "ok" and missing is None
    assert total == pytest.approx(0.05 + 0.05 * 0.5 + 0.6 * 0.75 + 0.3 * 0.4)
    assert parts["judge"] == {"raw": 0.75, "weight": 0.6, "contribution": pytest.approx(0.45)}
    # a rejected sketch: 0, never None, and length does not pay
    total, status, _, parts = combine(mix, {"gate": 0.0, "length": 1.0})
    assert (total, status) == (0.0, "rejected")
    assert all(p["contribution"] == 0.0 for p in parts.values())
    # infrastructure: None as a whole, even when other parts answered
    for gate, judge, hps, part in [(None, 0.9, 0.9, "render"), (1.0, None, 0.9, "judge"),
                                   (1.0, 0.9, None, "hps")]:
        total, status, missing, parts = combine(
            mix, {"gate": gate, "length": 1.0, "judge": judge, "hps": hps})
        assert (total, status, missing) == (None, "unavailable", part)
        assert all(p["contribution"] is None for p in parts.values())
    # a component with weight 0 is not needed
    assert combine(Mix.preset("hps-only"), {"gate": 1.0, "length": 1.0, "hps": 1.0}
                   )[0] == pytest.approx(1.0)
