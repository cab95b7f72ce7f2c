"""Multi-turn episodes: the policy sketches, sees its critique (and, when asked, its render)
and revises; the episode's reward is the last turn's less the server's regression penalty, so
a sabotaged first turn never pays and a client cannot choose how it is paid. The rule's arithmetic without a browser; the episode in process over a real
Chromium (the sketches repeat, so the render cache keeps the renders few); one episode
through a real ``watercolour serve`` on a loopback port, where an unchanged revision costs no
render (the server's ``/stats``)."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from conftest import SMALL_SKETCH
from pool_helpers import rows
from rewards_support import painting
from serving import EnvServer

from watercolour.env import (
    EPISODE_REWARD_RULE,
    EnvConfig,
    EnvConfigError,
    TurnRecord,
    WatercolourAction,
    WatercolourEnv,
    WatercolourObservation,
    play_episode,
    render_message,
)
from watercolour.env.server.environment import Service, WatercolourEnvironment, episode_reward
from watercolour.pool.dataset import write_pool_folder
from watercolour.render import RenderConfig, RenderResult
from watercolour.rewards import Mix, RewardConfig

SUBJECT = "a peach hibiscus"
RICH_SKETCH = """
function setup() {
  createCanvas(256, 256, WEBGL);
  background('#f6f0e4');
}
function draw() {
  brush.noStroke();
  for (let i = 0; i < 14; i++) {
    brush.fill(random(['#e8a07a', '#d9705a', '#f2b38f', '#7a9a5a']), 120);
    brush.fillBleed(0.3);
    brush.circle(random(-70, 70), random(-70, 70), random(35, 70));
  }
  noLoop();
}
"""
BARE = ("function setup() { createCanvas(256, 256, WEBGL); }\n"
        "function draw() { ellipse(0, 0, 80, 80); }")
DIES = "// the browser dies on this one\n"


def reply(sketch: str, prose: str = "A hibiscus.") -> str:
    return f"{prose}\n\n```javascript\n{sketch}\n```\n"


def turn(n: int, status: str, reward: float | None) -> TurnRecord:
    return TurnRecord(turn=n, status=status, reward=reward, reply_sha256="0" * 64)


# ---------------------------------------------------------------- the rule, by itself


PENALTIES = (0.0, 0.25, 0.5, 1.0)


def test_the_episode_reward_is_the_last_turns_less_a_penalty_for_regressing():
    ok1, ok2 = turn(1, "ok", 0.5), turn(2, "ok", 0.7)
    # penalty 0 (the default): the last turn's reward, whatever came before
    assert episode_reward([ok1, ok2]) == (0.7, 0.0)
    assert episode_reward([turn(1, "ok", 0.8), ok2]) == (0.7, 0.0)
    assert episode_reward([turn(1, "ok", 0.42)], 0.5) == (0.42, 0.0)  # one turn: its reward
    # a revision that improves costs nothing and earns nothing extra
    assert episode_reward([ok1, ok2], 1.0) == (0.7, 0.0)
    # a revision that makes it worse costs penalty * the fall from the best earlier turn
    reward, taken = episode_reward([turn(1, "ok", 0.8), ok2], 0.5)
    assert taken == pytest.approx(0.05) and reward == pytest.approx(0.65)
    three = [turn(1, "ok", 0.4), turn(2, "ok", 0.9), turn(3, "ok", 0.6)]
    assert episode_reward(three, 0.5) == pytest.approx((0.45, 0.15))  # from the best, 0.9
    # never below 0 (openenv.yaml's range): a rejected last turn earns 0
    assert episode_reward([turn(1, "ok", 0.9), turn(2, "rejected", 0.0)], 1.0) == (0.0, 0.0)
    assert episode_reward([turn(1, "ok", 0.9), turn(2, "ok", 0.1)], 1.0) == (0.0, 0.1)
    # a rejected first turn: revisions go on, the last turn decides
    assert episode_reward([turn(1, "rejected", 0.0), ok2], 0.5) == (0.7, 0.0)
    # an unavailable turn anywhere: None, never 0
    assert episode_reward([ok1, turn(2, "unavailable", None)], 0.5) == (None, 0.0)
    assert episode_reward([turn(1, "unavailable", None)]) == (None, 0.0)
    assert "never 0" in EPISODE_REWARD_RULE and "REGRESSION_PENALTY" in EPISODE_REWARD_RULE
    assert "bonus" not in EPISODE_REWARD_RULE


def test_a_weak_first_turn_never_pays():
    """The red team's case (a gate-passing 0.185, then the good painting at 0.799: the bonus
    paid 1.000) and a grid of every first turn, last turn and length, for several penalties:
    an episode never earns more than its last sketch earns when submitted on every turn."""
    for penalty in PENALTIES:
        weak_then_good(penalty)


def weak_then_good(penalty: float) -> None:
    good, weak = 0.799, 0.185
    twice = episode_reward([turn(1, "ok", good), turn(2, "ok", good)], penalty)[0]
    assert twice == good
    assert episode_reward([turn(1, "ok", weak), turn(2, "ok", good)], penalty)[0] <= twice
    assert episode_reward([turn(1, "rejected", 0.0), turn(2, "ok", good)], penalty)[0] <= twice
    grid = [i / 20 for i in range(21)]
    for last in grid:
        every = episode_reward([turn(t, "ok", last) for t in (1, 2, 3)], penalty)[0]
        assert every == last
        for first in grid:
            for middle in (None, 0.0, 0.5, 1.0):
                rewards = [first, *([] if middle is None else [middle]), last]
                history = [turn(t, "ok", r) for t, r in enumerate(rewards, start=1)]
                assert episode_reward(history, penalty)[0] <= last + 1e-12


def test_the_penalty_setting_is_checked_and_the_bonus_is_refused():
    config = EnvConfig.from_env({"WATERCOLOUR_ENV_REGRESSION_PENALTY": "0.25"})
    assert config.regression_penalty == 0.25 and EnvConfig().regression_penalty == 0.0
    assert config.resolved()["regression_penalty"] == 0.25
    with pytest.raises(EnvConfigError, match="WATERCOLOUR_ENV_REGRESSION_PENALTY must be at "
                                             "most 1"):
        EnvConfig(regression_penalty=1.5)
    with pytest.raises(EnvConfigError, match="WATERCOLOUR_ENV_REGRESSION_PENALTY"):
        EnvConfig.from_env({"WATERCOLOUR_ENV_REGRESSION_PENALTY": "-0.1"})
    # the old variables stop the server, one line each, saying why
    with pytest.raises(EnvConfigError) as err:
        EnvConfig.from_env({"WATERCOLOUR_ENV_IMPROVEMENT_BONUS": "0.5",
                            "WATERCOLOUR_ENV_IMPROVEMENT_FLOOR": "0.3"})
    lines = str(err.value).splitlines()
    assert len(lines) == 2 and lines[0].startswith("WATERCOLOUR_ENV_IMPROVEMENT_BONUS was "
                                                   "removed: an improvement bonus paid")
    assert lines[1].startswith("WATERCOLOUR_ENV_IMPROVEMENT_FLOOR was removed")
    assert EnvConfig.from_env({"WATERCOLOUR_ENV_IMPROVEMENT_BONUS": " "}).regression_penalty \
        == 0.0  # blank: unset


# ---------------------------------------------------------------- in process


class FlakyBrowser:
    """The real renderer, except that a sketch carrying :data:`DIES` kills the browser
    (an infrastructure failure, every attempt)."""

    def __init__(self, renderer) -> None:
        self.renderer, self.config = renderer, renderer.config

    def render(self, code: str, seed: int = 0, **kwargs) -> RenderResult:
        if DIES in code:
            return RenderResult(infra_error="the browser died (injected)")
        return self.renderer.render(code, seed=seed, **kwargs)


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    return write_pool_folder(pool_rows, tmp_path_factory.mktemp("episode-pool") / "pool")


@pytest.fixture(scope="module")
def service(renderer, pool):
    config = EnvConfig(reward=RewardConfig(mix=Mix.preset("judge-led"), pool=str(pool)),
                       render=RenderConfig(workers=1), max_turns=3)
    return Service(config, renderer=FlakyBrowser(renderer))


def numbers(value: float) -> set[str]:
    """The ways a score could be written into a text."""
    return {str(value), f"{value:.2f}", f"{value:.3f}", f"{value:.4f}"}


def assert_no_leak(text: str, observation: WatercolourObservation) -> None:
    """Nothing of the references or the score in ``text``."""
    lowered = text.lower()
    for word in ("reward", "score", "judge", "reference", "pool", "love", "okay", "tier",
                 "hps", "win"):
        assert word not in lowered, (word, text)
    for ref in observation.reference_ids:
        assert ref.lower() not in lowered, (ref, text)
    values = [observation.reward, observation.turn_reward]
    for component in observation.components.values():
        values += [component.raw, component.contribution]
    for value in values:
        if isinstance(value, float) and value not in (0.0, 1.0):
            for written in numbers(value):
                assert written not in text, (written, text)


@pytest.mark.browser
def test_a_revision_sees_its_render_and_critique_and_every_turn_is_kept(service):
    env = WatercolourEnvironment(service)
    ready = env.reset(seed=3, subject=SUBJECT, turns=2, show_render=True)
    assert ready.max_turns == 2 and ready.metadata["episode"]["rule"] == EPISODE_REWARD_RULE
    one = env.step(WatercolourAction(reply=reply(SMALL_SKETCH)))
    assert one.status == "ok" and not one.done and one.turn == 1
    assert one.reward == one.turn_reward == one.breakdown.reward
    assert one.episode_reward is None and one.metadata["episode"]["reward"] is None
    png = base64.b64decode(one.png_base64)
    assert png.startswith(b"\x89PNG") and one.render_sha256 == hashlib.sha256(png).hexdigest()
    assert [m["role"] for m in one.prompt] == ["assistant", "user"]
    revision = one.prompt[1]["content"]
    assert "render is attached" in revision and one.critique in revision
    assert "Paint covers" in one.critique
    assert_no_leak(revision, one)
    vision = render_message(one)
    assert vision["role"] == "user" and vision["content"][1] == {"type": "text",
                                                                "text": revision}
    assert vision["content"][0]["image_url"]["url"] == "data:image/png;base64," + \
        one.png_base64
    assert one.metadata["reward_turn1"] == one.reward
    two = env.step(WatercolourAction(reply=reply(RICH_SKETCH, "Richer now.")))
    assert two.done and two.turn == 2 and two.prompt == [] and two.status == "ok"
    assert two.reward == two.episode_reward == two.turn_reward  # penalty 0: the last turn's
    assert two.png_base64 and two.render_sha256 != one.render_sha256
    assert_no_leak(two.critique, two)
    meta = two.metadata
    assert (meta["reward_turn1"], meta["reward_turn2"]) == (one.reward, two.turn_reward)
    assert meta["episode"]["reward"] == two.reward and meta["episode"]["penalty_taken"] == 0.0
    history = [TurnRecord(**t) for t in meta["episode"]["history"]]
    assert [t.turn for t in history] == [1, 2] and history == env.state.history
    assert [t.status for t in history] == ["ok", "ok"]
    assert history[0].sketch.strip() == SMALL_SKETCH.strip()
    assert history[1].sketch.strip() == RICH_SKETCH.strip()
    assert [t.critique for t in history] == [one.critique, two.critique]
    assert [t.render_sha256 for t in history] == [one.render_sha256, two.render_sha256]
    assert env.state.reward == two.reward and env.state.done
    with pytest.raises(RuntimeError, match="the episode is over"):
        env.step(WatercolourAction(reply=reply(SMALL_SKETCH)))
    # the default is still one turn, and max_turns is the same option as turns
    assert env.reset(seed=3).max_turns == 1
    assert env.reset(seed=3, max_turns=2).max_turns == 2
    with pytest.raises(ValueError, match="turns and max_turns are the same option"):
        env.reset(turns=2, max_turns=3)
    with pytest.raises(ValueError, match="turns must be between 1 and 3"):
        env.reset(turns=4)
    with pytest.raises(ValueError, match="show_render must be true or false"):
        env.reset(turns=2, show_render="yes")


WEAK_SKETCH = """
function setup() {
  createCanvas(256, 256, WEBGL);
  background('#f6f0e4');
}
function draw() {
  brush.noStroke();
  for (let i = 0; i < 3; i++) {
    brush.fill('#9a9a9a', 60);
    brush.circle(-50 + 50 * i, 0, 34);
  }
  noLoop();
}
"""  # three small grey blots: it passes the gate (paint 0.011), a painting it is not


@pytest.mark.browser
def test_a_weak_first_turn_never_pays_in_an_episode(renderer, pool):
    """Real episodes on servers started with each penalty: a deliberately weak first turn
    (it passes the gate) then the good painting never earns more than the good painting
    twice; a worse revision costs; and a reset cannot ask for a bonus or a penalty."""
    def episode(env: WatercolourEnvironment, first: str, second: str
                ) -> WatercolourObservation:
        replies = iter([first, second])
        return play_episode(env, lambda m, o: next(replies), seed=3, subject=SUBJECT)

    for penalty in (0.0, 0.5, 1.0):
        config = EnvConfig(reward=RewardConfig(mix=Mix.preset("judge-led"), pool=str(pool)),
                           render=RenderConfig(workers=1), regression_penalty=penalty)
        env = WatercolourEnvironment(Service(config, renderer=renderer))
        twice = episode(env, reply(RICH_SKETCH), reply(RICH_SKETCH))
        sabotage = episode(env, reply(WEAK_SKETCH), reply(RICH_SKETCH))
        weak = sabotage.metadata["reward_turn1"]
        assert sabotage.metadata["episode"]["history"][0]["status"] == "ok"
        assert 0 < weak < twice.reward  # weak, but it passed the gate and was scored
        assert twice.reward == twice.turn_reward == sabotage.turn_reward
        assert sabotage.reward <= twice.reward, (penalty, sabotage.reward, twice.reward)
        assert twice.metadata["episode"]["regression_penalty"] == penalty
        worse = episode(env, reply(RICH_SKETCH), reply(WEAK_SKETCH))
        assert worse.turn_reward == weak
        assert worse.reward == pytest.approx(max(0.0, weak - penalty * (twice.reward - weak)))
        assert worse.metadata["episode"]["penalty_taken"] == pytest.approx(
            weak - worse.reward)
        for option, value in (("improvement_bonus", 1.0), ("regression_penalty", 0.0),
                              ("improvement_floor", 0.0)):
            with pytest.raises(ValueError, match=f"{option}: the episode's reward parameters "
                                                 "are the server's"):
                env.reset(turns=2, **{option: value})


@pytest.mark.browser
def test_a_rejected_turn_may_be_revised_and_an_unavailable_one_ends_the_episode(service):
    env = WatercolourEnvironment(service)
    env.reset(seed=3, subject=SUBJECT, turns=3)
    rejected = env.step(WatercolourAction(reply=reply(BARE)))
    assert (rejected.status, rejected.reward, rejected.done) == ("rejected", 0.0, False)
    assert "bare_primitives" in rejected.violations and rejected.prompt
    assert "bare_primitives" in rejected.prompt[1]["content"]
    scored = env.step(WatercolourAction(reply=reply(SMALL_SKETCH)))
    assert scored.status == "ok" and not scored.done and scored.reward > 0
    lost = env.step(WatercolourAction(reply=reply(DIES + SMALL_SKETCH)))
    assert (lost.status, lost.reward, lost.episode_reward, lost.done) == \
        ("unavailable", None, None, True)
    assert lost.unavailable["part"] == "render" and lost.prompt == []
    assert lost.metadata["reward_turn3"] is None and lost.metadata["episode"]["reward"] is None
    assert [t.status for t in env.state.history] == ["rejected", "ok", "unavailable"]
    # an unavailable first turn ends a longer episode at once, with None
    env.reset(seed=3, subject=SUBJECT, turns=3)
    first = env.step(WatercolourAction(reply=reply(DIES + RICH_SKETCH)))
    assert (first.status, first.reward, first.done, first.turn) == \
        ("unavailable", None, True, 1)
    with pytest.raises(RuntimeError, match="the episode is over"):
        env.step(WatercolourAction(reply=reply(SMALL_SKETCH)))


# ---------------------------------------------------------------- through a server


@pytest.mark.browser
@pytest.mark.slow
def test_an_episode_through_the_server_and_an_unchanged_revision_costs_no_render(
        pool, tmp_path):
    server = EnvServer(tmp_path, {
        "WATERCOLOUR_POOL": str(pool), "WATERCOLOUR_RENDER_WORKERS": "1",
        "WATERCOLOUR_RENDER_DEADLINE": "20", "WATERCOLOUR_ENV_MAX_TURNS": "3",
        "WATERCOLOUR_ENV_REGRESSION_PENALTY": "0.2", "WATERCOLOUR_JUDGE_WEIGHT": "",
        "WATERCOLOUR_HPS_WEIGHT": "", "WATERCOLOUR_HPS_URL": "",
        "WATERCOLOUR_JUDGE_BASE_URL": ""}).start()
    try:
        server.wait()
        before = server.stats()["render_cache"]
        seen: list[tuple[list[dict], WatercolourObservation]] = []

        def policy(messages, observation):
            seen.append((messages, observation))
            return reply(SMALL_SKETCH, f"Take {len(seen)}: the same sketch.")

        with WatercolourEnv(server.url, message_timeout_s=120).sync() as env:
            final = play_episode(env, policy, seed=5, subject=SUBJECT, show_render=True)
            state = env.state()
        after = server.stats()["render_cache"]
    finally:
        server.stop()
    assert (after["misses"] - before["misses"], after["hits"] - before["hits"]) == (1, 1)
    assert len(seen) == 2 and seen[1][1].turn == 1
    messages, shown = seen[1]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[-1]["content"].startswith("Here is what your painting")
    assert base64.b64decode(shown.png_base64).startswith(b"\x89PNG")
    assert_no_leak(messages[-1]["content"], shown)
    assert final.done and final.turn == 2 and final.status == "ok" and final.cache_hit is True
    meta = final.metadata
    assert meta["reward_turn1"] == meta["reward_turn2"] == final.turn_reward
    assert final.reward == final.turn_reward  # no regression, no penalty
    assert meta["episode"]["regression_penalty"] == 0.2
    history = meta["episode"]["history"]
    assert history[0]["render_sha256"] == history[1]["render_sha256"] == final.render_sha256
    assert [t["cache_hit"] for t in history] == [False, True]
    assert final.critique.startswith("The picture is the same as last turn's.")
    assert not history[0]["critique"].startswith("The picture is the same")
    assert state.turn == 2 and state.done and len(state.history) == 2
    assert re.fullmatch(r"[0-9a-f]{64}", history[1]["reply_sha256"])
