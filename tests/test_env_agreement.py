"""The trainer and its environment servers score the same reward (issue 40): a server answers
its reward settings on ``GET /reward`` (read-only, behind the token), and a trainer given
``--env-url`` refuses to start when its mix, references or gate mode differ from a server's,
naming each difference and its fix."""

from __future__ import annotations

import pytest
from pool_helpers import rows
from rewards_support import painting

from watercolour.env.agreement import (
    DisagreementError,
    ServerPool,
    check_agreement,
    differences,
    http_url,
    mix_flag,
)
from watercolour.env.models import RewardSettings
from watercolour.rewards import Mix, RewardConfig

TOKEN = "agreement-test-token"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
HPS_ONLY = {"judge": 0.0, "hps": 0.9, "pigment": 0.0, "gate": 0.05, "length": 0.05}


def served(mix: dict[str, float] = HPS_ONLY, references: int = 6, gate_mode: str = "allowlist",
           tiers: dict[str, list[str]] | None = None) -> RewardSettings:
    return RewardSettings(mix=mix, mix_name="whatever the server says", references=references,
                          gate_mode=gate_mode, pool="pool/rated",
                          tiers={"love": ["a", "b"], "okay": ["c"]} if tiers is None else tiers)


def pool_folder(folder):
    from watercolour.pool.dataset import write_pool_folder

    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    return write_pool_folder(pool_rows, folder)


def test_every_difference_is_named_with_both_values_and_its_fix():
    ours = RewardConfig(mix=Mix.preset("judge-led"), references=4, gate_mode="library")
    lines = differences(ours, served(), "http://s:1")
    assert len(lines) == 3
    mix, references, gate = lines
    assert mix.startswith("mix: this run judge-led (judge 0.6, hps 0.3, pigment 0), the server "
                          "hps-only (judge 0, hps 0.9, pigment 0): give --mix hps-only, or "
                          "start the server with WATERCOLOUR_JUDGE_WEIGHT=0.6 "
                          "WATERCOLOUR_HPS_WEIGHT=0.3 WATERCOLOUR_PIGMENT_WEIGHT=0")
    assert references == ("references: this run 4 a group, the server 6: give --references 6, "
                          "or start the server with WATERCOLOUR_REFERENCES=4")
    assert gate == ("gate mode: this run library, the server allowlist: give --gate-mode "
                    "allowlist, or start the server with WATERCOLOUR_GATE_MODE=library")
    with pytest.raises(DisagreementError) as caught:
        check_agreement(ours, {"http://s:1": served()})
    message = str(caught.value)
    assert "another reward than this run asks for" in message
    assert all(f"http://s:1: {line}" in message for line in lines)


def test_a_run_that_agrees_starts_and_keeps_the_servers_pool():
    ours = RewardConfig(mix=Mix.preset("hps-only"), references=6, gate_mode="allowlist")
    assert differences(ours, served(), "http://s:1") == []
    pool = check_agreement(ours, {"http://s:1": served(), "http://s:2": served()})
    assert pool == ServerPool("pool/rated", {"love": ("a", "b"), "okay": ("c",)})
    assert pool.tier("love") == ["a", "b"] and pool.tier("hated") == []
    without = served(tiers={}).model_copy(update={"pool": None})
    assert check_agreement(ours, {"http://s:1": without}) is None  # no pool loaded there


def test_the_run_records_what_each_server_answered_and_nothing_in_process():
    from types import SimpleNamespace

    from watercolour.train.trainer import servers_record

    remote = SimpleNamespace(inner=SimpleNamespace(served={"http://s:1": served()}))
    recorded = servers_record(remote)
    assert recorded == {"http://s:1": served().model_dump(mode="json")}
    assert recorded["http://s:1"]["mix"]["hps"] == 0.9
    assert servers_record(SimpleNamespace(inner=object())) is None


def test_servers_with_different_pools_are_refused():
    ours = RewardConfig(mix=Mix.preset("hps-only"), references=6, gate_mode="allowlist")
    other = served(tiers={"love": ["a"], "okay": ["c"]})
    with pytest.raises(DisagreementError, match=r"pool: the servers draw references from "
                       r"different pools \(http://s:1: love 2, okay 1; http://s:2: love 1, "
                       r"okay 1\): start them all with the same WATERCOLOUR_POOL"):
        check_agreement(ours, {"http://s:1": served(), "http://s:2": other})


def test_a_custom_mix_is_given_back_as_its_weights():
    custom = Mix.from_weights(judge=0.5, hps=0.3, pigment=0.1)
    assert mix_flag(custom) == "judge=0.5,hps=0.3,pigment=0.1"
    assert Mix.parse(mix_flag(custom)) == custom
    assert mix_flag(Mix.preset("hps-led")) == "hps-led"
    assert http_url("wss://a.hf.space/") == "https://a.hf.space"
    assert http_url("ws://127.0.0.1:8000") == "http://127.0.0.1:8000"


def test_the_server_answers_its_reward_settings_read_only_and_behind_the_token(tmp_path,
                                                                                monkeypatch):
    from starlette.testclient import TestClient

    from watercolour.env.config import EnvConfig
    from watercolour.env.server.app import build_app
    from watercolour.env.server.environment import Service
    from watercolour.render import RenderConfig

    monkeypatch.chdir(tmp_path)
    pool = pool_folder(tmp_path / "pool")
    config = EnvConfig(reward=RewardConfig(mix=Mix.preset("hps-only"), pool=str(pool),
                                           references=2, gate_mode="allowlist"),
                       render=RenderConfig(workers=1), token=TOKEN)
    service = Service(config, renderer=object())  # nothing is rendered
    with TestClient(build_app(service=service)) as client:
        assert client.get("/reward").status_code == 401
        answer = client.get("/reward", headers=BEARER)
        assert answer.status_code == 200
        settings = RewardSettings.model_validate(answer.json())
        assert settings.mix == Mix.preset("hps-only").weights and settings.references == 2
        assert settings.gate_mode == "allowlist" and settings.mix_name == "hps-only"
        assert {t: len(ids) for t, ids in settings.tiers.items()} == {"love": 4, "okay": 4}
        changed = {**answer.json(), "references": 9, "mix": {"judge": 0.6, "hps": 0.3}}
        for method in ("post", "put", "patch"):
            assert getattr(client, method)("/reward", json=changed,
                                           headers=BEARER).status_code == 405
        assert client.delete("/reward", headers=BEARER).status_code == 405
        assert client.get("/reward", headers=BEARER).json() == answer.json()
    assert service.config.reward.references == 2


@pytest.mark.browser
@pytest.mark.slow
def test_a_trainer_on_another_mix_than_its_server_refuses_to_start(tmp_path, monkeypatch):
    """A real server (its own process, a browser) on hps-only with 2 references; a run that
    asks for the default judge-led mix and 4 references stops before its first step."""
    from serving import EnvServer

    from watercolour.train.config import parse_args
    from watercolour.train.reward_source import make_rewarder
    from watercolour.train.trainer import servers_record

    pool = pool_folder(tmp_path / "pool")
    server = EnvServer(tmp_path, {
        "WATERCOLOUR_POOL": str(pool), "WATERCOLOUR_RENDER_WORKERS": "1",
        "WATERCOLOUR_JUDGE_WEIGHT": "0", "WATERCOLOUR_HPS_WEIGHT": "0.9",
        "WATERCOLOUR_REFERENCES": "2", "WATERCOLOUR_HPS_URL": "",
        "WATERCOLOUR_JUDGE_BASE_URL": "", "WATERCOLOUR_ENV_TOKEN": TOKEN}).start()
    for name in ("WATERCOLOUR_JUDGE_WEIGHT", "WATERCOLOUR_HPS_WEIGHT", "WATERCOLOUR_REFERENCES",
                 "WATERCOLOUR_GATE_MODE", "WATERCOLOUR_PIGMENT_WEIGHT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WATERCOLOUR_ENV_TOKEN", TOKEN)
    try:
        server.wait()
        run, _ = parse_args(["--env-url", server.url, "--references", "4", "--pool", str(pool)])
        with pytest.raises(DisagreementError) as caught:
            make_rewarder(run.env_url, run.reward_config(), timeout_s=60)
        message = str(caught.value)
        assert f"{server.url}: mix: this run judge-led" in message
        assert "the server hps-only (judge 0, hps 0.9, pigment 0): give --mix hps-only" in message
        assert "references: this run 4 a group, the server 2: give --references 2" in message
        assert "gate mode" not in message

        run, _ = parse_args(["--env-url", server.url, "--mix", "hps-only", "--references", "2"])
        source = make_rewarder(run.env_url, run.reward_config(), timeout_s=60)
        try:
            assert source.mix.name == "hps-only" and source.config.references == 2
            assert len(source.inner.pool.tier("love")) == 4  # the curriculum's check reads it
            recorded = servers_record(source)  # run.json's "servers"
            assert list(recorded) == [server.url]
            assert recorded[server.url]["mix_name"] == "hps-only"
            assert recorded[server.url]["references"] == 2
        finally:
            source.close()

        monkeypatch.setenv("WATERCOLOUR_ENV_TOKEN", "not-the-token")
        with pytest.raises(DisagreementError, match="refused the token"):
            make_rewarder(run.env_url, run.reward_config(), timeout_s=60)
    finally:
        server.stop()
