"""``None`` rewards with the pinned TRL: a rollout whose every reward function returned None
is left out of its group's mean and gets advantage 0; the run goes on. And the guard that turns
a failing reward source into None rewards."""

from __future__ import annotations

import math

import pytest
import torch

from watercolour.rewards import RewardConfig
from watercolour.train.reward_source import GuardedRewarder, batch_metrics
from watercolour.train.trainer import WatercolourGRPOTrainer

PATTERN = [None, 1.0, 0.25, None]


def test_trl_drops_none_rewards_from_the_group(tmp_path):
    from datasets import Dataset
    from trl import GRPOConfig

    from watercolour.models.tiny import build_tiny_qwen3

    torch.set_num_threads(1)
    model = build_tiny_qwen3(tmp_path / "tiny")

    def reward(completions, **kwargs):
        return list(PATTERN)

    args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=1, num_generations=4,
                      per_device_train_batch_size=4, max_completion_length=8,
                      scale_rewards="none", logging_steps=1, save_strategy="no",
                      report_to="none", bf16=False, gradient_checkpointing=False)
    data = Dataset.from_list([{"prompt": [{"role": "user", "content": "Paint."}]}] * 4)
    trainer = WatercolourGRPOTrainer(model=str(model), reward_funcs=[reward], args=args,
                                     train_dataset=data)
    trainer.train()
    (step, advantages), = trainer.advantage_log
    assert step == 0
    scored_mean = (1.0 + 0.25) / 2
    assert advantages[0] == 0.0 and advantages[3] == 0.0
    assert math.isclose(advantages[1], 1.0 - scored_mean, abs_tol=1e-5)
    assert math.isclose(advantages[2], 0.25 - scored_mean, abs_tol=1e-5)
    logged = next(h for h in trainer.state.log_history if "reward" in h)
    assert math.isclose(logged["reward"], scored_mean, abs_tol=1e-5)
    assert trainer.state.global_step == 1


class _Gone:
    """A reward source whose server went away (what RemoteRewarder raises after retries)."""

    def evaluate_group(self, replies, subject=None, seed=None, render_seed=None):
        raise ConnectionError("env server at http://127.0.0.1:9 refused the connection")


def test_a_failing_source_gives_none_rewards_with_the_reason():
    guarded = GuardedRewarder(_Gone(), RewardConfig.from_env(environ={}))
    out = guarded.evaluate_group(["a", "b"], "a peach hibiscus", 7)
    assert [e.reward for e in out] == [None, None]
    assert [e.status for e in out] == ["unavailable"] * 2
    assert "refused the connection" in out[0].record.unavailable.reason
    assert all(e.component("hps") is None for e in out)
    assert guarded.failures == 1
    metrics = batch_metrics(out, guarded.mix.weights)
    assert metrics == {"none_count": 2.0}


def test_a_short_answer_is_a_failure_too():
    class Short:
        def evaluate_group(self, replies, subject=None, seed=None, render_seed=None):
            return []

    out = GuardedRewarder(Short(), RewardConfig.from_env(environ={})).evaluate_group(["a"])
    assert out[0].status == "unavailable"
    assert "answered 0 evaluations for 1" in out[0].record.unavailable.reason


@pytest.mark.parametrize("weights, present", [
    ({"gate": 0.05, "length": 0.05, "judge": 0.0, "hps": 0.9}, {"hps_mean", "length_mean"}),
])
def test_metrics_leave_out_components_with_no_weight(weights, present):
    from watercolour.rewards import Evaluation

    e = Evaluation.from_dict({"reward": 0.0, "status": "rejected",
                              "gate": {"violations": ["no_sketch"]}, "latency_s": {}})
    m = batch_metrics([e], weights)
    assert present <= set(m) and "judge_mean" not in m
    assert m["gate_pass_rate"] == 0.0 and m["none_count"] == 0.0
