"""Model architectures known without their weights: the shipped ``config.json`` of the
reproduction's policies, the builtin tiny Qwen3, or a local model folder; and the model built
from one on PyTorch's ``meta`` device (shapes only, no memory, no download).

Shipped (config files only, see ``README.md`` beside this file for where each value came from):

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


def architecture_config(model: str) -> Any | None:
    """A transformers config for ``model`` without downloading anything: shipped, builtin,
    or a local folder's ``config.json``; None when it is not known here."""
    from transformers import AutoConfig

    from watercolour.train.tiny import BUILTIN, tiny_config

    if model == BUILTIN:
        return tiny_config()
    folder = shipped_config_dir(model)
    if folder is None and (Path(model) / "config.json").is_file():
        folder = Path(model)
    if folder is None:
        return None
    return AutoConfig.from_pretrained(str(folder))


def build_on_meta(config: Any) -> Any:
    """The causal LM of ``config`` on the ``meta`` device (the text model of a multimodal
    config: ``AutoModelForCausalLM`` maps ``qwen3_5``/``qwen3_5_moe`` to their text LMs)."""
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config)
