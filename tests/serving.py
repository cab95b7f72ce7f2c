"""Servers for tests, on free loopback ports: ``transformers serve``
(:func:`transformers_server`) and ``watercolour serve`` (:class:`EnvServer`), each stopped
after."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from watercolour.env.ports import free_port


@contextlib.contextmanager
def transformers_server(
    folder: Path, startup_timeout_s: float, extra_args: tuple[str, ...] = ()
) -> Iterator[str]:
    """Serve the model in ``folder`` offline; yields ``http://127.0.0.1:PORT`` once
    ``/health`` answers 200, fails the test if it exits or does not come up in time."""
    port = free_port()
    cli = Path(sys.executable).with_name("transformers")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1"}
    log_path = folder / "serve.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [str(cli), "serve", str(folder), "--host", "127.0.0.1", "--port", str(port),
             "--device", "cpu", *extra_args],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + startup_timeout_s
            while True:
                if process.poll() is not None:
                    pytest.fail("transformers serve exited: " + log_path.read_text()[-2000:])
                try:
                    with urllib.request.urlopen(url + "/health", timeout=2) as reply:
                        if reply.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"transformers serve did not come up in {startup_timeout_s:g} s")
                time.sleep(1)
            yield url
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


ROOT = Path(__file__).resolve().parents[1]


class EnvServer:
    """``watercolour serve`` in its own process group on a loopback port."""

    def __init__(self, folder: Path, env: dict[str, str], port: int | None = None) -> None:
        self.folder, self.env = folder, env
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> EnvServer:
        self.starts += 1
        with open(self.folder / f"serve-{self.port}-{self.starts}.log", "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "watercolour", "serve", "--host", "127.0.0.1", "--port",
                 str(self.port), "--log-level", "warning"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **self.env})
        return self

    def wait(self, timeout_s: float = 150) -> EnvServer:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail("the server exited: " + self.log()[-2000:])
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.5)
        pytest.fail(f"the server did not come up in {timeout_s:g} s: " + self.log()[-2000:])

    def log(self) -> str:
        return "\n".join(p.read_text() for p in sorted(self.folder.glob(f"serve-{self.port}-*")))

    def stats(self) -> dict:
        with urllib.request.urlopen(self.url + "/stats", timeout=10) as reply:
            return json.loads(reply.read())

    def kill(self) -> None:
        """SIGKILL to the whole group: the server and its browsers die at once."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(20)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.kill()

    def wait_for_steps(self, n: int = 1, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while self.stats()["steps_running"] < n:
            if time.monotonic() > deadline:
                pytest.fail(f"no step started on {self.url}")
            time.sleep(0.2)
