"""The pigment term: how much of the sheet is painted, against the pool's ``love`` tier.

The write-ups' "reward pigment explicitly": an early policy paints too little (a few faint
marks pass the gate), and nothing in the judge or the preference score pays for paint as
such. This term is 1 when the render's paint coverage (the share of the sheet that is not bare
paper, :func:`watercolour.pool.measure.painting_measures`) lies inside the band the ``love``
paintings of the subject span (10th to 90th percentile; all ``love`` paintings when the subject
has fewer than :data:`MIN_PAINTINGS`), and falls off exponentially outside it, as fast as the
band is wide: too little paint costs, and so does a flood.

Its weight is ``WATERCOLOUR_PIGMENT_WEIGHT`` (default 0: the presets do not use it).

Red-teamed (``benchmarks/reward_robustness.py``, the ``judge+pigment`` mix: judge 0.5, HPS 0.3,
pigment 0.1; ``benchmarks/results/reward-robustness-rubric.json``): coverage alone is blind to
form, so stripes, confetti and commented polygons whose coverage lies in the band score 1 here
and gain up to 0.10 in total, while the hand-made example, which paints more than the starter
pool's ``love`` tier, scores 0.39. No abstract family passes the example under that mix, but
the margin shrinks (0.12 to 0.04): weigh it lightly, beside the judge, never alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from watercolour.pool.measure import painting_measures
from watercolour.rewards.hps.offline import Band
from watercolour.rewards.references import ReferencePool, subject_key

LOW_PCT, HIGH_PCT = 10.0, 90.0
MIN_WIDTH = 0.05
"""The least fall-off width (a share of the sheet)."""
MIN_PAINTINGS = 3
"""A subject with fewer ``love`` paintings takes the band of all of them."""


def coverage(png: bytes) -> float:
    """The share of the sheet that is painted."""
    return float(painting_measures(png)["paint_fraction"])


def fit_band(values: list[float]) -> Band:
    """The band of ``values``: 10th-90th percentile, the width at least :data:`MIN_WIDTH`."""
    low, high = (float(v) for v in np.percentile(values, [LOW_PCT, HIGH_PCT]))
    return Band(round(low, 4), round(high, 4), round(max(high - low, MIN_WIDTH), 4))


@dataclass
class PigmentBands:
    """The coverage band of the pool's ``love`` paintings, overall and per subject."""

    overall: Band
    by_subject: dict[str, Band]

    @classmethod
    def fit(cls, pool: ReferencePool) -> PigmentBands:
        """Bands from ``pool``'s ``love`` tier.

        Raises:
            ValueError: the pool has no ``love`` paintings.
        """
        love = pool.tier("love")
        if not love:
            raise ValueError(f"the pigment term needs love paintings; the pool "
                             f"{pool.source or ''} has {pool.counts()}".replace("  ", " "))
        measured = [(subject_key(p.subject), coverage(p.png)) for p in love]
        by_subject: dict[str, Band] = {}
        for key in {k for k, _ in measured if k is not None}:
            own = [c for k, c in measured if k == key]
            if len(own) >= MIN_PAINTINGS:
                by_subject[key] = fit_band(own)
        return cls(fit_band([c for _, c in measured]), by_subject)

    def band(self, subject: str | None) -> Band:
        """The subject's band, else the overall one."""
        return self.by_subject.get(subject_key(subject) or "", self.overall)

    def score(self, png: bytes, subject: str | None) -> tuple[float, dict[str, float]]:
        """The term in [0, 1] and what it measured (coverage, the band's low and high)."""
        band = self.band(subject)
        painted = coverage(png)
        return band.score(painted), {"coverage": round(painted, 4), "band_low": band.low,
                                     "band_high": band.high}
