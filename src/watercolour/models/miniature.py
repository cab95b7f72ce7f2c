"""Miniatures of the published policies: random-weight models of the very classes TRL loads for
Qwen3.5-35B-A3B and Qwen3.5-4B, built here from the shipped ``config.json`` with tiny widths,
so the published recipes can be rehearsed end to end on a CPU (LoRA as the recipe says,
checkpoints, ``--resume``, the adapter reloaded and sampled) before a GPU is paid for.

=============================  ==========================================================
``builtin:mini-qwen3.5-moe``   ``Qwen3_5MoeForConditionalGeneration`` (as Qwen3.5-35B-A3B)
``builtin:mini-qwen3.5``       ``Qwen3_5ForConditionalGeneration`` (as Qwen3.5-4B)
=============================  ==========================================================

What is kept from the real config: the class, the layer-type pattern (its first four layers:
three linear-attention, one full-attention), routed experts with a shared expert (MoE), the
vision tower (two blocks), the tied or untied embeddings, the special token ids and the full
248,320-token vocabulary, so the exact Qwen3.5 tokenizer (:mod:`watercolour.models.qwen35`)
goes with it. What shrinks: every width (hidden 64), the heads, the experts (4, 2 active).
About 32M parameters (35B-A3B miniature) and 16M (4B), nearly all in the embeddings.

Built once and cached in the miniature's folder of the model cache
(:data:`watercolour.models.registry.MODELS`: ``miniatures/<name>/<key>`` under
``WATERCOLOUR_CACHE``, default ``~/.cache/watercolour``), the key a hash of everything that
decides the folder.

>>> folder = build_miniature("builtin:mini-qwen3.5-moe")   # ~15 s the first time
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from watercolour.models.architectures import model_class, shipped_config_dir
from watercolour.models.registry import MINI_QWEN35, MINI_QWEN35_MOE, cache_folder

MINIATURES: dict[str, str] = {
    MINI_QWEN35_MOE: "Qwen/Qwen3.5-35B-A3B",
    MINI_QWEN35: "Qwen/Qwen3.5-4B",
}
"""Miniature name -> the published model whose shipped config it shrinks."""
LAYERS = 4
SEED = 0
TEXT = {
    "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 2,
    "num_key_value_heads": 1, "head_dim": 32, "linear_num_key_heads": 2,
    "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16,
    "max_position_embeddings": 4096,
}
"""Text-model widths of a miniature (every other value comes from the shipped config)."""
MOE = {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
       "shared_expert_intermediate_size": 32}
VISION = {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
          "num_position_embeddings": 64}


def _shrunk(published: dict[str, Any]) -> dict[str, Any]:
    """The published ``config.json`` (as a dict) with a miniature's sizes."""
    data = json.loads(json.dumps(published))
    text = data["text_config"]
    moe = "num_experts" in text
    text.update({k: v for k, v in TEXT.items() if k != "intermediate_size" or not moe})
    if moe:
        text.update(MOE)
    text["layer_types"] = list(text["layer_types"][:LAYERS])
    text["num_hidden_layers"] = LAYERS
    data["vision_config"].update(VISION)
    data["vision_config"]["out_hidden_size"] = text["hidden_size"]
    return data


def miniature_config(name: str) -> Any:
    """The transformers config of the miniature ``name`` (one of :data:`MINIATURES`)."""
    from transformers import AutoConfig

    if name not in MINIATURES:
        raise KeyError(f"no miniature {name!r}: one of {', '.join(MINIATURES)}")
    folder = shipped_config_dir(MINIATURES[name])
    published = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    data = _shrunk(published)
    model_type = data.pop("model_type")
    return AutoConfig.for_model(model_type, **data)


def key(name: str) -> str:
    """A short hash of everything that decides the miniature's folder."""
    from importlib.metadata import version

    from watercolour.models.qwen35 import tokenizer_key

    record = [name, miniature_config(name).to_dict(), SEED, tokenizer_key(),
              version("transformers"), version("torch")]
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()
                          ).hexdigest()[:16]


def build_miniature(name: str, folder: str | os.PathLike[str] | None = None, seed: int = 0,
                    log: Any = print) -> Path:
    """The miniature's model folder (config, random fp32 weights, the exact Qwen3.5 tokenizer
    with its chat template) under ``folder`` (default: its folder of the model cache): from
    there, else built there (atomically). The registry's builder (``seed``: unused, a
    miniature's weights are always drawn with :data:`SEED`, part of its key)."""
    import torch

    from watercolour.io import save_model_folder
    from watercolour.models.qwen35 import cached_tokenizer

    digest = key(name)
    target = Path(folder if folder is not None else cache_folder(name)) / digest
    if (target / "miniature.json").is_file():
        return target
    started = time.perf_counter()
    config = miniature_config(name)
    torch.manual_seed(SEED)
    model = model_class(config)._from_config(config, dtype=torch.float32)
    tokenizer = cached_tokenizer()
    params = sum(p.numel() for p in model.parameters())
    record = {"name": name, "published": MINIATURES[name], "key": digest,
              "model_class": type(model).__name__, "parameters": params,
              "seconds": round(time.perf_counter() - started, 1)}
    save_model_folder(target, model, tokenizer, "miniature.json", record)
    log(f"{name}: {type(model).__name__}, {params / 1e6:.1f}M parameters, built in "
        f"{record['seconds']} s -> {target}")
    return target
