"""The embedded default for the HPSv3 slot: an offline aesthetic scorer.

:class:`HandSetAestheticScorer` is **not** a preference model and was not trained on anyone's
choices. It is a fixed, documented formula over image measurements that stands in for "would
people like this picture?" when no HPSv3 service is configured, so the reward runs here with
no network and no GPU. It does not read the prompt (HPSv3 does: "is this a flower?").

Its score, in [0, 1], is a weighted mean of five parts, each in [0, 1]:

- ``colourful`` (0.30): Hasler and Süsstrunk's colourfulness of the whole picture
  (0 at 5, 1 at 45 on their 0-255 scale: from "not colourful" to "averagely colourful");
- ``contrast`` (0.20): spread of luminance (standard deviation 0.02 -> 0, 0.15 -> 1);
- ``coverage`` (0.20): enough paint but not a flooded sheet (ramps up from 3 % to 15 %
  painted, down from 60 % to 90 %);
- ``composed`` (0.15): the paint's centre of mass near the centre (offset 0.25 -> 1, 0.7 -> 0);
- ``shapes`` (0.15): visible shape edges (:func:`watercolour.gates.image.shape_edges`,
  0.01 -> 0, 0.08 -> 1).

A blank canvas scores 0. ``mu`` is the score; ``unit`` is the same number.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from watercolour.rewards.features import measure, normalise
from watercolour.rewards.hps.base import PreferenceScore

WEIGHTS: dict[str, float] = {"colourful": 0.30, "contrast": 0.20, "coverage": 0.20,
                             "composed": 0.15, "shapes": 0.15}


def _ramp(x: float, lo: float, hi: float) -> float:
    return float(min(1.0, max(0.0, (x - lo) / (hi - lo))))


def colourfulness(rgb: np.ndarray) -> float:
    """Hasler & Süsstrunk (2003) colourfulness M on 0-255 RGB."""
    f = rgb.astype(np.float64)
    rg = f[..., 0] - f[..., 1]
    yb = 0.5 * (f[..., 0] + f[..., 1]) - f[..., 2]
    return float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()))


def aesthetic_parts(png: bytes) -> dict[str, float]:
    """The five parts of the score (see the module docstring)."""
    m = measure(png)
    if m["paint_fraction"] < 0.002:
        return dict.fromkeys(WEIGHTS, 0.0)
    rgb = normalise(png)
    lum = (rgb.astype(np.float64) / 255.0) @ np.array([0.299, 0.587, 0.114])
    pf = m["paint_fraction"]
    return {
        "colourful": _ramp(colourfulness(rgb), 5.0, 45.0),
        "contrast": _ramp(float(lum.std()), 0.02, 0.15),
        "coverage": _ramp(pf, 0.03, 0.15) * (1.0 - _ramp(pf, 0.6, 0.9)),
        "composed": 1.0 - _ramp(m["centre_offset"], 0.25, 0.7),
        "shapes": _ramp(m["shape_edges"], 0.01, 0.08),
    }


def aesthetic_score(png: bytes) -> float:
    parts = aesthetic_parts(png)
    return round(sum(WEIGHTS[k] * v for k, v in parts.items()) / sum(WEIGHTS.values()), 6)


class HandSetAestheticScorer:
    """The offline stand-in for HPSv3 (see the module docstring). Never fails."""

    name = "offline-aesthetic (hand-set formula, not a learned preference model)"

    def score(self, pngs: Sequence[bytes], prompt: str = "") -> list[PreferenceScore]:
        out = []
        for png in pngs:
            value = aesthetic_score(png)
            out.append(PreferenceScore(value, None, value))
        return out
