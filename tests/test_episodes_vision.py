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

import io
import math

import pytest
import torch

from watercolour.env.server.environment import revision_prompt
from watercolour.errors import InputError
from watercolour.train.config import parse_args
from watercolour.train.episodes import environment_turn, environment_turn_ids


def _png() -> bytes:
    from PIL import Image

    image = Image.new("RGB", (64, 64), (250, 246, 238))
    for x in range(16, 48):
        for y in range(20, 44):
            image.putpixel((x, y), (222, 120, 96))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


PNG = _png()


class FixedRender:
    """A stand-in reward source: every reply is an ``ok`` turn worth its length / 100 (capped
    at 1) whose render is :data:`PNG`."""

    def __init__(self, config) -> None:
        self.config = config
        self.mix = config.mix

    def evaluate_group(self, replies, subject=None, seed=None, render_seed=None):
        from watercolour.rewards import Evaluation
        from watercolour.rewards.rubric import NAMES

        return [Evaluation.from_dict({
            "reward": min(1.0, len(r) / 100), "status": "ok", "seed": seed, "subject": subject,
            "components": {c: {"raw": min(1.0, len(r) / 100)} for c in NAMES},
            "gate": {"violations": [], "paint_fraction": 0.2, "n_shapes": 3, "render": {}},
            "latency_s": {}}, png=PNG) for r in replies]


def _argv(model: str, out, *extra: str) -> list[str]:
    return ["--model", model, "--prompt", "short", "--mix", "hps-only", "--steps", "1",
            "--num-generations", "2", "--per-device-batch-size", "2",
            "--gradient-accumulation-steps", "1", "--max-completion-length", "8",
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
    from watercolour.train.miniature import build_miniature
    from watercolour.train.trainer import WatercolourGRPOTrainer, reward_config, train
    from watercolour.train.vision import vision_processor

    torch.set_num_threads(2)
    folder = build_miniature("builtin:mini-qwen3.5")
    processor = vision_processor(str(folder))
    assert processor is not None and processor.image_processor is not None
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")

    # the vision tower's calls with gradients on: the loss's forward pass (generation and the
    # old log-probabilities run without)
    tower_calls: list[tuple[bool, int]] = []
    original_init = WatercolourGRPOTrainer.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        visual = self.model.model.visual
        visual.register_forward_pre_hook(
            lambda module, args, kwargs: tower_calls.append(
                (torch.is_grad_enabled(), int(kwargs.get("grid_thw", args[1] if len(args) > 1
                                                        else None).shape[0]))),
            with_kwargs=True)

    monkeypatch.setattr(WatercolourGRPOTrainer, "__init__", init)
    seen = _spies(monkeypatch)
    out = tmp_path / "run"
    run, training = parse_args(_argv("builtin:mini-qwen3.5", out))
    assert run.show_render is None  # unset: on, because the policy is a vision one
    summary = train(run, training, rewarder=FixedRender(reward_config(run)))
    assert summary["global_step"] == 1 and summary["source_failures"] == 0

    # turn 2 was generated from the conversation with the picture, pixel_values given
    (turn1, turn1_fields), (turn2, turn2_fields) = seen["generate"]
    assert turn1_fields == {} and all(pad not in ids for ids in turn1)
    grid = turn2_fields["image_grid_thw"]
    assert grid.shape[0] == 2 and turn2_fields["pixel_values"].shape[0] == int(grid.prod(-1).sum())
    merge = processor.image_processor.merge_size ** 2
    for row, ids in enumerate(turn2):
        assert ids.count(pad) == int(grid[row].prod()) // merge
        assert turn2_fields["mm_token_type_ids"][row] == [int(t == pad) for t in ids]

    # what GRPO trained on: the picture and the critique masked, the policy's turns not
    (batch,) = seen["batch"]
    tokenizer = processor.tokenizer
    assert batch["num_images"] == [1, 1]
    assert batch["image_grid_thw"].shape[0] == 2
    for row in range(2):
        ids = batch["completion_ids"][row]
        kept = batch["completion_mask"][row].bool()
        env = kept & ~batch["tool_mask"][row].bool()
        trained = kept & batch["tool_mask"][row].bool()
        assert (ids == pad).sum() > 0 and not trained[ids == pad].any()  # the picture: 0
        said = tokenizer.decode(ids[env])
        assert "<|vision_start|>" in said and "<|im_start|>user" in said
        learned = ids[trained].tolist()
        assert pad not in learned and "<|im_start|>user" not in tokenizer.decode(learned)
        assert turn2[row][-len(ids[env]):] == ids[env].tolist()  # what turn 2 was shown
    history = seen["trainer"].rollout_func.last
    critique = history[0][0].critique
    assert revision_prompt(critique, with_render=True) in tokenizer.decode(
        batch["completion_ids"][0])

    # the loss's forward pass ran the vision tower on the two pictures shown
    assert [n for grad, n in tower_calls if grad] == [2]
    assert sum(n for grad, n in tower_calls if not grad) == 2  # generating turn 2
    import csv

    with open(out / "metrics.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert math.isfinite(float(row["loss"]))


@pytest.mark.slow
def test_a_text_policy_is_unchanged_and_cannot_be_asked_to_see(tmp_path, monkeypatch):
    from transformers import AutoTokenizer

    from watercolour.train.tiny import BUILTIN
    from watercolour.train.trainer import reward_config, train

    torch.set_num_threads(2)
    seen = _spies(monkeypatch)
    out = tmp_path / "run"
    run, training = parse_args(_argv(BUILTIN, out))
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

    run, training = parse_args(_argv(BUILTIN, tmp_path / "again", "--show-render"))
    with pytest.raises(InputError, match="no vision policy"):
        train(run, training, rewarder=FixedRender(reward_config(run)))


def test_a_picture_needs_a_processor():
    from watercolour.train.tiny import build_placeholder_tokenizer

    with pytest.raises(InputError, match="processor"):
        environment_turn(build_placeholder_tokenizer(), "critique", image=object())
