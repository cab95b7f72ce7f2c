"""The HTTP backends against real local servers: the HPSv3 service's shell (with its stand-in
scorer), the HPS client and the OpenAI-compatible judge client under injected faults (500s,
hangs, malformed JSON, nonsense answers)."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from rewards_support import FaultServer, answer, chat_completion, hps_answer, painting

from watercolour.rewards.hps.base import ScorerUnavailable
from watercolour.rewards.hps.client import HpsClient
from watercolour.rewards.hps.mapping import HpsMapping, calibrate
from watercolour.rewards.hps.service import app
from watercolour.rewards.judge.openai_judge import OpenAIJudge, data_url, parse_answer

A, B = painting(1), painting(2, "okay")


# ---------------------------------------------------------------- the HPS service


@pytest.fixture(scope="module")
def service():
    server = app.make_server(app.StandInScorer(), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}"
    server.shutdown()
    server.server_close()


def _post(url, body: bytes):
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_the_service_scores_images_and_reports_health(service):
    client = HpsClient(service, timeout_s=10)
    health = client.health()
    assert health["status"] == "ok" and health["scorer"] == "stand-in"
    scores = client.score([A, B, painting(0, "blank")], "a rose, a watercolour painting")
    assert len(scores) == 3 and all(s.sigma == 1.0 for s in scores)
    assert all(0.0 <= s.unit <= 1.0 for s in scores)
    assert scores[2].mu < scores[0].mu  # the stand-in prefers paint to bare paper
    assert client.score([A], "x")[0].mu == scores[0].mu  # deterministic


@pytest.mark.parametrize("body, message", [
    (b"{not json", "not JSON"),
    (json.dumps({"images": ["aGk="]}).encode(), "'prompt'"),
    (json.dumps({"prompt": "x", "images": []}).encode(), "'images'"),
    (json.dumps({"prompt": "x", "images": ["@@@"]}).encode(), "not base64"),
    (json.dumps({"prompt": "x", "images": [base64.b64encode(b"GIF89a").decode()]}).encode(),
     "not a PNG"),
])
def test_the_service_rejects_bad_requests_with_400(service, body, message):
    status, payload = _post(service + "/score", body)
    assert status == 400 and message in payload["error"]


def test_a_model_failure_is_a_500_and_the_client_says_unavailable():
    class Broken:
        name = "broken"

        def score(self, images, prompt):
            raise RuntimeError("CUDA out of memory (injected)")

    server = app.make_server(Broken(), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host, port = server.server_address[:2]
        url = f"http://{host}:{port}"
        status, payload = _post(url + "/score", json.dumps(
            {"prompt": "x", "images": [base64.b64encode(A).decode()]}).encode())
        assert status == 500 and "out of memory" in payload["error"]
        with pytest.raises(ScorerUnavailable, match="HTTP 500"):
            HpsClient(url, retries=0).score([A], "x")
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------- the HPS client under faults


@pytest.mark.parametrize("script, message, attempts", [
    ([("status", 500)], "HTTP 500", 2),
    ([("status", 503), "ok"], None, 2),
    ([("hang", 5)], "no answer within 0.5 s", 2),
    ([("raw", b"<html>bad gateway</html>")], "not JSON", 2),
    ([("raw", b'{"scores": [{"mu": 1.0}]}')], "1 scores for 2 images", 2),
    ([("raw", b'{"scores": [{"mu": "NaN"}, {"mu": 1}]}')], "mu is nan", 2),
    ([("status", 400)], "HTTP 400", 1),
])
def test_the_hps_client_under_injected_faults(script, message, attempts):
    with FaultServer(hps_answer, script) as server:
        client = HpsClient(server.url, timeout_s=0.5, retries=1, backoff_s=0.01)
        start = time.monotonic()
        if message is None:
            assert [s.mu for s in client.score([A, B], "x")] == [5.0, 6.0]
        else:
            with pytest.raises(ScorerUnavailable, match=message):
                client.score([A, B], "x")
        assert len(server.requests) == attempts
        assert time.monotonic() - start < 5


def test_an_hps_service_that_is_not_there_is_unavailable():
    with FaultServer(hps_answer) as server:
        url = server.url
    with pytest.raises(ScorerUnavailable, match="cannot reach"):
        HpsClient(url, timeout_s=1, retries=0).score([A], "x")


def test_the_mapping_is_calibrated_on_the_pools_range():
    mapping = calibrate([float(x) for x in range(101)])
    assert (mapping.lo, mapping.hi) == (2.0, 98.0)
    assert mapping.unit(50.0) == pytest.approx(0.5) and mapping.unit(-5) == 0.0
    assert mapping.unit(1e9) == 1.0
    assert HpsMapping().unit(5.0) == 0.5  # HPSv3's own 0..10 before calibration
    with pytest.raises(ValueError, match="do not spread"):
        calibrate([3.0, 3.0, 3.0])


# ---------------------------------------------------------------- the OpenAI-compatible judge


def test_answers_are_strict_json():
    assert parse_answer('{"winner": "A", "reason": "softer"}') == ("first", "softer", None)
    assert parse_answer('```json\n{"winner": "b"}\n```')[0] == "second"
    assert parse_answer('<think>hmm</think>{"winner": "B"}')[0] == "second"
    for bad in ("A", '{"winner": "C"}', '{"reason": "x"}', "[1]", "", None):
        winner, _, error = parse_answer(bad)
        assert winner is None and error


def test_images_are_sent_downscaled_as_data_urls():
    big = painting(3, size=600)
    url = data_url(big, side=128)
    assert url.startswith("data:image/png;base64,")
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert max(image.size) == 128


def test_the_judge_asks_with_the_rubric_and_reads_the_answer(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    monkeypatch.delenv("WATERCOLOUR_JUDGE_API_KEY", raising=False)
    with FaultServer(answer("B")) as server:
        judge = OpenAIJudge("test-vlm", base_url=server.url + "/v1", timeout_s=5)
        vote = judge.compare(A, B, "a peach hibiscus")
        assert vote.winner == "second" and vote.error is None and vote.reason == "test"
        request = server.requests[0]
        assert request["path"] == "/v1/chat/completions"
        assert "hf_secret" not in (request["authorization"] or "")  # not sent to other hosts
        body = request["json"]
        assert body["model"] == "test-vlm" and body["temperature"] == 0.0
        assert "bleeding edges" in body["messages"][0]["content"].lower()
        assert "a peach hibiscus" in body["messages"][0]["content"]
        parts = body["messages"][1]["content"]
        assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]


@pytest.mark.parametrize("script, error, attempts", [
    ([("status", 500)], "HTTP 500", 3),
    ([("status", 502), ("status", 429), "ok"], None, 3),
    ([("hang", 5)], "Timeout", 3),
    ([("raw", b"{not json")], "JSONDecodeError", 3),
    ([("status", 401)], "HTTP 401", 1),
    ([lambda request: chat_completion("Image A, clearly.")], "unparseable", 1),
])
def test_the_judge_under_injected_faults(script, error, attempts):
    with FaultServer(answer("A"), script) as server:
        judge = OpenAIJudge("m", base_url=server.url + "/v1", timeout_s=0.5, retries=2,
                            backoff_s=0.01)
        vote = judge.compare(A, B, "x")
        assert len(server.requests) == attempts
        if error is None:
            assert vote.winner == "first" and vote.attempts == 3
        else:
            assert vote.winner is None and error in vote.error


def test_the_judge_keeps_to_its_concurrency_limit():
    with FaultServer(answer("A"), delay_s=0.2) as server:
        judge = OpenAIJudge("m", base_url=server.url + "/v1", timeout_s=5, max_concurrency=2)
        votes = judge.compare_many([(A, B)] * 6, "x")
        assert [v.winner for v in votes] == ["first"] * 6
        assert server.max_in_flight == 2
