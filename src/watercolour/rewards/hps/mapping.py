"""HPSv3's mean preference ``mu`` mapped to [0, 1].

The mapping is linear between two anchors and clipped::

    unit(mu) = clip((mu - lo) / (hi - lo), 0, 1)

**Calibrated on the pool's range** (:func:`calibrate`): score every pool painting with the
same prompt the rollouts get, then ``lo`` = the 2nd percentile and ``hi`` = the 98th
percentile of those scores (percentiles, so one odd painting does not stretch the scale). A
rollout as preferred as the pool's best paintings earns 1, one below the pool's worst earns 0
(a near-blank canvas, a smear), and the pool's own spread fills the range between: the HPS
term then speaks in the same units as the judge, whose standard is also the pool.

Before calibration the anchors are :data:`DEFAULT_LO` and :data:`DEFAULT_HI`, HPSv3's own
reading of its scale (its demo calls below 0 "poor quality" and 10 or more "excellent").
Set the anchors with ``WATERCOLOUR_HPS_RANGE=lo,hi`` (e.g. from ``calibrate``'s output) or a
JSON file written by :meth:`HpsMapping.save`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

DEFAULT_LO = 0.0
DEFAULT_HI = 10.0
RANGE_ENV = "WATERCOLOUR_HPS_RANGE"


@dataclass(frozen=True)
class HpsMapping:
    lo: float = DEFAULT_LO
    hi: float = DEFAULT_HI
    source: str = "HPSv3 demo bands (uncalibrated)"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)) or self.hi <= self.lo:
            raise ValueError(f"the HPS range needs lo < hi (finite), got {self.lo}, {self.hi}")

    def unit(self, mu: float) -> float:
        return min(1.0, max(0.0, (mu - self.lo) / (self.hi - self.lo)))

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def save(self, path: str | os.PathLike[str]) -> Path:
        from watercolour.io import write_json_atomic

        return write_json_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> HpsMapping:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(float(data["lo"]), float(data["hi"]), str(data.get("source", path)))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HpsMapping:
        """``WATERCOLOUR_HPS_RANGE``: ``lo,hi`` or the path of a saved mapping; unset: the
        defaults."""
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
        return cls(lo, hi, f"{RANGE_ENV}")


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
    """Anchors from the pool's scores (see the module docstring)."""
    values = [float(m) for m in mus if m is not None and math.isfinite(m)]
    if len(values) < 2:
        raise ValueError("calibration needs the scores of at least two pool paintings")
    lo, hi = percentile(values, lo_q), percentile(values, hi_q)
    if hi - lo < 1e-6:
        raise ValueError(f"the pool's scores do not spread ({lo:.4f}..{hi:.4f}); cannot "
                         "calibrate on them")
    return HpsMapping(lo, hi, f"{source}: p{lo_q:g}..p{hi_q:g} of {len(values)} paintings")


def calibrate_on_pool(scorer, pngs: Sequence[bytes], prompt: str,
                      batch: int = 8, source: str = "pool") -> HpsMapping:
    """Score the pool's paintings with ``scorer`` (its raw ``mu``) and :func:`calibrate`."""
    mus: list[float] = []
    for start in range(0, len(pngs), batch):
        mus += [s.mu for s in scorer.score(list(pngs[start:start + batch]), prompt)]
    return calibrate(mus, source=source)
