"""The chapter "Reward components" runs with small parameters and writes its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rewards_support import pool

from watercolour import notebooks
from watercolour.pool.dataset import write_pool_folder

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "05_reward_components.md"


def test_the_chapter_declares_its_parameters():
    assert set(notebooks.notebook_parameters(CHAPTER)) == {
        "n_examples", "pool", "pool_note", "references", "seed", "consistency_pairs",
        "judge_base_url", "judge_model", "hps_url", "out_dir", "mode", "package"}


@pytest.mark.slow
@pytest.mark.browser
def test_the_chapter_scores_examples_under_three_mixes(tmp_path):
    rows = [{"id": p.id, "tier": p.tier, "png": p.png} for p in pool(3, 3).paintings]
    folder = write_pool_folder(rows, tmp_path / "pool")
    results = tmp_path / "rewards"
    params = {"n_examples": 1, "pool": str(folder), "consistency_pairs": 2,
              "out_dir": str(results)}
    executed = notebooks.run_notebook(CHAPTER, tmp_path / "executed", params, timeout=600)
    data = json.loads((results / "rewards.json").read_text())
    painted, cheat = data["examples"]
    assert painted["status"] == "ok" and 0.0 < painted["reward"] <= 1.0
    assert set(painted["mixes"]) == {"hps-only", "hps-led", "judge-led"}
    assert painted["mixes"]["judge-led"] == pytest.approx(painted["reward"])
    assert len(painted["votes"]) == 4 and all("candidate_first" in v for v in painted["votes"])
    assert cheat["status"] == "rejected" and cheat["reward"] == 0.0
    assert set(cheat["mixes"].values()) == {0.0}
    assert data["infrastructure_failure"]["reward"] is None
    assert data["infrastructure_failure"]["unavailable"]["part"] == "hps"
    assert data["consistency"]["order_agreement"] == 1.0
    assert data["judge"] == "pool-fitted"
    nb = json.loads(executed.read_text())
    images = [o for c in nb["cells"] for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert len(images) >= 4
