"""How replies are generated, the same for every backend: where a reply stops, how long a
step's generation may take, and which kernels and backend a run used (recorded in
``run.json`` and the model card).

**A reply ends with its sketch.** Generation stops at :data:`FENCE_STOPS`, the closing fence
of the fenced block (a line of three backticks and its newline) after the sketch's last line of
code (``}`` or ``;``), as well as at the end-of-sequence token: a reply that finishes its code
and then keeps talking, or loops, no longer runs to ``max_completion_length``. An opening fence
never matches: ```` ```javascript ```` is followed by its language tag, and a bare ```` ``` ````
opening follows prose (``Here it is:``), not code (a bare ``"\n```\n"`` did stop SmolLM2 at its
opening fence, leaving no sketch). The same stops go to both backends, through TRL's
``generation_kwargs``: ``stop_strings`` for transformers' ``generate`` (which needs the
tokenizer at the call: :class:`~watercolour.train.trainer.WatercolourGRPOTrainer` passes it)
and ``stop`` for vLLM's ``SamplingParams`` (with ``include_stop_str_in_output``, so both
backends return the fence: the extractor then sees a closed block). A reply that ends at EOS
right after its fence (the tiny painter's: ``...}\n```<|im_end|>``) never meets a stop string,
so its tokens are the same with or without them. Limits: a sketch whose last line is neither
(a comment) runs on to EOS or the length limit, as without the stop; a reply that writes two
blocks (say HTML, then JavaScript) is stopped after the first; the prompt asks for one
JavaScript block.

**A per-step generation budget** (``--generation-budget-s``): transformers' ``max_time``, one
clock per ``generate`` call (a step's batch in single-turn training, one turn of the batch in
episodes); when it runs out every reply still being written ends where it is, as if cut at
``max_completion_length``: no closing fence, so the gate scores it as the unclosed sketch it
is, and the group is not held up by its slowest reply. vLLM's ``SamplingParams`` has no time
limit per request (only ``max_tokens``), so with ``--use-vllm`` the budget is refused; there a
step's longest reply is bounded by ``max_completion_length`` alone (an 8,192-token reply is
~65 s on vLLM against ~22 minutes on transformers' fallback kernels).

TRL counts a completion that does not end with EOS as clipped (``completions/clipped_ratio``);
the trainer recounts it without the replies that stopped at the fence and logs those as
``completions/stopped_ratio``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable
from typing import Any

FENCE_STOPS = ("}\n```\n", ";\n```\n")
"""The closing fence of a reply's code block after its last line of code: where generation
stops."""
BACKENDS = ("transformers", "vllm")
KERNEL_FUNCTIONS = {
    "gated_delta_rule": ("chunk_gated_delta_rule", "fused_recurrent_gated_delta_rule"),
    "causal_conv1d": ("causal_conv1d_fn", "causal_conv1d_update"),
}
"""A linear-attention layer's two kernel families and the functions of each in Qwen3.5's
modeling (transformers 5.24: ``torch_chunk_gated_delta_rule`` etc., each wrapped by
``use_kernel_func_from_hub_with_fallback(name, "fla" | "causal_conv1d")``)."""
_MODELING = {"qwen3_5": "transformers.models.qwen3_5.modeling_qwen3_5",
             "qwen3_5_moe": "transformers.models.qwen3_5_moe.modeling_qwen3_5_moe"}
_WRAPPED = {"chunk_gated_delta_rule": "torch_chunk_gated_delta_rule",
            "fused_recurrent_gated_delta_rule": "torch_recurrent_gated_delta_rule",
            "causal_conv1d_fn": "causal_conv1d_fn",
            "causal_conv1d_update": "causal_conv1d_update"}


def backend(use_vllm: bool) -> str:
    """The generation backend of a run: ``vllm`` with ``--use-vllm``, else ``transformers``."""
    return "vllm" if use_vllm else "transformers"


def stop_kwargs(backend_name: str) -> dict[str, Any]:
    """The stop at the closing fence in the form ``backend_name`` takes it."""
    if backend_name == "vllm":
        return {"stop": list(FENCE_STOPS), "include_stop_str_in_output": True}
    if backend_name == "transformers":
        return {"stop_strings": list(FENCE_STOPS)}
    raise ValueError(f"unknown generation backend {backend_name!r} (one of {BACKENDS})")


def generation_kwargs(given: dict[str, Any] | None, backend_name: str, *, stop_at_fence: bool,
                      budget_s: float | None) -> dict[str, Any] | None:
    """TRL's ``generation_kwargs`` for a run: the stop at the fence (``stop_at_fence``) and the
    time budget (``budget_s``, transformers only) under what ``given`` already says (a value
    there wins). None when there is nothing to pass."""
    from watercolour.errors import InputError

    out: dict[str, Any] = {}
    if stop_at_fence:
        out.update(stop_kwargs(backend_name))
    if budget_s is not None:
        if backend_name == "vllm":
            raise InputError("--generation-budget-s is transformers' max_time; vLLM has no time "
                             "limit per request (max_completion_length bounds a reply there): "
                             "drop one of them")
        out["max_time"] = float(budget_s)
    out.update(given or {})
    return out or None


def stopped_at_fence(text: str) -> bool:
    """Whether a decoded reply ended at a stop string (its closing fence, then at most
    whitespace: a stop may end inside a token), not at EOS or the length limit."""
    for stop in FENCE_STOPS:
        at = text.rfind(stop)
        if at >= 0 and not text[at + len(stop):].strip():
            return True
    return False


def saved_tokens(lengths_without: Iterable[int], lengths_with: Iterable[int]) -> dict[str, Any]:
    """Tokens a stop saved: per reply and in all (the same replies generated without and with
    it, same seeds)."""
    before, after = list(lengths_without), list(lengths_with)
    return {"without_stop": before, "with_stop": after,
            "saved": [b - a for b, a in zip(before, after)],
            "saved_total": sum(before) - sum(after), "total_without_stop": sum(before)}


def _implementation(wrapped: Any) -> bool | None:
    """Whether one of transformers' kernel-with-fallback wrappers runs another package's
    kernel (True), its own PyTorch reference (False), or cannot be told (None)."""
    seen = 0
    while wrapped is not None and seen < 4:
        cells = dict(zip(getattr(getattr(wrapped, "__code__", None), "co_freevars", ()),
                         getattr(wrapped, "__closure__", None) or ()))
        if "is_new_implementation" in cells:
            return bool(cells["is_new_implementation"].cell_contents)
        wrapped = getattr(wrapped, "__wrapped__", None)
        seen += 1
    return None


def kernel_paths(model_type: str | None) -> dict[str, Any] | None:
    """Which kernel each layer type of a Qwen3.5 model takes in this process, as transformers
    chose at import: per linear-attention kernel family ``fla`` / ``causal-conv1d`` or
    ``reference`` (its PyTorch fallback); None for a model type without such layers."""
    name = _MODELING.get(str(model_type).removesuffix("_text"))
    if name is None:
        return None
    module = importlib.import_module(name)
    paths: dict[str, Any] = {}
    for family, functions in KERNEL_FUNCTIONS.items():
        found = {_implementation(getattr(module, _WRAPPED[f], None)) for f in functions}
        package = "fla" if family == "gated_delta_rule" else "causal-conv1d"
        paths[family] = (package if found == {True} else "reference" if found == {False}
                         else "mixed" if len(found) > 1 else "unknown")
    return {"linear_attention": paths}


def generation_record(model_type: str | None, use_vllm: bool, config: Any = None
                      ) -> dict[str, Any]:
    """What ``run.json`` and the model card say about generation: the backend, the kernel path
    of each layer type (linear attention: :func:`kernel_paths`; full attention: the attention
    implementation the config asks for), and whether ``fla`` is importable here."""
    paths = kernel_paths(model_type)
    if paths is not None:
        attention = getattr(config, "_attn_implementation", None) if config is not None else None
        paths["full_attention"] = attention or "sdpa"
    return {"backend": backend(use_vllm), "kernels": paths,
            "fla_installed": importlib.util.find_spec("fla") is not None}


def wire_generation_kwargs(run: Any, training: Any) -> None:
    """Put the run's stop (``--stop-at-fence``) and budget (``--generation-budget-s``) into
    TRL's ``generation_kwargs`` for the run's backend (:func:`generation_kwargs`; what
    ``--generation-kwargs`` names itself is kept). The same twice gives the same."""
    training.generation_kwargs = generation_kwargs(
        training.generation_kwargs, backend(bool(training.use_vllm)),
        stop_at_fence=bool(run.stop_at_fence), budget_s=run.generation_budget_s)
