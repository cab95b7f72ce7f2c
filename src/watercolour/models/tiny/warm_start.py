"""The tiny painter's warm start: a ~4M-parameter Qwen3 built from a config, its tokenizer
trained on compact sketches, then supervised fine-tuning with TRL's ``SFTTrainer`` on
(request, fenced sketch) pairs across the painter's subjects, and with ``revisions`` > 0
revision examples too (:mod:`.revisions`: a flawed sketch and the critique of its render, then
the repaired sketch). Cached: built once per configuration in the tiny painter's folder of the
model cache (:data:`watercolour.models.registry.MODELS`: ``tiny-painter/<key>`` under
``WATERCOLOUR_CACHE``) and rebuilt when any of its settings (or the data they generate)
change.

>>> folder = warm_start(WarmStartConfig())   # ~20 minutes on 2 cores the first time
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from watercolour import settings
from watercolour.cache import cache_root
from watercolour.io import write_json_atomic
from watercolour.models.registry import TINY_PAINTER, TINY_REVISER, cache_folder
from watercolour.models.tiny.sketches import compact_sketches
from watercolour.models.tiny.tokenizer import PRE_SPLIT, build_tokenizer
from watercolour.prompt import user_prompt

REVISER_REVISIONS = 300
"""Revision examples of ``builtin:tiny-painter-revise`` by default (~300 renders, once)."""


def read_cache_dir(environ: Mapping[str, str]) -> str:
    """The model cache's root in ``environ`` (:func:`watercolour.cache.cache_root`)."""
    return str(cache_root(environ))


@dataclass
class WarmStartConfig:
    """Everything that decides the warm start (all of it goes into the cache key)."""

    cache_dir: str = settings.setting(
        default_factory=lambda: str(cache_root()), reader=read_cache_dir,
        help="the model cache the warm start is kept under (its tiny-painter/ folder): "
        "ModelCache's, WATERCOLOUR_CACHE")
    sketches: int = settings.setting(3000, env="WATERCOLOUR_TINY_SKETCHES", positive=True,
                                     help="compact training sketches (seeds 0..N-1)")
    vocab_size: int = settings.setting(2048, positive=True, help="BPE vocabulary")
    hidden: int = settings.setting(256, positive=True, help="model width")
    layers: int = settings.setting(4, positive=True, help="transformer layers")
    heads: int = settings.setting(4, positive=True, help="attention heads")
    steps: int = settings.setting(1600, env="WATERCOLOUR_TINY_SFT_STEPS", positive=True,
                                  help="SFT optimiser steps (~20 minutes on 2 cores)")
    batch_size: int = settings.setting(8, positive=True, help="SFT batch size")
    learning_rate: float = settings.setting(1e-3, positive=True, help="SFT peak learning rate")
    threads: int = settings.setting(2, env="WATERCOLOUR_TORCH_THREADS", positive=True,
                                    help="torch CPU threads (2 ran 1.7x faster than 1)")
    seed: int = settings.setting(0, help="weights and data order")
    revisions: int = settings.setting(
        0, env="WATERCOLOUR_TINY_REVISIONS", minimum=0,
        help="revision examples (flawed sketch, critique of its render -> the repaired "
        "sketch) added to the SFT data, their renders cached; builtin:tiny-painter-revise "
        f"uses {REVISER_REVISIONS} unless this is set")

    def __post_init__(self) -> None:
        settings.check(self)

    @classmethod
    def from_env(cls, environ: Any = None, **overrides: Any) -> WarmStartConfig:
        return settings.from_env(cls, environ, **overrides)

    def key(self) -> str:
        """A short hash of everything that decides the result (not where it is kept)."""
        record = {k: v for k, v in asdict(self).items() if k not in ("cache_dir", "threads")}
        data = [s.reply() for s in compact_sketches(self.sketches)]
        if self.revisions:  # 0: the key the warm starts had before revisions
            from watercolour.models.tiny.revisions import revisions_key

            data.append(revisions_key(self.revisions))
        else:
            del record["revisions"]
        digest = hashlib.sha256(json.dumps([record, PRE_SPLIT, data]).encode())
        return digest.hexdigest()[:16]

    def folder(self, key: str | None = None) -> Path:
        """Where this configuration's warm start is kept (``key``: :meth:`key`, if known)."""
        return cache_folder(TINY_PAINTER, self.cache_dir) / (key or self.key())


def model_config(vocab_size: int, hidden: int = 256, layers: int = 4, heads: int = 4) -> Any:
    """The tiny painter's Qwen3 architecture (hidden 256, 4 layers: ~3.7M parameters)."""
    from transformers import Qwen3Config

    return Qwen3Config(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=3 * hidden,
                       num_hidden_layers=layers, num_attention_heads=heads,
                       num_key_value_heads=max(1, heads // 2), head_dim=hidden // heads,
                       max_position_embeddings=1024, tie_word_embeddings=True,
                       pad_token_id=0, bos_token_id=1, eos_token_id=2)


def painter_config(name: str = TINY_PAINTER) -> WarmStartConfig:
    """The warm start the builtin ``name`` stands for, from the environment
    (``builtin:tiny-painter-revise``: with :data:`REVISER_REVISIONS` revisions unless set)."""
    config = WarmStartConfig.from_env()
    if name == TINY_REVISER and not config.revisions:
        config.revisions = REVISER_REVISIONS
    return config


def sft_rows(n: int) -> list[dict[str, Any]]:
    """``n`` conversational prompt-completion rows (the request, the fenced sketch)."""
    return [{"prompt": [{"role": "user", "content": user_prompt(s.subject)}],
             "completion": [{"role": "assistant", "content": s.reply()}]}
            for s in compact_sketches(n)]


def training_rows(config: WarmStartConfig, log: Any = print) -> list[dict[str, Any]]:
    """The SFT data: :func:`sft_rows`, then ``config.revisions`` revision rows (prompt: the
    request, the flawed sketch, the revision prompt; completion: the repair), whose critiques
    are rendered once and cached under ``config.cache_dir``."""
    rows = sft_rows(config.sketches)
    if config.revisions:
        from watercolour.models.tiny.revisions import revision_rows

        rows += revision_rows(config.revisions, config.cache_dir, log)
    return rows


def warm_start(config: WarmStartConfig, log: Any = print) -> Path:
    """The warm-started model folder for ``config``: from the cache, else built (atomically:
    a crash leaves no half-written model behind)."""
    key = config.key()  # hashes the generated sketches: once per call
    target = config.folder(key)
    if (target / "warm-start.json").is_file():
        return target
    import torch
    from datasets import Dataset
    from transformers import Qwen3ForCausalLM
    from trl import SFTConfig, SFTTrainer

    torch.set_num_threads(config.threads)
    started = time.perf_counter()
    rows = training_rows(config, log)
    # every turn's text: with revisions, the critiques get tokens of their own too
    tokenizer = build_tokenizer([m["content"] for r in rows for m in r["completion"]] +
                                [m["content"] for r in rows for m in r["prompt"]
                                 if m["role"] == "user"],
                                vocab_size=config.vocab_size)
    torch.manual_seed(config.seed)
    model = Qwen3ForCausalLM(model_config(len(tokenizer), config.hidden, config.layers,
                                          config.heads))
    params = sum(p.numel() for p in model.parameters())
    log(f"tiny painter: {params / 1e6:.1f}M parameters, {config.sketches} sketches, "
        f"{config.revisions} revisions, "
        f"{config.steps} SFT steps -> {target}")
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        args = SFTConfig(
            output_dir=str(scratch / "sft"), max_steps=config.steps,
            per_device_train_batch_size=config.batch_size, learning_rate=config.learning_rate,
            lr_scheduler_type="cosine", warmup_steps=max(1, config.steps // 20),
            weight_decay=0.0, logging_steps=max(1, config.steps // 20), save_strategy="no",
            report_to=[], seed=config.seed, data_seed=config.seed, max_length=1024,
            use_cpu=True, dataloader_num_workers=0, disable_tqdm=True,
            # TRL's GPU defaults cost 20x on a CPU (bf16 autocast, recomputed activations)
            bf16=False, activation_checkpointing=False)
        trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows),
                             processing_class=tokenizer)
        result = trainer.train()
        losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
        model.save_pretrained(scratch / "model")
        tokenizer.save_pretrained(scratch / "model")
        record = {"config": {k: v for k, v in asdict(config).items() if k != "cache_dir"},
                  "key": key, "parameters": params, "sft_rows": len(rows),
                  "seconds": round(time.perf_counter() - started, 1),
                  "train_loss": result.training_loss, "losses": losses}
        write_json_atomic(scratch / "model" / "warm-start.json", record)
        if target.exists():
            shutil.rmtree(target)
        os.replace(scratch / "model", target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    log(f"tiny painter: warm start built in {record['seconds']} s, final loss "
        f"{losses[-1] if losses else float('nan'):.3f}")
    return target


def build(name: str, folder: str | os.PathLike[str], seed: int = 0) -> Path:
    """The registry's builder of the tiny painters: the warm start :func:`painter_config` gives
    ``name``, kept in :meth:`WarmStartConfig.folder` (under ``folder``: both are the model
    cache's ``tiny-painter/``; ``seed``: unused, the configuration's own is in its key)."""
    return warm_start(painter_config(name))
