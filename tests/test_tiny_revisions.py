"""The tiny painter learns to revise: revision examples (a flawed sketch, the critique of its
render -> the repaired sketch), the warm start that trains on them, the tiny-revise recipe."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import pytest

from watercolour.env.critique import critique
from watercolour.env.server.environment import revision_prompt
from watercolour.gates import check
from watercolour.models.registry import TINY_PAINTER, TINY_REVISER
from watercolour.models.tiny import WarmStartConfig, compact_sketch, compact_sketches, warm_start
from watercolour.models.tiny.revisions import (
    GATE_MODE,
    critique_of,
    revision_pair,
    revision_pairs,
    revision_row,
)
from watercolour.models.tiny.tokenizer import PRE_SPLIT
from watercolour.models.tiny.warm_start import (
    REVISER_REVISIONS,
    painter_config,
    training_rows,
)
from watercolour.pool.procedural.plan import WEAK_VARIANTS
from watercolour.prompt import user_prompt

NOTE = "Paint covers 4% of the canvas (sparse: most of the paper is bare)."


def test_a_revision_row_asks_shows_the_flaw_and_its_critique_then_repairs_it():
    pair = revision_pair(7)
    row = revision_row(pair, NOTE)  # no browser
    assert [m["role"] for m in row["prompt"]] == ["user", "assistant", "user"]
    assert [m["role"] for m in row["completion"]] == ["assistant"]
    ask, flawed, revise = (m["content"] for m in row["prompt"])
    assert ask == user_prompt(pair.flawed.subject)
    assert flawed == pair.flawed.reply() and pair.flawed.variant in WEAK_VARIANTS
    assert revise == revision_prompt(NOTE) and NOTE in revise
    target = row["completion"][0]["content"]
    assert target == compact_sketch(pair.seed, variant="good").reply() != flawed
    assert pair.repaired.subject == pair.flawed.subject and pair.repaired.variant == "good"


def test_revision_pairs_cycle_the_flaws_over_their_own_seeds():
    pairs = revision_pairs(10)
    assert [p.flawed.variant for p in pairs] == [*WEAK_VARIANTS, *WEAK_VARIANTS]
    assert len({p.seed for p in pairs}) == 10
    plain = {s.code for s in compact_sketches(50)}
    assert not plain & {p.repaired.code for p in pairs}  # new good paintings, not the plain set


def _key_before_revisions(config: WarmStartConfig) -> str:
    """The key as it was computed before the ``revisions`` setting existed."""
    record = {k: v for k, v in asdict(config).items()
              if k not in ("cache_dir", "threads", "revisions")}
    data = [s.reply() for s in compact_sketches(config.sketches)]
    return hashlib.sha256(json.dumps([record, PRE_SPLIT, data]).encode()).hexdigest()[:16]


def test_no_revisions_keeps_the_cache_key_and_some_change_it():
    config = WarmStartConfig.from_env({}, sketches=40)
    assert config.revisions == 0 and config.key() == _key_before_revisions(config)
    revised = WarmStartConfig.from_env({"WATERCOLOUR_TINY_REVISIONS": "4"}, sketches=40)
    assert revised.revisions == 4 and revised.key() != config.key()
    assert WarmStartConfig.from_env({}, sketches=40, revisions=5).key() != revised.key()
    with pytest.raises(ValueError, match="WATERCOLOUR_TINY_REVISIONS"):
        WarmStartConfig.from_env({"WATERCOLOUR_TINY_REVISIONS": "-1"})


def test_the_revise_builtin_is_the_warm_start_with_revisions(monkeypatch):
    monkeypatch.delenv("WATERCOLOUR_TINY_REVISIONS", raising=False)
    assert painter_config(TINY_PAINTER).revisions == 0
    assert painter_config(TINY_REVISER).revisions == REVISER_REVISIONS
    monkeypatch.setenv("WATERCOLOUR_TINY_REVISIONS", "12")
    assert painter_config(TINY_REVISER).revisions == 12


@pytest.mark.browser
@pytest.mark.slow
def test_the_critique_is_the_environments_of_the_flawed_render(renderer):
    for pair in revision_pairs(2):
        text, gate = critique_of(pair.flawed, renderer, seed=pair.seed)
        assert gate["mode"] == GATE_MODE and gate["render"] is not None
        assert text == critique(gate) and "Paint covers" in text
        again = check(pair.flawed.reply(), renderer, mode=GATE_MODE, seed=pair.seed)
        assert critique(again.to_dict(include_sketch=False)) == text  # seeded: deterministic


@pytest.mark.browser
@pytest.mark.slow
def test_the_warm_start_with_revisions_trains_on_them(tmp_path):
    config = WarmStartConfig.from_env({}, cache_dir=str(tmp_path), sketches=40, revisions=4,
                                      steps=5, hidden=32, layers=1, heads=2, batch_size=4,
                                      vocab_size=600)
    folder = warm_start(config, log=lambda *_: None)
    record = json.loads((folder / "warm-start.json").read_text())
    assert record["sft_rows"] == 44 and record["config"]["revisions"] == 4
    cached = list((tmp_path / "tiny-painter" / "revisions").glob("*.json"))
    assert len(cached) == 1
    rows = training_rows(config, log=pytest.fail)  # the critiques now come from the cache
    revised = rows[40:]
    assert len(revised) == 4 and all(len(r["prompt"]) == 3 for r in revised)
    assert all(len(r["prompt"]) == 1 for r in rows[:40])
    notes = [c["critique"] for c in json.loads(cached[0].read_text())["critiques"]]
    assert [r["prompt"][2]["content"] for r in revised] == [revision_prompt(n) for n in notes]


def test_the_tiny_revise_recipe_dry_runs_without_building(tmp_path, monkeypatch, capsys):
    from watercolour.cli import main

    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path))
    assert main(["train", "--config", "tiny-revise", "--dry-run", "--json"]) in (0, None)
    shown = json.loads(capsys.readouterr().out)
    run = shown["config"]["run"]
    assert run["model_name_or_path"] == TINY_REVISER and run["turns"] == 2
    assert shown["reward"]["gate_mode"] == GATE_MODE
    assert not list(tmp_path.iterdir())  # nothing built, nothing rendered
