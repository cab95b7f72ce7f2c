"""The fast path where a GPU trains: fla's kernels in the Job's install line and the gpu extra
(the same pins), and the names TRL pushes to vLLM after merging LoRA, checked against the
pinned vLLM's Qwen3.5 weight loader for both classes (built from the miniatures)."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
FLA = {"flash-linear-attention": "0.6.0", "fla-core": "0.6.0"}


def _pins() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return dict(line.split("==") for line in lines if "==" in line and not line.startswith("#"))


def test_the_jobs_install_line_and_the_gpu_extra_include_fla():
    script = (ROOT / "scripts/hf_job_train.py").read_text()
    block = re.search(r"^# /// script\n(.*?)^# ///$", script, re.S | re.M).group(1)
    deps = tomllib.loads("\n".join(line[2:] for line in block.splitlines()))["dependencies"]
    job = dict(d.split("==") for d in deps)
    pins = _pins()
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["gpu"]
    ranges = {Requirement(r).name: Requirement(r).specifier for r in extra}
    for name, version in FLA.items():
        assert job[name] == pins[name] == version  # the Job installs the project's pin
        assert ranges[name].contains(version)
    # the Job's torch brings the Triton fla 0.6.0 trains with on Hopper (>= 3.7.1)
    assert job["torch"] == "2.13.0"


# ---------------------------------------------------------------- names pushed to vLLM
# The rule, read from vllm-project/vllm's source (the stored snapshot of
# vllm/model_executor/models/qwen3_5.py at commit 00def4f8421153e037ff6270c0a8c31912a00206 and
# the Qwen3VLForConditionalGeneration mapper it inherits; the project pins vllm==0.30.0, the
# first line of Qwen3.5 support being 0.17.0). TRL 1.16's colocate sync calls the vLLM model's
# load_weights([(name, tensor)]) with each merged base weight under its checkpoint name:
#  1. Qwen3_5(Moe)ForConditionalGeneration.load_weights maps prefixes (hf_to_vllm_mapper):
#     model.language_model. -> language_model.model., model.visual. -> visual.,
#     lm_head. -> language_model.lm_head., model. -> language_model.model.; skips mtp.
#  2. Qwen3_5Model.load_weights (the text model) stacks q/k/v_proj into qkv_proj,
#     gate/up_proj into gate_up_proj (not the routed experts), in_proj_b/a into in_proj_ba,
#     in_proj_qkv/z into in_proj_qkvz (vLLM without LoRA); the MoE's fused
#     mlp.experts.gate_up_proj / down_proj load into experts.w13_weight / w2_weight (expert
#     by expert, gate_up chunked in two on dim -2: no transpose for Qwen3.5); any other name
#     must be one of the layer's own parameters, listed below from vLLM's modules
#     (Qwen3_5DecoderLayer, GatedDeltaNetAttention, Qwen3NextAttention, Qwen3NextMLP,
#     Qwen3NextSparseMoeBlock), else it is skipped with a warning: a weight never synced.
#  3. The vision tower (visual.*) loads by its own names, the checkpoint's (not checked here
#     name by name: only that the prefix maps).
VLLM_PREFIXES = {"model.language_model.": "language_model.model.", "model.visual.": "visual.",
                 "lm_head.": "language_model.lm_head.", "model.": "language_model.model."}
STACKED = {"q_proj": "qkv_proj", "k_proj": "qkv_proj", "v_proj": "qkv_proj",
           "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj", "in_proj_b": "in_proj_ba",
           "in_proj_a": "in_proj_ba", "in_proj_qkv": "in_proj_qkvz", "in_proj_z": "in_proj_qkvz"}
FUSED_EXPERTS = {"mlp.experts.gate_up_proj": "mlp.experts.w13_weight",
                 "mlp.experts.down_proj": "mlp.experts.w2_weight"}
VLLM_LAYER_PARAMS = {
    "input_layernorm.weight", "post_attention_layernorm.weight",
    "linear_attn.in_proj_qkvz.weight", "linear_attn.in_proj_ba.weight",
    "linear_attn.conv1d.weight", "linear_attn.dt_bias", "linear_attn.A_log",
    "linear_attn.norm.weight", "linear_attn.out_proj.weight",
    "self_attn.qkv_proj.weight", "self_attn.o_proj.weight", "self_attn.q_norm.weight",
    "self_attn.k_norm.weight",
    "mlp.gate_up_proj.weight", "mlp.down_proj.weight",  # dense (4B)
    "mlp.gate.weight", "mlp.experts.w13_weight", "mlp.experts.w2_weight",  # MoE (35B-A3B)
    "mlp.shared_expert.gate_up_proj.weight", "mlp.shared_expert.down_proj.weight",
    "mlp.shared_expert_gate.weight"}
VLLM_MODEL_PARAMS = {"language_model.model.embed_tokens.weight",
                     "language_model.model.norm.weight", "language_model.lm_head.weight"}


def trl_pushed_names(model) -> list[str]:
    """What TRL 1.16 pushes after merge_adapter (vllm_generation._iter_named_params, PEFT
    without FSDP): each parameter's name without PEFT's wrapping, the adapters left out."""
    names = []
    for name, _ in model.named_parameters():
        name = name.removeprefix("base_model.model.").replace(".base_layer", "")
        if model.prefix in name or "original_module" in name:
            continue
        names.append(name.replace("modules_to_save.default.", ""))
    return names


def vllm_target(name: str) -> str | None:
    """The vLLM parameter ``name`` loads into by :data:`the rule above <VLLM_PREFIXES>`, or
    None when vLLM's loader would skip it."""
    if name.startswith("mtp.") or "rotary_emb.inv_freq" in name:
        return None
    for prefix, new in VLLM_PREFIXES.items():
        if name.startswith(prefix):
            name = new + name[len(prefix):]
            break
    if name.startswith("visual."):
        return name
    if name in VLLM_MODEL_PARAMS:
        return name
    found = re.match(r"^language_model\.model\.layers\.(\d+)\.(.+)$", name)
    if not found:
        return None
    rest = found.group(2)
    for fused, target in FUSED_EXPERTS.items():
        if rest == fused:
            return name.replace(fused, target)
    if "mlp.experts." not in rest:
        for shard, target in STACKED.items():
            if f".{shard}." in f".{rest}":
                rest = re.sub(rf"(^|\.){shard}\.", rf"\g<1>{target}.", rest)
                break
    return name if rest not in VLLM_LAYER_PARAMS else \
        f"language_model.model.layers.{found.group(1)}.{rest}"


def _merged_lora_model(name: str):
    from peft import get_peft_model

    from watercolour.models.architectures import build_on_meta
    from watercolour.models.miniature import miniature_config
    from watercolour.train.config import parse_args
    from watercolour.train.plan import lora_config

    run, _ = parse_args(["--model", name, "--lora", "--all-linear"])
    config = miniature_config(name)
    return config, get_peft_model(build_on_meta(config), lora_config(
        run, adapt_vision=False, vision_tower=True))


import pytest  # noqa: E402


@pytest.mark.parametrize("name", ["builtin:mini-qwen3.5", "builtin:mini-qwen3.5-moe"])
def test_every_name_trl_pushes_is_one_vllms_qwen35_loader_maps(name):
    config, model = _merged_lora_model(name)
    pushed = trl_pushed_names(model)
    assert pushed and not any("lora_" in n for n in pushed)
    targets = {n: vllm_target(n) for n in pushed}
    unmapped = sorted(n for n, t in targets.items()
                      if t is None or (t.startswith("language_model.model.layers.")
                                       and t.split(".", 4)[4] not in VLLM_LAYER_PARAMS))
    assert unmapped == [], f"names vLLM's Qwen3.5 loader would skip (remap them): {unmapped}"
    # every layer type's weights reach vLLM: the linear-attention projections, the attention,
    # and for the MoE the fused routed experts (frozen, but pushed every sync)
    text = config.get_text_config()
    kinds = {t.split(".", 4)[4] for t in targets.values() if ".layers." in t}
    assert {"linear_attn.in_proj_qkvz.weight", "linear_attn.in_proj_ba.weight",
            "self_attn.qkv_proj.weight"} <= kinds
    if getattr(text, "num_experts", None):
        assert {"mlp.experts.w13_weight", "mlp.experts.w2_weight"} <= kinds
    assert any(t.startswith("visual.") for t in targets.values())


def test_the_35b_vllm_recipe_is_checked_by_the_plan_before_anything_loads(tmp_path):
    from watercolour.errors import InputError
    from watercolour.train.config import parse_args
    from watercolour.train.generation import FENCE_STOPS
    from watercolour.train.plan import H200_GIB, DeviceMemory
    from watercolour.train.trainer import dry_run, vllm_plan

    h200 = DeviceMemory("H200 (planned)", H200_GIB)
    run, training = parse_args(["--config", "full-35b-vllm"])
    assert training.use_vllm and training.vllm_enable_sleep_mode
    plan = vllm_plan(run, training, memory=h200)
    assert plan["weights_gib"] > 64 and plan["engine_gib"] >= plan["needed_gib"]
    assert plan["share"] <= plan["max_share"] < 0.54  # half the GPU, beside the trainer
    assert dry_run(run, training)["vllm_plan"] == plan
    assert training.generation_kwargs == {"stop": list(FENCE_STOPS),
                                          "include_stop_str_in_output": True}
    for flags, why in ((["--vllm-gpu-memory-utilization", "0.3"], "less than"),  # TRL's default
                       (["--vllm-gpu-memory-utilization", "0.6"], "at most"),
                       (["--vllm-max-model-length", "0"], "max-model-length"),
                       (["--vllm-enable-sleep-mode", "false"], "sleep")):
        run, training = parse_args(["--config", "full-35b-vllm", *flags])
        with pytest.raises(InputError, match=why):
            vllm_plan(run, training, memory=h200)
    run, training = parse_args(["--config", "full-35b"])
    assert vllm_plan(run, training, memory=h200) is None  # transformers generation
