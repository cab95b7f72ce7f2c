"""Crash-safe ``--push-to-hub`` runs, without the network: what the sync commits (a
``CommitScheduler`` talking to a fake Hub on 127.0.0.1), what the trainer is told to push,
``--resume OWNER/NAME`` from a folder laid out like the pulled repository, and the job's exit
status when a run fails or is stopped."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import time
from pathlib import Path
from typing import ClassVar

import pytest
from hub_support import FakeHub
from train_support import LengthRewarder, small_run

from watercolour.train import sync
from watercolour.train.config import parse_args


@pytest.fixture
def hub():
    fake = FakeHub()
    yield fake
    fake.server.shutdown()


def _write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def _touch_later(path: Path) -> None:
    later = path.stat().st_mtime + 5
    os.utime(path, (later, later))


def _run_folder(out: Path) -> None:
    """A run folder in the middle of a run: what is synced and what is not."""
    _write(out / "metrics.csv", "step,reward\n0,0.5\n")
    _write(out / "run.json", '{"config": {}}')
    _write(out / "rollouts/rollouts.jsonl", '{"step": 0}\n')
    _write(out / "rollouts/png/step-00000/g00-i00.png", b"\x89PNG0")
    _write(out / "checkpoint-1/adapter_model.safetensors", b"weights")  # the trainer's push
    _write(out / "checkpoint-1/optimizer.pt", b"state")
    _write(out / "final/adapter_model.safetensors", b"weights")  # the end's upload
    _write(out / "builtin-tiny-qwen3/config.json", "{}")


def test_the_sync_commits_the_run_files_at_once_then_only_what_changed(hub, tmp_path):
    out = tmp_path / "run"
    _run_folder(out)
    scheduler = sync.RunSync("me/watercolour-grpo", out, every=60, api=hub.api())
    try:
        hub.wait_for(1)  # the first commit goes at once, the next one in an hour
        first = hub.commits[0]
        assert first["repo"] == "me/watercolour-grpo"
        assert set(first["files"]) == {"metrics.csv", "run.json", "rollouts/rollouts.jsonl",
                                       "rollouts/png/step-00000/g00-i00.png"}
        assert first["files"]["metrics.csv"] == b"step,reward\n0,0.5\n"
        assert first["files"]["rollouts/png/step-00000/g00-i00.png"] == b"\x89PNG0"
        assert scheduler.pending() == []

        # a step later: one more metric row, one more rollout; the checkpoint is not ours
        with open(out / "metrics.csv", "a") as handle:
            handle.write("1,0.7\n")
        _touch_later(out / "metrics.csv")
        _write(out / "rollouts/png/step-00001/g00-i00.png", b"\x89PNG1")
        _write(out / "checkpoint-2/adapter_model.safetensors", b"weights")
        assert scheduler.pending() == ["metrics.csv", "rollouts/png/step-00001/g00-i00.png"]
    finally:
        scheduler.close()  # the end: the last commit, then stop
    assert len(hub.commits) == 2
    assert hub.commits[1]["files"] == {"metrics.csv": b"step,reward\n0,0.5\n1,0.7\n",
                                       "rollouts/png/step-00001/g00-i00.png": b"\x89PNG1"}
    _touch_later(out / "run.json")
    scheduler.trigger().result(timeout=30)  # stopped: nothing more is sent
    assert len(hub.commits) == 2


def test_a_last_sync_that_fails_raises(hub, tmp_path):
    out = tmp_path / "run"
    _run_folder(out)
    scheduler = sync.RunSync("me/run", out, every=60, api=hub.api())
    hub.wait_for(1)
    hub.fail_commits = True
    _touch_later(out / "metrics.csv")
    from huggingface_hub.errors import HfHubHTTPError

    with pytest.raises(HfHubHTTPError):
        scheduler.close(timeout=60)


def test_resume_pulls_the_latest_checkpoint_and_the_run_files_only():
    files = ["README.md", "adapter_model.safetensors", "metrics.csv", "run.json",
             "rollouts/rollouts.jsonl", "rollouts/png/step-00000/g00-i00.png",
             "last-checkpoint/trainer_state.json", "last-checkpoint/optimizer.pt",
             "checkpoint-10/trainer_state.json", "checkpoint-30/trainer_state.json",
             "checkpoint-20/trainer_state.json", "checkpoint-40/README.md"]  # 40: no state
    patterns = sync.pull_patterns(files)
    assert patterns == [*sync.SYNCED, "last-checkpoint/*", "checkpoint-30/*"]
    assert sync.pull_patterns(["checkpoint-2/trainer_state.json"])[-1] == "checkpoint-2/*"
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        sync.pull_patterns(["README.md", "adapter_model.safetensors", "metrics.csv"])


class PulledRepo:
    """A stand-in for ``HfApi`` whose repository is a local folder: ``list_repo_files`` and a
    ``snapshot_download`` that copies what the patterns allow (huggingface_hub's own filter)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.downloaded: list[str] = []

    def list_repo_files(self, repo_id, repo_type=None):
        return sorted(p.relative_to(self.folder).as_posix()
                      for p in self.folder.glob("**/*") if p.is_file())

    def snapshot_download(self, repo_id, repo_type=None, local_dir=None, allow_patterns=None):
        from huggingface_hub.utils import filter_repo_objects

        for rel in filter_repo_objects(self.list_repo_files(repo_id),
                                       allow_patterns=allow_patterns):
            self.downloaded.append(rel)
            (Path(local_dir) / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.folder / rel, Path(local_dir) / rel)
        return local_dir


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "metrics.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_resume_from_a_pulled_repository_goes_on_from_its_checkpoint(tmp_path, monkeypatch,
                                                                       capsys):
    import torch

    from watercolour.train.trainer import reward_config, train

    torch.set_num_threads(1)
    first = tmp_path / "first"
    run, training = parse_args(small_run("builtin:tiny-qwen3", first))
    train(run, training, rewarder=LengthRewarder(reward_config(run)))
    assert [r["step"] for r in _rows(first)] == ["0", "1"]

    # the repository a job left when it died after step 2 was scored and synced, before the
    # push of checkpoint-2: hub_strategy=checkpoint's last-checkpoint/ is step 1
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("metrics.csv", "run.json", "rollouts"):
        src = first / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, repo / name)
    shutil.copytree(first / "checkpoint-1", repo / "last-checkpoint")
    for item in (first / "checkpoint-1").iterdir():  # the adapter/model at the top
        if item.suffix in (".safetensors", ".json"):
            shutil.copy2(item, repo / item.name)
    pulled = PulledRepo(repo)
    monkeypatch.setattr(sync, "hub_api", lambda: pulled)

    out = tmp_path / "second"
    again, training = parse_args(small_run("builtin:tiny-qwen3", out, "--resume",
                                           "me/watercolour-grpo"))
    resumed = train(again, training, rewarder=LengthRewarder(reward_config(again)))
    printed = capsys.readouterr().out
    assert "pulled me/watercolour-grpo: checkpoint-1" in printed
    assert "resuming from checkpoint-1: dropped 4 rollouts and 1 metric rows" in printed
    assert resumed["global_step"] == 2
    # only the run files and the checkpoint came down, not the model at the top
    assert all(p.split("/")[0] in ("metrics.csv", "run.json", "rollouts", "last-checkpoint")
               for p in pulled.downloaded)
    assert not (out / "last-checkpoint").exists() and (out / "checkpoint-2").is_dir()
    assert [r["step"] for r in _rows(out)] == ["0", "1"]
    records = [json.loads(x) for x in
               (out / "rollouts/rollouts.jsonl").read_text().splitlines()]
    keys = [(r["step"], r["group"], r["index"]) for r in records]
    assert len(keys) == len(set(keys)) == 8


class RecordingSync:
    started: ClassVar[list[tuple]] = []

    def __init__(self, repo_id, out, every, private=None) -> None:
        RecordingSync.started.append((repo_id, Path(out).name, every))
        self.closed = 0
        RecordingSync.last = self

    def close(self, timeout=None) -> None:
        self.closed += 1


class FailingTrainer:
    model = None  # a trainer built with no model: run.json's generation record still written

    def __init__(self, *, args, **kwargs) -> None:
        FailingTrainer.args = args

    def train(self, resume_from_checkpoint=None) -> None:
        raise RuntimeError("the GPU fell over at hour 30")


def test_a_failing_run_pushes_checkpoints_syncs_once_more_then_fails(tmp_path, monkeypatch,
                                                                   capsys):
    from watercolour.train import trainer
    from watercolour.train.trainer import reward_config, train

    monkeypatch.setattr(sync, "start_sync", RecordingSync)
    monkeypatch.setattr(trainer, "WatercolourGRPOTrainer", FailingTrainer)
    run, training = parse_args(small_run(
        "builtin:tiny-qwen3", tmp_path / "run", "--push-to-hub", "--hub-model-id",
        "me/watercolour-grpo", "--hub-sync-minutes", "5", "--report-to", "trackio",
        "--trackio-space-id", "me/watercolour-trackio"))
    with pytest.raises(RuntimeError, match="hour 30"):
        train(run, training, rewarder=LengthRewarder(reward_config(run)))
    # scheduled: the run files every 5 minutes; told to the trainer: push each checkpoint
    assert RecordingSync.started[-1] == ("me/watercolour-grpo", "run", 5.0)
    args = FailingTrainer.args
    assert args.push_to_hub and args.hub_model_id == "me/watercolour-grpo"
    assert args.hub_strategy.value == "checkpoint"
    assert args.trackio_space_id == "me/watercolour-trackio" and args.report_to == ["trackio"]
    # the failure: one last sync, then the error goes on (the job fails)
    assert RecordingSync.last.closed == 1
    assert "after the failure: metrics and rollouts synced" in capsys.readouterr().out


def test_a_trackio_space_needs_trackio(tmp_path):
    from watercolour.errors import InputError
    from watercolour.train.trainer import train

    run, training = parse_args(small_run("builtin:tiny-qwen3", tmp_path / "run",
                                         "--trackio-space-id", "me/dash"))
    with pytest.raises(InputError, match="--report-to trackio"):
        train(run, training)


def test_the_jobs_exit_status_is_the_runs(tmp_path, monkeypatch, capsys):
    from watercolour.train import launch, trainer

    unwound = []

    def fails(run, training, **kwargs):
        raise RuntimeError("the GPU fell over")

    def stopped(run, training, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGTERM)  # the job's timeout
            time.sleep(30)
        finally:
            unwound.append(True)  # a finally (the last sync) still runs

    flags = ["--out", str(tmp_path / "run")]
    monkeypatch.setattr(trainer, "train", fails)
    assert launch.main(["--", *flags]) == 1
    assert "RuntimeError: the GPU fell over" in capsys.readouterr().err
    monkeypatch.setattr(trainer, "train", stopped)
    before = signal.getsignal(signal.SIGTERM)
    assert launch.main(["--", *flags]) == 128 + signal.SIGTERM and unwound == [True]
    assert signal.getsignal(signal.SIGTERM) == before
    assert launch.main(["--", "--no-such-flag"]) == 2
