"""Start ``transformers serve`` on a free loopback port for a test, and stop it after."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
