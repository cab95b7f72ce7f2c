"""watercolour evaluate: the before/after probe of any policy (watercolour.train.evaluate)."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image


def test_summary_counts_reasons_and_spreads_rewards():
    from watercolour.train.evaluate import summarise

    rows = [
        {"status": "ok", "reward": 0.6, "violations": []},
        {"status": "ok", "reward": 0.4, "violations": []},
        {"status": "rejected", "reward": 0.0, "violations": ["no_sketch"]},
        {"status": "rejected", "reward": 0.0,
         "violations": ["dom_access", "unknown_brush_method: brush.paint"]},
        {"status": "rejected", "reward": 0.0, "violations": ["unknown_brush_method"]},
        {"status": "unavailable", "reward": None, "violations": []},
    ]
    s = summarise(rows)
    assert s["passed"] == 2 and s["pass_rate"] == round(2 / 6, 4) and s["unavailable"] == 1
    # the first violation of each rejection; all of them, once per rollout
    assert s["rejection_reasons"] == {"no_sketch": 1, "dom_access": 1,
                                      "unknown_brush_method": 1}
    assert s["violations"]["unknown_brush_method"] == 2
    assert s["reward"] == {"mean": 0.2, "std": pytest.approx(0.2529, abs=1e-4), "min": 0.0,
                           "max": 0.6}
    assert s["mean_reward"] == 0.2 and s["mean_reward_of_passed"] == 0.5
    empty = summarise([{"status": "unavailable", "reward": None, "violations": []}])
    assert empty["reward"]["mean"] is None and empty["mean_reward"] is None


def test_contact_sheet_has_a_tile_per_sample_in_order():
    from watercolour.train.evaluate import contact_sheet

    red = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 0, 0)).save(red, format="PNG")
    rows = [{"status": "ok", "reward": 0.5, "violations": []},
            {"status": "rejected", "reward": 0.0, "violations": ["no_sketch"]},
            {"status": "unavailable", "reward": None, "violations": []}]
    sheet = Image.open(io.BytesIO(contact_sheet(rows, [red.getvalue(), None, None],
                                                columns=2, size=100)))
    assert sheet.size == (200, 200)
    assert sheet.getpixel((90, 90)) == (200, 0, 0)       # the render, resized
    assert sheet.getpixel((190, 90)) == (224, 224, 224)  # a rejection without one: grey
    assert sheet.getpixel((150, 150)) == (255, 255, 255)  # no fourth sample


def test_sampling_is_checked_and_builds_the_prompt():
    from watercolour.errors import InputError
    from watercolour.prompt import messages, user_prompt
    from watercolour.train.evaluate import Sampling

    assert Sampling(subject="a lotus").chat() == messages("a lotus")
    assert Sampling(prompt="short").chat() == [{"role": "user", "content": user_prompt()}]
    for bad in ({"samples": 0}, {"top_p": 0.0}, {"temperature": -1}, {"prompt": "long"}):
        with pytest.raises(InputError):
            Sampling(**bad)


def test_policies_resolve_to_folders_adapters_and_hub_ids(tmp_path):
    from watercolour.errors import InputError
    from watercolour.models.registry import Policy, resolve_policy

    assert resolve_policy("HuggingFaceTB/SmolLM2-135M-Instruct") == Policy(
        "HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    assert resolve_policy(str(model)) == Policy(str(model), str(model))
    adapter = tmp_path / "final"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(
        json.dumps({"base_model_name_or_path": str(model)}))
    assert resolve_policy(str(adapter)) == Policy(str(adapter), str(model), str(adapter))
    with pytest.raises(InputError, match="neither a model folder"):
        resolve_policy(str(tmp_path))
    with pytest.raises(InputError, match="no builtin model"):
        resolve_policy("builtin:no-such-model")


def test_without_a_pool_the_judge_mix_falls_back_to_hps_only(tmp_path, monkeypatch):
    from watercolour.train.evaluate import reward_config

    monkeypatch.chdir(tmp_path)  # no runs/pool here
    for name in ("WATERCOLOUR_POOL", "WATERCOLOUR_JUDGE_WEIGHT", "WATERCOLOUR_HPS_WEIGHT"):
        monkeypatch.delenv(name, raising=False)
    config, note = reward_config()
    assert config.mix.name == "hps-only" and "no pool" in note
    config, note = reward_config("judge-led")  # asked for: kept (the rewarder says why not)
    assert config.mix.name == "judge-led" and note is None
    config, note = reward_config(gate_mode="allowlist")
    assert config.gate_mode == "allowlist"


def test_flags_override_the_recipe_which_overrides_the_defaults():
    from watercolour.cli import build_parser
    from watercolour.cli.evaluate import settings_from
    from watercolour.train.config import parse_args

    parser = build_parser()
    sampling, reward = settings_from(parser.parse_args(["evaluate", "builtin:tiny-painter"]))
    assert (sampling.samples, sampling.temperature, sampling.top_p, sampling.prompt,
            sampling.max_new_tokens) == (8, 1.0, 1.0, "full", 512)
    assert reward == {"mix": None, "gate_mode": None}
    run, training = parse_args(["--config", "tiny-cpu"])
    sampling, reward = settings_from(parser.parse_args(
        ["evaluate", "builtin:tiny-painter", "--recipe", "tiny-cpu", "--top-p", "0.5"]))
    assert sampling.temperature == training.temperature and sampling.top_p == 0.5
    assert sampling.prompt == "short" and sampling.max_new_tokens == \
        training.max_completion_length
    assert reward == {"mix": run.mix, "gate_mode": "allowlist"}


@pytest.mark.slow
def test_evaluate_verb_is_reproducible_and_writes_its_files(tmp_path, capsys, monkeypatch):
    """The tiny random Qwen3 (built in a second) writes text the gate rejects without a
    render: the verb's whole path, no browser; the same seeds give the same rows."""
    from watercolour.cli import main

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    runs = []
    for i in range(2):
        out, sheet = tmp_path / f"eval{i}.json", tmp_path / f"sheet{i}.png"
        code = main(["evaluate", "builtin:tiny-qwen3", "--samples", "3", "--batch", "2",
                     "--max-new-tokens", "12", "--mix", "hps-only", "--json",
                     "--out", str(out), "--sheet", str(sheet)])
        assert code == 0
        printed = json.loads(capsys.readouterr().out)
        assert "rows" not in printed and printed["samples"] == 3
        assert printed["passed"] + sum(printed["rejection_reasons"].values()) + \
            printed["unavailable"] == 3
        assert printed["mix"] == "hps-only" and printed["prompt"] == "full"
        assert Image.open(sheet).size == (3 * 128, 128)
        runs.append(json.loads(out.read_text()))
    assert len(runs[0]["rows"]) == 3
    assert [r["reply"] for r in runs[0]["rows"]] == [r["reply"] for r in runs[1]["rows"]]


def test_scoring_draws_each_groups_references_with_the_love_share_asked():
    """--love-references reaches every group's draw (None: the rewarder's default half)."""
    from types import SimpleNamespace

    from watercolour.train.evaluate import score_replies

    asked: list[tuple[int, int | None]] = []

    class Recording:
        def evaluate_group(self, chunk, subject, seed, love=None):
            asked.append((seed, love))
            return [SimpleNamespace(status="ok", reward=0.5, verdict=None, png=None)
                    for _ in chunk]

    rows, _ = score_replies(["a"] * 5, Recording(), "a lotus", seed=3, group=2, love=4)
    assert len(rows) == 5 and asked == [(3, 4), (4, 4), (5, 4)]
    asked.clear()
    score_replies(["a"] * 2, Recording(), "a lotus", seed=0, group=2)
    assert asked == [(0, None)]
