"""A vision policy sees its render in the revision turn (``--turns 2``, ``--show-render`` on by
default for it): one GRPO step on ``builtin:mini-qwen3.5`` (Qwen3.5-4B's class, random weights,
its two-block vision tower, the exact tokenizer) with a stand-in reward source whose every
sketch "renders" to one fixed PNG. Checked: turn 2 is generated from a conversation holding
the picture (its image pad tokens, and ``pixel_values`` given to ``generate``); the loss's
forward pass runs the vision tower on one picture per episode that was shown one; the loss
mask is 0 on the picture and the critique, 1 on the policy's two turns; the loss is finite.
A text policy (the tiny Qwen3) is unchanged: no picture anywhere, and asking it to see is an
error."""

from __future__ import annotations

import math

import pytest
import torch
from train_support import painted_png

from watercolour.env.server.environment import revision_prompt
from watercolour.errors import InputError
from watercolour.train.config import parse_args
from watercolour.train.episodes import environment_turn, environment_turn_ids

PNG = painted_png()


class FixedRender:
    """A stand-in reward source: every reply is an ``ok`` turn worth its length / 100 (capped
    at 1) whose render is :data:`PNG`, but the second reply of the first batch, which comes
    without a render (as from a server that sent none)."""

    def __init__(self, config) -> None:
        self.config = config
        self.mix = config.mix
        self.calls = 0

    def evaluate_group(self, replies, subject=None, seed=None, render_seed=None):
        from watercolour.rewards import Evaluation
        from watercolour.rewards.rubric import NAMES

        self.calls += 1
        return [Evaluation.from_dict({
            "reward": min(1.0, len(r) / 100), "status": "ok", "seed": seed, "subject": subject,
            "components": {c: {"raw": min(1.0, len(r) / 100)} for c in NAMES},
            "gate": {"violations": [], "paint_fraction": 0.2, "n_shapes": 3, "render": {}},
            "latency_s": {}}, png=None if (self.calls, i) == (1, 1) else PNG)
            for i, r in enumerate(replies)]


def _argv(model: str, out, *extra: str) -> list[str]:
    return ["--model", model, "--prompt", "short", "--mix", "hps-only", "--steps", "1",
            "--num-generations", "2", "--per-device-batch-size", "1",
            "--gradient-accumulation-steps", "2", "--max-completion-length", "8",
            "--n-episodes", "2", "--turns", "2", "--seed", "0", "--lr", "1e-4",
            "--report-to", "none", "--out", str(out), *extra]


def _spies(monkeypatch):
    """Record what generation was given and what GRPO trained on."""
    from watercolour.train.trainer import WatercolourGRPOTrainer

    seen: dict[str, list] = {"generate": [], "batch": []}
    generate = WatercolourGRPOTrainer._generate_single_turn
    score = WatercolourGRPOTrainer._generate_and_score_completions

    def generation(self, prompt_ids, images, fields, n, *args, **kwargs):
        seen["generate"].append(([list(p) for p in prompt_ids], dict(fields)))
        return generate(self, prompt_ids, images, fields, n, *args, **kwargs)

    def scored(self, inputs):
        out = score(self, inputs)
        seen["batch"].append({k: (v.detach().cpu() if isinstance(v, torch.Tensor) else v)
                              for k, v in out.items()})
        seen["trainer"] = self
        return out

    monkeypatch.setattr(WatercolourGRPOTrainer, "_generate_single_turn", generation)
    monkeypatch.setattr(WatercolourGRPOTrainer, "_generate_and_score_completions", scored)
    return seen


@pytest.mark.slow
def test_a_vision_policy_sees_its_render_in_generation_and_in_the_loss(tmp_path, monkeypatch):
    from watercolour.models.miniature import build_miniature
    from watercolour.train.trainer import WatercolourGRPOTrainer, reward_config, train
    from watercolour.train.vision import vision_processor

    torch.set_num_threads(2)
    folder = build_miniature("builtin:mini-qwen3.5")
    processor = vision_processor(str(folder))
    assert processor is not None and processor.image_processor is not None
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    # Qwen3.5's template drops an earlier turn's reasoning block once a user turn follows:
    # the environment's turn is still what the new user turn adds
    ids = environment_turn_ids(processor.tokenizer, "Paint more.",
                               template_kwargs={"enable_thinking": False})
    assert processor.tokenizer.decode(ids) == ("\n<|im_start|>user\nPaint more.<|im_end|>\n"
                                               "<|im_start|>assistant\n<think>\n\n</think>\n\n")

    # the vision tower's calls: (which model, gradients on, pictures); with gradients: the
    # loss's forward pass; without: generation, and the reference model's log-probabilities
    # (--beta 0.04)
    tower_calls: list[tuple[str, bool, int]] = []
    original_init = WatercolourGRPOTrainer.__init__

    def spy(name):
        def hook(module, args, kwargs):
            grid = kwargs["grid_thw"] if "grid_thw" in kwargs else args[1]
            tower_calls.append((name, torch.is_grad_enabled(), int(grid.shape[0])))
        return hook

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        for name, model in (("policy", self.model), ("reference", self.ref_model)):
            model.model.visual.register_forward_pre_hook(spy(name), with_kwargs=True)

    monkeypatch.setattr(WatercolourGRPOTrainer, "__init__", init)
    seen = _spies(monkeypatch)
    out = tmp_path / "run"
    run, training = parse_args(_argv("builtin:mini-qwen3.5", out, "--beta", "0.04"))
    assert run.show_render is None  # unset: on, because the policy is a vision one
    summary = train(run, training, rewarder=FixedRender(reward_config(run)))
    assert summary["global_step"] == 1 and summary["source_failures"] == 0

    # turn 2 was generated from the conversation with the picture (episode 0; episode 1's
    # turn 1 came without a render: the critique alone), pixel_values given
    (turn1, turn1_fields), (turn2, turn2_fields) = seen["generate"]
    assert turn1_fields == {} and all(pad not in ids for ids in turn1)
    grid = turn2_fields["image_grid_thw"]
    assert grid.shape[0] == 1
    assert turn2_fields["pixel_values"].shape[0] == int(grid.prod(-1).sum())
    merge = processor.image_processor.merge_size ** 2
    assert turn2[0].count(pad) == int(grid[0].prod()) // merge and pad not in turn2[1]
    for row, ids in enumerate(turn2):
        assert turn2_fields["mm_token_type_ids"][row] == [int(t == pad) for t in ids]

    # what GRPO trained on: the picture and the critique masked, the policy's turns not
    (batch,) = seen["batch"]
    tokenizer = processor.tokenizer
    assert batch["num_images"] == [1, 0] and batch["image_grid_thw"].shape[0] == 1
    history = seen["trainer"].rollout_func.last
    for row in range(2):
        ids = batch["completion_ids"][row]
        kept = batch["completion_mask"][row].bool()
        env = kept & ~batch["tool_mask"][row].bool()
        trained = kept & batch["tool_mask"][row].bool()
        assert int((ids == pad).sum()) == (64 if row == 0 else 0)
        assert not trained[ids == pad].any()  # the picture: 0
        said = tokenizer.decode(ids[env])
        assert ("<|vision_start|>" in said) is (row == 0) and "<|im_start|>user" in said
        assert revision_prompt(history[row][0].critique, with_render=row == 0) in said
        learned = ids[trained].tolist()
        assert pad not in learned and "<|im_start|>user" not in tokenizer.decode(learned)
        assert turn2[row][-len(ids[env]):] == ids[env].tolist()  # what turn 2 was shown

    # the loss's forward passes (two micro-batches of one episode, TRL's split and shuffle)
    # ran the vision tower once, on the one picture shown; generating turn 2 and the
    # reference log-probabilities (one chunk per episode) ran it too
    assert [(m, n) for m, grad, n in tower_calls if grad] == [("policy", 1)]
    assert [(m, n) for m, grad, n in tower_calls if not grad] == [("policy", 1),
                                                                    ("reference", 1)]
    import csv
    import json

    lines = [json.loads(x) for x in (out / "rollouts/rollouts.jsonl").read_text().splitlines()]
    assert sorted((r["index"], r["turn"], r["saw_render"]) for r in lines) == [
        (0, 1, False), (0, 2, True), (1, 1, False), (1, 2, False)]
    from datasets import load_from_disk

    assert load_from_disk(str(out / "rollouts/dataset"))["saw_render"].count(True) == 1

    with open(out / "metrics.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert math.isfinite(float(row["loss"]))


def test_a_text_policy_is_unchanged_and_cannot_be_asked_to_see(tmp_path, monkeypatch):
    from transformers import AutoTokenizer

    from watercolour.models.registry import TINY_QWEN3
    from watercolour.train.trainer import reward_config, train

    torch.set_num_threads(2)
    seen = _spies(monkeypatch)
    out = tmp_path / "run"
    run, training = parse_args(_argv(TINY_QWEN3, out))
    summary = train(run, training, rewarder=FixedRender(reward_config(run)))
    assert summary["global_step"] == 1
    (_, turn1_fields), (_, turn2_fields) = seen["generate"]
    assert turn1_fields == turn2_fields == {}
    (batch,) = seen["batch"]
    assert not {"pixel_values", "image_grid_thw", "num_images"} & set(batch)
    tokenizer = AutoTokenizer.from_pretrained(str(out / "builtin-tiny-qwen3"))
    critique = seen["trainer"].rollout_func.last[0][0].critique
    expected = environment_turn_ids(tokenizer, revision_prompt(critique))
    env = ~batch["tool_mask"][0].bool() & batch["completion_mask"][0].bool()
    assert batch["completion_ids"][0][env].tolist() in (
        expected, [tokenizer.eos_token_id, *expected])

    run, training = parse_args(_argv(TINY_QWEN3, tmp_path / "again", "--show-render"))
    with pytest.raises(InputError, match="no vision policy"):
        train(run, training, rewarder=FixedRender(reward_config(run)))


def test_a_picture_needs_a_processor():
    from watercolour.models.tiny.placeholder import build_tokenizer as build_placeholder_tokenizer

    with pytest.raises(InputError, match="processor"):
        environment_turn(build_placeholder_tokenizer(), "critique", image=object())


def test_each_chunk_of_rows_gets_its_own_pictures():
    from PIL import Image
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
        Qwen2VLImageProcessorPil,
    )

    from watercolour.train.vision import QWEN35_IMAGES, image_inputs, rows_inputs

    small, large = Image.new("RGB", (64, 64)), Image.new("RGB", (256, 512))
    processor = Qwen2VLImageProcessorPil(**QWEN35_IMAGES)
    assert image_inputs([None, []], processor) is None
    inputs = image_inputs([[small], None, [large, small]], processor)
    assert inputs["num_images"] == [1, 0, 2]
    patches = inputs["image_grid_thw"].prod(-1).tolist()  # 256 patches (the floor), 512
    assert patches == [256, 512, 256] and inputs["pixel_values"].shape[0] == 1024
    ids = torch.tensor([[5, 9, 9], [5, 5, 5], [9, 5, 9]])
    assert rows_inputs(inputs, 1, 2, ids[1:2], 9) == {}
    first = rows_inputs(inputs, 0, 2, ids[0:2], 9)
    assert first["pixel_values"].shape[0] == 256 and first["num_images"] == [1, 0]
    assert first["mm_token_type_ids"].tolist() == [[0, 1, 1], [0, 0, 0]]
    last = rows_inputs(inputs, 2, 3, ids[2:3], 9)
    assert torch.equal(last["pixel_values"], inputs["pixel_values"][256:])
    assert last["image_grid_thw"].tolist() == inputs["image_grid_thw"][1:].tolist()
