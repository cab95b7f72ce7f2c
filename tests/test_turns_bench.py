"""``benchmarks/turns_bench.py`` compares like with like: its two sides run the same policy,
sampling, mix and rollouts a step, and differ in the turns of an episode alone."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_the_two_sides_differ_only_in_turns(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import turns_bench

    from watercolour.train.config import parse_args

    parsed = {name: parse_args(["--config", config, *extra])
              for name, (config, *extra) in turns_bench.RUNS.items()}
    (run1, train1), (run2, train2) = parsed["single-turn"], parsed["two-turn"]
    assert run1.model_name_or_path == run2.model_name_or_path == turns_bench.POLICY
    assert (run1.turns, run2.turns) == (1, 2)
    for name in ("temperature", "top_p", "max_completion_length", "num_generations",
                 "per_device_train_batch_size", "learning_rate", "beta"):
        assert getattr(train1, name) == getattr(train2, name), name
    for name in ("mix", "gate_mode", "prompt", "subject"):
        assert getattr(run1, name) == getattr(run2, name), name
    sys.modules.pop("turns_bench", None)


def test_steady_means_leave_out_the_first_step(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import turns_bench

    rows = [{"step_time": "100", "generation_s": "90"},
            {"step_time": "30", "generation_s": "20"},
            {"step_time": "40", "generation_s": ""}]
    means = turns_bench.steady_means(rows)
    assert means["step_time"] == 35.0 and means["generation_s"] == 20.0
    assert "update_s" not in means
