"""The HPSv3 service at first contact, where the real model cannot run (no GPU, no 33 GB of
weights, its own transformers): the service process itself, started as ``start.sh`` starts
it, with a stand-in ``hpsv3`` package (tests/fixtures/hps_standin: the same class and call,
a formula for a model) -- it listens while the model loads, answers 503 until it is ready,
reports a failed load without dying, refuses the CPU unless asked, and returns sigma as
exp(log sigma). And the requirements: every import ``import hpsv3`` makes is declared."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from rewards_support import painting
from serving import free_port

from watercolour.rewards.hps.base import ScorerUnavailable
from watercolour.rewards.hps.client import HpsClient
from watercolour.rewards.hps.service import app, import_graph

SERVICE = Path(app.__file__).parent
STANDIN = Path(__file__).parent / "fixtures" / "hps_standin"


def _health(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as reply:
            return json.loads(reply.read())
    except OSError:
        return None


def _wait(url: str, process: subprocess.Popen, until, timeout_s: float = 90) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the service exited: {process.stdout.read()[-2000:]}")
        health = _health(url)
        if health is not None and until(health):
            return health
        time.sleep(0.2)
    pytest.fail(f"no matching /health within {timeout_s:g} s: {_health(url)}")


def _start(tmp_path: Path, device: str | None = "cpu", **env: str
           ) -> tuple[subprocess.Popen, str]:
    port = free_port()
    environ = {**os.environ, "PYTHONPATH": str(STANDIN), "HF_HOME": str(tmp_path / "hf"),
               "OMP_NUM_THREADS": "1", **env}
    process = subprocess.Popen(
        [sys.executable, str(SERVICE / "app.py"), "--scorer", "hpsv3", "--port", str(port),
         *(["--device", device] if device else [])], env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    return process, f"http://127.0.0.1:{port}"


@pytest.fixture
def service_process(tmp_path):
    started: list[subprocess.Popen] = []

    def start(device: str | None = "cpu", **env: str) -> tuple[subprocess.Popen, str]:
        process, url = _start(tmp_path, device, **env)
        started.append(process)
        return process, url

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def test_it_listens_while_loading_and_scores_when_ready(service_process, tmp_path):
    release = tmp_path / "release"
    process, url = service_process(STANDIN_HPS_RELEASE=str(release))
    health = _wait(url, process, lambda h: True)
    assert health["status"] == "loading" and health["scorer"] == "hpsv3"
    assert health["device"] == "cpu" and health["error"] is None
    client = HpsClient(url, timeout_s=5, retries=1, backoff_s=0.01)
    with pytest.raises(ScorerUnavailable, match="HTTP 503: the model is still loading"):
        client.score([painting(1)], "a rose, a watercolour painting")
    release.write_text("go")
    health = _wait(url, process, lambda h: h["status"] == "ready")
    assert health["load_s"] is not None
    pngs = [painting(1), painting(2, "okay")]
    scores = client.score(pngs, "a rose, a watercolour painting")
    assert [s.mu for s in scores] == pytest.approx([len(p) / 1000 for p in pngs], abs=1e-3)
    assert all(s.sigma == pytest.approx(0.5) for s in scores)  # exp(log 0.5), not log 0.5


def test_a_failed_load_is_reported_and_the_service_stays_up(service_process):
    process, url = service_process(STANDIN_HPS_FAIL="CUDA out of memory (injected)")
    health = _wait(url, process, lambda h: h["status"] != "loading")
    assert health["status"] == "failed"
    assert health["error"] == "RuntimeError: CUDA out of memory (injected)"
    with pytest.raises(ScorerUnavailable, match="the model failed to load: RuntimeError: CUDA"):
        HpsClient(url, timeout_s=5, retries=0).score([painting(1)], "x")
    assert process.poll() is None  # still answering /health


def test_it_refuses_the_cpu_unless_asked(capsys):
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the refusal needs a machine without it")
    port = free_port()
    assert app.main(["--scorer", "hpsv3", "--port", str(port)]) == 2
    message = capsys.readouterr().err
    assert "CUDA is not available to torch" in message and "--device cpu" in message
    assert app.main(["--scorer", "hpsv3", "--device", "cuda", "--port", str(port)]) == 2
    with pytest.raises(app.DeviceRefused, match="Pass --device cpu"):
        app.resolve_device(None)
    assert app.resolve_device("cpu") == "cpu"


@pytest.mark.gpu
def test_on_a_cuda_machine_it_picks_the_gpu_unasked(service_process):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    assert app.resolve_device(None) == "cuda"
    process, url = service_process(device=None)
    health = _wait(url, process, lambda h: h["status"] != "loading")
    assert (health["status"], health["device"]) == ("ready", "cuda")
    scores = HpsClient(url, timeout_s=30).score([painting(1)], "x")
    assert scores[0].sigma == pytest.approx(0.5)


def test_sigma_is_exp_of_the_models_second_output():
    torch = pytest.importorskip("torch")
    rows = torch.tensor([[3.5, 0.0], [-1.0, -2.0], [7.25, 1.0]])
    flat = [x for pair in app.mu_sigma(rows) for x in pair]
    assert flat == pytest.approx([3.5, 1.0, -1.0, 0.1353352832, 7.25, 2.718281828])


def test_the_hub_cache_goes_to_persistent_storage(tmp_path):
    data = tmp_path / "data"
    assert app.default_hf_home({}, str(data)) is None  # no persistent storage
    data.mkdir()
    assert app.default_hf_home({}, str(data)) == str(data / ".huggingface")
    assert app.default_hf_home({"HF_HOME": "/elsewhere"}, str(data)) is None  # set: kept


# ---------------------------------------------------------------- requirements


def _requirements() -> dict[str, str]:
    pins = {}
    for line in (SERVICE / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[import_graph.normalise(name)] = version
    return pins


def test_every_import_of_hpsv3_is_declared_and_pinned():
    graph = json.loads((SERVICE / "imports.json").read_text())
    pins = _requirements()
    assert all(re.fullmatch(r"\d+(\.\d+)+", v) for v in pins.values()), pins  # exact pins
    declared = set(graph["requires_dist"]) | set(pins)
    missing = {name: dist for name, dist in graph["imports"].items() if dist not in declared}
    assert not missing, f"imported by hpsv3 but declared nowhere: {missing}"
    # the two that broke the first start, and the build the hardware needs
    assert {"matplotlib", "tensorboard"} <= set(pins)
    assert pins["torch"] == "2.5.1" and pins["torchvision"] == "0.20.1"
    assert pins["hpsv3"] == "1.0.0"


def test_the_walker_follows_the_import_chain(tmp_path):
    package = tmp_path / "pkg"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("from .inference import Scorer\n")
    (package / "inference.py").write_text(
        "import os\nimport numpy as np\nfrom .model.trainer import Trainer\n"
        "try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n"
        "def later():\n    import decord\n"
        "class Scorer:\n    import yaml\n")
    (package / "model" / "__init__.py").write_text("import einops\n")
    (package / "model" / "trainer.py").write_text(
        "import matplotlib.pyplot as plt\nfrom torch.utils.tensorboard import SummaryWriter\n"
        "from pkg.unused import nothing\n")
    (package / "unused.py").write_text("import pandas\n")
    (package / "orphan.py").write_text("import scipy\n")
    assert import_graph.reached(tmp_path, "pkg") == {
        "einops": "einops", "matplotlib": "matplotlib", "numpy": "numpy", "pandas": "pandas",
        "torch.utils.tensorboard": "tensorboard", "yaml": "pyyaml"}


@pytest.mark.slow
def test_imports_json_is_what_the_real_wheel_imports(tmp_path):
    """Regenerates imports.json from hpsv3 1.0.0's wheel (a 70 kB download from PyPI)."""
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                           "hpsv3==1.0.0", "-d", str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"cannot download hpsv3 from PyPI: {done.stderr.strip()[-200:]}")
    wheel = next(tmp_path.glob("hpsv3-1.0.0-*.whl"))
    assert import_graph.from_wheel(wheel) == json.loads((SERVICE / "imports.json").read_text())


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("WATERCOLOUR_RESOLVE_HPS"),
                    reason="downloads ~3 GB from PyPI: set WATERCOLOUR_RESOLVE_HPS=1")
def test_the_service_requirements_resolve(tmp_path):
    """pip's resolver over requirements.txt for this Python (the Dockerfile's 3.11)."""
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run",
                           "--ignore-installed", "--report", str(tmp_path / "report.json"),
                           "-r", str(SERVICE / "requirements.txt")],
                          capture_output=True, text=True, timeout=3000)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    chosen = {import_graph.normalise(i["metadata"]["name"]): i["metadata"]["version"]
              for i in report["install"]}
    for name, version in _requirements().items():
        assert chosen[name] == version
    assert chosen["transformers"] == "4.45.2"
