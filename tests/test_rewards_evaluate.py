"""Whole evaluations: real gates on real renders (one browser, each sketch rendered once per
session), the embedded backends, and the None semantics with faults injected by real local
HTTP servers. Also the TRL reward functions and the ``score`` command."""

from __future__ import annotations

import argparse
import json

import pytest
from conftest import SMALL_SKETCH
from rewards_support import (
    BrokenBrowser,
    FaultServer,
    ReplayRenderer,
    answer,
    chat_completion,
    hps_answer,
    pool,
)

from watercolour.rewards import Mix, RewardConfig, Rewarder, RewardSetupError
from watercolour.rewards.hps.client import HpsClient
from watercolour.rewards.judge.offline_judge import PoolFittedJudge
from watercolour.rewards.judge.openai_judge import OpenAIJudge
from watercolour.rewards.record import RewardRecord
from watercolour.rewards.trl import RewardFunctions, completion_text

pytestmark = pytest.mark.browser

REJECTED = """function setup() { createCanvas(256, 256, WEBGL); }
function draw() { ellipse(0, 0, 80, 80); }"""
REPLY = f"Here is my painting.\n\n```javascript\n{SMALL_SKETCH}\n```\n"


@pytest.fixture(scope="module")
def replay(renderer):
    return ReplayRenderer(renderer)


@pytest.fixture(scope="module")
def ref_pool():
    return pool(4, 4)


@pytest.fixture(scope="module")
def fitted(ref_pool):
    return PoolFittedJudge.fit(ref_pool)


class Counting:
    """Wraps a judge, counting comparisons."""

    def __init__(self, judge) -> None:
        self.judge, self.calls = judge, 0
        self.name = judge.name

    def compare(self, first, second, subject):
        self.calls += 1
        return self.judge.compare(first, second, subject)


def rewarder(replay, ref_pool, judge, mix="judge-led", scorer=None, **config):
    return Rewarder(RewardConfig(mix=Mix.preset(mix), **config), pool=ref_pool, judge=judge,
                    scorer=scorer, renderer=replay)


def test_a_scored_rollout_and_its_breakdown(replay, ref_pool, fitted):
    judge = Counting(fitted)
    evaluation = rewarder(replay, ref_pool, judge).evaluate(REPLY, "a rose", seed=5)
    data = json.loads(json.dumps(evaluation.to_dict()))  # plain, serialisable
    assert data["status"] == "ok" and evaluation.reward == data["reward"]
    c = data["components"]
    assert set(c) == {"gate", "length", "judge", "hps", "pigment"}
    assert not c["pigment"]["called"] and c["pigment"]["weight"] == 0.0  # not in the preset
    record = evaluation.record  # the same, typed
    assert RewardRecord.from_dict(data).to_dict() == data  # the wire format round-trips
    assert record.components["judge"].raw == c["judge"]["raw"] and record.gate_passed
    assert record.components["judge"].backend == c["judge"]["backend"] == fitted.name
    assert record.components["hps"].role.startswith("human preference")
    assert c["gate"]["raw"] == 1.0 and c["length"]["counted_by"] == "chars/4"
    assert c["judge"]["asked"] == 8 == judge.calls and len(c["judge"]["votes"]) == 8
    assert {v["order"] for v in c["judge"]["votes"]} == {"candidate_first", "reference_first"}
    assert c["judge"]["raw"] == c["judge"]["wins"] / c["judge"]["answered"]
    assert 0.0 <= c["hps"]["raw"] <= 1.0 and c["hps"]["backend"].startswith("offline-aesthetic")
    assert data["reward"] == pytest.approx(sum(p["contribution"] for p in c.values()), abs=1e-5)
    assert data["references"]["seed"] == 5 and len(data["references"]["ids"]) == 4
    assert data["gate"]["passed"] and data["gate"]["paint_fraction"] > 0
    assert set(data["latency_s"]) >= {"gate", "render", "judge", "hps", "total"}


def test_a_group_shares_its_references(replay, ref_pool, fitted):
    group = rewarder(replay, ref_pool, fitted).evaluate_group([REPLY, SMALL_SKETCH, REJECTED],
                                                             "a rose", seed=9)
    refs = [e.to_dict()["references"] for e in group]
    assert refs[0] == refs[1] == refs[2]
    assert group[0].reward is not None and group[2].reward == 0.0


def test_a_rejected_sketch_scores_zero_and_asks_nobody(replay, ref_pool, fitted):
    judge = Counting(fitted)
    evaluation = rewarder(replay, ref_pool, judge).evaluate(REJECTED, seed=1)
    assert (evaluation.reward, evaluation.status) == (0.0, "rejected")
    assert "bare_primitives" in evaluation.to_dict()["gate"]["violations"]
    assert judge.calls == 0
    assert all(p["contribution"] == 0.0 for p in evaluation.to_dict()["components"].values())


def test_a_failed_browser_is_none_not_zero(ref_pool, fitted):
    judge, browser = Counting(fitted), BrokenBrowser()
    evaluation = rewarder(browser, ref_pool, judge).evaluate(SMALL_SKETCH, seed=1)
    assert (evaluation.reward, evaluation.status) == (None, "unavailable")
    assert evaluation.to_dict()["unavailable"]["part"] == "render"
    assert "browser died" in evaluation.to_dict()["unavailable"]["reason"]
    assert browser.calls == 2 and judge.calls == 0  # the gate retried once


@pytest.mark.parametrize("script", [[("status", 500)], [("hang", 5)], [("raw", b"[[")]])
def test_an_hps_service_that_fails_makes_the_reward_none(replay, ref_pool, fitted, script):
    with FaultServer(hps_answer, script) as server:
        scorer = HpsClient(server.url, timeout_s=0.5, retries=1, backoff_s=0.01)
        evaluation = rewarder(replay, ref_pool, fitted, scorer=scorer).evaluate(REPLY, seed=2)
    data = evaluation.to_dict()
    assert evaluation.reward is None and data["unavailable"]["part"] == "hps"
    assert "HPS service" in data["unavailable"]["reason"]
    assert data["components"]["judge"]["raw"] is not None  # it answered; still no partial score
    assert all(p["contribution"] is None for p in data["components"].values())


def test_a_working_hps_service_is_mapped_into_the_reward(replay, ref_pool, fitted):
    with FaultServer(hps_answer) as server:
        scorer = HpsClient(server.url, timeout_s=5)
        evaluation = rewarder(replay, ref_pool, fitted, "hps-only", scorer).evaluate(REPLY)
    hps = evaluation.to_dict()["components"]["hps"]
    assert (hps["mu"], hps["sigma"]) == (5.0, 1.0)
    assert hps["raw"] == pytest.approx(0.7773, abs=1e-4)  # the default logistic(mu / 4)
    assert evaluation.to_dict()["components"]["judge"]["called"] is False


@pytest.mark.parametrize("script, expected", [
    ([("status", 500)], None),
    ([lambda r: chat_completion("I prefer the first one.")], None),
    ([("status", 500), "ok"] * 8, "scored"),  # every other request fails, retries rescue it
])
def test_a_judge_below_half_its_answers_makes_the_reward_none(replay, ref_pool, script,
                                                              expected):
    with FaultServer(answer("A"), script) as server:
        judge = OpenAIJudge("m", base_url=server.url + "/v1", timeout_s=2, retries=1,
                            backoff_s=0.01, max_concurrency=1)
        evaluation = rewarder(replay, ref_pool, judge).evaluate(REPLY, seed=3)
    data = evaluation.to_dict()
    if expected is None:
        assert evaluation.reward is None and data["unavailable"]["part"] == "judge"
        assert "fewer than half" in data["unavailable"]["reason"]
    else:
        assert evaluation.status == "ok" and data["components"]["judge"]["raw"] == 0.5


def test_hps_only_needs_no_pool_and_no_judge(replay):
    evaluation = Rewarder(RewardConfig(mix=Mix.preset("hps-only")), renderer=replay
                          ).evaluate(REPLY)
    assert evaluation.status == "ok" and evaluation.to_dict()["references"] is None


def test_a_judge_without_a_pool_is_a_setup_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RewardSetupError, match="needs a pool"):
        Rewarder(RewardConfig(), renderer=BrokenBrowser())


# ---------------------------------------------------------------- TRL


def test_trl_functions_are_per_component_and_sum_to_the_total(replay, ref_pool, fitted):
    judge = Counting(fitted)
    seen = []
    functions = RewardFunctions(rewarder(replay, ref_pool, judge), on_evaluations=seen.append)
    fns = functions.functions()
    assert [f.__name__ for f in fns] == ["gate", "length", "judge", "hps"]
    assert functions.weights() == [0.05, 0.05, 0.6, 0.3]
    prompts = ["paint a rose"] * 2 + ["paint a lily"] * 2
    completions = [[{"role": "assistant", "content": REPLY}], REJECTED, SMALL_SKETCH, REPLY]
    columns = {name: f(completions, prompts=prompts, subject=["a rose"] * 2 + ["a lily"] * 2)
               for name, f in zip(["gate", "length", "judge", "hps"], fns)}
    assert len(seen) == 1  # the batch was evaluated once
    assert judge.calls == 3 * 8  # three admitted rollouts, 4 references x 2 orders
    totals = functions.total()(completions, prompts=prompts,
                               subject=["a rose"] * 2 + ["a lily"] * 2)
    for i, total in enumerate(totals):
        weighted = sum(w * columns[n][i] for n, w in zip(columns, functions.weights()))
        assert weighted == pytest.approx(total, abs=1e-5)
    assert totals[1] == 0.0 and [columns[n][1] for n in columns] == [0.0] * 4
    refs = [e.to_dict()["references"]["ids"] for e in seen[0]]
    assert refs[0] == refs[1] and refs[2] == refs[3]  # a group per prompt
    assert seen[0][2].to_dict()["subject"] == "a lily"


def test_trl_functions_all_return_none_for_an_unavailable_rollout(ref_pool, fitted):
    functions = RewardFunctions(rewarder(BrokenBrowser(), ref_pool, fitted))
    logged = {}
    for f in functions.functions():
        assert f([SMALL_SKETCH], prompts=["p"],
                 log_metric=lambda k, v: logged.__setitem__(k, v)) == [None]
    assert functions.total()([SMALL_SKETCH], prompts=["p"]) == [None]
    assert logged["reward/unavailable_frac"] == 1.0


def test_completion_text_reads_strings_and_messages():
    assert completion_text("abc") == "abc"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]
                           ) == "x"


# ---------------------------------------------------------------- the command line


def _parser():
    from watercolour.cli import score

    parser = argparse.ArgumentParser(prog="watercolour")
    verbs = parser.add_subparsers(dest="verb")
    score.add_parser(verbs, "score")
    return parser


def test_the_score_command(tmp_path, monkeypatch, capsys, replay):
    from watercolour.cli import score
    from watercolour.pool.dataset import write_pool_folder

    class Shared:
        def __init__(self, *a, **k) -> None:
            pass

        def __enter__(self):
            return replay

        def __exit__(self, *exc):
            return None

    monkeypatch.setattr(score, "Renderer", Shared)
    rows = [{"id": p.id, "tier": p.tier, "png": p.png} for p in pool(2, 2).paintings]
    folder = write_pool_folder(rows, tmp_path / "pool")
    reply = tmp_path / "reply.md"
    reply.write_text(REPLY)
    monkeypatch.setenv("WATERCOLOUR_JUDGE_WEIGHT", "0.3")
    monkeypatch.setenv("WATERCOLOUR_HPS_WEIGHT", "0.6")
    args = _parser().parse_args(["score", str(reply), "--pool", str(folder), "--seed", "4",
                                 "--json"])
    assert args.run(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data["reward"], float) and data["mix"]["name"] == "hps-led"
    assert set(data) >= {"reward", "components", "gate", "references", "latency_s"}
    args = _parser().parse_args(["score", str(reply), "--pool", str(folder)])
    assert args.run(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("reward 0.") and "judge" in out and "references (seed 0)" in out
    bad = tmp_path / "bad.js"
    bad.write_text(REJECTED)
    args = _parser().parse_args(["score", str(bad), "--pool", str(folder)])
    assert args.run(args) == score.EXIT_REJECTED
    args = _parser().parse_args(["score", str(tmp_path / "missing.js")])
    with pytest.raises(FileNotFoundError, match="reply not found"):
        args.run(args)
