"""The embedded default for the HPSv3 slot: an offline aesthetic scorer bounded by the pool.

:class:`PoolBandedAestheticScorer` is **not** a preference model and was not trained on
anyone's choices. It stands in for "would people like this picture?" when no HPSv3 service is
configured, so the reward runs here with no network and no GPU. It does not read the prompt
(HPSv3 does: "is this a flower?"; the offline judge is the part that knows the subject).

Its score, in [0, 1], is the mean of eight parts, each in [0, 1]. Every part is a **band**
fitted to the pool's ``love`` tier, not a "more is better" ramp: 1 inside the band (the
``love`` paintings' 10th to 90th percentile), and outside it ``exp(-gap / width)``, where
``width`` is the band's own width (at least :data:`MIN_WIDTH` of the part's scale): more
colour, contrast or coverage than the ``love`` paintings have costs as much as too little,
and every step further out costs more (the part never flattens at 0, so a sketch far out
still feels the way back). Colour is measured on the paint, not
on the ``background()``:

- ``colourful``: Hasler and Süsstrunk's colourfulness of the **painted** pixels (0-255 scale);
- ``contrast``: the paint's tonal range (90th - 10th percentile of its luminance);
- ``coverage``: the share of the sheet painted;
- ``composed``: the paint's centre of mass from the canvas centre;
- ``shapes``: visible shape edges (:func:`watercolour.gates.image.shape_edges`);
- ``hues``: how many hues the paint uses (:mod:`watercolour.rewards.features` ``hue_spread``);
- ``paper``: the bare paper's chroma (a saturated ``background()`` is not watercolour paper);
- ``specks``: the share of the paint in tiny separate marks (confetti strewn over a painting).

:data:`STARTER_BANDS` were fitted on the main command's starter pool
(``watercolour pool build --size 96``, seed 0) and are the default;
:meth:`PoolBandedAestheticScorer.fit` fits them on any pool. A blank canvas scores 0.
``mu`` is the score; ``unit`` is the same number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from watercolour.render.paint import PAPER_TOLERANCE, paper_colour
from watercolour.rewards.features import normalise, paint_statistics
from watercolour.rewards.hps.base import PreferenceScore

PARTS: tuple[str, ...] = ("colourful", "contrast", "coverage", "composed", "shapes", "hues",
                          "paper", "specks")
SCALE: dict[str, float] = {"colourful": 100.0, "contrast": 1.0, "coverage": 1.0,
                           "composed": 1.0, "shapes": 1.0, "hues": 1.0, "paper": 255.0,
                           "specks": 0.2}
"""Each part's natural range (its unit)."""
MIN_WIDTH = 0.05
"""The smallest fall-off width, as a fraction of the part's :data:`SCALE`."""
LOW_PCT, HIGH_PCT = 10.0, 90.0


@dataclass(frozen=True)
class Band:
    low: float
    high: float
    width: float

    def score(self, x: float) -> float:
        if self.low <= x <= self.high:
            return 1.0
        gap = self.low - x if x < self.low else x - self.high
        return float(np.exp(-gap / self.width))


STARTER_BANDS: dict[str, Band] = {
    "colourful": Band(37.66, 61.28, 23.62),
    "contrast": Band(0.1646, 0.2347, 0.0701),
    "coverage": Band(0.1159, 0.2607, 0.1448),
    "composed": Band(0.0534, 0.2631, 0.2097),
    "shapes": Band(0.1646, 0.308, 0.1434),
    "hues": Band(0.2539, 0.5315, 0.2776),
    "paper": Band(13.0, 20.0, 12.75),
    "specks": Band(0.0008, 0.0044, 0.01),
}
"""The default bands (see the module docstring; refitted by ``benchmarks/reward_robustness.py``,
which reports any drift)."""


def colourfulness(rgb: np.ndarray) -> float:
    """Hasler & Süsstrunk (2003) colourfulness M of an ``(n, 3)`` or image array, 0-255."""
    f = rgb.reshape(-1, 3).astype(np.float64)
    if len(f) == 0:
        return 0.0
    rg = f[:, 0] - f[:, 1]
    yb = 0.5 * (f[:, 0] + f[:, 1]) - f[:, 2]
    return float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()))


def measurements(png: bytes) -> dict[str, float] | None:
    """The eight raw measurements (see the module docstring); None for bare paper."""
    m = paint_statistics(png)
    if m["paint_fraction"] < 0.002:
        return None
    rgb = normalise(png)
    paper = paper_colour(rgb)
    painted = np.abs(rgb.astype(np.int16) - np.array(paper, np.int16)).max(axis=2) \
        > PAPER_TOLERANCE
    return {"colourful": colourfulness(rgb[painted]), "contrast": m["tonal_range"],
            "coverage": m["paint_fraction"], "composed": m["centre_offset"],
            "shapes": m["shape_edges"], "hues": m["hue_spread"],
            "paper": float(max(paper) - min(paper)), "specks": m["speck_fraction"]}


def fit_bands(pngs: Sequence[bytes]) -> dict[str, Band]:
    """Bands from ``love`` paintings: their 10th-90th percentile; the fall-off width is the
    band's (at least :data:`MIN_WIDTH` of the scale)."""
    rows = [m for m in (measurements(p) for p in pngs) if m is not None]
    if not rows:
        raise ValueError("the offline scorer needs painted love paintings to fit its bands")
    out = {}
    for part in PARTS:
        values = np.array([r[part] for r in rows])
        low, high = (float(v) for v in np.percentile(values, [LOW_PCT, HIGH_PCT]))
        out[part] = Band(round(low, 4), round(high, 4),
                         round(max(high - low, MIN_WIDTH * SCALE[part]), 4))
    return out


class PoolBandedAestheticScorer:
    """The offline stand-in for HPSv3 (see the module docstring). Never fails."""

    name = ("offline-aesthetic (bands fitted to the pool's love tier, not a learned "
            "preference model)")

    def __init__(self, bands: dict[str, Band] | None = None) -> None:
        self.bands = dict(STARTER_BANDS if bands is None else bands)

    @classmethod
    def fit(cls, pool) -> PoolBandedAestheticScorer:
        """Bands fitted to ``pool``'s ``love`` tier (a :class:`ReferencePool`)."""
        return cls(fit_bands([p.png for p in pool.tier("love")]))

    def parts(self, png: bytes) -> dict[str, float]:
        """Each part's score in [0, 1] (all 0 for bare paper)."""
        m = measurements(png)
        if m is None:
            return dict.fromkeys(PARTS, 0.0)
        return {part: self.bands[part].score(m[part]) for part in PARTS}

    def value(self, png: bytes) -> float:
        parts = self.parts(png)
        return round(sum(parts.values()) / len(parts), 6)

    def score(self, pngs: Sequence[bytes], prompt: str = "") -> list[PreferenceScore]:
        out = []
        for png in pngs:
            value = self.value(png)
            out.append(PreferenceScore(value, None, value))
        return out




def aesthetic_parts(png: bytes) -> dict[str, float]:
    """The parts under :data:`STARTER_BANDS`."""
    return PoolBandedAestheticScorer().parts(png)


def aesthetic_score(png: bytes) -> float:
    """The score under :data:`STARTER_BANDS`."""
    return PoolBandedAestheticScorer().value(png)
