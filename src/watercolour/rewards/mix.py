"""Reward mixes: how much each component weighs.

Three presets, differing only in the split between the two model judges; the gate and the
length term are fixed at 0.05 each, so every mix sums to 1:

=============  =====  ======  =====  =====
mix            gate   length  judge  hps
=============  =====  ======  =====  =====
``hps-only``   0.05   0.05    0.00   0.90
``hps-led``    0.05   0.05    0.30   0.60
``judge-led``  0.05   0.05    0.60   0.30
=============  =====  ======  =====  =====

The mix is set by two environment variables, ``WATERCOLOUR_JUDGE_WEIGHT`` and
``WATERCOLOUR_HPS_WEIGHT`` (both, or neither for the default ``judge-led``). Any split with
both weights in [0, 0.9] and summing to 0.9 is accepted (the presets are named); anything
else is a :class:`MixError` at start-up, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from watercolour import settings
from watercolour.errors import InputError
from watercolour.settings import setting

GATE_WEIGHT = 0.05
LENGTH_WEIGHT = 0.05
MODEL_SHARE = 1.0 - GATE_WEIGHT - LENGTH_WEIGHT
"""What the two model judges share between them (0.90)."""
JUDGE_ENV = "WATERCOLOUR_JUDGE_WEIGHT"
HPS_ENV = "WATERCOLOUR_HPS_WEIGHT"
TOLERANCE = 1e-6

PRESETS: dict[str, tuple[float, float]] = {
    "hps-only": (0.0, 0.90),
    "hps-led": (0.30, 0.60),
    "judge-led": (0.60, 0.30),
}
"""Preset name -> (judge weight, hps weight)."""
DEFAULT_MIX = "judge-led"
COMPONENTS: tuple[str, ...] = ("gate", "length", "judge", "hps")


class MixError(InputError):
    """Invalid reward weights (raised at start-up, never mid-run)."""


@dataclass(frozen=True)
class Mix:
    """The weight of each component; build with :meth:`preset`, :meth:`from_weights` or
    :meth:`from_env`."""

    judge: float = setting(env=JUDGE_ENV, shown="`0.6` (judge-led)",
                           help=f"the pairwise judge's weight; set it and {HPS_ENV} (they sum "
                           "to 0.90: judge-led 0.60/0.30, hps-led 0.30/0.60, hps-only 0/0.90), "
                           "or neither")
    hps: float = setting(env=HPS_ENV, shown="`0.3` (judge-led)",
                         help="the HPSv3 preference score's weight (the gate and the length "
                         "term weigh 0.05 each)")
    gate: float = setting(GATE_WEIGHT, help="the gate's weight (fixed)")
    length: float = setting(LENGTH_WEIGHT, help="the length term's weight (fixed)")

    def __post_init__(self) -> None:
        validate(self.judge, self.hps)

    @property
    def name(self) -> str:
        """The preset's name, or ``custom``."""
        for name, (judge, hps) in PRESETS.items():
            if abs(judge - self.judge) < TOLERANCE and abs(hps - self.hps) < TOLERANCE:
                return name
        return "custom"

    @property
    def weights(self) -> dict[str, float]:
        return {"gate": self.gate, "length": self.length, "judge": self.judge, "hps": self.hps}

    def active(self) -> list[str]:
        """Components with a weight above zero, in order."""
        return [c for c, w in self.weights.items() if w > 0]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "weights": self.weights}

    @classmethod
    def preset(cls, name: str) -> Mix:
        if name not in PRESETS:
            raise MixError(f"unknown mix {name!r}; choose from {', '.join(PRESETS)}")
        judge, hps = PRESETS[name]
        return cls(judge=judge, hps=hps)

    @classmethod
    def from_weights(cls, judge: float, hps: float) -> Mix:
        return cls(judge=judge, hps=hps)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Mix:
        """``WATERCOLOUR_JUDGE_WEIGHT`` and ``WATERCOLOUR_HPS_WEIGHT``; neither set: the
        default mix (``judge-led``).

        Raises:
            MixError: only one is set, one is not a number, or the weights are out of range
                or do not sum to 0.90.
        """
        weights = settings.env_values(cls, environ, error=MixError)
        if not weights:
            return cls.preset(DEFAULT_MIX)
        if len(weights) == 1:
            given, missing = (JUDGE_ENV, HPS_ENV) if "judge" in weights else (HPS_ENV, JUDGE_ENV)
            raise MixError(f"{given} is set but {missing} is not: set both (e.g. "
                           f"{JUDGE_ENV}=0.3 {HPS_ENV}=0.6 for hps-led) or neither "
                           f"(the default, {DEFAULT_MIX})")
        return cls(**weights)


def validate(judge: float, hps: float) -> None:
    """Raise :class:`MixError` unless both weights are in [0, 0.9] and sum to 0.9."""
    for name, value in (("judge", judge), ("hps", hps)):
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise MixError(f"the {name} weight must be a finite number, got {value!r}")
        if value < 0 or value > MODEL_SHARE + TOLERANCE:
            raise MixError(f"the {name} weight must be between 0 and {MODEL_SHARE:.2f}, "
                           f"got {value:g}")
    if abs(judge + hps - MODEL_SHARE) > TOLERANCE:
        raise MixError(f"the judge and hps weights must sum to {MODEL_SHARE:.2f} (gate and "
                       f"length take 0.05 each), got {judge:g} + {hps:g} = {judge + hps:g}; "
                       f"presets: " + ", ".join(f"{n} ({j:g}, {h:g})"
                                               for n, (j, h) in PRESETS.items()))


def combine(
    mix: Mix,
    gate_status: str,
    length_raw: float,
    judge_raw: float | None = None,
    hps_raw: float | None = None,
) -> tuple[float | None, str, str | None, dict[str, dict[str, Any]]]:
    """The total from the parts: (total, status, unavailable part, components).

    ``gate_status`` is the verdict's ``ok``/``rejected``/``unavailable``. A needed component
    (weight > 0) that is None makes the whole total None.
    """
    weights = mix.weights
    raws: dict[str, float | None] = {"gate": None, "length": length_raw, "judge": judge_raw,
                                     "hps": hps_raw}
    missing: str | None = None
    if gate_status == "unavailable":
        status, missing = "unavailable", "render"
    elif gate_status == "rejected":
        status = "rejected"
    elif gate_status == "ok":
        status = "ok"
        raws["gate"] = 1.0
        for name in ("judge", "hps"):
            if weights[name] > 0 and raws[name] is None:
                status, missing = "unavailable", name
                break
    else:
        raise ValueError(f"unknown gate status {gate_status!r}")
    components: dict[str, dict[str, Any]] = {}
    total: float | None = 0.0
    for name in ("gate", "length", "judge", "hps"):
        w = weights[name]
        raw = raws[name]
        if status == "rejected":
            raw = 0.0 if name in ("gate",) else raw
            contribution: float | None = 0.0
        elif status == "unavailable":
            contribution = None
        else:
            contribution = w * raw if (w > 0 and raw is not None) else 0.0
        components[name] = {"raw": raw, "weight": w, "contribution": contribution}
    if status == "ok":
        total = round(sum(c["contribution"] for c in components.values()), 6)
    elif status == "rejected":
        total = 0.0
    else:
        total = None
    return total, status, missing, components
