"""Episodes of two turns under GRPO (``--turns 2``): one step on the imprinted tiny Qwen3 with
the reward in process (a real Chromium renders both turns). What is checked: the completion
TRL trains on holds both of the policy's turns and the environment's turn between them, and
the loss mask is 0 on every token of that turn (the critique); metrics.csv has the per-turn
columns; the rollout log has every turn (sketch, render, critique, reward); the episode's
reward is the environment's rule. The chat template's environment turn, without a model."""

from __future__ import annotations

import csv
import json

import pytest
import torch
from train_support import imprinted_model, small_run

from watercolour.env.server.environment import REVISION_PROMPT, revision_prompt
from watercolour.train.config import parse_args
from watercolour.train.episodes import environment_turn_ids, episode_columns, places
from watercolour.train.metrics import COLUMNS

PNG = b"\x89PNG\r\n\x1a\n"


def test_the_environment_turn_is_the_user_message_and_the_next_assistant_header():
    from watercolour.train.tiny import build_placeholder_tokenizer

    tokenizer = build_placeholder_tokenizer()
    ids = environment_turn_ids(tokenizer, "Paint covers 3% of the canvas.")
    assert tokenizer.decode(ids) == ("\n<|im_start|>user\nPaint covers 3% of the canvas."
                                     "<|im_end|>\n<|im_start|>assistant\n")
    assert places(["a", "a", "b", "a"]) == [{"group": 0, "index": 0}, {"group": 0, "index": 1},
                                            {"group": 1, "index": 0}, {"group": 0, "index": 2}]
    assert episode_columns(1) == ()
    assert episode_columns(2) == ("reward_turn1", "reward_turn2", "revision_beats_first",
                                  "improvement_bonus_mean")


@pytest.mark.browser
@pytest.mark.slow
def test_one_step_of_two_turn_episodes_masks_the_critique(tmp_path_factory, renderer,
                                                           monkeypatch):
    from watercolour.train.trainer import WatercolourGRPOTrainer, train

    torch.set_num_threads(1)
    model = imprinted_model(tmp_path_factory.mktemp("model") / "tiny")
    batches = []
    original = WatercolourGRPOTrainer._generate_and_score_completions

    def keep(self, inputs):
        out = original(self, inputs)
        batches.append({k: out[k].detach().cpu() for k in ("completion_ids",
                                                            "completion_mask", "tool_mask")})
        return out

    monkeypatch.setattr(WatercolourGRPOTrainer, "_generate_and_score_completions", keep)
    monkeypatch.delenv("WATERCOLOUR_ENV_IMPROVEMENT_BONUS", raising=False)
    out = tmp_path_factory.mktemp("runs") / "episodes"
    run, training = parse_args(small_run(model, out, "--steps", "1", "--turns", "2",
                                         "--temperature", "0.7"))
    summary = train(run, training, renderer=renderer)
    assert summary["global_step"] == 1 and summary["source_failures"] == 0

    # the rollout log: both turns of every episode, each with its sketch, render, critique
    records = [json.loads(line)
               for line in (out / "rollouts/rollouts.jsonl").read_text().splitlines()]
    assert sorted((r["index"], r["turn"]) for r in records) == [
        (i, t) for i in range(4) for t in (1, 2)]
    assert any(r["status"] == "ok" for r in records), "the imprinted model wrote no sketch"
    for r in records:
        assert r["step"] == 0 and r["group"] == 0 and r["turns"] == 2
        assert r["critique"] and r["completion"]
        if r["status"] == "ok":
            assert r["sketch"] and r["png"].endswith(f"-i{r['index']:02d}-t{r['turn']}.png")
            assert (out / "rollouts" / r["png"]).read_bytes().startswith(PNG)
    episodes = {i: {r["turn"]: r for r in records if r["index"] == i} for i in range(4)}
    for turns in episodes.values():
        # bonus 0: the episode's reward is the last turn's (the environment's own rule)
        assert turns[1]["episode_reward"] == turns[2]["episode_reward"] == turns[2]["reward"]
        assert len({turns[1]["seed"], turns[2]["seed"]}) == 1  # both turns, one set of refs

    # what GRPO trained on: turn 1, the environment's turn (mask 0), turn 2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model))
    (batch,) = batches
    for row in range(4):
        ids = batch["completion_ids"][row]
        kept = batch["completion_mask"][row].bool()
        trained = kept & batch["tool_mask"][row].bool()
        env = kept & ~batch["tool_mask"][row].bool()
        critique = episodes[row][1]["critique"]
        said = tokenizer.decode(ids[env])
        assert REVISION_PROMPT.format(critique=critique) in said
        assert "<|im_start|>user" in said
        learned = tokenizer.decode(ids[trained], skip_special_tokens=True)
        assert critique not in learned and "Here is what your painting" not in learned
        assert learned == episodes[row][1]["completion"] + episodes[row][2]["completion"]
        # the masked tokens are exactly the environment's turn (+ the end of a cut-off turn 1),
        # in one run between the two turns
        expected = environment_turn_ids(tokenizer, revision_prompt(critique))
        assert ids[env].tolist() in (expected, [tokenizer.eos_token_id, *expected])
        where = env.nonzero().flatten().tolist()
        assert where == list(range(where[0], where[-1] + 1))

    # metrics.csv: the per-turn columns after the usual ones
    with open(out / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1 and tuple(rows[0]) == (*COLUMNS, *episode_columns(2))
    row = rows[0]
    for turn in (1, 2):
        rewards = [episodes[i][turn]["reward"] for i in range(4)]
        assert float(row[f"reward_turn{turn}"]) == pytest.approx(sum(rewards) / 4, abs=1e-5)
    beats = [episodes[i][2]["reward"] > episodes[i][1]["reward"] for i in range(4)]
    assert float(row["revision_beats_first"]) == pytest.approx(sum(beats) / 4)
    assert float(row["improvement_bonus_mean"]) == 0.0
    assert float(row["reward"]) == pytest.approx(
        sum(episodes[i][2]["episode_reward"] for i in range(4)) / 4, abs=1e-5)
    for column in ("loss", "step_time", "generation_s", "rewards_s", "gate_pass_rate"):
        assert row[column] != "", column

    from datasets import load_from_disk

    dataset = load_from_disk(str(out / "rollouts/dataset"))
    assert len(dataset) == 8 and {"turn", "critique", "episode_reward"} <= set(
        dataset.column_names)
