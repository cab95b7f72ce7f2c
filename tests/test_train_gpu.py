"""GPU checks (skipped without CUDA): one GRPO step of Qwen3.5-4B's architecture (random bf16
weights, LoRA all-linear, gradient checkpointing, a non-rendering stand-in reward) and the
peak memory of a 35B-A3B forward + backward at 8,192 tokens on one GPU."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu, pytest.mark.slow,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]
BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def test_4b_step_and_35b_peak_memory(tmp_path):
    sys.path.insert(0, str(BENCH))
    try:
        import train_gpu_check
    finally:
        sys.path.pop(0)
    assert train_gpu_check.main(["--completion-tokens", "256", "--out", str(tmp_path)]) == 0
    data = json.loads(next(tmp_path.glob("train-gpu-*.json")).read_text())
    step = data["grpo_step_4b"]
    assert step["step_s"] > 0 and step["generation_s"] > 0 and "stand-in" in step["reward"]
    peak = data["peak_35b"]
    assert peak["trainable_params"] == 22_477_440
    assert peak["peak_gib"] < data["gpu_gib"]
