"""Episodes of two turns under GRPO (``--turns 2``): one step on the imprinted tiny Qwen3 with
the reward in process (a real Chromium renders both turns). What is checked: the completion
TRL trains on holds both of the policy's turns and the environment's turn between them, and
the loss mask is 0 on every token of that turn (the critique); metrics.csv has the per-turn
columns; the rollout log has every turn (sketch, render, critique, reward); the episode's
reward is the environment's rule. Without a model or a browser: the chat template's
environment turn, and a scripted batch (an unavailable turn ends its episode with None, a turn
cut off at the length limit is closed by the environment's masked end token, the improvement
bonus and the per-turn metrics)."""

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
    from watercolour.models.tiny.placeholder import build_tokenizer as build_placeholder_tokenizer

    tokenizer = build_placeholder_tokenizer()
    ids = environment_turn_ids(tokenizer, "Paint covers 3% of the canvas.")
    assert tokenizer.decode(ids) == ("\n<|im_start|>user\nPaint covers 3% of the canvas."
                                     "<|im_end|>\n<|im_start|>assistant\n")
    assert places(["a", "a", "b", "a"]) == [{"group": 0, "index": 0}, {"group": 0, "index": 1},
                                            {"group": 1, "index": 0}, {"group": 0, "index": 2}]
    assert episode_columns(1) == ()
    assert episode_columns(2) == ("reward_turn1", "reward_turn2", "revision_beats_first",
                                  "regression_penalty_mean")


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
    monkeypatch.delenv("WATERCOLOUR_ENV_REGRESSION_PENALTY", raising=False)
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
        # penalty 0: the episode's reward is the last turn's (the environment's own rule)
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
    assert float(row["regression_penalty_mean"]) == 0.0
    assert float(row["reward"]) == pytest.approx(
        sum(episodes[i][2]["episode_reward"] for i in range(4)) / 4, abs=1e-5)
    for column in ("loss", "step_time", "generation_s", "rewards_s", "gate_pass_rate"):
        assert row[column] != "", column

    from datasets import load_from_disk

    dataset = load_from_disk(str(out / "rollouts/dataset"))
    assert len(dataset) == 8 and {"turn", "critique", "episode_reward"} <= set(
        dataset.column_names)


class Scripted:
    """A reward source whose reply says what it earns: ``ok 0.4`` is an ok turn worth 0.4,
    ``die`` an unavailable one (the browser failed)."""

    def __init__(self) -> None:
        from watercolour.rewards import RewardConfig

        self.config = RewardConfig()
        self.mix = self.config.mix

    def evaluate_group(self, replies, subject=None, seed=None, render_seed=None):
        from watercolour.rewards import Evaluation

        out = []
        for reply in replies:
            if "die" in reply:
                out.append(Evaluation.from_dict({
                    "reward": None, "status": "unavailable", "seed": seed, "gate": {"infrastructure_failure": True},
                    "unavailable": {"part": "render", "reason": "the browser died"}}))
            else:
                score = float(reply.split()[-1])
                out.append(Evaluation.from_dict({
                    "reward": score, "status": "ok", "seed": seed, "components": {c: {"raw": score} for c in
                                                 ("gate", "length", "judge", "hps")},
                    "gate": {"violations": [], "paint_fraction": score, "n_shapes": 3,
                             "render": {}}}))
        return out


class ScriptedTrainer:
    """What EpisodeRollout reads of a GRPOTrainer, with each turn's replies scripted (a reply
    without its end token: cut off at the length limit)."""

    def __init__(self, tokenizer, script) -> None:
        from collections import defaultdict
        from types import SimpleNamespace

        self.processing_class = tokenizer
        self.eos_token_ids = [tokenizer.eos_token_id]
        self.chat_template, self.chat_template_kwargs = None, {}
        self.state = SimpleNamespace(global_step=3)
        self.model = SimpleNamespace(training=True)
        self._metrics = {"train": defaultdict(list)}
        self.script, self.seen = list(script), []

    def _tokenize_prompts(self, prompts):
        return [self.processing_class.apply_chat_template(p, add_generation_prompt=True,
                                                          tokenize=True, return_dict=False)
                for p in prompts], None, {}

    def _generate_single_turn(self, prompt_ids, images, fields, n):
        self.seen.append([list(ids) for ids in prompt_ids])
        replies = self.script.pop(0)
        assert len(replies) == len(prompt_ids) and n == 1  # each row its own conversation
        encode = self.processing_class
        return [encode(r.rstrip("|"), add_special_tokens=False)["input_ids"]
                + ([] if r.endswith("|") else [encode.eos_token_id]) for r in replies], None


def test_an_unavailable_turn_ends_its_episode_and_a_cut_off_turn_is_closed_by_the_env():
    from watercolour.models.tiny.placeholder import build_tokenizer as build_placeholder_tokenizer
    from watercolour.train.episodes import EpisodeRollout

    tokenizer = build_placeholder_tokenizer()
    prompt = [{"role": "user", "content": "Paint a peach hibiscus."}]
    logged = []
    rollout = EpisodeRollout(Scripted(), 2, "a peach hibiscus", penalty=0.5,
                             on_scored=lambda *a: logged.append(a))
    # episode 0: 0.4 then 0.8 (no penalty: it improved); 1: cut off at 0.5, then 0.2 (the
    # penalty takes 0.5 * (0.5 - 0.2));
    # 2: unavailable at once (ends, reward None, no second turn)
    trainer = ScriptedTrainer(tokenizer, [["ok 0.4", "ok 0.5|", "die"], ["ok 0.8", "ok 0.2"]])
    out = rollout([prompt] * 3, trainer)
    assert out["episode_reward"] == [0.8, pytest.approx(0.05), None]
    assert len(trainer.seen[1]) == 2  # only the two episodes that went on were asked again
    eos = tokenizer.eos_token_id
    for row, ids in enumerate(out["completion_ids"]):
        mask = out["env_mask"][row]
        assert len(mask) == len(ids)
        policy = [t for t, m in zip(ids, mask) if m]
        env = [t for t, m in zip(ids, mask) if not m]
        if row == 2:
            assert env == [] and tokenizer.decode(policy, skip_special_tokens=True) == "die"
            continue
        critique = rollout.last[row][0].critique
        expected = environment_turn_ids(tokenizer, revision_prompt(critique))
        assert env == ([eos, *expected] if row == 1 else expected)  # row 1 closed by the env
        end = max(i for i, m in enumerate(mask) if not m)  # turn 2 saw prompt, turn 1, critique
        assert trainer.seen[1][row] == out["prompt_ids"][row] + ids[:end + 1]
    assert [len(batch[1]) for batch in logged] == [3, 2]
    assert [x["index"] for x in logged[1][4]] == [0, 1]
    assert logged[0][4][2]["episode_reward"] is None
    metrics = trainer._metrics["train"]
    assert metrics["reward_turn1"] == [pytest.approx(0.45)]  # the scored turns only
    assert metrics["reward_turn2"] == [pytest.approx(0.5)]
    assert metrics["revision_beats_first"] == [0.5]
    assert metrics["regression_penalty_mean"] == [pytest.approx(0.075)]
