"""What a run writes, piece by piece (no browser): the rollout log (crash-safe, resumable,
a dataset at the end), metrics.csv rows from TRL's logs, the upload folder's repository id."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from watercolour.rewards import Evaluation
from watercolour.train.hub import hub_repo_id
from watercolour.train.metrics import COLUMNS, MetricsCSV, row_from_logs
from watercolour.train.rollouts import RolloutLog


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 120, 90)).save(buffer, format="PNG")
    return buffer.getvalue()


def _ok(reward: float) -> Evaluation:
    breakdown = {"reward": reward, "status": "ok", "seed": 5, "subject": "a peach hibiscus",
                 "components": {c: {"raw": reward} for c in ("gate", "length", "judge", "hps")},
                 "gate": {"violations": [], "paint_fraction": 0.2, "n_shapes": 3},
                 "references": {"ids": ["love-01", "okay-02"], "tiers": ["love", "okay"]}}
    return Evaluation.from_dict(breakdown, png=_png())


def _batch(log: RolloutLog, step: int) -> None:
    prompt = [{"role": "user", "content": "Paint a peach hibiscus in watercolour."}]
    rejected = Evaluation.from_dict({"reward": 0.0, "status": "rejected", "seed": 5,
                                     "gate": {"violations": ["no_sketch"]}})
    lost = Evaluation.from_dict({"reward": None, "status": "unavailable", "seed": 5,
                                 "unavailable": {"part": "render", "reason": "died"}})
    log.append([prompt] * 3, ["```javascript\nbrush.circle(0, 0, 9)\n```", "hello", "x"],
               [_ok(0.5), rejected, lost], step)


def test_rollouts_are_appended_resumed_and_saved_as_a_dataset(tmp_path):
    log = RolloutLog(tmp_path)
    for step in range(3):
        _batch(log, step)
    records = log.records()
    assert len(records) == 9
    first = records[0]
    assert (first["step"], first["group"], first["index"]) == (0, 0, 0)
    assert first["sketch"].startswith("brush.circle") and first["references"] == ["love-01",
                                                                                 "okay-02"]
    assert (tmp_path / "rollouts" / first["png"]).is_file()
    assert records[1]["violations"] == ["no_sketch"] and records[1]["reward"] == 0.0
    assert records[2]["reward"] is None and records[2]["unavailable"] == "died"
    # a crash mid-write leaves a torn line: it is dropped, and resuming at step 1 cuts
    # steps 1 and 2 (they are generated again), PNGs included
    with open(log.path, "ab") as handle:
        handle.write(b'{"step": 2, "gro')
    assert log.truncate(1) == 6
    assert [r["step"] for r in log.records()] == [0, 0, 0]
    assert not (tmp_path / "rollouts/png/step-00001").exists()
    _batch(log, 1)
    keys = [(r["step"], r["index"]) for r in log.records()]
    assert len(keys) == len(set(keys)) == 6
    dataset = log.to_dataset()
    assert len(dataset) == 6 and dataset[0]["image"].size == (8, 8)
    assert dataset[1]["image"] is None and dataset[2]["reward"] is None
    assert json.loads(dataset[0]["breakdown"])["seed"] == 5
    assert dataset[0]["hps_score"] == 0.5


def test_metrics_rows_use_trls_names_and_split_the_step():
    logs = {"reward": 0.4, "completions/clipped_ratio": 0.25, "step_time": 10.0,
            "time/generation_s": 2.0, "time/rewards_s": 7.0, "time/render_s": 6.5,
            "hps_mean": float("nan"), "none_count": 1.0, "rewards/hps/mean": 0.3, "kl": 0.01}
    row = row_from_logs(4, logs)
    assert row["step"] == 4 and row["clipped_ratio"] == 0.25 and row["kl"] == 0.01
    assert row["generation_s"] == 2.0 and row["render_s"] == 6.5
    assert row["scoring_s"] == pytest.approx(0.5) and row["update_s"] == pytest.approx(1.0)
    assert row["hps_mean"] is None and row["rewards/hps/mean"] == 0.3
    assert tuple(row) == COLUMNS


def test_metrics_csv_truncates_for_resume(tmp_path):
    class State:
        is_world_process_zero = True

        def __init__(self, step):
            self.global_step = step

    csv_log = MetricsCSV(tmp_path / "metrics.csv")
    for step in (1, 2, 3):
        csv_log.on_log(None, State(step), None, {"reward": step / 10, "loss": 0.0})
    csv_log.on_log(None, State(3), None, {"train_runtime": 5.0})  # the summary: no row
    assert [r["step"] for r in csv_log.rows()] == ["0", "1", "2"]
    assert csv_log.truncate(1) == 2
    assert [r["step"] for r in csv_log.rows()] == ["0"]


def test_the_hub_repository_comes_from_out_or_hub_model_id():
    assert hub_repo_id("me/watercolour-grpo", None) == "me/watercolour-grpo"
    assert hub_repo_id("runs/x/y/z", "me/other") == "me/other"
    with pytest.raises(ValueError, match="owner/name"):
        hub_repo_id("runs/tiny/full", None)
