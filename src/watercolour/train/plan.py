"""The LoRA plan of the model TRL loads, built on the ``meta`` device; a memory estimate for
one GPU; and the check that the weights a run would load fit the device.

The model is the class the config's ``architectures`` names (what TRL's
``create_model_from_path`` loads): for Qwen3.5 the multimodal ``...ForConditionalGeneration``
with a vision tower (``model.visual``), not the text-only causal LM. PEFT's ``all-linear``
would adapt that tower too (7,978,496 of 30,455,936 trainable parameters on Qwen3.5-35B-A3B),
which a single-turn text policy never runs. :func:`lora_config` builds the LoRA config with
TRL's :func:`~trl.get_peft_config` from the run's :class:`~trl.ModelConfig` fields
(``--lora_r``, ``--lora_target_modules``, ``--use_rslora``, ...), then excludes that tower
(``exclude_modules``, :data:`VISION_MODULES`) unless ``--adapt-vision``.

:func:`lora_plan` answers, without weights: which class, how many decoder layers get adapters,
how many parameters train, whether the vision tower is adapted and whether the routed experts
stay frozen. A decoder layer counts as *adapted* when its token mixer (``self_attn`` in
full-attention layers, ``linear_attn`` in Qwen3.5's linear-attention layers) carries adapters:
that is what separates the module lists. On Qwen3.5-35B-A3B the dense-model list
(q/k/v/o/gate/up/down_proj) adapts only the 10 full-attention layers (its MLP names match only
the small shared expert), ``all-linear`` all 40; routed experts are fused 3-D parameters, not
``nn.Linear``, so they stay frozen either way. :func:`describe_adapters` counts the same on any
PEFT model (the one a run trained), so a test can hold the plan against what PEFT did.

:func:`memory_estimate` adds up, for one training micro-batch: the frozen weights (in the load
dtype), the LoRA parameters with their gradients and AdamW state (fp32), the activations kept
by gradient checkpointing (one hidden state per layer per token) plus one layer recomputed, the
logits of the completion (bf16, an fp32 log-softmax and its gradient) and the generation's KV
cache. An estimate, labelled so; ``benchmarks/train_gpu_check.py`` measures the real peak.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

GIB = 1024**3
H200_GIB = 139.0
"""One H200's memory as the device machines here report it (141 GB class)."""
MIXERS = ("self_attn", "linear_attn")
_LAYER = re.compile(r"\.layers\.(\d+)\.")
VISION_MODULES = r"(.*\.)?visual(\..*)?"
"""PEFT ``exclude_modules``: every module of a vision tower (``model.visual`` in Qwen3.5)."""
_VISION = re.compile(r"(^|\.)visual(\.|$)")
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def _text_config(config: Any) -> Any:
    get = getattr(config, "get_text_config", None)
    return get() if get is not None else config


def has_vision_tower(config: Any) -> bool:
    """Whether the model of ``config`` carries a vision tower (a ``vision_config``)."""
    return getattr(config, "vision_config", None) is not None


def model_config(lora: Any, r: int = 16, alpha: int = 32, dropout: float = 0.0) -> Any:
    """``lora`` as TRL's :class:`~trl.ModelConfig` with ``use_peft``: itself when it is one (a
    run's :class:`~watercolour.train.config.RunArguments`), else a ModelConfig of those target
    modules, rank, alpha and dropout."""
    from trl import ModelConfig

    if isinstance(lora, ModelConfig):
        return lora
    return ModelConfig(use_peft=True, lora_target_modules=lora, lora_r=r, lora_alpha=alpha,
                       lora_dropout=dropout)


def lora_config(lora: Any, *, adapt_vision: bool = False, vision_tower: bool = True) -> Any:
    """PEFT's LoraConfig of a run: TRL's ``get_peft_config`` of ``lora`` (a ModelConfig, or
    target modules: :func:`model_config`), the vision tower excluded unless ``adapt_vision``
    (or the model has none: ``vision_tower=False``, where PEFT would warn that nothing was
    excluded)."""
    from trl import get_peft_config

    settings = model_config(lora)
    if not settings.use_peft:
        return None
    config = get_peft_config(settings)
    if vision_tower and not adapt_vision:
        if config.exclude_modules:
            raise ValueError("the LoRA config already names exclude_modules")
        config.exclude_modules = VISION_MODULES
    return config


def describe_adapters(peft_model: Any) -> dict[str, Any]:
    """What PEFT adapted in ``peft_model``: layers (by type), trainable parameters (all, and
    in the vision tower), the routed experts, the adapted module names by kind."""
    base = peft_model.get_base_model()
    text = _text_config(base.config)
    layer_types = list(getattr(text, "layer_types", None) or
                       ["full_attention"] * text.num_hidden_layers)
    mixer_layers: set[int] = set()
    any_layers: set[int] = set()
    modules: Counter[str] = Counter()
    trainable = vision_trainable = vision_total = 0
    experts_total = experts_trainable = 0
    for name, param in peft_model.named_parameters():
        vision = bool(_VISION.search(name))
        if param.requires_grad:
            trainable += param.numel()
            if vision:
                vision_trainable += param.numel()
        if vision and "lora_" not in name:
            vision_total += param.numel()
        if ".experts." in name:
            experts_total += param.numel()
            if param.requires_grad:
                experts_trainable += param.numel()
        if "lora_A" not in name:
            continue
        module = name.split(".lora_A")[0].rsplit(".", 1)[-1]
        modules[module] += 1
        match = _LAYER.search(name)
        if match and not vision:
            index = int(match.group(1))
            any_layers.add(index)
            if any(f".{mixer}." in name for mixer in MIXERS):
                mixer_layers.add(index)
    by_type = Counter(layer_types[i] for i in mixer_layers if i < len(layer_types))
    return {
        "model_class": type(base).__name__,
        "layers_adapted": len(mixer_layers),
        "layers_total": len(layer_types),
        "layers_adapted_by_type": dict(sorted(by_type.items())),
        "layers_total_by_type": dict(sorted(Counter(layer_types).items())),
        "layers_with_any_adapter": len(any_layers),
        "trainable_params": trainable,
        "vision_tower": vision_total > 0,
        "vision_tower_params": vision_total,
        "vision_tower_adapted": vision_trainable > 0,
        "vision_trainable_params": vision_trainable,
        "experts_params": experts_total,
        "experts_frozen": experts_trainable == 0,
        "adapted_modules": dict(sorted(modules.items())),
    }


def lora_plan(model: Any, lora: Any, r: int = 16, alpha: int = 32, dropout: float = 0.0, *,
              adapt_vision: bool = False) -> dict[str, Any]:
    """Apply PEFT LoRA (:func:`lora_config` of ``lora``: a run's ModelConfig, or target
    modules with ``r``, ``alpha``, ``dropout``) to ``model`` (on ``meta``, or anywhere) and
    describe the result (:func:`describe_adapters`, with ``target_modules``, ``r``,
    ``alpha``, the base model's ``total_params`` and ``trainable_fraction``)."""
    from peft import get_peft_model

    settings = model_config(lora, r, alpha, dropout)
    total = sum(p.numel() for p in model.parameters())
    config = lora_config(settings, adapt_vision=adapt_vision,
                         vision_tower=has_vision_tower(model.config))
    described = describe_adapters(get_peft_model(model, config))
    targets = settings.lora_target_modules
    return {"target_modules": list(targets) if isinstance(targets, (list, tuple)) else targets,
            "r": settings.lora_r, "alpha": settings.lora_alpha,
            "exclude_modules": config.exclude_modules, **described,
            "total_params": total,
            "trainable_fraction": described["trainable_params"] / total if total else 0.0}


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
                    dtype: str = "bfloat16", gpu_gib: float = H200_GIB) -> MemoryEstimate:
    """Estimate one GPU's peak for a GRPO micro-batch (weights in ``dtype``: bf16 by
    default)."""
    text = _text_config(config)
    hidden = text.hidden_size
    layers = text.num_hidden_layers
    vocab = text.vocab_size
    tokens = (prompt_tokens + completion_tokens) * micro_batch
    weights = total_params * dtype_bytes(dtype)
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
        f"{dtype} weights; fp32 LoRA + AdamW; {tokens} tokens a micro-batch; "
        f"{'gradient checkpointing' if gradient_checkpointing else 'no checkpointing'}; "
        f"KV cache of {generations} generations in {full} full-attention layers")


def dtype_bytes(dtype: Any) -> int:
    """Bytes a parameter takes in ``dtype`` (a name, ``torch.float32`` or ``"auto"``: bf16)."""
    name = str(dtype).removeprefix("torch.")
    if name in ("auto", "None"):
        name = "bfloat16"  # what the published checkpoints store
    if name not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {dtype!r} (one of {', '.join(DTYPE_BYTES)}, auto)")
    return DTYPE_BYTES[name]


def describe(model_name: str, lora: Any, completion_tokens: int, micro_batch: int,
             generations: int, gradient_checkpointing: bool, *, adapt_vision: bool = False,
             dtype: str = "bfloat16") -> dict[str, Any] | None:
    """The LoRA plan (``lora``: the run's ModelConfig, or target modules) + memory estimate
    (weights in the load ``dtype``) of a model known here (None when it is not)."""
    from watercolour.models.architectures import build_on_meta
    from watercolour.models.registry import architecture_config

    config = architecture_config(model_name)
    if config is None:
        return None
    plan = lora_plan(build_on_meta(config), lora, adapt_vision=adapt_vision)
    plan["load_dtype"] = str(dtype)
    plan["memory"] = memory_estimate(
        config, plan["trainable_params"], total_params=plan["total_params"],
        completion_tokens=completion_tokens, micro_batch=micro_batch,
        generations=generations, gradient_checkpointing=gradient_checkpointing,
        dtype=dtype).to_dict()
    return plan


def parameter_count(model_name: str) -> int | None:
    """Parameters of the model TRL would load for ``model_name`` (built on ``meta``; None
    when the architecture is not known here)."""
    from watercolour.models.architectures import build_on_meta
    from watercolour.models.registry import architecture_config

    config = architecture_config(model_name)
    if config is None:
        return None
    return sum(p.numel() for p in build_on_meta(config).parameters())


@dataclass
class DeviceMemory:
    """Memory the weights would be loaded into: the GPUs' free memory, else the host's."""

    name: str
    free_gib: float


def device_memory(use_cpu: bool = False) -> DeviceMemory:
    """Free memory where TRL puts the weights: every visible GPU's (``device_map="auto"``
    spreads a model over them), else the host's available memory."""
    import torch

    if torch.cuda.is_available() and not use_cpu:
        count = torch.cuda.device_count()
        free = sum(torch.cuda.mem_get_info(i)[0] for i in range(count))
        name = torch.cuda.get_device_name(0) + (f" x{count}" if count > 1 else "")
        return DeviceMemory(f"{name} (free)", round(free / GIB, 2))
    available = None
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
    except OSError:
        pass
    if available is None:
        available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    return DeviceMemory("host memory (available)", round(available / GIB, 2))


def check_weights_fit(model_name: str, dtype: Any, memory: DeviceMemory | None = None,
                      *, use_cpu: bool = False) -> dict[str, Any] | None:
    """Refuse (:class:`~watercolour.errors.InputError`) a run whose weights, in the load
    ``dtype``, do not fit the device's free memory; else what was checked (None when the
    architecture is not known here, so nothing can be said before loading)."""
    from watercolour.errors import InputError

    params = parameter_count(model_name)
    if params is None:
        return None
    memory = memory or device_memory(use_cpu)
    weights = params * dtype_bytes(dtype) / GIB
    checked = {"params": params, "dtype": str(dtype), "weights_gib": round(weights, 2),
               "device": memory.name, "free_gib": memory.free_gib}
    if weights > memory.free_gib:
        hint = (" (the recipes load bfloat16 with --bf16; float32 is TRL's default)"
                if dtype_bytes(dtype) == 4 else "")
        raise InputError(
            f"{model_name}: {params:,} parameters in {dtype} take {weights:.1f} GiB, more than "
            f"the {memory.free_gib:.1f} GiB of {memory.name}{hint}: not starting a run whose "
            "weights do not fit")
    return checked


VLLM_OVERHEAD_GIB = 2.0
"""What a colocated vLLM engine needs besides the weights and the caches (its activations,
CUDA graphs, allocator slack): an assumption, not a measurement."""


def check_vllm_fit(model_name: str, dtype: Any, *, share: float, max_model_length: int | None,
                   sequences: int, sleep: bool, memory: DeviceMemory | None = None,
                   use_cpu: bool = False) -> dict[str, Any] | None:
    """Refuse (:class:`~watercolour.errors.InputError`) a colocated vLLM engine that cannot
    start beside the trainer: its share of the GPU (``--vllm-gpu-memory-utilization``, of the
    memory free before anything loads) must hold a second copy of the weights, the KV cache of
    ``sequences`` sequences of ``max_model_length`` tokens in the full-attention layers, the
    linear-attention layers' states and :data:`VLLM_OVERHEAD_GIB`; and it must fit what is
    left once the trainer's own weights are loaded (vLLM checks its share against the free
    memory at start-up). A bounded ``max_model_length`` is required (unset, vLLM sizes the
    cache for the model's 262,144 positions), and sleep mode too when the two copies of the
    weights take more than half the GPU (the engine then frees its memory while the trainer
    steps). None when the architecture is not known here."""
    from watercolour.errors import InputError
    from watercolour.models.registry import architecture_config

    config = architecture_config(model_name)
    params = parameter_count(model_name)
    if config is None or params is None:
        return None
    if not max_model_length:
        raise InputError("--use-vllm (colocate) needs --vllm-max-model-length: unset, vLLM "
                         "reserves the KV cache of the model's whole context")
    text = _text_config(config)
    memory = memory or device_memory(use_cpu)
    weights = params * dtype_bytes(dtype) / GIB
    types = list(getattr(text, "layer_types", None) or
                 ["full_attention"] * text.num_hidden_layers)
    full, linear = types.count("full_attention"), types.count("linear_attention")
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
    kv = (2 * full * text.num_key_value_heads * head_dim * dtype_bytes(dtype)
          * max_model_length * sequences / GIB)
    state = (linear * getattr(text, "linear_num_value_heads", 0)
             * getattr(text, "linear_key_head_dim", 0) * getattr(text, "linear_value_head_dim", 0)
             * 4 * sequences / GIB)
    engine = share * memory.free_gib
    needed = weights + kv + state + VLLM_OVERHEAD_GIB
    left = memory.free_gib - weights
    checked = {"share": share, "engine_gib": round(engine, 2), "needed_gib": round(needed, 2),
               "weights_gib": round(weights, 2), "kv_cache_gib": round(kv, 2),
               "linear_state_gib": round(state, 2), "overhead_gib": VLLM_OVERHEAD_GIB,
               "free_after_trainer_gib": round(left, 2),
               "max_share": round(left / memory.free_gib, 3),
               "max_model_length": max_model_length, "sequences": sequences,
               "sleep_mode": sleep, "device": memory.name}
    if engine < needed:
        raise InputError(f"vLLM's share {share} of {memory.free_gib:.1f} GiB is {engine:.1f} GiB, "
                         f"less than the {needed:.1f} GiB it needs ({weights:.1f} weights, "
                         f"{kv:.1f} KV cache, {state:.1f} linear-attention states, "
                         f"{VLLM_OVERHEAD_GIB} overhead): raise --vllm-gpu-memory-utilization "
                         "or lower --vllm-max-model-length")
    if engine > left:
        raise InputError(f"vLLM's share {share} ({engine:.1f} GiB) is more than the "
                         f"{left:.1f} GiB left once the trainer's weights are loaded: at most "
                         f"{left / memory.free_gib:.2f}")
    if 2 * weights > memory.free_gib / 2 and not sleep:
        raise InputError("two copies of the weights take more than half the GPU: add "
                         "--vllm-enable-sleep-mode so the engine frees its memory while the "
                         "trainer steps")
    return checked
