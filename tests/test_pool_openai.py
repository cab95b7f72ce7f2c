"""The OpenAI-compatible painter and critic against a real local HTTP server (the standard
library's, speaking /v1/chat/completions and /v1/models), including its failures: 500s,
hangs, malformed JSON, unknown models, empty answers from a reasoning model, and a pool build
that survives them."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from watercolour.gates import extract_sketch
from watercolour.openai_compat import (
    ChatClient,
    ChatError,
    EmptyReply,
    ModelsNotServed,
    error_text,
    join_content,
    parse_reply,
    retryable_status,
)
from watercolour.pool import procedural
from watercolour.pool.build import BuildConfig, build_pool
from watercolour.pool.critic import CritiqueRequest, OpenAICritic, issues_from_text
from watercolour.pool.painters import (
    Attempt,
    OpenAIPainter,
    PaintRequest,
    Reference,
    model_painters,
)

SKETCH = procedural.generate(0, subject="a peach hibiscus", variant="good", size=128,
                             style="helpers").code


class FakeModels(BaseHTTPRequestHandler):
    """model ``painter``: a sketch; ``critic``: feedback; ``flaky``: two 500s then a reply;
    ``down``: always 503; ``hang``: answers after 5 s; ``garbage``: not JSON; ``nochoices``:
    JSON without choices; ``missing``: 404; ``thinker``: a reasoning model that spends its
    tokens and answers ``content: null``. ``GET /v1/models`` lists ``painter``, ``critic``
    and ``thinker``."""

    calls: ClassVar[Counter] = Counter()
    bodies: ClassVar[list] = []
    listings: ClassVar[list] = []

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, payload) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path != "/v1/models":
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        FakeModels.listings.append(self.headers.get("Authorization"))
        return self._send(200, {"object": "list", "data": [
            {"id": m, "object": "model", "owned_by": "test"}
            for m in ("painter", "critic", "thinker")]})

    def do_POST(self):
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model = body["model"]
        FakeModels.calls[model] += 1
        FakeModels.bodies.append(body)
        n = FakeModels.calls[model]
        if model == "down":
            return self._send(503, {"error": {"message": "overloaded"}})
        if model == "flaky" and n <= 2:
            return self._send(500, {"error": "boom"})
        if model == "hang":
            time.sleep(5)
        if model == "garbage":
            return self._send(200, b"{not json")
        if model == "nochoices":
            return self._send(200, {"object": "chat.completion"})
        if model == "missing":
            return self._send(404, {"error": {"message": "model missing not found"}})
        if model == "thinker":
            return self._send(200, {"id": "x", "object": "chat.completion", "model": model,
                                    "choices": [{"index": 0, "finish_reason": "length",
                                                 "message": {"role": "assistant",
                                                             "content": None,
                                                             "reasoning_content": "Hmm. " * 99}}],
                                    "usage": {"prompt_tokens": 10,
                                              "completion_tokens": body.get("max_tokens", 0)}})
        if model == "twice":  # a long first try, then a short correction: the last one counts
            text = f"```js\n{SKETCH}```\nOops, simpler:\n```js\nfunction setup() {{}}\n```"
        elif model == "critic":
            text = ("The flower is too small and lost on the paper; the colours look muddy."
                    if n == 1 else "Lovely translucent washes; keep the composition.")
        else:
            sketch = SKETCH if "seed" not in body else procedural.generate(
                body["seed"], subject="a peach hibiscus", variant="good", size=128).code
            text = f"Here is the sketch.\n```javascript\n{sketch}```\nEnjoy."
        return self._send(200, {"id": "x", "object": "chat.completion", "model": model,
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant",
                                                         "content": text}}],
                                "usage": {"prompt_tokens": 10, "completion_tokens": 20}})


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeModels)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _client(url, model, **kw):
    kw.setdefault("timeout_s", 2)
    kw.setdefault("retries", 2)
    kw.setdefault("backoff_s", 0.01)
    return ChatClient(url, model=model, **kw)


def test_a_reply(server):
    reply = _client(server, "painter").complete([{"role": "user", "content": "hi"}],
                                                max_tokens=10)
    assert "```javascript" in reply.text and reply.attempts == 1
    assert reply.usage["completion_tokens"] == 20 and reply.finish_reason == "stop"
    assert FakeModels.bodies[-1]["max_tokens"] == 10


def test_transient_failures_are_retried(server):
    reply = _client(server, "flaky").complete([{"role": "user", "content": "hi"}])
    assert reply.attempts == 3


@pytest.mark.parametrize(("model", "message", "calls"), [
    ("down", "HTTP 503: overloaded", 3),
    ("hang", "no answer within 0.5 s", 2),
    ("garbage", "malformed reply", 3),
    ("nochoices", "malformed reply", 3),
    ("missing", "HTTP 404: model missing not found", 1),  # not retried
])
def test_failures_after_bounded_retries(server, model, message, calls):
    before = FakeModels.calls[model]
    retries = 1 if model == "hang" else 2
    start = time.monotonic()
    with pytest.raises(ChatError, match=message) as caught:
        _client(server, model, timeout_s=0.5, retries=retries).complete(
            [{"role": "user", "content": "hi"}])
    assert FakeModels.calls[model] - before == calls
    assert caught.value.transient == (model != "missing")
    assert time.monotonic() - start < 8


def test_unreachable_server_is_transient():
    with pytest.raises(ChatError, match="cannot reach the server") as caught:
        ChatClient("http://127.0.0.1:9/v1", model="x", timeout_s=1, retries=0).complete([])
    assert caught.value.transient


def test_parse_reply_and_issues_from_text():
    assert parse_reply(b'{"choices":[{"message":{"content":[{"type":"text","text":"a"},'
                       b'{"type":"text","text":"b"}]}}]}').text == "ab"
    with pytest.raises(EmptyReply, match=r"no content \(finish_reason=stop\)"):
        parse_reply(b'{"choices":[{"finish_reason":"stop","message":{"content":null}}]}')
    assert issues_from_text("Too dark and a bit muddy; move it off the edge of the canvas") \
        == ["dark", "muddy", "off_centre"]


def test_painters_take_the_sketch_the_gates_take(server):
    painted = OpenAIPainter(_client(server, "twice")).paint(PaintRequest("a lotus", 0, 1))
    assert painted.code == extract_sketch(painted.text).code == "function setup() {}\n"


def test_painter_messages_carry_the_reference_and_history(server, tmp_path):
    photo = tmp_path / "hibiscus.png"
    from pool_helpers import png

    photo.write_bytes(png(1))
    vision = OpenAIPainter(_client(server, "painter"), vision=True)
    history = [Attempt(1, "function setup() {}", "Too dark.", ["dark"], png(2))]
    msgs = vision.messages(PaintRequest("a peach hibiscus", 3, 2, history,
                                        Reference(str(photo)), 256))
    assert "createCanvas(256, 256, WEBGL)" in msgs[0]["content"]
    assert msgs[1]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert msgs[2]["role"] == "assistant" and "function setup" in msgs[2]["content"]
    assert "Too dark." in msgs[3]["content"][1]["text"]
    text_only = OpenAIPainter(_client(server, "painter"))
    msgs = text_only.messages(PaintRequest("a peach hibiscus", 3, 1, [], None, 256))
    assert "The reference photo shows: A single hibiscus" in msgs[1]["content"]
    reply = text_only.paint(PaintRequest("a peach hibiscus", 3, 1, [], None, 256))
    assert reply.code == procedural.generate(3, subject="a peach hibiscus", variant="good",
                                             size=128).code.strip("\n") + "\n"
    assert FakeModels.bodies[-1]["seed"] == 3


def test_the_shared_pieces_of_the_client():
    assert [s for s in (400, 401, 404, 408, 422, 429, 500, 502, 503) if retryable_status(s)] \
        == [408, 429, 500, 502, 503]
    assert error_text(404, b'{"error": {"message": "model x not found"}}') == \
        "HTTP 404: model x not found"
    assert error_text(422, '{"detail": "bad field"}') == "HTTP 422: bad field"
    assert error_text(502, b"<html>bad gateway</html>") == "HTTP 502: <html>bad gateway</html>"
    assert join_content([{"type": "text", "text": "a"}, {"type": "image_url"},
                         {"type": "text", "text": "b"}, "junk"]) == "ab"
    assert join_content("plain") == "plain" and join_content(None) is None


def test_an_empty_answer_is_the_models_failure_not_retried(server):
    before = FakeModels.calls["thinker"]
    painter = OpenAIPainter(_client(server, "thinker", retries=2), max_tokens=64)
    reply = painter.paint(PaintRequest("a peach hibiscus", 1))
    assert FakeModels.calls["thinker"] - before == 1  # not retried at full cost
    assert reply.code is None and reply.text == ""
    assert "no content (finish_reason=length after 64 completion tokens" in reply.meta["error"]
    assert "ran out of tokens before answering" in reply.meta["error"]
    assert reply.meta["usage"]["completion_tokens"] == 64
    from pool_helpers import png

    critique = OpenAICritic(_client(server, "thinker")).critique(
        CritiqueRequest("a peach hibiscus", png(1)))
    assert critique.critic.startswith("offline (openai:thinker: the model returned no content")
    assert critique.score is not None and critique.text  # the measured critique stands in
    assert FakeModels.calls["thinker"] - before == 2


def test_painter_model_ids_are_checked_against_the_server_at_start(server, monkeypatch):
    before = len(FakeModels.listings)
    painters = model_painters(["painter", "thinker"], base_url=server, api_key="hf_key")
    assert [p.name for p in painters] == ["painter", "thinker"]
    assert FakeModels.listings[before:] == ["Bearer hf_key"]
    with pytest.raises(ModelsNotServed, match=r"does not serve org/unserved, missing:novita \(3 "
                                              r"models listed"):
        model_painters(["painter", "org/unserved", "missing:novita"], base_url=server,
                       api_key="hf_key")
    # an endpoint without GET /models cannot be checked: the painters are made unchecked
    assert len(model_painters(["org/unserved"], base_url=server.replace("/v1", "/v2"),
                              api_key="hf_key")) == 1
    # no token (a local server): no check, as before
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert len(model_painters(["org/unserved"], base_url=server)) == 1
    assert len(FakeModels.listings) == before + 2


@pytest.mark.browser
def test_a_build_with_model_painters_and_a_model_critic(server, renderer, tmp_path):
    painters = [OpenAIPainter(_client(server, "painter")),
                OpenAIPainter(_client(server, "down", retries=1), name="down")]
    critic = OpenAICritic(_client(server, "critic"))
    config = BuildConfig(out=str(tmp_path / "b"), size=4, rounds=2, canvas=128, negatives=0,
                         concurrency=2, progress=False,
                         subjects=["a peach hibiscus"])
    result = build_pool(config, painters=painters, critic=critic, renderer=renderer)
    assert result.tiers == {"love": 1, "okay": 1}
    assert sorted(result.unavailable) == ["down-0001-r1", "down-0003-r1"]
    records = [json.loads(line) for line in
               (tmp_path / "b" / "log" / "generations.jsonl").read_text().splitlines()]
    # the working painter's two paintings, both rounds; the failing one is unavailable
    assert sorted(r["id"] for r in records) == ["painter-0000-r1", "painter-0000-r2",
                                                "painter-0002-r1", "painter-0002-r2"]
    assert all(r["status"] == "ok" and r["critic"] == "openai:critic" for r in records)
    criticised = [r for r in records if "too small" in r["critique"]]
    assert len(criticised) == 1 and criticised[0]["issues"] == ["sparse", "muddy"]
    assert all(r["score"] is not None for r in records)  # the offline critic measures too
    assert all(r["painter_meta"]["model"] == "painter" for r in records)
    failures = [json.loads(line) for line in
                (tmp_path / "b" / "log" / "failures.jsonl").read_text().splitlines()]
    assert sorted(f["id"] for f in failures) == ["down-0001-r1", "down-0003-r1"]
    assert all("HTTP 503" in f["error"] for f in failures)
    # round 2 saw round 1's sketch and critique
    round2 = [b for b in FakeModels.bodies if b["model"] == "painter"
              and len(b["messages"]) == 4]
    assert len(round2) == 2
    assert any("too small" in b["messages"][3]["content"] for b in round2)
