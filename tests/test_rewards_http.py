"""The HTTP backends against real local servers: the HPSv3 service's shell (with its stand-in
scorer), the HPS client and the OpenAI-compatible judge client under injected faults (500s,
hangs, malformed JSON, nonsense answers, empty answers, offline mode, structured output)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
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
from watercolour.rewards.judge.openai_judge import (
    VERDICT_SCHEMA,
    OpenAIJudge,
    data_url,
    judge_client,
    parse_answer,
)

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
    assert health["status"] == "ready" and health["scorer"] == "stand-in"
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


def test_the_default_mapping_is_logistic_mu_over_4_and_clips_nothing():
    default = HpsMapping()
    # the reproduction's pool ran from about -9.2 (okay) to +5.2 (its best)
    assert default.unit(-9.2) == pytest.approx(1 / (1 + 2.718281828 ** 2.3), abs=1e-6)
    assert round(default.unit(-9.2), 2) == 0.09 and round(default.unit(5.2), 2) == 0.79
    assert default.unit(0.0) == 0.5
    mus = [-9.2, -6.0, -3.0, 0.0, 2.5, 5.2, 7.0]
    units = [default.unit(m) for m in mus]
    assert units == sorted(units) and len(set(units)) == len(units)  # order kept, no ties
    assert all(0.0 < u < 1.0 for u in units)  # nothing clipped
    assert default.unit(-1e6) == 0.0 and default.unit(1e6) == 1.0  # no overflow


def test_a_calibration_is_fitted_on_a_pools_mu():
    mapping = calibrate([float(x) for x in range(101)])
    assert mapping.anchors == pytest.approx((2.0, 98.0))
    assert mapping.unit(2.0) == pytest.approx(0.02) and mapping.unit(98.0) == pytest.approx(0.98)
    assert mapping.unit(50.0) == pytest.approx(0.5)
    assert 0.0 < mapping.unit(-5) < 0.02 and 0.98 < mapping.unit(200) < 1.0
    pool_mus = [-9.2, -7.5, -4.0, -1.0, 0.5, 3.0, 5.2]
    fitted = calibrate(pool_mus, source="the reproduction's pool")
    assert fitted.unit(5.2) > 0.95 and fitted.unit(-9.2) < 0.05  # the pool fills the range
    assert "the reproduction's pool" in fitted.source
    assert HpsMapping.from_env({"WATERCOLOUR_HPS_RANGE": "-1,9"}).unit(4.0) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="do not spread"):
        calibrate([3.0, 3.0, 3.0])
    with pytest.raises(ValueError, match="lo < hi"):
        HpsMapping.from_env({"WATERCOLOUR_HPS_RANGE": "9,1"})


def test_a_saved_mapping_loads_back(tmp_path):
    fitted = calibrate([-4.0, -1.0, 2.0, 6.0])
    path = fitted.save(tmp_path / "hps-mapping.json")
    assert HpsMapping.load(path) == fitted
    assert HpsMapping.from_env({"WATERCOLOUR_HPS_RANGE": str(path)}) == fitted
    (tmp_path / "old.json").write_text('{"lo": 0, "hi": 10}')
    with pytest.raises(ValueError, match="needs 'centre' and 'scale'"):
        HpsMapping.load(tmp_path / "old.json")


def test_a_space_gets_the_token_and_no_other_host_does(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_space_secret")
    assert HpsClient("https://me-hps.hf.space").token == "hf_space_secret"
    assert HpsClient("http://127.0.0.1:8765").token is None
    assert HpsClient("https://hps.example.org").token is None
    with FaultServer(hps_answer) as server:  # the header the client sends with a token
        HpsClient(server.url, token="hf_space_secret", timeout_s=5).score([A], "x")
        assert server.requests[0]["authorization"] == "Bearer hf_space_secret"


# ---------------------------------------------------------------- the OpenAI-compatible judge


def test_answers_are_strict_json():
    assert parse_answer('{"winner": "A", "reason": "softer"}') == ("first", "softer", None)
    assert parse_answer('```json\n{"winner": "b"}\n```')[0] == "second"
    assert parse_answer('<think>hmm</think>{"winner": "B"}')[0] == "second"
    assert parse_answer('Sure. {"winner": "A", "reason": "wetter"} Hope that helps.') == \
        ("first", "wetter", None)
    # a verdict cut off by max_tokens still has its winner, which the schema puts first
    assert parse_answer('{"winner": "B", "reason": "the washes are sof') == \
        ("second", None, None)
    assert parse_answer('{"winner": "A"') == ("first", None, None)
    for bad in ("A", '{"winner": "C"}', '{"reason": "x"}', "[1]", "", None,
                '{"reason": "x", "winner": "A', '{"winner": "AB"}'):
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
        assert body["response_format"] == VERDICT_SCHEMA
        assert "bleeding edges" in body["messages"][0]["content"].lower()
        assert "a peach hibiscus" in body["messages"][0]["content"]
        parts = body["messages"][1]["content"]
        assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]


def test_the_verdict_schema_puts_a_winner_enum_first_and_bounds_the_reason():
    spec = VERDICT_SCHEMA["json_schema"]
    assert VERDICT_SCHEMA["type"] == "json_schema" and spec["strict"] is True
    schema = spec["schema"]
    assert list(schema["properties"]) == ["winner", "reason"]
    assert schema["properties"]["winner"]["enum"] == ["A", "B"]
    assert 0 < schema["properties"]["reason"]["maxLength"] <= 300
    assert schema["required"] == ["winner", "reason"] and not schema["additionalProperties"]


def test_an_endpoint_that_rejects_the_schema_is_asked_without_it_once():
    rejection = b'{"error": {"message": "response_format json_schema is not supported"}}'
    with FaultServer(answer("B"), [("status", 400, rejection), "ok"]) as server:
        judge = OpenAIJudge("m", base_url=server.url + "/v1", timeout_s=5, backoff_s=0.01)
        first = judge.compare(A, B, "x")
        second = judge.compare(A, B, "x")
        assert (first.winner, second.winner) == ("second", "second")
        assert [("response_format" in r["json"]) for r in server.requests] == [True, False, False]
        assert first.attempts == 2 and not judge.structured


def test_an_empty_answer_is_the_models_failure_and_is_not_retried():
    def thinking(request):
        reply = chat_completion("")
        reply["choices"][0].update(finish_reason="length", message={
            "role": "assistant", "content": None, "reasoning_content": "Let me think... " * 40})
        reply["usage"]["completion_tokens"] = 200
        return reply

    with FaultServer(thinking) as server:
        judge = OpenAIJudge("m", base_url=server.url + "/v1", timeout_s=5, retries=2,
                            backoff_s=0.01)
        vote = judge.compare(A, B, "x")
    assert len(server.requests) == 1 and vote.attempts == 1 and vote.winner is None
    assert "no content" in vote.error and "finish_reason=length" in vote.error
    assert "200 completion tokens" in vote.error and "reasoning" in vote.error


def test_a_base_url_judge_works_with_hf_hub_offline():
    """huggingface_hub refuses every request in offline mode, local ones included; the
    judge's client is plain HTTP. Run in a fresh interpreter so the variable is read at
    import time, as on a training box."""
    script = ("import sys; from rewards_support import painting\n"
              "from watercolour.rewards.judge.openai_judge import OpenAIJudge\n"
              "vote = OpenAIJudge('m', base_url=sys.argv[1], timeout_s=10, retries=0)"
              ".compare(painting(1), painting(2, 'okay'), 'a rose')\n"
              "print(vote.winner, vote.error)\n")
    with FaultServer(answer("A")) as server:
        env = {**os.environ, "HF_HUB_OFFLINE": "1",
               "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__), *sys.path])}
        done = subprocess.run([sys.executable, "-c", script, server.url + "/v1"], env=env,
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["first", "None"] and len(server.requests) == 1


def test_provider_names_are_checked_when_the_judge_is_made(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_router_token")
    for bad in ("nebius", "fastest", "Novita"):
        with pytest.raises(ValueError, match=f"unknown Inference Provider '{bad}': choose one "
                                             "of auto, .*novita"):
            OpenAIJudge("org/vlm", provider=bad)
    with pytest.raises(ValueError, match="unknown Inference Provider 'nebius'"):
        OpenAIJudge("org/vlm:nebius")  # the model:provider suffix is checked the same way
    routed = judge_client("org/vlm", provider="novita")
    assert (routed.base_url, routed.model) == ("https://router.huggingface.co/v1",
                                               "org/vlm:novita")
    assert routed.api_key == "hf_router_token"
    assert judge_client("org/vlm:together").model == "org/vlm:together"
    assert judge_client("org/vlm", provider="auto").model == "org/vlm"  # the router picks
    monkeypatch.setenv("HF_TOKEN", "sk-not-a-hub-token")
    with pytest.raises(ValueError, match=r"'auto' .* needs a Hugging Face token: set "
                                         r"HF_TOKEN=hf_"):
        OpenAIJudge("org/vlm", provider="auto")
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(ValueError, match="needs a Hugging Face token"):
        OpenAIJudge("org/vlm", provider="novita")
    with pytest.raises(ValueError, match="not both"):
        OpenAIJudge("org/vlm", provider="novita", base_url="http://127.0.0.1:1/v1")


@pytest.mark.parametrize("script, error, attempts", [
    ([("status", 500)], "HTTP 500", 3),
    ([("status", 502), ("status", 429), "ok"], None, 3),
    ([("hang", 5)], "no answer within 0.5 s", 3),
    ([("raw", b"{not json")], "malformed reply", 3),
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
            assert vote.attempts == attempts


def test_the_judge_keeps_to_its_concurrency_limit():
    with FaultServer(answer("A"), delay_s=0.2) as server:
        judge = OpenAIJudge("m", base_url=server.url + "/v1", timeout_s=5, max_concurrency=2)
        votes = judge.compare_many([(A, B)] * 6, "x")
        assert [v.winner for v in votes] == ["first"] * 6
        assert server.max_in_flight == 2
