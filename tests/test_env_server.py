"""The environment through real servers (``watercolour serve`` subprocesses with real
Chromium, on free loopback ports): 8 concurrent sessions, two servers with one killed
mid-run, a server killed mid-step and restarted, a step slower than the client timeout, bad
payloads, the session limit, the ``client`` command. Renders are few: the scored replies share
one sketch (the render cache renders it once per server); the slow steps are a sketch that
never finishes its first frame (the browser stops it at the render deadline)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import SMALL_SKETCH
from pool_helpers import rows
from rewards_support import painting
from serving import EnvServer, free_port
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from watercolour.cli import main as cli_main
from watercolour.env import RemoteRewarder
from watercolour.pool.dataset import write_pool_folder

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def good(n: object = "") -> str:
    """A scored reply; the prose differs, the sketch (and so the render) is the same."""
    return f"Here is my painting {n}.\n\n```javascript\n{SMALL_SKETCH}\n```\n"


def rejected(n: object = "") -> str:
    """A reply the gate rejects without rendering (bare primitives)."""
    return (f"Plain shapes {n}.\n\n```javascript\nfunction setup() {{ createCanvas(256, 256, "
            "WEBGL); }\nfunction draw() { ellipse(0, 0, 80, 80); }\n```\n")
HANG = """```javascript
function setup() { createCanvas(128, 128, WEBGL); }
function draw() {
  brush.noStroke(); brush.fill('#d9705a', 150); brush.circle(0, 0, 40);
  while (true) {}
}
```"""


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Server A (judge-led, a small pool) and B (the one killed), started side by side."""
    folder = tmp_path_factory.mktemp("env-servers")
    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    pool = write_pool_folder(pool_rows, folder / "pool")
    base = {"WATERCOLOUR_POOL": str(pool), "WATERCOLOUR_RENDER_WORKERS": "1",
            "WATERCOLOUR_RENDER_DEADLINE": "20", "WATERCOLOUR_ENV_MAX_SESSIONS": "8",
            "WATERCOLOUR_JUDGE_WEIGHT": "", "WATERCOLOUR_HPS_WEIGHT": "",
            "WATERCOLOUR_HPS_URL": "", "WATERCOLOUR_JUDGE_BASE_URL": ""}
    a = EnvServer(folder, base).start()
    b = EnvServer(folder, {**base, "WATERCOLOUR_RENDER_DEADLINE": "40"}).start()
    try:
        yield a.wait(), b.wait()
    finally:
        a.stop()
        b.stop()


def ws_url(server: EnvServer) -> str:
    return server.url.replace("http://", "ws://") + "/ws"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def in_thread(target, *args):
    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(value=target(*args)), daemon=True)
    thread.start()
    return thread, box


def test_eight_concurrent_sessions_share_one_server(servers):
    a, _ = servers
    replies = [good(i) for i in range(7)] + [rejected(0)]
    before = a.stats()
    with RemoteRewarder([a.url], timeout_s=120) as rewarder:
        group = rewarder.evaluate_group(replies, subject="a lotus", seed=5)
        stats = a.stats()
    assert [e.status for e in group] == ["ok"] * 7 + ["rejected"]
    assert all(isinstance(e.reward, float) and e.reward > 0 for e in group[:7])
    assert group[7].reward == 0.0
    assert "bare_primitives" in group[7].to_dict()["gate"]["violations"]
    for reply, e in zip(replies, group):
        data = e.to_dict()
        assert data["env"]["reply_sha256"] == sha(reply) and data["env"]["url"] == a.url
        assert set(data["components"]) == {"gate", "length", "judge", "hps", "pigment"}
        assert data["subject"] == "a lotus" and data["seed"] == 5
    refs = {tuple(e.to_dict()["references"]["ids"]) for e in group}
    assert len(refs) == 1 and len(next(iter(refs))) == 4  # the group faces the same four
    judge = group[0].to_dict()["components"]["judge"]
    assert judge["asked"] == 8 and judge["weight"] > 0 and judge["contribution"] is not None
    assert stats["peak_sessions"] >= 8 and stats["peak_parallel_steps"] >= 2
    cache = stats["render_cache"]
    assert cache["misses"] - before["render_cache"]["misses"] == 1  # one sketch, one render
    assert cache["hits"] - before["render_cache"]["hits"] >= 6
    assert sum(bool(e.to_dict()["env"]["cache_hit"]) for e in group[:7]) == 6


def test_beyond_the_session_limit_a_clear_error(servers):
    a, _ = servers
    with contextlib.ExitStack() as sockets:
        for _ in range(8):
            ws = sockets.enter_context(connect(ws_url(a), open_timeout=10))
            ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            assert json.loads(ws.recv(30))["type"] == "observation"
        with connect(ws_url(a), open_timeout=10) as extra:
            answer = json.loads(extra.recv(30))
        assert answer["type"] == "error" and answer["data"]["code"] == "CAPACITY_REACHED"
        assert "8" in answer["data"]["message"]


def test_bad_payloads_get_clear_errors_and_the_server_keeps_serving(servers):
    a, _ = servers
    stack = contextlib.ExitStack()
    ws = stack.enter_context(connect(ws_url(a), open_timeout=10, max_size=2**24))

    def ask(raw: str) -> dict:
        ws.send(raw)
        return json.loads(ws.recv(30))

    def error(raw: str) -> str:
        answer = ask(raw)
        assert answer["type"] == "error", answer
        return json.dumps(answer["data"])

    try:
        assert "INVALID_JSON" in error("{not json")
        assert "UNKNOWN_TYPE" in error(json.dumps({"type": "paint"}))
        assert "Field required" in error(json.dumps({"type": "step", "data": {}}))
        assert "valid string" in error(json.dumps({"type": "step", "data": {"reply": 5}}))
        assert "Extra inputs" in error(json.dumps({"type": "step", "data": {"reply": "x",
                                                                            "score": 1}}))
        assert "not valid UTF-8" in error('{"type": "step", "data": {"reply": "a\\udcff"}}')
        assert "at most 1000000 characters" in error(json.dumps(
            {"type": "step", "data": {"reply": "x" * 1_000_001}}))
        assert "unknown reset option(s): colour" in error(json.dumps(
            {"type": "reset", "data": {"colour": "red"}}))
        assert "seed must be an integer" in error(json.dumps({"type": "reset",
                                                              "data": {"seed": "seven"}}))
        # the same socket still works
        assert ask(json.dumps({"type": "reset", "data": {"seed": 2}}))["type"] == "observation"
        reply = rejected(" again")
        answer = ask(json.dumps({"type": "step", "data": {"reply": reply}}))
        assert answer["data"]["observation"]["reply_sha256"] == sha(reply)
        assert answer["data"]["observation"]["status"] == "rejected"
        # a 10 MB reply is refused at the protocol level (message too big)
        with pytest.raises(ConnectionClosed) as closed:
            ws.send(json.dumps({"type": "step", "data": {"reply": "x" * 10_000_000}}))
            ws.recv(30)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    finally:
        stack.close()
    # plain HTTP: a stateless step (an episode with the defaults), then invalid UTF-8 bytes
    reply = rejected("over HTTP")
    request = urllib.request.Request(a.url + "/step", data=json.dumps(
        {"action": {"reply": reply}}).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        stepped = json.loads(answer.read())
    assert stepped["reward"] == 0.0 and stepped["observation"]["reply_sha256"] == sha(reply)
    request = urllib.request.Request(a.url + "/step", data=b'{"action": {"reply": "\xff\xfe"}}',
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400 and "detail" in json.loads(refused.value.read())
    # a binary frame of invalid UTF-8 on a websocket ends that session only
    with connect(ws_url(a), open_timeout=10) as raw:
        raw.send(b"\xff\xfe\x00")
        answer = json.loads(raw.recv(30))
        assert answer["type"] == "error"
    with urllib.request.urlopen(a.url + "/health", timeout=10) as reply:
        assert json.loads(reply.read())["status"] == "healthy"
    with RemoteRewarder([a.url], timeout_s=60) as rewarder:
        assert rewarder.evaluate(rejected(3)).status == "rejected"


def test_a_server_killed_mid_step_and_restarted(servers):
    _, b = servers
    with RemoteRewarder([b.url], timeout_s=120, revive_after_s=300) as rewarder:
        warm = rewarder.evaluate_group([rejected("one"), rejected("two")], "a tulip", 3)
        assert [e.status for e in warm] == ["rejected", "rejected"]  # two sessions kept open
        thread, box = in_thread(rewarder.evaluate, HANG, "a tulip", 3)
        b.wait_for_steps(1)
        b.kill()
        thread.join(120)
        lost = box["value"]
        assert (lost.reward, lost.status) == (None, "unavailable")
        assert "mid-step" in lost.to_dict()["unavailable"]["reason"]
        b.start().wait()
        # the kept session's socket died with the old process: it is replaced
        scored = rewarder.evaluate(good("after the restart"), "a tulip", 3)
        assert scored.status == "ok" and scored.reward is not None, scored.to_dict()
        assert scored.to_dict()["env"]["url"] == b.url
        assert rewarder.stats()[0]["failures"] >= 1 and rewarder.stats()[0]["served"] == 3


def test_two_servers_one_killed_mid_run(servers):
    a, b = servers
    # the rewarder deals episodes in turn: replies 0, 2 go to A, replies 1, 3 to B
    replies = [good("a0"), HANG, good("a1"), HANG]
    with RemoteRewarder([a.url, b.url], timeout_s=120, revive_after_s=300) as rewarder:
        thread, box = in_thread(rewarder.evaluate_group, replies, "a rose", 11)
        b.wait_for_steps(1)
        b.kill()
        thread.join(120)
        group = box["value"]
        assert [e.status for e in group] == ["ok", "unavailable", "ok", "unavailable"]
        assert [e.reward is None for e in group] == [False, True, False, True]
        for e in group[1::2]:
            data = e.to_dict()
            assert data["unavailable"]["part"] == "server"
            assert "mid-step" in data["unavailable"]["reason"] and b.url in \
                data["unavailable"]["reason"]
            assert all(c["contribution"] is None for c in data["components"].values())
        assert {e.to_dict()["env"]["url"] for e in group[::2]} == {a.url}
        # the next group skips the dead server: all of it is scored by A
        again = rewarder.evaluate_group([good(f"b{i}") for i in range(4)], "a rose",
                                        12)
        assert [e.status for e in again] == ["ok"] * 4
        assert {e.to_dict()["env"]["url"] for e in again} == {a.url}
        state = {s["url"]: s for s in rewarder.stats()}
        assert state[b.url]["skipped"] and state[b.url]["failures"] >= 1
        assert not state[a.url]["skipped"] and state[a.url]["served"] == 6


def test_the_client_command(servers, tmp_path, capsys):
    a, _ = servers
    good_file, bad_file = tmp_path / "good.md", tmp_path / "bad.md"
    good_file.write_text(good("for the command"))
    bad_file.write_text(rejected("for the command"))
    assert cli_main(["client", "--url", a.url, str(good_file), "--seed", "5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data["reward"], float) and set(data["components"]) >= {"gate", "hps"}
    assert cli_main(["client", "--url", a.url, str(bad_file), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reward"] == 0.0
    nobody = f"http://127.0.0.1:{free_port()}"
    assert cli_main(["client", "--url", nobody, str(good_file), "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["reward"] is None


def test_the_server_listens_on_the_loopback_only(servers):
    a, _ = servers
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port = local.rsplit(":", 1)
            if int(port, 16) == a.port and state == "0A":  # LISTEN
                listening.append(address)
    assert listening == ["0100007F"]  # 127.0.0.1, nothing else


def test_a_step_slower_than_the_client_timeout(servers):
    """Last: it leaves A's one browser busy until the render deadline."""
    a, _ = servers
    with RemoteRewarder([a.url], timeout_s=3) as rewarder:
        start = time.monotonic()
        late = rewarder.evaluate(HANG, seed=4)
        waited = time.monotonic() - start
        assert (late.reward, late.status) == (None, "unavailable")
        assert late.to_dict()["unavailable"]["part"] == "timeout" and 3 <= waited < 15
        mine = rejected(" (the next call)")
        nxt = rewarder.evaluate(mine, seed=4)
        assert nxt.status == "rejected" and nxt.to_dict()["env"]["reply_sha256"] == sha(mine)
