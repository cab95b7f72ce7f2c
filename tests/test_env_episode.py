"""Multi-turn episodes: the policy sketches, sees its critique (and, when asked, its render)
and revises; the episode's reward is the last turn's plus a bonus a sabotaged first turn
cannot earn. The rule's arithmetic without a browser; the episode in process over a real
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


def test_the_episode_reward_is_the_last_turns_plus_a_bonus_sabotage_cannot_earn():
    ok1, ok2 = turn(1, "ok", 0.5), turn(2, "ok", 0.7)
    # bonus 0 (the default): the last turn's reward, whatever came before
    assert episode_reward([ok1, ok2]) == (0.7, 0.0)
    assert episode_reward([turn(1, "ok", 0.9), turn(2, "rejected", 0.0)], 0.5) == (0.0, 0.0)
    assert episode_reward([turn(1, "ok", 0.42)], 0.5) == (0.42, 0.0)  # one turn: its reward
    # a bonus for improving on max(turn 1, floor)
    reward, paid = episode_reward([ok1, ok2], 0.5, 0.3)
    assert paid == pytest.approx(0.1) and reward == pytest.approx(0.8)
    assert episode_reward([turn(1, "ok", 0.8), ok2], 0.5, 0.3) == (0.7, 0.0)  # never negative
    capped = episode_reward([turn(1, "ok", 0.4), turn(2, "ok", 0.95)], 1.0, 0.3)
    assert capped == pytest.approx((1.0, 0.05))  # at most 1 (openenv.yaml's range)
    # sabotage 1: a rejected first turn earns no bonus at all
    assert episode_reward([turn(1, "rejected", 0.0), ok2], 0.5, 0.3) == (0.7, 0.0)
    # sabotage 2: a first turn that passes the gate but paints (almost) nothing is measured
    # from the floor, so it earns exactly what a first turn at the floor earns
    at_floor = episode_reward([turn(1, "ok", 0.3), ok2], 0.5, 0.3)
    for low in (0.0, 0.05, 0.2999):
        assert episode_reward([turn(1, "ok", low), ok2], 0.5, 0.3) == at_floor
    assert at_floor[1] == pytest.approx(0.5 * (0.7 - 0.3))
    # an honest first turn above the floor loses at most bonus * (R_1 - floor) to sabotage
    honest = episode_reward([ok1, ok2], 0.5, 0.3)[0]
    assert at_floor[0] - honest == pytest.approx(0.5 * (0.5 - 0.3))
    # a rejected turn in the middle: revisions go on, the last turn decides
    middle = [ok1, turn(2, "rejected", 0.0), turn(3, "ok", 0.6)]
    assert episode_reward(middle, 0.5, 0.3)[0] == pytest.approx(0.6 + 0.5 * 0.1)
    # an unavailable turn anywhere: None, never 0
    assert episode_reward([ok1, turn(2, "unavailable", None)], 0.5) == (None, 0.0)
    assert episode_reward([turn(1, "unavailable", None)]) == (None, 0.0)
    assert "max(R_1, floor)" in EPISODE_REWARD_RULE and "never 0" in EPISODE_REWARD_RULE


def test_the_bonus_settings_are_checked():
    config = EnvConfig.from_env({"WATERCOLOUR_ENV_IMPROVEMENT_BONUS": "0.1",
                                 "WATERCOLOUR_ENV_IMPROVEMENT_FLOOR": "0.25"})
    assert (config.improvement_bonus, config.improvement_floor) == (0.1, 0.25)
    assert (EnvConfig().improvement_bonus, EnvConfig().improvement_floor) == (0.0, 0.3)
    assert config.resolved()["improvement_bonus"] == 0.1
    with pytest.raises(EnvConfigError) as err:
        EnvConfig(improvement_bonus=2, improvement_floor=1.5)
    assert len(str(err.value).splitlines()) == 2
    with pytest.raises(EnvConfigError, match="WATERCOLOUR_ENV_IMPROVEMENT_BONUS"):
        EnvConfig.from_env({"WATERCOLOUR_ENV_IMPROVEMENT_BONUS": "-0.1"})


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
    assert two.reward == two.episode_reward == two.turn_reward  # bonus 0: the last turn's
    assert two.png_base64 and two.render_sha256 != one.render_sha256
    assert_no_leak(two.critique, two)
    meta = two.metadata
    assert (meta["reward_turn1"], meta["reward_turn2"]) == (one.reward, two.turn_reward)
    assert meta["episode"]["reward"] == two.reward and meta["episode"]["bonus_paid"] == 0.0
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
    with pytest.raises(ValueError, match="improvement_bonus must be a number from 0 to 1"):
        env.reset(turns=2, improvement_bonus=3)
    with pytest.raises(ValueError, match="show_render must be true or false"):
        env.reset(turns=2, show_render="yes")


@pytest.mark.browser
def test_the_improvement_bonus_is_paid_only_for_real_improvement(service):
    """The same two sketches both ways round (their renders come from the cache): only the
    order that improves is paid; a rejected first turn earns nothing, however good the
    revision."""
    def episode(first: str, second: str, bonus: float = 0.5) -> WatercolourObservation:
        replies = iter([first, second])
        return play_episode(WatercolourEnvironment(service), lambda m, o: next(replies),
                            seed=3, subject=SUBJECT, improvement_bonus=bonus)

    up = episode(reply(SMALL_SKETCH), reply(RICH_SKETCH))
    down = episode(reply(RICH_SKETCH), reply(SMALL_SKETCH))
    small, rich = up.metadata["reward_turn1"], up.metadata["reward_turn2"]
    assert (down.metadata["reward_turn1"], down.metadata["reward_turn2"]) == (rich, small)
    assert small != rich  # the two paintings differ
    for final in (up, down):
        first, last = final.metadata["reward_turn1"], final.metadata["reward_turn2"]
        paid = 0.5 * max(0.0, last - max(first, 0.3))
        assert final.metadata["episode"]["bonus_paid"] == pytest.approx(paid)
        assert final.reward == pytest.approx(last + paid) and final.turn_reward == last
    assert min(up.metadata["episode"]["bonus_paid"],
               down.metadata["episode"]["bonus_paid"]) == 0.0
    if max(small, rich) > 0.3:
        assert max(up.metadata["episode"]["bonus_paid"],
                   down.metadata["episode"]["bonus_paid"]) > 0
    # sabotage: a rejected first turn, then the better painting: the last turn's reward only
    best = max([SMALL_SKETCH, RICH_SKETCH], key=lambda s: rich if s == RICH_SKETCH else small)
    thrown = episode(reply(BARE), reply(best), bonus=1.0)
    history = thrown.metadata["episode"]["history"]
    assert [t["status"] for t in history] == ["rejected", "ok"]
    assert thrown.metadata["reward_turn1"] == 0.0 and history[0]["render_sha256"] is None
    assert thrown.reward == thrown.turn_reward == max(small, rich)
    assert thrown.metadata["episode"]["bonus_paid"] == 0.0
    assert_no_leak(history[0]["critique"], thrown)
    assert "bare_primitives" in history[0]["critique"]


@pytest.mark.browser
def test_a_rejected_turn_may_be_revised_and_an_unavailable_one_ends_the_episode(service):
    env = WatercolourEnvironment(service)
    env.reset(seed=3, subject=SUBJECT, turns=3, improvement_bonus=0.5)
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
        "WATERCOLOUR_ENV_IMPROVEMENT_BONUS": "0.2", "WATERCOLOUR_JUDGE_WEIGHT": "",
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
    assert final.reward == final.turn_reward  # no improvement, no bonus
    assert meta["episode"]["improvement_bonus"] == 0.2
    history = meta["episode"]["history"]
    assert history[0]["render_sha256"] == history[1]["render_sha256"] == final.render_sha256
    assert [t["cache_hit"] for t in history] == [False, True]
    assert final.critique.startswith("The picture is the same as last turn's.")
    assert not history[0]["critique"].startswith("The picture is the same")
    assert state.turn == 2 and state.done and len(state.history) == 2
    assert re.fullmatch(r"[0-9a-f]{64}", history[1]["reply_sha256"])
