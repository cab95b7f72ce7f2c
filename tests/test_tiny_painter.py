"""The tiny painter: compact sketches, its tokenizer, the cached warm start, its evaluation
and the publication of a run (a 2-step GRPO run of the shipped recipe, on a CPU)."""

from __future__ import annotations

import json
import os
import statistics

import pytest

from watercolour.gates import check
from watercolour.models.tiny import WarmStartConfig, compact_sketch, compact_sketches, warm_start
from watercolour.models.tiny.sketches import SUBJECT_KEYS, VARIANTS
from watercolour.models.tiny.tokenizer import build_tokenizer
from watercolour.pool.subjects import SUBJECTS
from watercolour.render.brush import ALLOWLIST

SMALL = {"sketches": 40, "hidden": 32, "layers": 1, "heads": 2, "steps": 3, "batch_size": 4,
         "vocab_size": 600}


def test_compact_sketches_are_deterministic_distinct_and_cover_every_subject():
    sketches = compact_sketches(300)
    assert [s.code for s in sketches[:5]] == [s.code for s in compact_sketches(5)]
    assert len({s.code for s in sketches}) == 300
    named = {key for key in SUBJECT_KEYS
             if any(SUBJECTS[key].name in s.subject for s in sketches)}
    assert named == set(SUBJECT_KEYS)
    assert {s.variant for s in sketches} == set(VARIANTS)
    assert sum(s.variant == "good" for s in sketches) == 150


def test_compact_sketches_call_only_allowlisted_brush_methods():
    import re

    for s in compact_sketches(200):
        called = set(re.findall(r"brush\.(\w+)\(", s.code))
        assert called <= set(ALLOWLIST), called - set(ALLOWLIST)


@pytest.mark.parametrize("subject", ["hibiscus", "sunflower", "cherry", "tulip"])
def test_a_compact_sketch_passes_the_allowlist_gate_with_paint(renderer, subject):
    verdict = check(compact_sketch(3, subject, "good").reply(), renderer, mode="allowlist")
    assert verdict.passed, verdict.violations
    assert verdict.paint_fraction > 0.05


def test_bad_subject_or_variant_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="choose from"):
        compact_sketch(0, "orchid")
    with pytest.raises(ValueError, match="choose from"):
        compact_sketch(0, "hibiscus", "glorious")


def test_tokenizer_keeps_colours_and_numbers_whole_and_round_trips():
    sketches = compact_sketches(400)
    tok = build_tokenizer([s.reply() for s in sketches], vocab_size=2048)
    sample = sketches[7].reply()
    ids = tok(sample)["input_ids"]
    assert tok.decode(ids) == sample
    pieces = [tok.decode([i]) for i in ids]
    colours = [p for p in pieces if "#" in p]
    assert colours and all(len(p) == 9 and p.startswith("'#") for p in colours)
    lengths = [len(tok(s.reply())["input_ids"]) for s in sketches[:100]]
    assert statistics.median(lengths) < 300


def test_the_cache_key_follows_what_decides_the_model_not_where_it_is_kept(tmp_path):
    a = WarmStartConfig.from_env({}, cache_dir=str(tmp_path / "a"), **SMALL)
    b = WarmStartConfig.from_env({}, cache_dir=str(tmp_path / "b"), **SMALL)
    c = WarmStartConfig.from_env({}, cache_dir=str(tmp_path / "a"), **{**SMALL, "steps": 4})
    assert a.key() == b.key() != c.key()
    assert a.folder().parent == tmp_path / "a" / "tiny-painter"


def test_bad_settings_are_refused_naming_the_variable():
    with pytest.raises(ValueError, match="WATERCOLOUR_TINY_SFT_STEPS"):
        WarmStartConfig.from_env({"WATERCOLOUR_TINY_SFT_STEPS": "0"})


def test_the_warm_start_is_built_once_and_then_read_from_the_cache(tmp_path):
    config = WarmStartConfig.from_env({}, cache_dir=str(tmp_path), **SMALL)
    folder = warm_start(config, log=lambda *_: None)
    record = json.loads((folder / "warm-start.json").read_text())
    assert record["key"] == config.key() and len(record["losses"]) >= 1
    stamp = os.stat(folder / "warm-start.json").st_mtime_ns
    messages: list[str] = []
    assert warm_start(config, log=messages.append) == folder
    assert messages == [] and os.stat(folder / "warm-start.json").st_mtime_ns == stamp
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".build-")]


def test_an_unfinished_build_is_not_taken_for_a_cached_one(tmp_path):
    config = WarmStartConfig.from_env({}, cache_dir=str(tmp_path), **SMALL)
    config.folder().mkdir(parents=True)
    (config.folder() / "config.json").write_text("{}")  # a crash left this, no record
    folder = warm_start(config, log=lambda *_: None)
    assert (folder / "warm-start.json").is_file() and (folder / "model.safetensors").is_file()


@pytest.fixture(scope="module")
def two_step_run(tmp_path_factory, renderer):
    """The shipped tiny-cpu recipe for 2 GRPO steps, from a short warm start (hps-only: no
    pool needed), sharing the session's browser."""
    from watercolour.train.config import parse_args
    from watercolour.train.trainer import train

    root = tmp_path_factory.mktemp("tiny-run")
    env = {"WATERCOLOUR_CACHE": str(root / "cache"), "WATERCOLOUR_TINY_SFT_STEPS": "30",
           "WATERCOLOUR_TINY_SKETCHES": "400"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        run, training = parse_args(["--config", "tiny-cpu", "--mix", "hps-only",
                                    "--max-steps", "2", "--n-episodes", "2",
                                    "--max-completion-length", "300",
                                    "--out", str(root / "run")])
        summary = train(run, training, renderer=renderer, log=lambda *_: None)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return root, summary, training.generation_batch_size


@pytest.mark.slow
def test_the_recipe_trains_two_steps_from_the_cached_warm_start(two_step_run):
    root, summary, per_step = two_step_run
    assert per_step == 16  # the recipe's 2 prompts x 8 generations a step
    assert summary["global_step"] == 2 and summary["rollouts"] == 2 * per_step
    record = json.loads((root / "run" / "run.json").read_text())
    assert record["config"]["run"]["model_name_or_path"] == "builtin:tiny-painter"
    assert record["reward"]["gate_mode"] == "allowlist"
    assert list((root / "cache" / "tiny-painter").iterdir())  # the warm start was cached


@pytest.mark.slow
def test_a_run_is_published_for_the_book(two_step_run, tmp_path):
    from PIL import Image

    from watercolour.train.tiny.runs import publish

    root, _, per_step = two_step_run
    publish(root / "run", tmp_path / "pub")
    names = {p.name for p in (tmp_path / "pub").iterdir()}
    assert {"metrics.csv", "run.json", "analysis.json", "rollouts-summary.json",
            "contact-sheet.png"} <= names
    summary = json.loads((tmp_path / "pub" / "rollouts-summary.json").read_text())
    assert summary["rollouts"] == 2 * per_step
    assert sum(b["rollouts"] for b in summary["by_third"].values()) == 2 * per_step
    thirds = summary["by_third"]
    assert all(t["ok"] + t["rejected"] + t["unavailable"] == t["rollouts"]
               for t in thirds.values())
    sheet = Image.open(tmp_path / "pub" / "contact-sheet.png")
    assert sheet.size[1] == 3 * 160
    analysis = json.loads((tmp_path / "pub" / "analysis.json").read_text())
    assert "reward" in analysis["thirds"]


@pytest.mark.slow
def test_evaluation_counts_every_sample_once(two_step_run, renderer):
    from watercolour.rewards import Mix, RewardConfig, Rewarder
    from watercolour.train.tiny.evaluate import evaluate_model

    root, _, _ = two_step_run
    rewarder = Rewarder(RewardConfig.from_env({}, mix=Mix.preset("hps-only"),
                                              gate_mode="allowlist"), renderer=renderer)
    result = evaluate_model(root / "run" / "final", rewarder, n=8, seed=0)
    assert result["samples"] == 8 and len(result["rows"]) == 8
    assert result["passed"] + sum(result["rejection_reasons"].values()) + \
        result["unavailable"] == 8
    again = evaluate_model(root / "run" / "final", rewarder, n=8, seed=0)
    assert [r["status"] for r in again["rows"]] == [r["status"] for r in result["rows"]]


@pytest.mark.slow
def test_sampling_honours_top_p(two_step_run):
    from watercolour.train.tiny.evaluate import sample_replies

    model = two_step_run[0] / "run" / "final"
    greedy = [sample_replies(model, n=2, seed=seed, max_new_tokens=40, top_p=1e-6, batch=2)
              for seed in (0, 1)]
    assert greedy[0] == greedy[1]  # only the likeliest token survives: the seed cannot matter
    assert greedy[0][0] == greedy[0][1]
    full = sample_replies(model, n=4, seed=0, max_new_tokens=40, top_p=1.0, batch=4)
    assert len(set(full)) > 1


def test_evaluation_samples_as_the_named_recipe_or_as_told():
    from watercolour.errors import InputError
    from watercolour.train.config import parse_args
    from watercolour.train.tiny.evaluate import sampling

    _, training = parse_args(["--config", "tiny-cpu"])
    assert sampling("tiny-cpu") == (training.temperature, training.top_p) != (1.0, 1.0)
    assert sampling(None) == (1.0, 1.0)
    assert sampling(None, temperature=0.7) == (0.7, 1.0)
    with pytest.raises(InputError, match="not both"):
        sampling("tiny-cpu", top_p=0.5)
