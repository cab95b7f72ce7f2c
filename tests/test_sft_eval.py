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
