"""Big models without their weights: the shipped architectures built on the meta device, the
LoRA plan, the memory estimate, and the dry run of the published command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from watercolour.models.architectures import SHIPPED, build_on_meta
from watercolour.models.registry import architecture_config
from watercolour.train.config import DENSE_TARGET_MODULES
from watercolour.train.plan import lora_plan, memory_estimate

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def moe_config():
    return architecture_config("Qwen/Qwen3.5-35B-A3B")


def test_shipped_configs_are_config_files_only():
    for name in SHIPPED.values():
        folder = ROOT / "src/watercolour/models/architectures" / name
        assert sorted(p.name for p in folder.iterdir()) == ["config.json"]


def test_35b_a3b_all_linear_adapts_all_40_layers_and_keeps_experts_frozen(moe_config):
    model = build_on_meta(moe_config)
    assert next(model.parameters()).device.type == "meta"
    # the class TRL loads (the config's architectures), vision tower included
    assert type(model).__name__ == "Qwen3_5MoeForConditionalGeneration"
    assert sum(p.numel() for p in model.parameters()) == 35_114_261_360
    plan = lora_plan(model, "all-linear", r=16, alpha=32)
    assert plan["model_class"] == "Qwen3_5MoeForConditionalGeneration"
    assert (plan["layers_adapted"], plan["layers_total"]) == (40, 40)
    assert plan["layers_adapted_by_type"] == {"full_attention": 10, "linear_attention": 30}
    assert plan["experts_frozen"] is True and plan["experts_params"] > 30e9
    # the vision tower is there, and PEFT really left it alone: the text model's figure
    assert plan["vision_tower"] is True and plan["vision_tower_params"] > 400e6
    assert plan["vision_tower_adapted"] is False and plan["vision_trainable_params"] == 0
    assert plan["trainable_params"] == 22_477_440
    assert {"in_proj_qkv", "in_proj_z", "in_proj_a", "in_proj_b", "out_proj", "q_proj",
            "o_proj"} <= set(plan["adapted_modules"])
    assert not {"qkv", "proj", "linear_fc1", "linear_fc2"} & set(plan["adapted_modules"])


def test_35b_a3b_adapt_vision_adds_the_towers_adapters(moe_config):
    plan = lora_plan(build_on_meta(moe_config), "all-linear", adapt_vision=True)
    assert plan["exclude_modules"] is None and plan["vision_tower_adapted"] is True
    assert plan["trainable_params"] == 30_455_936
    assert plan["vision_trainable_params"] == 7_978_496
    assert {"qkv", "proj", "linear_fc1", "linear_fc2"} <= set(plan["adapted_modules"])


def test_35b_a3b_dense_module_list_adapts_only_the_10_full_attention_layers(moe_config):
    plan = lora_plan(build_on_meta(moe_config), list(DENSE_TARGET_MODULES))
    assert (plan["layers_adapted"], plan["layers_total"]) == (10, 40)
    assert plan["layers_adapted_by_type"] == {"full_attention": 10}
    assert plan["trainable_params"] == 8_355_840
    assert plan["experts_frozen"] is True and plan["vision_tower_adapted"] is False
    # the MLP names match only the shared expert: adapters in every layer, attention in 10
    assert plan["layers_with_any_adapter"] == 40


def test_4b_is_the_published_architecture():
    config = architecture_config("Qwen/Qwen3.5-4B")
    model = build_on_meta(config)
    assert type(model).__name__ == "Qwen3_5ForConditionalGeneration"
    assert sum(p.numel() for p in model.parameters()) == 4_654_682_352
    plan = lora_plan(model, "all-linear")
    assert (plan["layers_adapted"], plan["layers_total"]) == (32, 32)
    assert plan["layers_total_by_type"] == {"full_attention": 8, "linear_attention": 24}
    assert plan["trainable_params"] == 32_464_896 and plan["vision_tower_adapted"] is False
    vision = lora_plan(build_on_meta(config), "all-linear", adapt_vision=True)
    assert (vision["trainable_params"], vision["vision_trainable_params"]) == (40_427_008,
                                                                                7_962_112)
    dense = lora_plan(build_on_meta(config), list(DENSE_TARGET_MODULES))
    assert dense["layers_adapted"] == 8


def test_unknown_models_have_no_plan_and_local_folders_do(tmp_path):
    assert architecture_config("someone/unknown-model") is None
    config = architecture_config("builtin:tiny-qwen3")
    config.save_pretrained(tmp_path)
    assert architecture_config(str(tmp_path)).num_hidden_layers == config.num_hidden_layers


def test_memory_estimate_fits_one_h200_and_adds_up(moe_config):
    plan = lora_plan(build_on_meta(moe_config), "all-linear")
    m = memory_estimate(moe_config, plan["trainable_params"], total_params=plan["total_params"],
                        completion_tokens=8192)
    assert m.fits and 65 < m.weights_gib < 66  # 35.11B parameters in bf16
    fp32 = memory_estimate(moe_config, plan["trainable_params"],
                           total_params=plan["total_params"], completion_tokens=8192,
                           dtype="float32")
    assert 130 < fp32.weights_gib < 131 and not fp32.fits
    parts = (m.weights_gib + m.lora_and_optimizer_gib + m.activations_gib + m.logits_gib
             + m.kv_cache_gib)
    assert abs(parts - m.total_gib) < 0.05
    plain = memory_estimate(moe_config, plan["trainable_params"],
                            total_params=plan["total_params"], completion_tokens=8192,
                            gradient_checkpointing=False)
    assert plain.activations_gib > 5 * m.activations_gib


def test_dry_run_of_the_published_command_prints_the_lora_plan():
    out = subprocess.run(
        [sys.executable, "-m", "watercolour", "train", "--config", "recipes/full-35b.yaml",
         "--dry-run", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "HOME": "/tmp",
             "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    plan = data["lora_plan"]
    assert {k: plan[k] for k in ("model_class", "layers_adapted", "layers_total",
                                 "trainable_params", "vision_tower_adapted", "experts_frozen",
                                 "load_dtype")} == {
        "model_class": "Qwen3_5MoeForConditionalGeneration", "layers_adapted": 40,
        "layers_total": 40, "trainable_params": 22_477_440, "vision_tower_adapted": False,
        "experts_frozen": True, "load_dtype": "bfloat16"}
    assert data["load_dtype"] == "bfloat16"
    assert data["config"]["training"]["model_init_kwargs"] == {  # as TRL's script wires it
        "revision": "main", "trust_remote_code": False, "attn_implementation": None,
        "dtype": "bfloat16"}
    run = data["config"]["run"]  # TRL's ModelConfig fields, recorded
    assert run["use_peft"] is True and run["lora_target_modules"] == "all-linear"
    assert run["dtype"] == "bfloat16" and run["lora_dropout"] == 0.0
    assert plan["memory"]["fits"] is True
    training = data["config"]["training"]
    assert training["max_steps"] == 110 and training["scale_rewards"] == "none"
    assert training["bf16"] is True and training["max_completion_length"] == 8192
    assert data["generations_per_step"] == 8 and data["prompts_per_step"] == 1
    assert data["reward"]["gate_mode"] in ("library", "allowlist")
    assert data["versions"]["trl"] == "1.16.0"


def test_a_run_whose_weights_do_not_fit_is_refused_before_loading():
    from watercolour.errors import InputError
    from watercolour.train.plan import DeviceMemory, check_weights_fit

    gpu = DeviceMemory("a 100 GiB GPU (free)", 100.0)
    checked = check_weights_fit("Qwen/Qwen3.5-35B-A3B", "bfloat16", gpu)
    assert checked["params"] == 35_114_261_360 and 65 < checked["weights_gib"] < 66
    with pytest.raises(InputError, match=r"float32 take 130\.8 GiB, more than the 100\.0 GiB"):
        check_weights_fit("Qwen/Qwen3.5-35B-A3B", "float32", gpu)
    assert check_weights_fit("someone/unknown-model", "float32", gpu) is None


def test_train_refuses_the_35b_in_float32_on_this_machine(tmp_path):
    """No GPU here: the host's memory is far below the 131 GiB of fp32 weights."""
    from watercolour.errors import InputError
    from watercolour.train.config import parse_args
    from watercolour.train.trainer import train

    run, training = parse_args(["--config", "full-35b", "--bf16", "false", "--push-to-hub",
                                "false", "--out", str(tmp_path / "run")])
    assert training.load_dtype == "float32"
    with pytest.raises(InputError, match="do not fit"):
        train(run, training, rewarder=object())
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_the_plain_dry_run_names_the_class_the_dtype_and_the_vision_tower(capsys):
    from watercolour.train.config import parse_args
    from watercolour.train.trainer import dry_run, print_dry_run

    run, training = parse_args(["--config", "smoke-4b", "--dry-run"])
    print_dry_run(dry_run(run, training), as_json=False)
    out = capsys.readouterr().out
    assert "weights loaded in bfloat16" in out
    assert "Qwen3_5ForConditionalGeneration" in out and "32,464,896 trainable" in out
    assert "vision tower adapted: False" in out


def test_the_revise_recipe_dry_run_shows_the_render_and_adapts_the_vision_tower(capsys):
    from watercolour.train.config import parse_args
    from watercolour.train.trainer import dry_run, print_dry_run

    run, training = parse_args(["--config", "revise-4b", "--dry-run"])
    data = dry_run(run, training)
    assert run.turns == 2 and data["show_render"] is True
    assert data["lora_plan"]["vision_tower_adapted"] is True
    print_dry_run(data, as_json=False)
    out = capsys.readouterr().out
    assert "Qwen3_5ForConditionalGeneration" in out and "vision tower adapted: True" in out
    assert "episodes of 2 turns: the revision turn shows the critique and the render" in out
    run, training = parse_args(["--config", "revise-4b", "--show-render", "false"])
    assert dry_run(run, training)["show_render"] is False
