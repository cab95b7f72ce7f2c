"""Data parallel rehearsed on a CPU: ``accelerate launch`` starts 2 processes (torchrun, gloo;
``src/watercolour/recipes/accelerate/cpu.yaml``) that train the miniature of Qwen3.5-4B one GRPO step with the
``smoke-4b`` recipe (LoRA as it says; sizes only changed) and checkpoint it. Each process
generates and scores its own half of the step's rollouts, exactly once; the main process alone
writes ``OUT``: the rollout log holds every rollout once, ``metrics.csv`` one row under one
header, ``run.json``, ``final/`` and ``summary.json`` once.

The reward is a stand-in (reply length, ``train_support.LengthRewarder``: a random model's
replies all fail the gate) wrapped to record, per process, every reply it scored; the launched
script is :func:`watercolour.train.trainer.train`, what ``watercolour train`` runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "src" / "watercolour" / "recipes" / "accelerate" / "cpu.yaml"
ACCELERATE = Path(sys.executable).with_name("accelerate")
MODEL = "builtin:mini-qwen3.5"
SCRIPT = '''\
import json, sys
from pathlib import Path

sys.path.insert(0, {tests!r})
from train_support import LengthRewarder

from watercolour.train.config import parse_args
from watercolour.train.trainer import reward_config, train


class Counted(LengthRewarder):
    """LengthRewarder that keeps every reply it scored."""

    def __init__(self, config):
        super().__init__(config)
        self.replies = []

    def evaluate_group(self, replies, **kwargs):
        self.replies.extend(replies)
        return super().evaluate_group(replies, **kwargs)


run, training = parse_args(sys.argv[1:])
rewarder = Counted(reward_config(run))
summary = train(run, training, rewarder=rewarder)
record = {{"rank": training.process_index, "world_size": training.world_size,
          "replies": rewarder.replies, "global_step": summary["global_step"]}}
Path({ranks!r}, f"rank-{{training.process_index}}.json").write_text(json.dumps(record))
'''
FLAGS = ["--config", "smoke-4b", "--model", MODEL, "--steps", "1", "--num-generations", "2",
         "--per-device-batch-size", "1", "--gradient-accumulation-steps", "1",
         "--max-completion-length", "12", "--n-episodes", "2", "--save-steps", "1",
         "--prompt", "short", "--bf16", "false", "--push-to-hub", "false",
         "--report-to", "none", "--seed", "0"]
"""smoke-4b with a step of one group of 2, one generation in each process (generation batch =
per-device batch 1 x 2 processes), 12-token completions and the one-line prompt."""


def test_two_processes_train_one_step_and_write_once(tmp_path):
    import torch

    from watercolour.models.miniature import build_miniature

    cache = tmp_path / "cache"
    env = {**os.environ, "WATERCOLOUR_CACHE": str(cache), "ACCELERATE_USE_CPU": "true",
           "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    timings: dict[str, float] = {}
    started = time.perf_counter()
    os.environ["WATERCOLOUR_CACHE"] = str(cache)  # built here once, both processes load it
    try:
        torch.set_num_threads(1)
        build_miniature(MODEL)
    finally:
        del os.environ["WATERCOLOUR_CACHE"]
    timings["build"] = time.perf_counter() - started

    ranks = tmp_path / "ranks"
    ranks.mkdir()
    script = tmp_path / "train_dp.py"
    script.write_text(SCRIPT.format(tests=str(ROOT / "tests"), ranks=str(ranks)))
    out = tmp_path / "run"
    command = [str(ACCELERATE), "launch", "--config_file", str(CONFIG), "--num_processes", "2",
               str(script), *FLAGS, "--out", str(out)]
    mark = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    timings["launch"] = time.perf_counter() - mark
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-6000:]

    # both processes ran, in one world of 2, and finished the step
    records = [json.loads((ranks / f"rank-{r}.json").read_text()) for r in (0, 1)]
    assert [(r["rank"], r["world_size"], r["global_step"]) for r in records] == [(0, 2, 1),
                                                                                 (1, 2, 1)]
    # each rollout scored once, by the process that generated it: one reply each
    assert [len(r["replies"]) for r in records] == [1, 1]

    # the rollout log: every rollout of the step once (both processes' replies), one writer
    lines = (out / "rollouts/rollouts.jsonl").read_text().splitlines()
    rollouts = [json.loads(line) for line in lines]
    assert sorted((r["step"], r["index"]) for r in rollouts) == [(0, 0), (0, 1)]
    assert sorted(r["completion"] for r in rollouts) == sorted(
        reply for r in records for reply in r["replies"])
    # metrics: one header, one row (the main process only)
    table = (out / "metrics.csv").read_text().splitlines()
    assert len(table) == 2 and table[0].startswith("step,") and table[1].startswith("0,")
    assert table.count(table[0]) == 1
    # the run's other files, once; the step checkpointed; the adapter saved
    assert json.loads((out / "run.json").read_text())["config"]["run"]["model_name_or_path"] \
        == MODEL
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["global_step"], summary["rollouts"], summary["metrics_rows"]) == (1, 2, 1)
    assert (out / "checkpoint-1").is_dir() and (out / "final/adapter_config.json").is_file()
    assert (out / "rollouts/dataset").is_dir()
    assert log.count("reward: hps-only mix") == 2  # both processes set up their own reward source
    timings["total"] = time.perf_counter() - started
    print("data parallel rehearsal (2 processes): " + ", ".join(
        f"{k} {v:.1f} s" for k, v in timings.items()))
