"""The server is safe to expose (issue 25), through real servers on free loopback ports:
the bearer token on every route but ``/health`` (HTTP and the websocket upgrade), the
refusal to bind beyond the loopback without one, one session limit for websockets and plain
HTTP, bounded bodies and messages, errors that never echo the input, idle websockets closed,
``/stats`` without the configuration. The guarded server runs under plain uvicorn (not
``watercolour serve``), so its limits are the app's own, not uvicorn's flags."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from pool_helpers import rows
from rewards_support import painting
from serving import EnvServer
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from watercolour.cli import main as cli_main
from watercolour.cli import serve as serve_verb
from watercolour.env import EnvConfig, EnvConfigError, RemoteRewarder, WatercolourEnv
from watercolour.env.client import auth_headers
from watercolour.env.server.guard import is_loopback, short_errors
from watercolour.pool.dataset import write_pool_folder

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "s3cret-token-for-the-tests"
IDLE_S = 4.0
LAUNCH = ("from watercolour.cli.serve import skip_web_interface; skip_web_interface(); "
          "import sys, uvicorn; uvicorn.run('watercolour.env.server.app:create_server_app', "
          "factory=True, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')")


class UvicornServer(EnvServer):
    """The app under plain uvicorn (its default websocket limits), not ``watercolour serve``."""

    def start(self) -> UvicornServer:
        self.starts += 1
        with open(self.folder / f"serve-{self.port}-{self.starts}.log", "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", LAUNCH, str(self.port)], stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **self.env})
        return self


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """``guarded``: a token, 2 sessions, a short idle timeout; ``open_``: no token."""
    folder = tmp_path_factory.mktemp("env-security")
    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    pool = write_pool_folder(pool_rows, folder / "pool")
    base = {"WATERCOLOUR_POOL": str(pool), "WATERCOLOUR_RENDER_WORKERS": "1",
            "WATERCOLOUR_RENDER_DEADLINE": "20", "WATERCOLOUR_JUDGE_WEIGHT": "",
            "WATERCOLOUR_HPS_WEIGHT": "", "WATERCOLOUR_HPS_URL": "",
            "WATERCOLOUR_JUDGE_BASE_URL": "", "WATERCOLOUR_ENV_TOKEN": "",
            "WATERCOLOUR_ENV_ANONYMOUS": "", "WATERCOLOUR_JUDGE_CACHE": str(folder / "judge")}
    guarded = UvicornServer(folder, {**base, "WATERCOLOUR_ENV_TOKEN": TOKEN,
                                     "WATERCOLOUR_ENV_MAX_SESSIONS": "2",
                                     "WATERCOLOUR_ENV_IDLE_TIMEOUT": str(IDLE_S)}).start()
    open_ = EnvServer(folder, {**base, "WATERCOLOUR_ENV_MAX_SESSIONS": "8"}).start()
    try:
        yield guarded.wait(), open_.wait()
    finally:
        guarded.stop()
        open_.stop()


BEARER = {"Authorization": f"Bearer {TOKEN}"}


def rejected(n: object = "") -> str:
    """A reply the gate rejects without rendering (bare primitives): steps cost no render."""
    return (f"Plain shapes {n}.\n\n```javascript\nfunction setup() {{ createCanvas(256, 256, "
            "WEBGL); }\nfunction draw() { ellipse(0, 0, 80, 80); }\n```\n")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def call(url: str, path: str, body: object = None, headers: dict | None = None,
         method: str | None = None, raw: bytes | None = None) -> tuple[int, bytes]:
    """(status, body) of one request; HTTP errors are answers too."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                        else None)
    request = urllib.request.Request(url + path, data=data, method=method, headers={
        "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def ws(server: EnvServer, headers: dict | None = None, **kwargs):
    return connect(server.url.replace("http://", "ws://") + "/ws", open_timeout=10,
                   additional_headers=headers, **kwargs)


def stats(server: EnvServer, headers: dict | None = None) -> dict:
    status, body = call(server.url, "/stats", headers=headers)
    assert status == 200, body
    return json.loads(body)


def settle(server: EnvServer, held: int = 0, timeout_s: float = 10) -> dict:
    """/stats once no more than ``held`` slots are held (sockets close asynchronously)."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = stats(server, BEARER)
        if now.get("slots_held", now["sessions"]) <= held or time.monotonic() > deadline:
            return now
        time.sleep(0.1)


# ---------------------------------------------------------------- binding


def test_binding_beyond_the_loopback_needs_a_token(monkeypatch, capsys):
    started = []
    monkeypatch.setattr("watercolour.env.server.app.build_app",
                        lambda config: started.append("app") or object())
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: started.append(k["host"]))
    for name in ("WATERCOLOUR_ENV_TOKEN", "WATERCOLOUR_ENV_ANONYMOUS"):
        monkeypatch.delenv(name, raising=False)
    for host in ("0.0.0.0", "::", "192.168.1.20", "example.org"):
        assert cli_main(["serve", "--host", host, "--port", "8765"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "WATERCOLOUR_ENV_TOKEN" in err, err
        assert err.startswith(f"watercolour serve: error: --host {host} is beyond the loopback")
    assert started == []  # refused before the browsers start or anything binds
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert is_loopback(host)
        serve_verb.exposed(host, EnvConfig.from_env({}))
    monkeypatch.setenv("WATERCOLOUR_ENV_TOKEN", "t")
    assert cli_main(["serve", "--host", "0.0.0.0", "--port", "8765"]) == 0
    monkeypatch.delenv("WATERCOLOUR_ENV_TOKEN")
    monkeypatch.setenv("WATERCOLOUR_ENV_ANONYMOUS", "1")  # a proxy in front authenticates
    assert cli_main(["serve", "--host", "0.0.0.0", "--port", "8765"]) == 0
    assert started == ["app", "0.0.0.0", "app", "0.0.0.0"]


def test_the_token_is_a_setting_that_is_never_published():
    config = EnvConfig.from_env({"WATERCOLOUR_ENV_TOKEN": " abc ",
                                 "WATERCOLOUR_ENV_IDLE_TIMEOUT": "2.5"})
    assert (config.token, config.idle_timeout, config.anonymous) == ("abc", 2.5, False)
    assert "abc" not in json.dumps(config.resolved()) and config.resolved()["token"] is True
    assert EnvConfig.from_env({}).idle_timeout == 600 and EnvConfig.from_env({}).token is None
    with pytest.raises(EnvConfigError, match="WATERCOLOUR_ENV_IDLE_TIMEOUT must be positive"):
        EnvConfig.from_env({"WATERCOLOUR_ENV_IDLE_TIMEOUT": "0"})
    assert auth_headers("x", None, {}) == {"Authorization": "Bearer x"}
    assert auth_headers(None, None, {"WATERCOLOUR_ENV_TOKEN": "y"}) == {
        "Authorization": "Bearer y"}
    private = {"Authorization": "Bearer hf_abc"}  # a private Space's own header wins
    assert auth_headers(None, private, {"WATERCOLOUR_ENV_TOKEN": "y"}) == private
    assert auth_headers(None, None, {}) is None
    echoed = short_errors([{"loc": ["body", "x" * 500], "msg": "bad", "input": "A" * 10_000}]
                          * 20)
    assert "AAAA" not in json.dumps(echoed) and len(json.dumps(echoed)) < 2000


# ---------------------------------------------------------------- the token


@pytest.mark.browser
@pytest.mark.slow
def test_every_route_but_health_needs_the_token(pair):
    guarded, _ = pair
    step = {"action": {"reply": rejected("http")}}
    assert call(guarded.url, "/health")[0] == 200
    routes = [("/stats", None), ("/schema", None), ("/state", None), ("/metadata", None),
              ("/docs", None), ("/openapi.json", None), ("/reset", {}), ("/step", step),
              ("/mcp", {"jsonrpc": "2.0", "method": "tools/list", "id": 1})]
    for headers in (None, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN},
                    {"Authorization": f"Basic {TOKEN}"}):
        for path, body in routes:
            status, answer = call(guarded.url, path, body, headers)
            assert status == 401, (path, headers, status)
            assert "bearer token" in json.loads(answer)["detail"] and len(answer) < 200
    for path, body in routes[:-1]:
        assert call(guarded.url, path, body, BEARER)[0] == 200, path
    status, answer = call(guarded.url, "/step", step, BEARER)
    assert json.loads(answer)["observation"]["reply_sha256"] == sha(rejected("http"))
    assert call(guarded.url, "/mcp", routes[-1][1], BEARER)[0] == 404  # no MCP sessions
    full = stats(guarded, BEARER)  # a caller with the token sees the configuration
    assert full["config"]["max_sessions"] == 2 and full["config"]["token"] is True
    assert TOKEN not in json.dumps(full)


@pytest.mark.browser
@pytest.mark.slow
def test_a_websocket_needs_the_token_on_the_upgrade(pair, monkeypatch):
    guarded, _ = pair
    for headers in (None, {"Authorization": "Bearer nope"}):
        with pytest.raises(InvalidStatus) as refused, ws(guarded, headers):
            pass
        assert refused.value.response.status_code == 403
    with ws(guarded, BEARER) as socket_:
        socket_.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
        assert json.loads(socket_.recv(30))["type"] == "observation"
    monkeypatch.delenv("WATERCOLOUR_ENV_TOKEN", raising=False)
    with RemoteRewarder([guarded.url], timeout_s=60, retries=0) as rewarder:
        refused = rewarder.evaluate(rejected("no token"))
    assert refused.status == "unavailable" and "403" in refused.to_dict()["unavailable"][
        "reason"]
    with RemoteRewarder([guarded.url], timeout_s=60, token=TOKEN) as rewarder:
        assert rewarder.evaluate(rejected("token argument")).status == "rejected"
    with WatercolourEnv(guarded.url, token=TOKEN).sync() as env:
        assert env.reset(seed=4).observation.status == "ready"
    monkeypatch.setenv("WATERCOLOUR_ENV_TOKEN", TOKEN)  # the server's own variable
    with RemoteRewarder([guarded.url], timeout_s=60) as rewarder:
        assert rewarder.evaluate(rejected("token variable")).status == "rejected"
    settle(guarded)


@pytest.mark.browser
@pytest.mark.slow
def test_the_client_command_sends_the_token(pair, tmp_path, monkeypatch, capsys):
    guarded, _ = pair
    reply = tmp_path / "reply.md"
    reply.write_text(rejected("client command"))
    monkeypatch.setenv("WATERCOLOUR_ENV_TOKEN", TOKEN)
    assert cli_main(["client", "--url", guarded.url, str(reply), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["status"] == "rejected"
    monkeypatch.setenv("WATERCOLOUR_ENV_TOKEN", "wrong")
    assert cli_main(["client", "--url", guarded.url, str(reply), "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["reward"] is None
    settle(guarded)


# ---------------------------------------------------------------- one session limit


@pytest.mark.browser
@pytest.mark.slow
def test_http_reset_and_step_share_the_session_limit(pair):
    guarded, _ = pair
    settle(guarded)
    step = {"action": {"reply": rejected("over the limit")}}
    with contextlib.ExitStack() as sockets:
        for _ in range(2):
            held = sockets.enter_context(ws(guarded, BEARER))
            held.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            assert json.loads(held.recv(30))["type"] == "observation"
        for path, body in (("/step", step), ("/reset", {})):
            status, answer = call(guarded.url, path, body, BEARER)
            assert status == 503, (path, status, answer)
            assert "session limit" in json.loads(answer)["detail"] and len(answer) < 300
        with ws(guarded, BEARER) as extra:
            answer = json.loads(extra.recv(30))
        assert answer["type"] == "error" and answer["data"]["code"] == "CAPACITY_REACHED"
        assert stats(guarded, BEARER)["refused"] >= 3
        sockets.pop_all().close()
    settle(guarded)
    assert call(guarded.url, "/step", step, BEARER)[0] == 200


# ---------------------------------------------------------------- bounded input


def raw_request(port: int, head: str, chunks: int = 0, chunk: bytes = b"") -> tuple[int, int]:
    """Send ``head`` (then up to ``chunks`` chunked pieces until the server answers); the
    answer's status and the bytes of body sent."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode())
        sock.settimeout(0.5)
        answer = b""
        for _ in range(chunks):
            try:
                answer += sock.recv(4096)
                break
            except TimeoutError:
                pass
            except OSError:
                break
            try:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                sent += len(chunk)
            except OSError:  # the server closed it
                break
        sock.settimeout(10)
        with contextlib.suppress(OSError):
            while b"\r\n\r\n" not in answer:
                more = sock.recv(4096)
                if not more:
                    break
                answer += more
    status = answer.split(b" ", 2)[1] if answer.startswith(b"HTTP/") else b"0"  # 0: none
    return int(status), sent


@pytest.mark.browser
@pytest.mark.slow
def test_an_oversized_body_is_refused_before_it_is_read(pair):
    guarded, _ = pair
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    start = time.monotonic()
    status, _ = raw_request(guarded.port, f"POST /step HTTP/1.1\r\nHost: x\r\n{auth}"
                            "Content-Type: application/json\r\nContent-Length: 500000000\r\n\r\n")
    assert status == 413 and time.monotonic() - start < 10  # no body was sent at all
    status, sent = raw_request(guarded.port, f"POST /step HTTP/1.1\r\nHost: x\r\n{auth}"
                               "Content-Type: application/json\r\nTransfer-Encoding: chunked"
                               "\r\n\r\n", chunks=64, chunk=b"x" * 2**20)
    assert status == 413 and sent < 32 * 2**20, sent  # refused while it streamed in
    assert call(guarded.url, "/health")[0] == 200


@pytest.mark.browser
@pytest.mark.slow
def test_validation_errors_never_echo_the_input(pair):
    guarded, _ = pair
    filler = "A" * 200_000
    for body in ({"action": filler}, {"action": {"reply": 5, "junk": filler}},
                 {"action": {"reply": "B" * 1_000_001}}, [filler]):
        status, answer = call(guarded.url, "/step", body, BEARER)
        assert status == 422, (status, answer[:200])
        assert len(answer) < 2000 and b"AAAA" not in answer and b"BBBB" not in answer
        detail = json.loads(answer)["detail"]
        assert detail and all(set(d) == {"loc", "msg"} for d in detail)
    with ws(guarded, BEARER, max_size=2**24) as socket_:
        socket_.send(json.dumps({"type": "step", "data": {"reply": "B" * 1_000_001}}))
        frame = socket_.recv(30)
        assert len(frame) < 2000 and "BBBB" not in frame
        assert "at most 1000000 characters" in frame
        socket_.send(json.dumps({"type": "step", "data": {"reply": 5, "junk": filler}}))
        frame = socket_.recv(30)
        assert len(frame) < 2000 and "AAAA" not in frame and "valid string" in frame


@pytest.mark.browser
@pytest.mark.slow
def test_a_websocket_message_over_the_limit_is_closed(pair):
    guarded, _ = pair
    # plain uvicorn reads messages up to 16 MiB: the limit here is the app's own
    with ws(guarded, BEARER, max_size=2**24) as socket_, \
            pytest.raises(ConnectionClosed) as closed:
        socket_.send(json.dumps({"type": "step", "data": {"reply": "x" * 5_000_000}}))
        socket_.recv(30)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    settle(guarded)


# ---------------------------------------------------------------- idle websockets


@pytest.mark.browser
@pytest.mark.slow
def test_an_idle_websocket_is_closed_and_its_session_freed(pair):
    guarded, _ = pair
    settle(guarded)
    with RemoteRewarder([guarded.url], timeout_s=60, headers=BEARER) as rewarder:
        assert rewarder.evaluate(rejected("before")).status == "rejected"  # its socket stays
        start = time.monotonic()
        with ws(guarded, BEARER) as idle:
            idle.send(json.dumps({"type": "reset", "data": {"seed": 3}}))
            assert json.loads(idle.recv(30))["type"] == "observation"
            assert stats(guarded, BEARER)["sessions"] == 2  # every slot held, both idle
            with pytest.raises(ConnectionClosed) as closed:
                idle.recv(IDLE_S + 20)  # sends nothing more
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
        assert IDLE_S <= time.monotonic() - start < IDLE_S + 20
        after = settle(guarded)
        assert after["slots_held"] == 0 and after["sessions"] == 0
        # the rewarder's kept socket was closed too: it is replaced, the server not blamed
        again = rewarder.evaluate(rejected("after"))
        assert again.status == "rejected", again.to_dict()
        assert rewarder.stats()[0]["failures"] == 0
    settle(guarded)
    with ws(guarded, BEARER) as fresh:  # the slots are free again
        fresh.send(json.dumps({"type": "reset", "data": {"seed": 3}}))
        assert json.loads(fresh.recv(30))["type"] == "observation"


# ---------------------------------------------------------------- without a token


@pytest.mark.browser
@pytest.mark.slow
def test_without_a_token_stats_are_counts_and_requests_pass_as_they_are(pair):
    _, open_ = pair
    counts = open_.stats()
    assert "config" not in counts and {"sessions", "outcomes", "render_cache"} <= set(counts)
    assert "pool" not in json.dumps(counts) and "judge" not in json.dumps(counts)
    # a proxy's own header (a private Space's) or none: both pass when no token is set
    for headers in (None, {"Authorization": "Bearer hf_private_space_token"}):
        status, answer = call(open_.url, "/step", {"action": {"reply": rejected("open")}},
                              headers)
        assert status == 200 and json.loads(answer)["reward"] == 0.0
        with ws(open_, headers) as socket_:
            socket_.send(json.dumps({"type": "reset", "data": {"seed": 2}}))
            assert json.loads(socket_.recv(30))["type"] == "observation"
