"""HPSv3's mean preference ``mu`` mapped to [0, 1] by a logistic curve::

    unit(mu) = 1 / (1 + exp(-(mu - centre) / scale))

**The default is** ``logistic(mu / 4)`` (``centre`` 0, ``scale`` 4): the reproduction's
mapping. HPSv3's scale is open-ended; on the reproduction's pool, mu ran from about -9.2 (its
``okay`` tier) to +5.2 (its best), which this maps to 0.09..0.79 -- no score is clipped, and
a rollout better than the pool's best still earns more.

**Calibrated on a pool** (:func:`calibrate`): score every pool painting with the caption the
rollouts get, take the 2nd and 98th percentiles of those mu (percentiles, so one odd painting
does not stretch the scale), and put them at ``unit`` 0.02 and 0.98: ``centre`` is their
midpoint, ``scale`` = (p98 - p2) / (2 ln 49). The pool's own spread then fills the range,
and the HPS term speaks in the same units as the judge, whose standard is also the pool.

Set it with ``WATERCOLOUR_HPS_RANGE=lo,hi`` (the mu that map to 0.02 and 0.98, e.g. from
``calibrate``'s output) or the path of a JSON file written by :meth:`HpsMapping.save`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from watercolour.rewards.hps.base import PreferenceScorer

DEFAULT_CENTRE = 0.0
DEFAULT_SCALE = 4.0
ANCHOR = 0.98
"""The unit value the upper anchor maps to (the lower one: 1 - ANCHOR)."""
RANGE_ENV = "WATERCOLOUR_HPS_RANGE"
_SPAN = 2 * math.log(ANCHOR / (1 - ANCHOR))
"""(hi - lo) / scale for anchors at 1 - ANCHOR and ANCHOR."""


@dataclass(frozen=True)
class HpsMapping:
    centre: float = DEFAULT_CENTRE
    scale: float = DEFAULT_SCALE
    source: str = "logistic(mu / 4), the reproduction's default (uncalibrated)"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.centre) and math.isfinite(self.scale)) or self.scale <= 0:
            raise ValueError(f"the HPS mapping needs a finite centre and a scale > 0, got "
                             f"{self.centre}, {self.scale}")

    @classmethod
    def through(cls, lo: float, hi: float, source: str = "anchors") -> HpsMapping:
        """The curve that maps ``lo`` to 0.02 and ``hi`` to 0.98."""
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
            raise ValueError(f"the HPS range needs lo < hi (finite), got {lo}, {hi}")
        return cls((lo + hi) / 2, (hi - lo) / _SPAN, source)

    @property
    def anchors(self) -> tuple[float, float]:
        """The mu that map to 0.02 and 0.98."""
        half = self.scale * _SPAN / 2
        return self.centre - half, self.centre + half

    def unit(self, mu: float) -> float:
        z = (mu - self.centre) / self.scale
        if z < -700:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def save(self, path: str | os.PathLike[str]) -> Path:
        from watercolour.io import write_json_atomic

        return write_json_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> HpsMapping:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        try:
            return cls(float(data["centre"]), float(data["scale"]),
                       str(data.get("source", path)))
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{path}: not an HPS mapping (it needs 'centre' and 'scale')"
                             ) from None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HpsMapping:
        """``WATERCOLOUR_HPS_RANGE``: ``lo,hi`` (see :meth:`through`) or the path of a saved
        mapping; unset: the default."""
        env = os.environ if environ is None else environ
        raw = (env.get(RANGE_ENV) or "").strip()
        if not raw:
            return cls()
        if os.path.isfile(raw):
            return cls.load(raw)
        parts = raw.split(",")
        try:
            lo, hi = (float(p) for p in parts)
        except ValueError:
            raise ValueError(f"{RANGE_ENV} must be 'lo,hi' (two numbers) or a mapping JSON "
                             f"file, got {raw!r}") from None
        return cls.through(lo, hi, f"{RANGE_ENV}")


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (0 <= q <= 100) of a non-empty sequence."""
    xs = sorted(values)
    if not xs:
        raise ValueError("no values")
    pos = (len(xs) - 1) * q / 100
    i = math.floor(pos)
    j = min(i + 1, len(xs) - 1)
    return xs[i] + (xs[j] - xs[i]) * (pos - i)


def calibrate(mus: Sequence[float], lo_q: float = 2.0, hi_q: float = 98.0,
              source: str = "pool") -> HpsMapping:
    """The curve fitted on a pool's mu values (see the module docstring)."""
    values = [float(m) for m in mus if m is not None and math.isfinite(m)]
    if len(values) < 2:
        raise ValueError("calibration needs the scores of at least two pool paintings")
    lo, hi = percentile(values, lo_q), percentile(values, hi_q)
    if hi - lo < 1e-6:
        raise ValueError(f"the pool's scores do not spread ({lo:.4f}..{hi:.4f}); cannot "
                         "calibrate on them")
    return HpsMapping.through(lo, hi, f"{source}: p{lo_q:g}..p{hi_q:g} of {len(values)} "
                              "paintings at 0.02..0.98")


def calibrate_on_pool(scorer: PreferenceScorer, pngs: Sequence[bytes], prompt: str,
                      batch: int = 8, source: str = "pool") -> HpsMapping:
    """Score the pool's paintings with ``scorer`` (its raw ``mu``) and :func:`calibrate`."""
    mus: list[float] = []
    for start in range(0, len(pngs), batch):
        mus += [s.mu for s in scorer.score(list(pngs[start:start + batch]), prompt)]
    return calibrate(mus, source=source)
