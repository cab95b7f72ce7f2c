"""The environment in process: configuration, wire models, critique, the render cache, the
episode (reset, step, two turns) over a real browser, and the RemoteRewarder's failure paths
that need no server."""

from __future__ import annotations

import base64
import json
import threading
import time

import pytest
from conftest import SMALL_SKETCH
from pool_helpers import rows
from rewards_support import BrokenBrowser, painting
from serving import free_port

from watercolour.cli import main as cli_main
from watercolour.env import (
    EnvConfig,
    EnvConfigError,
    RemoteRewarder,
    WatercolourAction,
    WatercolourObservation,
    WatercolourState,
    from_observation,
)
from watercolour.env.cache import RenderCache
from watercolour.env.config import default_browsers
from watercolour.env.critique import critique
from watercolour.env.server.environment import Service, WatercolourEnvironment
from watercolour.pool.dataset import write_pool_folder
from watercolour.render import RenderConfig
from watercolour.rewards import Mix, RewardConfig

REPLY = f"A hibiscus.\n\n```javascript\n{SMALL_SKETCH}\n```\n"


# ---------------------------------------------------------------- configuration


def test_every_configuration_mistake_is_one_line():
    with pytest.raises(EnvConfigError) as err:
        EnvConfig.from_env({"WATERCOLOUR_RENDER_WORKERS": "two",
                            "WATERCOLOUR_ENV_MAX_SESSIONS": "0",
                            "WATERCOLOUR_RENDER_DEADLINE": "-1",
                            "WATERCOLOUR_JUDGE_WEIGHT": "0.3"})
    lines = str(err.value).splitlines()
    assert len(lines) == 4
    for name in ("WATERCOLOUR_RENDER_WORKERS", "WATERCOLOUR_ENV_MAX_SESSIONS",
                 "WATERCOLOUR_RENDER_DEADLINE", "WATERCOLOUR_JUDGE_WEIGHT"):
        assert sum(name in line for line in lines) == 1
    config = EnvConfig.from_env({"WATERCOLOUR_ENV_MAX_SESSIONS": "16",
                                 "WATERCOLOUR_ENV_RENDER_CACHE": "0"})
    assert (config.max_sessions, config.render_cache) == (16, 0)
    assert config.render.workers >= 1 and config.resolved()["reward"]["mix"]["name"] == \
        "judge-led"


def test_the_render_settings_are_render_configs_with_the_servers_browser_default():
    assert EnvConfig.from_env({}).render.workers == default_browsers() == EnvConfig().render.workers
    config = EnvConfig.from_env({"WATERCOLOUR_RENDER_WORKERS": "3", "WATERCOLOUR_GL": "gpu",
                                 "WATERCOLOUR_RENDER_DEADLINE": "12"})
    assert config.render == RenderConfig(workers=3, gl="gpu", deadline_s=12.0)
    assert config.resolved()["render"]["workers"] == 3
    with pytest.raises(EnvConfigError, match=r"^WATERCOLOUR_GL must be one of"):
        EnvConfig.from_env({"WATERCOLOUR_GL": "opengl"})  # one mistake: still ours
    with pytest.raises(EnvConfigError, match="render_cache must be at least 0"):
        EnvConfig(render_cache=-1)


def test_serve_refuses_a_bad_configuration_before_listening(monkeypatch, capsys):
    monkeypatch.setenv("WATERCOLOUR_ENV_MAX_TURNS", "lots")
    monkeypatch.setenv("WATERCOLOUR_GATE_MODE", "strict")
    assert cli_main(["serve", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("watercolour serve: error: ") for line in err)
    assert any("WATERCOLOUR_ENV_MAX_TURNS" in line for line in err)
    assert any("WATERCOLOUR_GATE_MODE" in line for line in err)


# ---------------------------------------------------------------- models


def test_every_field_is_described():
    for model in (WatercolourAction, WatercolourObservation, WatercolourState):
        for name, prop in model.model_json_schema()["properties"].items():
            assert prop.get("description"), f"{model.__name__}.{name}"


def test_the_action_refuses_bad_payloads_clearly():
    with pytest.raises(ValueError, match="Field required"):
        WatercolourAction.model_validate({})
    with pytest.raises(ValueError, match="valid string"):
        WatercolourAction.model_validate({"reply": 5})
    with pytest.raises(ValueError, match="at most 1000000 characters"):
        WatercolourAction(reply="x" * 1_000_001)
    with pytest.raises(ValueError, match="Extra inputs"):
        WatercolourAction.model_validate({"reply": "x", "reward": 1})
    broken = WatercolourAction.model_validate({"reply": "paint \udcff"})
    assert broken.problem == "the reply is not valid UTF-8 text (a lone surrogate at character 6)"
    assert WatercolourAction(reply="fine").problem is None


def test_the_critique_describes_the_render_not_the_score():
    gate = {"violations": ["text_on_canvas"], "reasons": {"text_on_canvas": "fillText"},
            "paint_fraction": 0.02, "n_shapes": 3, "render": {}, "error": None,
            "image": {"shape_edges": 0.7, "mean_luma": 80.0}}
    text = critique(gate)
    assert "text_on_canvas (fillText)" in text and "2%" in text and "sparse" in text
    assert "3 filled brush shapes" in text and "dark" in text and "busy" in text
    assert "reward" not in text.lower() and "reference" not in text.lower()
    assert "browser failed" in critique({"infrastructure_failure": True})


# ---------------------------------------------------------------- the render cache


@pytest.mark.browser
def test_the_render_cache_renders_a_sketch_and_seed_once(renderer):
    cache = RenderCache(renderer, size=4)
    first = cache.render(SMALL_SKETCH, seed=101)
    assert cache.last_hit is False
    again = cache.render(SMALL_SKETCH, seed=101)
    assert cache.last_hit is True and again.png == first.png
    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.render(SMALL_SKETCH, 102)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = cache.stats()
    assert (stats["misses"], stats["hits"], stats["kept"]) == (2, 3, 2)  # 102: one render
    assert len({r.png for r in results}) == 1 and results[0].png != first.png


def test_infrastructure_failures_are_not_kept():
    browser = BrokenBrowser()
    cache = RenderCache(browser, size=4)
    assert cache.render("x", 0).infrastructure_failure
    assert cache.render("x", 0).infrastructure_failure
    assert browser.calls == 2 and cache.stats()["kept"] == 0


# ---------------------------------------------------------------- the episode


@pytest.fixture(scope="module")
def service(renderer, tmp_path_factory):
    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    pool = write_pool_folder(pool_rows, tmp_path_factory.mktemp("env-pool") / "pool")
    config = EnvConfig(reward=RewardConfig(mix=Mix.preset("judge-led"), pool=str(pool)),
                       render=RenderConfig(workers=1), max_turns=3)
    yield Service(config, renderer=renderer)


@pytest.mark.browser
def test_reset_draws_the_groups_references_from_the_seed(service):
    env = WatercolourEnvironment(service)
    first = env.reset(seed=7, subject="a lotus")
    assert first.status == "ready" and first.reward is None and not first.done
    assert first.prompt[-1] == {"role": "user", "content": "Paint a lotus in watercolour."}
    assert len(first.reference_ids) == 4 and env.state.reference_ids == first.reference_ids
    again = WatercolourEnvironment(service).reset(seed=7, subject="a lotus")
    assert again.reference_ids == first.reference_ids
    others = {tuple(WatercolourEnvironment(service).reset(seed=s, subject="a lotus").reference_ids)
              for s in range(8, 14)}
    assert len(others | {tuple(first.reference_ids)}) > 1
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(seed=1, colour="red")
    with pytest.raises(ValueError, match="max_turns must be between 1 and 3"):
        env.reset(max_turns=4)
    with pytest.raises(ValueError, match="seed must be an integer"):
        env.reset(seed="7")


@pytest.mark.browser
def test_the_references_reset_names_are_the_ones_the_step_is_judged_against(service):
    """A subject of the pool's: reset draws from that subject's paintings, as the step does."""
    for subject in ("a peach hibiscus", "a red poppy"):
        env = WatercolourEnvironment(service)
        ids = env.reset(seed=5, subject=subject).reference_ids
        step = env.step(WatercolourAction(reply=REPLY))
        assert list(ids) == list(step.breakdown.reference_ids), subject


@pytest.mark.browser
def test_a_two_turn_episode(service):
    env = WatercolourEnvironment(service)
    env.reset(seed=3, subject="a hibiscus", max_turns=2, include_png=True)
    one = env.step(WatercolourAction(reply=REPLY))
    assert one.status == "ok" and isinstance(one.reward, float) and not one.done
    assert one.breakdown.reward == one.reward and one.components["judge"].asked == 8
    assert one.reference_ids == env.state.reference_ids and one.turn == 1
    assert one.critique and "Paint covers" in one.critique
    assert [m["role"] for m in one.prompt] == ["assistant", "user"]
    assert one.critique in one.prompt[1]["content"]
    assert base64.b64decode(one.png_base64).startswith(b"\x89PNG")
    assert one.passed and one.n_shapes == 4 and one.paint_fraction > 0
    json.dumps(one.model_dump())  # plain data
    two = env.step(WatercolourAction(reply=REPLY))
    assert two.done and two.turn == 2 and two.prompt == [] and two.cache_hit is True
    assert two.reward == pytest.approx(one.reward)
    with pytest.raises(RuntimeError, match="the episode is over"):
        env.step(WatercolourAction(reply=REPLY))
    with pytest.raises(ValueError, match="not valid UTF-8"):
        WatercolourEnvironment(service).step(WatercolourAction.model_validate(
            {"reply": "\udcff"}))
    evaluation = from_observation(two, "in-process")
    assert evaluation.reward == two.reward and evaluation.component("hps") is not None
    assert evaluation.png is not None and evaluation.to_dict()["env"]["turn"] == 2
    stats = service.stats()
    assert stats["outcomes"]["ok"] >= 2 and stats["render_cache"]["hits"] >= 1


# ---------------------------------------------------------------- the remote rewarder


def test_with_no_server_every_rollout_is_none_not_an_exception():
    nobody = [f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"]
    start = time.monotonic()
    with RemoteRewarder(nobody, retries=2, connect_timeout_s=2, revive_after_s=60) as rewarder:
        group = rewarder.evaluate_group([REPLY, REPLY, "x" * 1_000_001], seed=1)
        assert time.monotonic() - start < 30
        assert [e.reward for e in group] == [None, None, None]
        assert {e.status for e in group} == {"unavailable"}
        reason = group[0].to_dict()["unavailable"]["reason"]
        assert "no server could start the episode" in reason and nobody[0] in reason
        assert group[2].to_dict()["unavailable"]["part"] == "payload"
        assert group[0].component("judge") is None
        assert all(c["contribution"] is None for c in group[0].to_dict()["components"].values())
        assert all(s["skipped"] and s["failures"] >= 1 for s in rewarder.stats())
    with pytest.raises(RuntimeError, match="closed"):
        rewarder.evaluate(REPLY)


def test_the_remote_rewarder_refuses_bad_arguments():
    with pytest.raises(ValueError, match="at least one server"):
        RemoteRewarder([])
    with pytest.raises(ValueError, match="must start with http"):
        RemoteRewarder(["127.0.0.1:8000"])
    with RemoteRewarder("http://127.0.0.1:1") as rewarder:
        with pytest.raises(TypeError, match="not one string"):
            rewarder.evaluate_group("one reply")
        with pytest.raises(TypeError, match="seed must be an integer"):
            rewarder.evaluate_group(["x"], seed="3")
