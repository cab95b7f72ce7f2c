"""The architectures of the reproduction's policies without their weights: their shipped
``config.json`` (see ``README.md`` beside this file for where each value came from), and the
model built from a config on PyTorch's ``meta`` device (shapes only, no memory, no download).
A name's config, whatever it names, is :func:`watercolour.models.registry.architecture_config`.

The model is the class TRL loads (:func:`model_class`: the one the config's ``architectures``
names), so for Qwen3.5 the multimodal class with its vision tower, not the text-only causal LM.

=======================  ===========================================================
``Qwen/Qwen3.5-4B``      32 layers (24 linear-attention + 8 full-attention), hidden 2560
``Qwen/Qwen3.5-35B-A3B`` 40 layers (30 + 10), hidden 2048, 256 routed experts, 8 active
=======================  ===========================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHIPPED: dict[str, str] = {
    "Qwen/Qwen3.5-4B": "Qwen3.5-4B",
    "Qwen/Qwen3.5-35B-A3B": "Qwen3.5-35B-A3B",
}
"""Hub id -> the folder here holding its ``config.json``."""


def shipped_config_dir(model: str) -> Path | None:
    """The folder with the shipped ``config.json`` of ``model``, or None."""
    name = SHIPPED.get(model)
    return HERE / name if name else None


def shipped_config(model: str) -> Any:
    """The transformers config of the shipped ``model`` (one of :data:`SHIPPED`)."""
    from transformers import AutoConfig

    folder = shipped_config_dir(model)
    if folder is None:
        raise KeyError(f"no shipped config for {model!r}: one of {', '.join(SHIPPED)}")
    return AutoConfig.from_pretrained(str(folder))


def model_class(config: Any) -> Any:
    """The class TRL's ``create_model_from_path`` loads for ``config``: the one its
    ``architectures`` names (``Qwen3_5MoeForConditionalGeneration`` for Qwen3.5-35B-A3B, with
    its vision tower), else ``AutoModelForCausalLM``'s choice."""
    import transformers

    names = getattr(config, "architectures", None) or []
    found = getattr(transformers, names[0], None) if names else None
    if found is None:
        return transformers.AutoModelForCausalLM._model_mapping[type(config)]
    return found


def build_on_meta(config: Any) -> Any:
    """The model TRL would load for ``config`` (:func:`model_class`), on the ``meta`` device:
    shapes only, no memory, no download."""
    import torch

    with torch.device("meta"):
        return model_class(config)._from_config(config)
