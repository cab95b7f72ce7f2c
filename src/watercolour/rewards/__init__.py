"""The reward: a rubric of components (gate, length, pairwise judge vs the pool, HPSv3,
pigment); mixes; one typed record per evaluation; ``None`` when the infrastructure fails.

>>> from watercolour.rewards import Rewarder, RewardConfig
>>> with Renderer(workers=1) as renderer:
...     rewarder = Rewarder(RewardConfig.from_env(), renderer=renderer)
...     rewarder.evaluate(reply, subject="a peach hibiscus", seed=7).to_dict()

Modules, one job each: :mod:`~watercolour.rewards.rubric` (the components, declared once),
:mod:`~watercolour.rewards.terms` (each component's scorer: built from the configuration and the
pool, it scores a group),
:mod:`~watercolour.rewards.record` (the typed record and its wire format),
:mod:`~watercolour.rewards.pigment` (coverage against the love tier),
:mod:`~watercolour.rewards.length` (the ramp),
:mod:`~watercolour.rewards.mix` (weights, presets, environment variables, ``combine``),
:mod:`~watercolour.rewards.references` (the group's opponents),
:mod:`~watercolour.rewards.judge` (the pairwise judges),
:mod:`~watercolour.rewards.pairwise` (both orders, the win fraction),
:mod:`~watercolour.rewards.consistency` (is the judge consistent?),
:mod:`~watercolour.rewards.hps` (HPSv3 service and client, the offline scorer, the mapping),
:mod:`~watercolour.rewards.backends` (the pool, judge and scorer a config chooses),
:mod:`~watercolour.rewards.evaluate` (one rollout -> total and breakdown),
:mod:`~watercolour.rewards.trl` (TRL reward functions),
:mod:`~watercolour.rewards.config` (``WATERCOLOUR_*`` configuration).
"""

from watercolour.rewards.backends import RewardSetupError
from watercolour.rewards.config import RewardConfig
from watercolour.rewards.consistency import consistency
from watercolour.rewards.evaluate import Evaluation, Rewarder
from watercolour.rewards.length import length_score, length_term
from watercolour.rewards.mix import PRESETS, Mix, MixError, combine
from watercolour.rewards.pairwise import JudgeResult, judge_candidate, judge_group
from watercolour.rewards.record import ComponentScore, RewardRecord
from watercolour.rewards.references import (
    ReferencePool,
    References,
    draw_references,
    group_seed,
)
from watercolour.rewards.rubric import RUBRIC, Component

__all__ = [
    "PRESETS",
    "RUBRIC",
    "Component",
    "ComponentScore",
    "Evaluation",
    "JudgeResult",
    "Mix",
    "MixError",
    "ReferencePool",
    "References",
    "RewardConfig",
    "RewardRecord",
    "RewardSetupError",
    "Rewarder",
    "combine",
    "consistency",
    "draw_references",
    "group_seed",
    "judge_candidate",
    "judge_group",
    "length_score",
    "length_term",
]
