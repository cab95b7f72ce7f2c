"""The pure parts of the drift and breakage benchmarks (their runs need a browser or a model)."""

from __future__ import annotations

import argparse

import pytest
from benchmark_support import load_benchmark

from watercolour.models.tiny.sketches import compact_sketches


def test_drift_windows_and_slope():
    drift = load_benchmark("render_drift")
    seconds = [1.0, 1.0, 2.0, 2.0, 3.0]
    assert drift.windows(seconds, 2) == [1.0, 2.0]  # the incomplete last window is left out
    assert drift.slope_per_100([1.0 + 0.01 * i for i in range(10)]) == pytest.approx(1.0)
    assert drift.slope_per_100([2.0] * 5) == 0.0


def test_breakage_reads_the_static_gate():
    breakage = load_benchmark("gate_breakage")
    code = compact_sketches(1)[0].code
    assert breakage.first_static_violation(f"```javascript\n{code}```") is None
    garbled = code.replace(";", ")];", 1)  # the tiny painter's typical break: a garbled copy
    assert breakage.first_static_violation(f"```javascript\n{garbled}```") == "syntax_error"
    cut = code[: len(code) // 2]
    assert breakage.first_static_violation(f"```javascript\n{cut}```") == "truncated"
    assert breakage.first_static_violation("I would rather not paint.") is not None


def test_breakage_sampling_flag():
    breakage = load_benchmark("gate_breakage")
    assert breakage.parse_sampling("0.8,0.95") == (0.8, 0.95)
    with pytest.raises(argparse.ArgumentTypeError, match="TEMPERATURE,TOP_P"):
        breakage.parse_sampling("0.8")
