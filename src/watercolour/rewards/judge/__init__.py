"""Pairwise judges: which of two pictures is the better watercolour?

- :class:`~watercolour.rewards.judge.openai_judge.OpenAIJudge`: a vision-language model
  behind an OpenAI-compatible endpoint (the real backend);
- :class:`~watercolour.rewards.judge.offline_judge.PoolFittedJudge`: a model fitted on the
  pool's tiers from image measurements (the embedded default).
"""

from watercolour.rewards.judge.base import PairwiseJudge, Vote, compare_all

__all__ = ["PairwiseJudge", "Vote", "compare_all"]
