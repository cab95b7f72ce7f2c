"""The LoRA plan of a model built on the ``meta`` device, and a memory estimate for one GPU.

:func:`lora_plan` answers, without weights: how many decoder layers get adapters, how many
parameters train, and whether the routed experts stay frozen. A decoder layer counts as
*adapted* when its token mixer (``self_attn`` in full-attention layers, ``linear_attn`` in
Qwen3.5's linear-attention layers) carries adapters: that is what separates the module lists.
On Qwen3.5-35B-A3B the dense-model list (q/k/v/o/gate/up/down_proj) adapts only the 10
full-attention layers (its MLP names match only the small shared expert), ``all-linear`` all
40; routed experts are fused 3-D parameters, not ``nn.Linear``, so they stay frozen either way.

:func:`memory_estimate` adds up, for one training micro-batch: the frozen weights, the LoRA
parameters with their gradients and AdamW state (fp32), the activations kept by gradient
checkpointing (one hidden state per layer per token) plus one layer recomputed, the logits of
the completion (bf16, an fp32 log-softmax and its gradient) and the generation's KV cache.
An estimate, labelled so; ``benchmarks/train_bench.py --gpu`` measures the real peak.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

GIB = 1024**3
H200_GIB = 139.0
"""One H200's memory as the device machines here report it (141 GB class)."""
MIXERS = ("self_attn", "linear_attn")
_LAYER = re.compile(r"\.layers\.(\d+)\.")


def _text_config(config: Any) -> Any:
    get = getattr(config, "get_text_config", None)
    return get() if get is not None else config


def lora_plan(model: Any, target_modules: str | list[str], r: int = 16, alpha: int = 32,
              dropout: float = 0.0) -> dict[str, Any]:
    """Apply PEFT LoRA to ``model`` (on ``meta``, or anywhere) and describe the result.

    Returns ``layers_adapted``, ``layers_total``, ``trainable_params``, ``experts_frozen``
    and details (total parameters, adapted layers by type, adapted module names)."""
    from peft import LoraConfig, get_peft_model

    text = _text_config(model.config)
    layer_types = list(getattr(text, "layer_types", None) or
                       ["full_attention"] * text.num_hidden_layers)
    total = sum(p.numel() for p in model.parameters())
    peft_model = get_peft_model(model, LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout,
                                                  target_modules=target_modules,
                                                  task_type="CAUSAL_LM"))
    mixer_layers: set[int] = set()
    any_layers: set[int] = set()
    modules: Counter[str] = Counter()
    trainable = 0
    experts_total = 0
    experts_trainable = 0
    for name, param in peft_model.named_parameters():
        if param.requires_grad:
            trainable += param.numel()
        if ".experts." in name:
            experts_total += param.numel()
            if param.requires_grad:
                experts_trainable += param.numel()
        if "lora_A" not in name:
            continue
        match = _LAYER.search(name)
        module = name.split(".lora_A")[0].rsplit(".", 1)[-1]
        modules[module] += 1
        if match:
            index = int(match.group(1))
            any_layers.add(index)
            if any(f".{mixer}." in name for mixer in MIXERS):
                mixer_layers.add(index)
    by_type = Counter(layer_types[i] for i in mixer_layers if i < len(layer_types))
    return {
        "target_modules": target_modules,
        "r": r,
        "alpha": alpha,
        "layers_adapted": len(mixer_layers),
        "layers_total": len(layer_types),
        "layers_adapted_by_type": dict(sorted(by_type.items())),
        "layers_total_by_type": dict(sorted(Counter(layer_types).items())),
        "layers_with_any_adapter": len(any_layers),
        "trainable_params": trainable,
        "total_params": total,
        "trainable_fraction": trainable / total if total else 0.0,
        "experts_params": experts_total,
        "experts_frozen": experts_trainable == 0,
        "adapted_modules": dict(sorted(modules.items())),
    }


@dataclass
class MemoryEstimate:
    """GiB of GPU memory for one training micro-batch (see the module docstring)."""

    weights_gib: float
    lora_and_optimizer_gib: float
    activations_gib: float
    logits_gib: float
    kv_cache_gib: float
    total_gib: float
    gpu_gib: float
    fits: bool
    tokens: int
    assumptions: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def memory_estimate(config: Any, trainable_params: int, *, total_params: int,
                    completion_tokens: int, prompt_tokens: int = 700, micro_batch: int = 1,
                    generations: int = 8, gradient_checkpointing: bool = True,
                    weight_bytes: int = 2, gpu_gib: float = H200_GIB) -> MemoryEstimate:
    """Estimate one GPU's peak for a GRPO micro-batch (bf16 weights by default)."""
    text = _text_config(config)
    hidden = text.hidden_size
    layers = text.num_hidden_layers
    vocab = text.vocab_size
    tokens = (prompt_tokens + completion_tokens) * micro_batch
    weights = total_params * weight_bytes
    lora = trainable_params * (4 + 4 + 8)  # fp32 parameter, gradient, AdamW's two moments
    per_layer_working = 16 * tokens * hidden * 2  # one layer's recomputed intermediates
    if gradient_checkpointing:
        activations = layers * tokens * hidden * 2 + per_layer_working
    else:
        activations = layers * per_layer_working
    logits = completion_tokens * micro_batch * vocab * (2 + 4 + 4)
    layer_types = list(getattr(text, "layer_types", None) or ["full_attention"] * layers)
    full = sum(t == "full_attention" for t in layer_types)
    kv_heads = getattr(text, "num_key_value_heads", text.num_attention_heads)
    head_dim = getattr(text, "head_dim", None) or hidden // text.num_attention_heads
    kv = 2 * full * kv_heads * head_dim * 2 * (prompt_tokens + completion_tokens) * generations
    total = weights + lora + activations + logits + kv
    g = lambda b: round(b / GIB, 2)  # noqa: E731
    return MemoryEstimate(
        g(weights), g(lora), g(activations), g(logits), g(kv), g(total), round(gpu_gib, 1),
        total / GIB <= gpu_gib, tokens,
        f"bf16 weights; fp32 LoRA + AdamW; {tokens} tokens a micro-batch; "
        f"{'gradient checkpointing' if gradient_checkpointing else 'no checkpointing'}; "
        f"KV cache of {generations} generations in {full} full-attention layers")


def describe(model_name: str, target_modules: str | list[str], r: int, alpha: int,
             completion_tokens: int, micro_batch: int, generations: int,
             gradient_checkpointing: bool) -> dict[str, Any] | None:
    """The LoRA plan + memory estimate of a model known here (None when it is not)."""
    from watercolour.train.architectures import architecture_config, build_on_meta

    config = architecture_config(model_name)
    if config is None:
        return None
    plan = lora_plan(build_on_meta(config), target_modules, r=r, alpha=alpha)
    plan["memory"] = memory_estimate(
        config, plan["trainable_params"], total_params=plan["total_params"],
        completion_tokens=completion_tokens, micro_batch=micro_batch,
        generations=generations, gradient_checkpointing=gradient_checkpointing).to_dict()
    return plan
