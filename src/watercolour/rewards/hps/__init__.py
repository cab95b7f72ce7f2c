"""The preference-score slot: HPSv3 as a separate service (:mod:`.service`, its own
environment) called by :class:`~watercolour.rewards.hps.client.HpsClient`, ``mu`` mapped to
[0, 1] by :mod:`.mapping`; offline, :class:`~watercolour.rewards.hps.offline.
PoolBandedAestheticScorer` (bands fitted to the pool's ``love`` tier)."""

from watercolour.rewards.hps.base import PreferenceScore, PreferenceScorer, ScorerUnavailable
from watercolour.rewards.hps.mapping import HpsMapping, calibrate

__all__ = ["HpsMapping", "PreferenceScore", "PreferenceScorer", "ScorerUnavailable",
           "calibrate"]
