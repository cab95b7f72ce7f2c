"""Tiny models that run the training program on a CPU, built here without a download (named
in :data:`watercolour.models.registry.MODELS`; the experiments run with them are in
:mod:`watercolour.train.tiny`).

- ``builtin:tiny-painter`` (:mod:`.warm_start`): the tiny painter, a ~4M-parameter Qwen3 with a
  tokenizer trained on compact sketches (:mod:`.sketches`, :mod:`.tokenizer`), warm-started by
  SFT and cached. A small model that proves the loop, not a painter to admire.
- ``builtin:tiny-painter-revise``: the same, its warm start also trained on revision examples
  (:mod:`.revisions`) for 2-turn episodes.
- ``builtin:tiny-qwen3`` (:mod:`.placeholder`): a random ~0.1M-parameter Qwen3 for plumbing
  tests (it mostly writes text the gate rejects).
"""

from watercolour.models.tiny.placeholder import build_tiny_qwen3, imprint, tiny_config
from watercolour.models.tiny.placeholder import build_tokenizer as build_placeholder_tokenizer
from watercolour.models.tiny.sketches import CompactSketch, compact_sketch, compact_sketches
from watercolour.models.tiny.warm_start import (
    WarmStartConfig,
    model_config,
    painter_config,
    warm_start,
)

__all__ = ["CompactSketch", "WarmStartConfig", "build_placeholder_tokenizer", "build_tiny_qwen3",
           "compact_sketch", "compact_sketches", "imprint", "model_config", "painter_config",
           "tiny_config", "warm_start"]
