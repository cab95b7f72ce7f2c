"""``watercolour sft``: the pool as prompt-completion examples, the filters, the recipes' dry
runs, and one real tiny run on builtin:tiny-qwen3 (with a resume)."""

from __future__ import annotations

import json

import pytest
from pool_helpers import rows

from watercolour.errors import InputError
from watercolour.gates.extract import extract_sketch
from watercolour.javascript import parse
from watercolour.pool.dataset import write_pool_folder
from watercolour.train.config import parse_args as train_parse_args
from watercolour.train.sft import dry_run, parse_args, train
from watercolour.train.sft_data import (
    build_examples,
    compact_examples,
    compact_tier,
    reply,
    strip_comments,
)
from watercolour.train.trainer import prompt_messages

SKETCH = """// A red poppy.
// Petals in passes.

const URL = 'http://example.com/a//b'; // where it came from
const N = 5;


function setup() {
  createCanvas(512, 512, WEBGL); // (0, 0) is the centre
  background('#f6f0e4');
  noLoop();
}

function draw() {
  // paint here
  const s = "a // not a comment";
  const r = /\\/\\//g;
  /* a block comment stays */
  brush.fill('#c33', 120);
}
"""


def code_tokens(code: str) -> list[str]:
    """The leaves of the parse tree, comments left out: what the code is."""
    out, stack = [], [parse(code).root_node]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            continue
        if node.child_count == 0:
            out.append(node.text.decode())
        stack.extend(reversed(node.children))
    return out


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sft") / "pool"
    made = rows(3, 4)
    for i, row in enumerate(made):
        row["sketch"] = SKETCH.replace("N = 5", f"N = {i}") + "\n" * (i * 40)
    return write_pool_folder(made, folder)


def test_rows_are_the_grpo_prompt_and_the_fenced_sketch(pool):
    examples = build_examples(pool, tiers=["love"])
    assert examples.counts == {"selected": 3, "too_long": 0, "kept": 3}
    for row in examples.rows:
        subject = row["prompt"][-1]["content"].removeprefix("Paint ").removesuffix(
            " in watercolour.")
        run, _ = train_parse_args(["--subject", subject])
        assert row["prompt"] == prompt_messages(run)  # exactly what GRPO training sends
        [turn] = row["completion"]
        assert turn["role"] == "assistant"
        assert turn["content"].startswith("```javascript\n") and turn["content"].endswith("```")
        extracted = extract_sketch(turn["content"])
        assert extracted.kind == "fenced" and "N = " in extracted.code
    short = build_examples(pool, tiers=["okay"], prompt="short")
    assert short.counts["kept"] == 4 and [m["role"] for m in short.rows[0]["prompt"]] == ["user"]


def test_compact_examples_are_the_grpo_prompt_and_a_generated_sketch_of_the_tier():
    from watercolour.models.tiny.sketches import compact_sketch

    examples = compact_examples(12, prompt="short", count_tokens=len)
    assert examples.counts == {"selected": 12, "too_long": 0, "kept": 12}
    assert examples.ids == [f"compact-{seed}" for seed in range(12)]
    assert len(examples.completion_tokens) == 12 and min(examples.completion_tokens) > 500
    for seed, row in zip(range(12), examples.rows, strict=True):
        sketch = compact_sketch(seed)
        run, _ = train_parse_args(["--subject", sketch.subject, "--prompt", "short"])
        assert row["prompt"] == prompt_messages(run)  # exactly what GRPO training sends
        assert row["completion"] == [{"role": "assistant", "content": sketch.reply()}]
        assert extract_sketch(sketch.reply()).code == sketch.code
    loved = compact_examples(5, tiers=["love"], start=100)
    assert all(compact_tier(compact_sketch(int(i.split("-")[1])).variant) == "love"
               for i in loved.ids)
    assert compact_tier("good") == "love" and compact_tier("muddy") == "okay"
    phrase = compact_sketch(3).subject
    same = compact_examples(3, subjects=[phrase], prompt="short")
    assert {row["prompt"][-1]["content"] for row in same.rows} == {f"Paint {phrase} in "
                                                                   "watercolour."}
    with pytest.raises(InputError, match="only 0 compact sketches"):
        compact_examples(1, subjects=["a blue unicorn"], max_seeds=50)
    with pytest.raises(InputError, match="--compact-examples must be at least 1"):
        parse_args(["--source", "compact", "--compact-examples", "0"])


def test_strip_comments_keeps_the_code_and_strings_with_slashes():
    stripped = strip_comments(SKETCH)
    assert code_tokens(stripped) == code_tokens(SKETCH)
    assert "'http://example.com/a//b'" in stripped and '"a // not a comment"' in stripped
    assert "/* a block comment stays */" in stripped and "/\\/\\//g" in stripped
    assert "// A red poppy" not in stripped and "the centre" not in stripped
    assert "\n\n\n" not in stripped and not stripped.startswith("\n")
    assert strip_comments("function (") == "function ("  # broken code: left alone
    assert reply(stripped) == f"```javascript\n{stripped}```"


def test_max_sketch_tokens_drops_long_replies_with_a_count(pool):
    lines = lambda text: text.count("\n")  # noqa: E731  # a stand-in tokenizer
    every = build_examples(pool, count_tokens=lines)
    limit = sorted(every.completion_tokens)[3]
    kept = build_examples(pool, max_sketch_tokens=limit, count_tokens=lines)
    assert kept.counts["selected"] == 7 and kept.counts["kept"] == 4
    assert kept.counts["too_long"] == 3 and max(kept.completion_tokens) <= limit
    with pytest.raises(InputError, match="all 7 selected sketches are longer"):
        build_examples(pool, max_sketch_tokens=1, count_tokens=lines)


def test_bad_tier_empty_selection_and_missing_pool_are_one_input_error(pool, tmp_path):
    with pytest.raises(InputError, match="unknown tier 'reject'"):
        parse_args(["--tiers", "love,reject"])
    with pytest.raises(InputError, match="no sketch of tiers love and subjects"):
        build_examples(pool, tiers=["love"], subjects=["a blue iris"])
    with pytest.raises(InputError, match="--pool: no pool folder"):
        build_examples(tmp_path / "nowhere")


@pytest.mark.parametrize("recipe", ["sft-cpu", "sft-4b", "sft-smollm2"])
def test_the_recipes_parse_and_dry_run(recipe, pool, tmp_path, monkeypatch):
    sft, training = parse_args(["--config", recipe, "--pool", str(pool), "--out",
                                str(tmp_path / "out"), "--dry-run"])
    assert sft.lora_target_modules == "all-linear" and training.seed == 0
    if recipe == "sft-4b":  # the GPU recipe: parsed and planned, no 4B weights loaded
        assert training.bf16 and sft.dtype == "bfloat16" and sft.use_peft
        assert sft.chat_template_kwargs == {"enable_thinking": False}
        sft.model_name_or_path = "builtin:mini-qwen3.5"  # the 4B class, tiny widths
    elif recipe == "sft-cpu":
        assert not training.bf16 and sft.strip_comments and sft.max_sketch_tokens == 3000
        assert sft.use_peft and sft.source == "pool"
        sft.model_name_or_path = "builtin:tiny-qwen3"  # SmolLM2 may not be converted here
    else:  # the compact sketches, every weight trained
        assert not training.bf16 and not sft.use_peft and sft.source == "compact"
        assert sft.prompt == "short" and sft.compact_examples == 200
        sft.model_name_or_path = "builtin:tiny-qwen3"
    data = dry_run(sft, training)
    assert data["kept"] == (200 if recipe == "sft-smollm2" else 7)
    assert data["completion_tokens"]["max"] > 0 and data["over_max_length"] == 0
    assert not (tmp_path / "out").exists()
    params = data["parameters"]
    if sft.use_peft:
        assert 0 < params["trainable_params"] < params["total_params"]
    else:
        assert params["trainable_params"] == params["total_params"] > 0
    if recipe == "sft-4b":
        assert params["model_class"].endswith("ForConditionalGeneration")
        assert params["vision_tower_adapted"] is False


def test_a_tiny_run_resumes_and_leaves_a_plain_model(pool, tmp_path):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "sft"
    flags = ["--model", "builtin:tiny-qwen3", "--pool", str(pool), "--out", str(out),
             "--per-device-batch-size", "2", "--save_steps", "2", "--max_length", "1024",
             "--lora_r", "4", "--strip_comments", "--report_to", "none"]
    sft, training = parse_args([*flags, "--steps", "2"])
    first = train(sft, training, log=lambda *_: None)
    assert first["global_step"] == 2 and first["completion_only_loss"] is True
    assert (out / "checkpoint-2").is_dir() and (out / "final" / "config.json").is_file()
    with pytest.raises(InputError, match="every example's prompt alone"):
        train(*parse_args([*flags, "--steps", "2", "--max_length", "300", "--out",
                           str(tmp_path / "short")]), log=lambda *_: None)
    with pytest.raises(InputError, match="already holds a run"):
        train(*parse_args([*flags, "--steps", "4"]), log=lambda *_: None)
    sft, training = parse_args([*flags, "--steps", "4", "--resume"])
    record = train(sft, training, log=lambda *_: None)
    assert record["resumed_from"] == "checkpoint-2" and record["global_step"] == 4
    assert [e["step"] for e in record["loss"]] == [1, 2, 3, 4]
    saved = json.loads((out / "sft.json").read_text())
    assert saved["examples"]["kept"] == 7 and saved["seconds"] > 0
    model = AutoModelForCausalLM.from_pretrained(out / "final")
    assert not any("lora" in name for name, _ in model.named_parameters())
    assert (out / "final" / "chat_template.jinja").is_file() or \
        "chat_template" in (out / "final" / "tokenizer_config.json").read_text()
