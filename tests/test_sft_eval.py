"""python -m watercolour.train.sft_eval: one policy before and after, same seeds, one file."""

from __future__ import annotations

import json

import pytest
from PIL import Image


@pytest.mark.slow
def test_before_and_after_on_the_same_seeds_in_one_file(tmp_path, monkeypatch, capsys):
    """The tiny random Qwen3 on both sides writes text the gate rejects without a render: the
    whole path, no browser; the same policy on both sides gives the same rows."""
    from watercolour.train.sft_eval import main

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    out = tmp_path / "sft"
    assert main(["--before", "builtin:tiny-qwen3", "--after", "builtin:tiny-qwen3",
                 "--out", str(out), "--samples", "3", "--batch", "2",
                 "--max-new-tokens", "12", "--mix", "hps-only"]) == 0
    record = json.loads((out / "eval.json").read_text())
    assert record["samples"] == 3 and record["sampling"]["temperature"] == 0.7
    before, after = record["before"], record["after"]
    assert before["rows"] == after["rows"] and len(before["rows"]) == 3
    assert all("reply" not in row and row["reply_chars"] >= 0 for row in before["rows"])
    assert before["passed"] + sum(before["rejection_reasons"].values()) + \
        before["unavailable"] == 3
    for side in ("before", "after"):
        assert Image.open(out / f"{side}.png").size == (3 * 128, 128)
    assert "before: " in capsys.readouterr().out


def test_a_side_already_recorded_with_the_same_settings_is_kept(tmp_path, monkeypatch):
    """--before alone first (while the warm start trains), then both: the before side is not
    sampled again; a changed sampling or mix samples every side afresh."""
    from types import SimpleNamespace

    import watercolour.train.evaluate as evaluate_module
    from watercolour.train.evaluate import Sampling
    from watercolour.train.sft_eval import compare

    calls: list[str] = []

    def fake_evaluate(policy, rewarder, sampling, group, sheet):
        calls.append(policy)
        Image.new("RGB", (8, 8)).save(sheet)
        return {"policy": policy, "mix": rewarder.config.mix.name,
                "gate_mode": rewarder.config.gate_mode, "passed": 1,
                "rows": [{"reply": "x" * len(policy), "reward": 0.5}]}

    monkeypatch.setattr(evaluate_module, "evaluate", fake_evaluate)
    rewarder = lambda mix: SimpleNamespace(config=SimpleNamespace(  # noqa: E731
        mix=SimpleNamespace(name=mix), gate_mode="allowlist"))
    sampling = Sampling(samples=1)
    compare({"before": "base"}, sampling, rewarder("judge-led"), tmp_path)
    record = compare({"before": "base", "after": "tuned"}, sampling, rewarder("judge-led"),
                     tmp_path)
    assert calls == ["base", "tuned"]
    assert record["before"]["rows"] == [{"reward": 0.5, "reply_chars": 4}]
    assert json.loads((tmp_path / "eval.json").read_text())["after"]["policy"] == "tuned"
    compare({"before": "base", "after": "tuned"}, sampling, rewarder("hps-only"), tmp_path)
    compare({"before": "base", "after": "tuned"}, Sampling(samples=2), rewarder("hps-only"),
            tmp_path)
    assert calls == ["base", "tuned"] * 3
