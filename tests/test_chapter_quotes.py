"""Chapter 06 quotes its committed results through glue: the figures come from the files, so
the prose follows the data, and every figure the text names is one a helper computes."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

from watercolour.book.chapters import revise, smoke
from watercolour.results import SFT, TINY

CHAPTER = Path(__file__).resolve().parents[1] / "notebooks" / "06_smoke_run.md"


def test_the_revise_figures_are_computed_from_the_run_and_follow_it():
    analysis = revise.read_analysis(TINY / "revise")
    curve = analysis["turns"]["curve"]
    figures = revise.quoted_figures(analysis)
    assert figures["revise-gain-last"] == f"{curve['revision_gain']['last']['mean']:+.2f}"
    assert figures["revise-gain-t-all"] == f"{curve['revision_gain']['all']['t']:.1f}"
    assert figures["revise-slope-t-last"] == f"{curve['by_turn']['reward_turn2']['slope']['t']:.1f}"
    changed = copy.deepcopy(analysis)
    changed["turns"]["curve"]["revision_gain"]["last"]["mean"] = -0.123
    changed["turns"]["rollouts"]["all"]["episodes"] = 12345
    changed["turns"]["rollouts"]["outcomes_by_turn"]["2"] = {"ok": 3}
    moved = revise.quoted_figures(changed)
    assert (moved["revise-gain-last"], moved["revise-episodes"]) == ("-0.12", "12,345")
    assert moved["revise-rejected-last"] == "0"  # none rejected: no count in the record


def test_the_warm_start_figures_are_computed_from_its_records(tmp_path):
    committed = smoke.warm_start_on_pool_figures()
    probe = json.loads((SFT / "smollm2-pool" / "eval.json").read_text())
    assert committed["sft-samples"] == str(probe["samples"])
    assert committed["sft-passed-after"] == str(probe["after"]["passed"])
    folder = tmp_path / "sft"
    shutil.copytree(SFT / "smollm2-pool", folder)
    probe["after"] |= {"passed": 5, "rejection_reasons": {"truncated": 27}}
    (folder / "eval.json").write_text(json.dumps(probe))
    (folder / "sft-2.json").unlink()  # one training run: its epochs alone
    run = json.loads((folder / "sft-1.json").read_text())
    figures = smoke.warm_start_on_pool_figures(folder)
    assert (figures["sft-passed-after"], figures["sft-blank-after"]) == ("5", "0")
    assert figures["sft-epochs"] == f"{run['config']['training']['num_train_epochs']:g}"


def test_the_compact_warm_start_figures_are_computed_from_its_records(tmp_path):
    committed = smoke.compact_warm_start_figures()
    probe = json.loads((SFT / "smollm2" / "eval.json").read_text())
    assert committed["compact-passed-after"] == str(probe["after"]["passed"])
    assert committed["compact-passed-before"] == str(probe["before"]["passed"])
    folder = tmp_path / "sft"
    shutil.copytree(SFT / "smollm2", folder)
    probe["after"] |= {"passed": 30, "pass_rate": 30 / 32,
                       "rejection_reasons": {"truncated": 1, "syntax_error": 1}}
    (folder / "eval.json").write_text(json.dumps(probe))
    run = json.loads((folder / "sft.json").read_text())
    run["loss"] = [{"step": 1, "loss": 1.6}, {"step": 2, "loss": 0.25}]
    (folder / "sft.json").write_text(json.dumps(run))
    figures = smoke.compact_warm_start_figures(folder)
    assert (figures["compact-passed-after"], figures["compact-pass-after"]) == ("30", "94%")
    assert figures["compact-rejected-after"] == "1 syntax error, 1 truncated"
    assert figures["compact-loss"] == "1.60 to 0.25"


def test_every_figure_the_chapter_quotes_is_glued_by_a_helper():
    text = CHAPTER.read_text(encoding="utf-8")
    quoted = set(re.findall(r"\{glue:text\}`((?:revise|sft|compact)-[a-z-]+)", text))
    helpers = set(revise.quoted_figures(revise.read_analysis(TINY / "revise"))) \
        | set(smoke.warm_start_on_pool_figures()) | set(smoke.compact_warm_start_figures())
    assert quoted and quoted <= helpers, sorted(quoted - helpers)
    assert "revise.glue_quoted(" in text and "smoke.glue_warm_start_on_pool(" in text
