"""A slot is held only by a request that is moving (issue 39): through a real ``watercolour
serve`` with 2 session slots and small body deadlines, 4 clients trickle ``/step`` bodies a
byte at a time (reconnecting whenever they are cut off) for the whole test, while a real
websocket client resets and steps and a plain HTTP ``/reset`` is answered. Each trickled body
is cut off with 408 within the deadline. And a reset cannot set the reward's parameters over
the wire."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request

import pytest
from conftest import SMALL_SKETCH
from pool_helpers import rows
from rewards_support import painting
from serving import EnvServer
from websockets.sync.client import connect

from watercolour.env import WatercolourAction, WatercolourEnv
from watercolour.pool.dataset import write_pool_folder

SLOTS = 2
SLOW_CLIENTS = SLOTS + 2
BODY_TIMEOUT_S = 4.0
BODY_MIN_RATE = 200  # bytes a second, after the first second
DRIP_S = 0.5  # one byte each


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("env-slowloris")
    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    pool = write_pool_folder(pool_rows, folder / "pool")
    server = EnvServer(folder, {
        "WATERCOLOUR_POOL": str(pool), "WATERCOLOUR_RENDER_WORKERS": "1",
        "WATERCOLOUR_RENDER_DEADLINE": "20", "WATERCOLOUR_JUDGE_WEIGHT": "",
        "WATERCOLOUR_HPS_WEIGHT": "", "WATERCOLOUR_HPS_URL": "",
        "WATERCOLOUR_JUDGE_BASE_URL": "", "WATERCOLOUR_ENV_TOKEN": "",
        "WATERCOLOUR_ENV_ANONYMOUS": "", "WATERCOLOUR_JUDGE_CACHE": str(folder / "judge"),
        "WATERCOLOUR_ENV_MAX_SESSIONS": str(SLOTS),
        "WATERCOLOUR_ENV_BODY_TIMEOUT": str(BODY_TIMEOUT_S),
        "WATERCOLOUR_ENV_BODY_MIN_RATE": str(BODY_MIN_RATE)}).start()
    try:
        yield server.wait()
    finally:
        server.stop()


def reply(sketch: str) -> str:
    return f"A hibiscus.\n\n```javascript\n{sketch}\n```\n"


class Trickler(threading.Thread):
    """Sends a ``/step`` whose body comes one byte every :data:`DRIP_S` seconds; when the
    server answers or closes, notes (status, seconds since the request began) and starts
    again, until told to stop."""

    def __init__(self, port: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port, self.stop = port, stop
        self.answers: list[tuple[int | None, float]] = []

    def run(self) -> None:
        body = json.dumps({"action": {"reply": "x" * 4000}}).encode()
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                    sock.sendall(b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 b"Content-Type: application/json\r\n"
                                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
                    sock.settimeout(DRIP_S)
                    for byte in body:
                        if self.stop.is_set():
                            return
                        try:
                            sock.sendall(bytes([byte]))
                            head = sock.recv(64)  # an answer (or a close) ends this request
                        except TimeoutError:
                            continue
                        status = int(head.split()[1]) if head.startswith(b"HTTP/") else None
                        self.answers.append((status, time.monotonic() - began))
                        break
            except OSError:
                self.answers.append((None, time.monotonic() - began))
                time.sleep(0.05)


@pytest.mark.browser
@pytest.mark.slow
def test_slow_bodies_hold_no_slot_and_a_real_client_still_steps(server):
    stop = threading.Event()
    slow = [Trickler(server.port, stop) for _ in range(SLOW_CLIENTS)]
    for client in slow:
        client.start()
    try:
        time.sleep(2 * DRIP_S)  # every slow request is in and trickling
        started = time.monotonic()
        with WatercolourEnv(server.url, message_timeout_s=60).sync() as env:
            ready = env.reset(seed=3)
            stepped = env.step(WatercolourAction(reply=reply(SMALL_SKETCH)))
        stepped_s = time.monotonic() - started
        request = urllib.request.Request(server.url + "/reset", data=b"{}", headers={
            "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            http_reset = answer.status
        # the trickling goes on: the slow clients are cut off, again and again
        while time.monotonic() - started < BODY_TIMEOUT_S + 2 and \
                not all(c.answers for c in slow):
            time.sleep(0.2)
        held = json.loads(urllib.request.urlopen(server.url + "/stats", timeout=10).read())
    finally:
        stop.set()
        for client in slow:
            client.join(10)
    assert ready.observation.status == "ready"
    assert stepped.observation.status == "ok" and stepped.reward is not None
    assert stepped_s < 30, stepped_s
    assert http_reset == 200
    for client in slow:
        assert client.answers, "a slow body was never cut off"
        for status, seconds in client.answers:
            assert status == 408, client.answers
            assert seconds <= BODY_TIMEOUT_S + 1.5, client.answers
    assert held["refused"] == 0  # nobody was turned away: the slow bodies held no slot


@pytest.mark.browser
@pytest.mark.slow
def test_a_reset_cannot_set_the_rewards_parameters(server):
    with connect(server.url.replace("http://", "ws://") + "/ws", open_timeout=10) as ws:
        for option in ("improvement_bonus", "regression_penalty"):
            ws.send(json.dumps({"type": "reset", "data": {"turns": 2, option: 1.0}}))
            answer = json.loads(ws.recv(30))
            assert answer["type"] == "error", answer
            assert f"{option}: the episode's reward parameters are the server's" in \
                answer["data"]["message"]
        ws.send(json.dumps({"type": "reset", "data": {"turns": 2}}))
        ready = json.loads(ws.recv(30))
        assert ready["type"] == "observation"
        assert ready["data"]["observation"]["metadata"]["episode"]["regression_penalty"] == 0.0
