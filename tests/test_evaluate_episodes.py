"""The before/after probe in episodes (``--turns 2``): the revision is sampled after the
critique of the first attempt, both turns are judged against the same references, and the
turns are compared episode by episode."""

from __future__ import annotations

import pytest
from train_support import imprinted_model

from watercolour.env.server.environment import revision_prompt
from watercolour.train.evaluate_episodes import compare_turns


def turn(number, status, reward):
    return {"turn": number, "status": status, "reward": reward}


def test_compare_turns_pairs_each_episodes_first_and_last_turn():
    episodes = [
        [turn(1, "ok", 0.5), turn(2, "ok", 0.7)],
        [turn(1, "rejected", 0.05), turn(2, "ok", 0.6)],       # repaired
        [turn(1, "ok", 0.6), turn(2, "rejected", 0.05)],       # broken
        [turn(1, "ok", 0.4), turn(2, "ok", 0.4)],
        [turn(1, "unavailable", None)],                        # ended at turn 1: not paired
    ]
    found = compare_turns(episodes)
    assert found["episodes"] == 4
    assert (found["higher"], found["lower"], found["same"]) == (2, 1, 1)
    assert found["repaired"] == 1 and found["broken"] == 1
    gains = [0.2, 0.55, -0.55, 0.0]
    assert found["mean_gain"] == pytest.approx(sum(gains) / 4, abs=1e-4)
    import statistics

    t = statistics.fmean(gains) / (statistics.stdev(gains) / 2)
    assert found["paired_t"] == pytest.approx(t, abs=1e-3)
    assert compare_turns([[turn(1, "ok", 0.5)]])["paired_t"] is None


@pytest.mark.browser
@pytest.mark.slow
def test_episodes_sample_the_revision_after_the_critique(tmp_path, renderer, monkeypatch):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from watercolour.rewards import Mix, RewardConfig, Rewarder
    from watercolour.train import evaluate_episodes as module
    from watercolour.train.evaluate import Sampling

    torch.set_num_threads(1)
    folder = imprinted_model(tmp_path / "tiny")
    model = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    rewarder = Rewarder(RewardConfig.from_env({}, mix=Mix.preset("hps-only")),
                        renderer=renderer)
    asked = []
    original = module.sample_chats

    def recording(model, tokenizer, chats, sampling):
        asked.append([list(chat) for chat in chats])
        return original(model, tokenizer, chats, sampling)

    monkeypatch.setattr(module, "sample_chats", recording)
    sampling = Sampling(samples=4, seed=3, max_new_tokens=96, temperature=0.7, prompt="short",
                        batch=4)
    result = module.evaluate_episodes(model, tokenizer, rewarder, sampling, turns=2, group=4)

    assert result["turns"] == 2 and len(result["episodes"]) == 4
    assert len(asked) == 2 and [len(c) for c in asked[0]] == [1] * 4
    for chat, episode in zip(asked[1], result["episodes"]):
        first = episode[0]
        # turn 2 answers: the request, the first attempt, the critique of its render
        assert chat[1] == {"role": "assistant", "content": first["reply"]}
        assert chat[2] == {"role": "user", "content": revision_prompt(first["critique"])}
        assert first["critique"] and len(episode) == 2
    for number in (1, 2):
        summary = result["by_turn"][number]
        assert summary["passed"] + sum(summary["rejection_reasons"].values()) + \
            summary["unavailable"] == 4
    revision = result["revision"]
    assert revision["higher"] + revision["lower"] + revision["same"] == revision["episodes"]
    # the same arguments give the same episodes
    monkeypatch.setattr(module, "sample_chats", original)
    again = module.evaluate_episodes(model, tokenizer, rewarder, sampling, turns=2, group=4)
    assert [[t["reply"] for t in e] for e in again["episodes"]] == \
        [[t["reply"] for t in e] for e in result["episodes"]]


@pytest.mark.browser
@pytest.mark.slow
def test_the_tiny_evaluate_command_writes_episodes(tmp_path, capsys):
    import json

    from watercolour.train.tiny.evaluate import main

    folder = imprinted_model(tmp_path / "tiny")
    out = tmp_path / "eval.json"
    assert main([str(folder), "--out", str(out), "--mix", "hps-only", "--samples", "2",
                 "--turns", "2", "--temperature", "0.7"]) == 0
    result = json.loads(out.read_text())
    assert result["turns"] == 2 and result["samples"] == 2 and result["mix"] == "hps-only"
    assert set(result["by_turn"]) == {"1", "2"} and len(result["episodes"]) == 2
    assert "revision vs first attempt over" in capsys.readouterr().out


def test_the_default_policy_is_the_warm_start_the_recipe_trains():
    from watercolour.models.tiny.warm_start import painter_config
    from watercolour.train.tiny.evaluate import recipe_painter

    assert recipe_painter("tiny-revise") == "builtin:tiny-painter-revise"
    assert recipe_painter("tiny-cpu") == recipe_painter(None) == "builtin:tiny-painter"
    # the reviser's warm start learned revisions: another cache folder than the plain one
    assert painter_config(recipe_painter("tiny-revise")).revisions > 0
    assert painter_config(recipe_painter("tiny-revise")).folder() != \
        painter_config(recipe_painter("tiny-cpu")).folder()
