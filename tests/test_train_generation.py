"""Replies end with the sketch: the stop at the closing fence for transformers and vLLM alike
(TRL's generation_kwargs), the GRPO program and the evaluators stopping there, the time budget,
and what run.json says about the generation backend and the kernel path of each layer type."""

from __future__ import annotations

import json

import pytest
import torch
from benchmark_support import load_benchmark
from train_support import LengthRewarder, small_run

from watercolour.errors import InputError
from watercolour.prompt import user_prompt
from watercolour.train.config import parse_args
from watercolour.train.generation import (
    FENCE_STOPS,
    generation_kwargs,
    generation_record,
    kernel_paths,
    stop_kwargs,
    stopped_at_fence,
)

SKETCH = ("```javascript\nfunction setup() {\n  createCanvas(256, 256, WEBGL);\n"
          "  background('#f6f0e4');\n  brush.fill('#ee9a72', 170);\n"
          "  brush.circle(0, 0, 60);\n}\n```")
TALKER = SKETCH + "\nI hope you like it. I hope you like it. I hope you like it. I hope you."
"""A reply that finishes its sketch and keeps talking: what the stop cuts."""
BARE = "Here it is:\n" + SKETCH.replace("```javascript", "```") + "\nI hope you like it."
"""A reply that opens its block with a bare fence (SmolLM2's habit), then keeps talking."""
SHORT = [{"role": "user", "content": user_prompt()}]


@pytest.fixture(scope="module")
def talker(tmp_path_factory):
    """The builtin tiny Qwen3 imprinted with :data:`TALKER` (a few seconds)."""
    from watercolour.models.tiny import build_tiny_qwen3

    torch.set_num_threads(1)
    return build_tiny_qwen3(tmp_path_factory.mktemp("talker") / "m", seed=0,
                            imprint_reply=TALKER, imprint_steps=200, prompt=SHORT)


def test_the_stop_is_the_closing_fence_in_each_backends_form():
    assert stop_kwargs("transformers") == {"stop_strings": list(FENCE_STOPS)}
    assert stop_kwargs("vllm") == {"stop": list(FENCE_STOPS), "include_stop_str_in_output": True}
    assert not stopped_at_fence("```javascript\n")  # an opening fence never stops
    opening = BARE[:BARE.index("```\n") + 4]
    assert opening == "Here it is:\n```\n" and not stopped_at_fence(opening)
    assert not any(stop in opening for stop in FENCE_STOPS)
    assert stopped_at_fence(SKETCH + "\n") and stopped_at_fence(SKETCH + "\n\n")
    assert not stopped_at_fence(SKETCH)  # ended at EOS right after the fence
    assert not stopped_at_fence(TALKER)
    # given generation_kwargs win; the budget is transformers' max_time, refused with vLLM
    assert generation_kwargs({"stop_strings": ["x"]}, "transformers", stop_at_fence=True,
                             budget_s=None) == {"stop_strings": ["x"]}
    assert generation_kwargs(None, "transformers", stop_at_fence=False, budget_s=None) is None
    assert generation_kwargs(None, "transformers", stop_at_fence=False, budget_s=30) == \
        {"max_time": 30.0}
    with pytest.raises(InputError, match="max_time"):
        generation_kwargs(None, "vllm", stop_at_fence=True, budget_s=30)


def test_parse_args_puts_the_stop_into_trls_generation_kwargs(tmp_path):
    _, training = parse_args(["--out", str(tmp_path)])
    assert training.generation_kwargs == {"stop_strings": list(FENCE_STOPS)}
    _, training = parse_args(["--out", str(tmp_path), "--use-vllm"])
    assert training.generation_kwargs == {"stop": list(FENCE_STOPS),
                                          "include_stop_str_in_output": True}
    _, training = parse_args(["--out", str(tmp_path), "--stop-at-fence", "false",
                              "--generation-budget-s", "600"])
    assert training.generation_kwargs == {"max_time": 600.0}
    with pytest.raises(InputError, match="generation-budget-s"):
        parse_args(["--out", str(tmp_path), "--generation-budget-s", "0"])
    _, training = parse_args(["--config", "full-35b", "--dry-run"])
    assert training.generation_kwargs["stop_strings"] == list(FENCE_STOPS)


def test_the_evaluators_stop_at_the_fence(talker):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from watercolour.train.evaluate import Sampling, sample_chats

    model = AutoModelForCausalLM.from_pretrained(str(talker)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(talker))
    chats = [SHORT] * 2
    talked = sample_chats(model, tokenizer, chats, Sampling(
        samples=2, temperature=0, max_new_tokens=160, stop_at_fence=False))
    stopped = sample_chats(model, tokenizer, chats, Sampling(
        samples=2, temperature=0, max_new_tokens=160))
    assert all("I hope" in reply for reply in talked)
    assert stopped == [SKETCH + "\n"] * 2
    assert all(stopped_at_fence(reply) for reply in stopped)


def test_the_fence_stop_benchmark_counts_the_tokens_the_stop_saves(talker, tmp_path):
    bench = load_benchmark("fence_stop")
    out = tmp_path / "fence-stop.json"
    assert bench.main(["--policy", str(talker), "--samples", "2", "--max-new-tokens", "160",
                       "--temperature", "0", "--prompt", "short", "--results", str(out)]) == 0
    (row,) = json.loads(out.read_text())["policies"]
    assert row["stopped_at_fence"] == 2 and row["stopped_is_prefix"]
    assert all(s > 0 for s in row["saved"]) and row["saved_total"] == sum(row["saved"])
    assert row["with_stop"][0] < row["without_stop"][0] <= 160
    assert row["example_stopped"] == SKETCH + "\n"


def test_a_bare_opening_fence_does_not_stop_the_reply(tmp_path):
    """SmolLM2 opens its block with a bare fence after a line of prose: the stop waits for
    the closing fence after the code."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from watercolour.models.tiny import build_tiny_qwen3
    from watercolour.train.evaluate import Sampling, sample_chats

    folder = build_tiny_qwen3(tmp_path / "m", seed=0, imprint_reply=BARE, imprint_steps=200,
                              prompt=SHORT)
    model = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    (stopped,) = sample_chats(model, tokenizer, [SHORT], Sampling(
        samples=1, temperature=0, max_new_tokens=160))
    assert stopped == BARE[:BARE.index("}\n```\n") + 6] and stopped_at_fence(stopped)


def test_a_grpo_run_stops_at_the_fence_and_records_its_generation(talker, tmp_path):
    from watercolour.train.trainer import reward_config, train

    out = tmp_path / "run"
    run, training = parse_args(small_run(talker, out, "--max-completion-length", "160",
                                         "--temperature", "0.01", "--steps", "1",
                                         "--save-steps", "5"))
    train(run, training, rewarder=LengthRewarder(reward_config(run)))
    lines = (out / "rollouts/rollouts.jsonl").read_text().splitlines()
    completions = [json.loads(line)["completion"] for line in lines]
    assert completions and all(c == SKETCH + "\n" for c in completions)
    record = json.loads((out / "run.json").read_text())["generation"]
    assert record["backend"] == "transformers" and record["kernels"] is None  # a Qwen3
    assert record["generation_kwargs"] == {"stop_strings": list(FENCE_STOPS)}


@pytest.mark.parametrize("model_type", ["qwen3_5", "qwen3_5_moe", "qwen3_5_moe_text"])
def test_a_cpu_run_records_the_reference_kernels(model_type):
    # fla and causal-conv1d are not installed here: transformers took its PyTorch fallbacks
    assert kernel_paths(model_type) == {"linear_attention": {
        "gated_delta_rule": "reference", "causal_conv1d": "reference"}}
    record = generation_record(model_type, False)
    assert record["backend"] == "transformers" and not record["fla_installed"]
    assert record["kernels"]["full_attention"] == "sdpa"
    assert generation_record(model_type, True)["backend"] == "vllm"
    assert kernel_paths("qwen3") is None


def test_the_kernel_path_is_read_from_transformers_own_choice(monkeypatch):
    """A wrapper whose closure says it took another package's kernel reads as that package."""
    import importlib

    from watercolour.train import generation

    def wrap(new: bool):
        is_new_implementation = new

        def wrapped():
            return is_new_implementation
        return wrapped

    module = importlib.import_module("transformers.models.qwen3_5.modeling_qwen3_5")
    for name in ("torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule"):
        monkeypatch.setattr(module, name, wrap(True))
    paths = generation.kernel_paths("qwen3_5")["linear_attention"]
    assert paths == {"gated_delta_rule": "fla", "causal_conv1d": "reference"}


def test_the_model_card_says_how_the_run_generated():
    from watercolour.train.hub import model_card

    record = {"config": {"run": {"model_name_or_path": "Qwen/Qwen3.5-4B", "use_peft": True},
                         "training": {}},
              "generation": generation_record("qwen3_5", False)}
    card = model_card(record, {}, "me/painter")
    assert ("- Generation: transformers; linear-attention kernels: gated_delta_rule "
            "reference, causal_conv1d reference.") in card
    assert "Generation:" not in model_card({**record, "generation": None}, {}, "me/painter")


def test_the_generation_speed_benchmark_makes_every_condition_do_the_same_work(talker,
                                                                                 tmp_path):
    bench = load_benchmark("generation_speed")
    out = tmp_path / "generation-speed.json"
    assert bench.main(["--policy", str(talker), "--dtypes", "float32", "bfloat16",
                       "--batches", "1", "2", "--tokens", "12", "--results", str(out)]) == 0
    record = json.loads(out.read_text())
    rows = record["conditions"]
    assert [(r["dtype"], r["batch"]) for r in rows] == [
        ("float32", 1), ("float32", 2), ("bfloat16", 1), ("bfloat16", 2)]
    assert all(r["tokens"] == 12 and r["tokens_per_s"] > 0 and r["seconds"] >= 0
               for r in rows)  # a run that made another count of tokens raises instead
    assert record["machine"]["threads"] >= 1 and "loadavg_start" in record["machine"]
