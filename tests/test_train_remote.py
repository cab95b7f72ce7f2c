"""Two GRPO steps with the reward from a real environment server on loopback (``watercolour
serve`` in its own process, real Chromium), through the resilient multi-URL client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import torch
from train_support import imprinted_model, small_run

try:
    import watercolour.env.client  # noqa: F401
except ImportError as err:  # the environment is another issue's; wired in after its merge
    pytest.skip(f"watercolour.env is not importable here ({err}): the environment client and "
                "server come with the environment issue", allow_module_level=True)

from watercolour.env.ports import free_port
from watercolour.train.config import parse_args
from watercolour.train.trainer import train

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]
HPS_ONLY = {"WATERCOLOUR_JUDGE_WEIGHT": "0", "WATERCOLOUR_HPS_WEIGHT": "0.9",
            "WATERCOLOUR_HPS_URL": "", "WATERCOLOUR_JUDGE_BASE_URL": ""}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    log = open(tmp_path_factory.mktemp("env") / "serve.log", "w")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "watercolour", "serve", "--host", "127.0.0.1", "--port",
         str(port)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "WATERCOLOUR_RENDER_WORKERS": "1",
             **HPS_ONLY})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert process.poll() is None, f"the server exited: see {log.name}"
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"the environment server did not come up: see {log.name}")
        yield url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(20)
        log.close()


def test_two_steps_through_an_environment_server(server, tmp_path, monkeypatch):
    for key, value in HPS_ONLY.items():
        monkeypatch.setenv(key, value)
    torch.set_num_threads(1)
    model = imprinted_model(tmp_path / "tiny")
    out = tmp_path / "run"
    run, training = parse_args(small_run(model, out, "--env-url", server, "--temperature",
                                         "0.7"))
    summary = train(run, training)
    assert summary["global_step"] == 2 and summary["source_failures"] == 0
    records = [json.loads(line) for line in
               (out / "rollouts/rollouts.jsonl").read_text().splitlines()]
    assert len(records) == 8
    assert any(r["status"] == "ok" and r["reward"] is not None for r in records)
    assert all(r["status"] in ("ok", "rejected") for r in records)
    assert len({r["seed"] for r in records if r["step"] == 0}) == 1
    for r in records:
        if r["status"] == "ok":  # the server sent the render back: kept with the rollout
            assert (out / "rollouts" / r["png"]).read_bytes().startswith(b"\x89PNG")
            assert r["sketch"] and r["n_shapes"] >= 1
    rows = (out / "metrics.csv").read_text().splitlines()
    assert len(rows) == 3
