"""``benchmarks/train_gpu_check.py``: the GPU check of the published recipes (full-size
Qwen3.5-4B and 35B-A3B with random bf16 weights as the classes TRL loads, LoRA as the recipes
say, one GRPO step of 8 generations of >= 1,024 tokens, a stand-in reward). Its CPU-checkable
parts run here: the dry run (what it builds, on the meta device) and ``--tiny`` (the same code
path on the miniatures). The check itself runs only where CUDA is (marked ``gpu``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
PLAN = {"4b": ("Qwen/Qwen3.5-4B", "Qwen3_5ForConditionalGeneration", 32_464_896),
        "35b": ("Qwen/Qwen3.5-35B-A3B", "Qwen3_5MoeForConditionalGeneration", 22_477_440),
        "revise": ("Qwen/Qwen3.5-4B", "Qwen3_5ForConditionalGeneration", 40_427_008)}
"""What the check builds: the model, the class TRL loads, the recipe's LoRA trainable
parameters (the vision tower excluded, but for ``revise``: it sees its render and
``adapt_vision`` adds the tower's adapters)."""
SEES = {"4b": False, "35b": False, "revise": True}
"""Whether the recipe's policy sees its render (2-turn episodes, the vision tower adapted)."""


@pytest.fixture(scope="module")
def check():
    sys.path.insert(0, str(BENCH))
    try:
        import train_gpu_check
    finally:
        sys.path.pop(0)
    return train_gpu_check


def test_the_dry_run_plans_the_full_size_models_as_trl_loads_them(check, capsys):
    assert check.main(["--dry-run"]) == 0
    planned = json.loads(capsys.readouterr().out)
    for key, (model, cls, trainable) in PLAN.items():
        assert planned[key]["model"] == model and planned[key]["model_class"] == cls
        assert planned[key]["trainable_params"] == trainable
        assert planned[key]["vision_tower_adapted"] is SEES[key]
        assert planned[key]["show_render"] is (True if SEES[key] else None)
        assert planned[key]["turns"] == (2 if SEES[key] else 1)
        assert planned[key]["load_dtype"] == "bfloat16"
        assert (planned[key]["generations"], planned[key]["completion_tokens"]) == (8, 1024)
        assert 0 < planned[key]["estimate_gib"] < 139


def test_the_check_needs_neither_playwright_nor_the_env_client():
    """The GPU machine has no browser library (Playwright's wheel alone is ~40 MB to carry) and
    no websockets: what the check imports, the episodes' code included, must not load them."""
    code = ("import sys; sys.path.insert(0, 'benchmarks'); import train_gpu_check, "
            "watercolour.train.episodes, watercolour.train.trainer, watercolour.train.vision; "
            "print(sorted(m for m in ('playwright', 'websockets', 'watercolour.env.client') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=BENCH.parent, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_without_a_gpu_the_check_says_so(check, capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    assert check.main([]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


@pytest.mark.slow
def test_tiny_runs_the_check_on_a_miniature(check, tmp_path, monkeypatch):
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "cache"))
    torch.set_num_threads(1)
    out = tmp_path / "results"
    assert check.main(["--tiny", "--only", "4b", "--generations", "2",
                       "--completion-tokens", "6", "--out", str(out)]) == 0
    data = json.loads(next(out.glob("train-gpu-tiny-*.json")).read_text())
    step = data["4b"]
    assert "35b" not in data and data["mode"].startswith("tiny")
    assert step["model"] == "builtin:mini-qwen3.5"
    assert step["model_class"] == PLAN["4b"][1] and step["load_dtype"] == "float32"
    # LoRA as the recipe says: what TRL+PEFT made trainable is what the plan says
    assert step["trainable_params_loaded"] == step["trainable_params"] > 0
    assert step["completions_mean_length"] == 6  # min_new_tokens: every reply runs to the end
    assert step["step_s"] >= step["generation_s"] > 0
    assert 0 < step["generation_share"] <= 1 and step["peak_rss_gib"] > 0
    assert "stand-in" in step["reward"] and set(data["fast_kernels"]) == {
        "flash-linear-attention", "causal-conv1d"}


@pytest.mark.slow
def test_tiny_runs_the_two_turn_check_with_the_render_shown(check, tmp_path, monkeypatch):
    """revise-4b's step on its miniature: both turns played by every episode, the revision
    turn shown the stand-in render (image tokens in the conversation), the vision tower's
    adapters among what trains."""
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "cache"))
    torch.set_num_threads(1)
    out = tmp_path / "results"
    assert check.main(["--tiny", "--only", "revise", "--generations", "2",
                       "--completion-tokens", "4", "--out", str(out)]) == 0
    step = json.loads(next(out.glob("train-gpu-tiny-*.json")).read_text())["revise"]
    assert step["turns"] == 2 and step["show_render"] is True
    assert step["turns_played"] == [2, 2]
    assert step["completions_mean_length"] == 8  # the policy's two turns of 4; not the render
    assert step["trainable_params_loaded"] == step["trainable_params"] > 0
    assert step["vision_tower_adapted"] is True
    # the stand-in reward: each turn's reply length / 1000 (4 random tokens: a few characters)
    assert 0 < step["reward_turn1"] < 0.2 and 0 < step["reward_turn2"] < 0.2
    assert "peach_hibiscus.png" in step["reward"]


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_gpu_check(check, tmp_path):
    assert check.main(["--out", str(tmp_path), "--max-generation-s", "3600",
                       "--budget-s", "36000"]) == 0
    data = json.loads(next(tmp_path.glob("train-gpu-*.json")).read_text())
    for key, (model, cls, trainable) in PLAN.items():
        step = data[key]
        assert step["model"] == model and step["model_class"] == cls
        assert step["trainable_params_loaded"] == step["trainable_params"] == trainable
        assert step["completions_mean_length"] >= 1024 * step["turns"]
        assert step["step_s"] > step["generation_s"] > 0
        assert step["peak_gib"] < data["gpu_gib"]
