"""watercolour compare: one policy before and after, same seeds, one file, the paired gain."""

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

    def fake_evaluate(policy, rewarder, sampling, group, sheet, love=None):
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


def test_the_paired_gain_and_the_love_references(tmp_path, monkeypatch, capsys):
    """After minus before, sample by sample, with its t; the love references reach the
    evaluation, and another count of them samples both sides afresh."""
    from types import SimpleNamespace

    import watercolour.train.evaluate as evaluate_module
    from watercolour.train.evaluate import Sampling
    from watercolour.train.sft_eval import compare, headline

    rewards = {"base": [0.2, 0.0, 0.4, 0.3], "tuned": [0.5, 0.4, 0.6, 0.5]}
    loves: list[int | None] = []

    def fake_evaluate(policy, rewarder, sampling, group, sheet, love=None):
        loves.append(love)
        Image.new("RGB", (8, 8)).save(sheet)
        return {"policy": policy, "mix": "judge-led", "gate_mode": "allowlist",
                "rows": [{"reply": "x", "reward": r} for r in rewards[policy]]}

    monkeypatch.setattr(evaluate_module, "evaluate", fake_evaluate)
    rewarder = SimpleNamespace(config=SimpleNamespace(mix=SimpleNamespace(name="judge-led"),
                                                      gate_mode="allowlist"))
    policies = {"before": "base", "after": "tuned"}
    alone = compare({"before": "base"}, Sampling(samples=4), rewarder, tmp_path, love=4)
    assert alone["paired"] is None and alone["love_references"] == 4
    record = compare(policies, Sampling(samples=4), rewarder, tmp_path, love=4)
    assert loves == [4, 4]  # the before side was kept
    gain = record["paired"]
    # differences 0.3, 0.4, 0.2, 0.2: mean 0.275, sd 0.0957, t 5.745
    assert gain["n"] == 4 and gain["mean"] == pytest.approx(0.275)
    assert gain["t"] == pytest.approx(5.745, abs=0.01)
    assert json.loads((tmp_path / "eval.json").read_text())["paired"] == gain
    assert "after - before, sample by sample: mean 0.275" in headline(record)
    compare(policies, Sampling(samples=4), rewarder, tmp_path, love=2)
    assert loves == [4, 4, 2, 2]


def test_a_love_count_beyond_the_references_is_refused_before_loading(tmp_path, capsys):
    from watercolour.cli import main

    assert main(["compare", "--before", "builtin:tiny-qwen3", "--out", str(tmp_path),
                 "--love-references", "9", "--mix", "hps-only"]) == 2
    assert "--love-references must be from 0 to 4" in capsys.readouterr().err
    assert not (tmp_path / "eval.json").exists()


def test_another_comparisons_before_side_is_reused_only_when_sampled_the_same_way(tmp_path,
                                                                                   monkeypatch):
    """--keep-before FOLDER: a second trained policy is compared with the first comparison's
    warm start samples (its side and before.png), not sampled again; a folder sampled another
    way, or holding no before side, is refused by name before anything is sampled."""
    from types import SimpleNamespace

    import watercolour.train.evaluate as evaluate_module
    from watercolour.errors import InputError
    from watercolour.train.evaluate import Sampling
    from watercolour.train.sft_eval import compare

    calls: list[str] = []

    def fake_evaluate(policy, rewarder, sampling, group, sheet, love=None):
        calls.append(policy)
        Image.new("RGB", (8, 8), "red" if policy == "base" else "blue").save(sheet)
        return {"policy": policy, "mix": "judge-led", "gate_mode": "allowlist",
                "rows": [{"reply": "x", "reward": 0.1 if policy == "base" else 0.3}] * 2}

    monkeypatch.setattr(evaluate_module, "evaluate", fake_evaluate)
    rewarder = SimpleNamespace(config=SimpleNamespace(mix=SimpleNamespace(name="judge-led"),
                                                      gate_mode="allowlist"))
    first, second = tmp_path / "first", tmp_path / "second"
    compare({"before": "base", "after": "tuned"}, Sampling(samples=2), rewarder, first, love=4)
    record = compare({"before": "base", "after": "longer"}, Sampling(samples=2), rewarder,
                     second, love=4, keep_before=first)
    assert calls == ["base", "tuned", "longer"]
    assert record["before"] == json.loads((first / "eval.json").read_text())["before"]
    assert (second / "before.png").read_bytes() == (first / "before.png").read_bytes()
    assert record["paired"]["mean"] == pytest.approx(0.2)
    with pytest.raises(InputError, match=r"love_references differ"):
        compare({"before": "base"}, Sampling(samples=2), rewarder, tmp_path / "third", love=2,
                keep_before=first)
    with pytest.raises(InputError, match=r"policy differ"):
        compare({"before": "other"}, Sampling(samples=2), rewarder, tmp_path / "third", love=4,
                keep_before=first)
    with pytest.raises(InputError, match=r"needs eval.json and before.png"):
        compare({"before": "base"}, Sampling(samples=2), rewarder, tmp_path / "third", love=4,
                keep_before=tmp_path / "missing")
    assert calls == ["base", "tuned", "longer"] and not (tmp_path / "third").exists()


def test_keep_before_from_a_folder_sampled_otherwise_is_refused_before_loading(tmp_path,
                                                                               capsys):
    from watercolour.cli import main

    source = tmp_path / "first"
    source.mkdir()
    (source / "eval.json").write_text(json.dumps({"samples": 5, "before": {"policy": "x"}}))
    Image.new("RGB", (8, 8)).save(source / "before.png")
    assert main(["compare", "--before", "builtin:tiny-qwen3", "--out", str(tmp_path / "out"),
                 "--keep-before", str(source), "--mix", "hps-only"]) == 2
    err = capsys.readouterr().err
    assert "--keep-before" in err and "samples" in err and "policy" in err
    assert not (tmp_path / "out").exists()
