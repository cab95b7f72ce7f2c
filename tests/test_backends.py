"""The backend choices, made in one place for the CLI, the chapters and the rewarder."""

from __future__ import annotations

import pytest

from watercolour.pool.backends import choose_critic, choose_painters
from watercolour.pool.critic import OfflineCritic, OpenAICritic
from watercolour.pool.painters import DEFAULT_PAINTER_MODELS, OpenAIPainter, ProceduralPainter
from watercolour.rewards import RewardConfig, RewardSetupError
from watercolour.rewards.backends import check_pool, make_scorer


def test_pool_backends_default_offline_and_expand_default():
    assert [type(p) for p in choose_painters()] == [ProceduralPainter]
    painters = choose_painters(["default", "org/other"], base_url="http://127.0.0.1:9/v1")
    assert all(isinstance(p, OpenAIPainter) for p in painters)
    assert [p.client.model for p in painters] == [*DEFAULT_PAINTER_MODELS, "org/other"]
    assert isinstance(choose_critic(), OfflineCritic)
    critic = choose_critic("org/vision", base_url="http://127.0.0.1:9/v1")
    assert isinstance(critic, OpenAICritic)


def test_reward_backends_follow_the_config(tmp_path):
    assert make_scorer(RewardConfig()).name != make_scorer(
        RewardConfig(hps_url="http://127.0.0.1:9")).name
    with pytest.raises(RewardSetupError, match="cannot use the pool"):
        check_pool(RewardConfig(pool=str(tmp_path / "nowhere")), None)
