"""Two GRPO steps end to end on a CPU: a tiny Qwen3 (built and imprinted here, no download),
rewards in process with real rendering in headless Chromium, and everything a run leaves in
--out: metrics.csv, every rollout (JSONL + PNG, then a dataset), run.json, checkpoints,
--resume (nothing lost or duplicated), the upload folder, trackio; and a browser that dies
mid-step (None rewards, none_count, the run goes on)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest
import torch
from train_support import imprinted_model, small_run

from watercolour.rewards.rubric import NAMES
from watercolour.train.config import parse_args
from watercolour.train.metrics import COLUMNS
from watercolour.train.trainer import train

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    torch.set_num_threads(1)
    return imprinted_model(tmp_path_factory.mktemp("model") / "tiny")


def _metrics(out: Path) -> list[dict[str, str]]:
    with open(out / "metrics.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def _records(out: Path) -> list[dict]:
    lines = (out / "rollouts/rollouts.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_two_steps_in_process_leave_every_artifact(tiny_model, renderer, tmp_path):
    project = f"watercolour-test-{uuid.uuid4().hex[:8]}"
    out = tmp_path / "run"
    run, training = parse_args(small_run(tiny_model, out, "--report-to", "trackio",
                                         "--project", project))
    summary = train(run, training, renderer=renderer)
    assert summary["global_step"] == 2 and summary["source_failures"] == 0

    # metrics.csv: one row a step, TRL's names and ours
    rows = _metrics(out)
    assert [r["step"] for r in rows] == ["0", "1"]
    assert tuple(rows[0]) == COLUMNS
    records = _records(out)
    for row in rows:
        step = int(row["step"])
        scored = [r["reward"] for r in records if r["step"] == step and r["reward"] is not None]
        assert abs(float(row["reward"]) - sum(scored) / len(scored)) < 1e-4
        for column in ("reward_std", "entropy", "loss", "learning_rate", "step_time",
                       "completions/mean_length", "clipped_ratio", "hps_mean", "length_mean",
                       "gate_pass_rate", "none_count", "generation_s", "rewards_s",
                       "update_s"):
            assert row[column] != "", column
        assert row["judge_mean"] == ""  # hps-only: the judge is not asked
        assert (row["kl"] != "") == (training.beta > 0)  # TRL logs kl only with a KL term
        assert float(row["none_count"]) == 0
        passed = [r for r in records if r["step"] == step and r["status"] == "ok"]
        assert float(row["gate_pass_rate"]) == pytest.approx(len(passed) / 4)
        if passed:
            assert float(row["render_seconds_mean"]) > 0 and float(row["render_s"]) > 0
            assert float(row["paint_fraction_mean"]) == pytest.approx(
                sum(r["paint_fraction"] for r in passed) / len(passed), abs=1e-4)

    # every rollout, with its render
    assert len(records) == 8
    assert {(r["step"], r["group"], r["index"]) for r in records} == {
        (s, 0, i) for s in (0, 1) for i in range(4)}
    assert any(r["status"] == "ok" for r in records), "the imprinted model wrote no sketch"
    for r in records:
        assert r["completion"] and r["prompt"] and r["seed"] is not None
        assert set(r["components"]) == set(NAMES)
        if r["status"] == "ok":
            assert r["sketch"] and "brush." in r["sketch"]
            assert (out / "rollouts" / r["png"]).read_bytes().startswith(PNG)
            assert r["n_shapes"] >= 1 and r["paint_fraction"] > 0
        else:
            assert r["violations"]
    assert len({r["seed"] for r in records if r["step"] == 0}) == 1  # a group shares a seed

    from datasets import load_from_disk

    dataset = load_from_disk(str(out / "rollouts/dataset"))
    assert len(dataset) == 8 and "image" in dataset.column_names
    first_ok = next(i for i, r in enumerate(records) if r["status"] == "ok")
    assert dataset[first_ok]["image"].size == (256, 256)

    # the record beside the results; checkpoints; the trained model
    record = json.loads((out / "run.json").read_text())
    assert record["versions"]["trl"] == "1.16.0" and record["reward"]["mix"]["name"] == "hps-only"
    assert record["config"]["training"]["max_steps"] == 2
    assert (out / "checkpoint-1").is_dir() and (out / "checkpoint-2").is_dir()
    assert (out / "final/model.safetensors").is_file()

    # trackio logged both steps to the local project (its folder is fixed when it is
    # imported: TRACKIO_DIR, else the Hugging Face cache)
    import trackio.utils

    db_path = Path(trackio.utils.TRACKIO_DIR) / f"{project}.db"
    try:
        with sqlite3.connect(db_path) as db:
            logged = [json.loads(m) for (m,) in db.execute("SELECT metrics FROM metrics")]
    finally:
        for leftover in Path(trackio.utils.TRACKIO_DIR).glob(f"{project}.*"):
            leftover.unlink()
    rewards = [m["train/reward"] for m in logged if "train/reward" in m]
    assert len(rewards) == 2
    assert abs(rewards[0] - float(rows[0]["reward"])) < 1e-5

    # the upload folder, built locally (no network)
    from watercolour.train.hub import build_upload_folder

    folder = build_upload_folder(out, "someone/watercolour-grpo")
    names = {p.name for p in folder.iterdir()}
    assert {"README.md", "metrics.csv", "run.json", "model.safetensors", "config.json",
            "tokenizer.json", "rollouts"} <= names
    assert "someone/watercolour-grpo" in (folder / "README.md").read_text()
    import pyarrow.parquet as pq

    table = pq.read_table(folder / "rollouts/data/train-00000-of-00001.parquet")
    assert table.num_rows == 8 and "sketch" in table.column_names

    # a crash after step 2 was scored but before its checkpoint: resume redoes step 2 once
    shutil.rmtree(out / "checkpoint-2")
    shutil.rmtree(out / "final")
    again, training = parse_args(small_run(tiny_model, out, "--resume"))
    resumed = train(again, training, renderer=renderer)
    assert resumed["global_step"] == 2
    records = _records(out)
    keys = [(r["step"], r["group"], r["index"]) for r in records]
    assert len(keys) == len(set(keys)) == 8
    assert [r["step"] for r in _metrics(out)] == ["0", "1"]
    assert len(load_from_disk(str(out / "rollouts/dataset"))) == 8


class DiesAfter:
    """The real renderer, whose browser 'dies' after ``n`` renders (every later render is an
    infrastructure failure, as when Chromium is killed mid-step)."""

    def __init__(self, real, n: int) -> None:
        self.real, self.n, self.calls = real, n, 0
        self.config = real.config

    def render(self, code: str, seed: int = 0, deadline_s: float | None = None):
        from watercolour.render import RenderResult

        self.calls += 1
        if self.calls > self.n:
            return RenderResult(infra_error="the browser died (killed mid-step)")
        return self.real.render(code, seed=seed)


def test_a_reward_source_failing_mid_step_gives_none_and_the_run_goes_on(tiny_model, renderer,
                                                                         tmp_path):
    from watercolour.rewards import Rewarder
    from watercolour.train.trainer import reward_config

    out = tmp_path / "run"
    run, training = parse_args(small_run(tiny_model, out, "--temperature", "0.7"))
    dying = DiesAfter(renderer, n=5)  # step 0 renders; step 1 loses its browser after one
    rewarder = Rewarder(reward_config(run), renderer=dying)
    summary = train(run, training, rewarder=rewarder)
    assert summary["global_step"] == 2  # the run went on and finished
    rows = _metrics(out)
    records = _records(out)
    lost = [r for r in records if r["status"] == "unavailable"]
    assert lost and all(r["reward"] is None and r["step"] == 1 for r in lost)
    assert all("browser" in (r["unavailable"] or "") for r in lost)
    assert float(rows[0]["none_count"]) == 0
    assert float(rows[1]["none_count"]) == len(lost)
    # TRL left the None rollouts out of the group: advantage 0, the logged reward their mean
    step, advantages = summary["advantages"][1]
    assert step == 1
    for r in lost:
        assert advantages[r["index"]] == 0.0
    scored = [r["reward"] for r in records if r["step"] == 1 and r["reward"] is not None]
    if scored:
        assert abs(float(rows[1]["reward"]) - sum(scored) / len(scored)) < 1e-4
    assert (out / "final/model.safetensors").is_file()
    assert os.path.getsize(out / "rollouts/rollouts.jsonl") > 0
