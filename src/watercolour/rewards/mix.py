"""Reward mixes: how much each component of the rubric weighs, and the total.

The gate and the length term weigh 0.05 each (fixed, declared in
:data:`~watercolour.rewards.rubric.RUBRIC`); the components weighed by a variable share the
rest, 0.90. The presets are data (:data:`PRESETS`: a component a preset does not name weighs
0):

=============  =====  ======  =====  =====  =======
mix            gate   length  judge  hps    pigment
=============  =====  ======  =====  =====  =======
``hps-only``   0.05   0.05    0.00   0.90   0
``hps-led``    0.05   0.05    0.30   0.60   0
``judge-led``  0.05   0.05    0.60   0.30   0
=============  =====  ======  =====  =====  =======

The mix is set by ``WATERCOLOUR_JUDGE_WEIGHT`` and ``WATERCOLOUR_HPS_WEIGHT`` (both, or neither
for the default ``judge-led``) and ``WATERCOLOUR_PIGMENT_WEIGHT`` (default 0; set it with the
other two so that the three sum to 0.90). Any such split with every weight in [0, 0.9] is
accepted (the presets are named); anything else is a :class:`MixError` at start-up, with the
reason.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from watercolour.errors import InputError
from watercolour.rewards.rubric import RUBRIC, WEIGHTED, Component

FIXED: dict[str, float] = {c.name: c.weight for c in RUBRIC if c.weight is not None}
MODEL_SHARE = round(1.0 - sum(FIXED.values()), 6)
"""What the components weighed by a variable share between them (0.90)."""
TOLERANCE = 1e-6
JUDGE_ENV = "WATERCOLOUR_JUDGE_WEIGHT"
HPS_ENV = "WATERCOLOUR_HPS_WEIGHT"
PAIRED = (JUDGE_ENV, HPS_ENV)
"""Set both or neither (a preset's split)."""

PRESETS: dict[str, dict[str, float]] = {
    "hps-only": {"judge": 0.0, "hps": 0.90},
    "hps-led": {"judge": 0.30, "hps": 0.60},
    "judge-led": {"judge": 0.60, "hps": 0.30},
}
"""Preset name -> the weights it gives (a component it does not name: 0)."""
DEFAULT_MIX = "judge-led"


class MixError(InputError):
    """Invalid reward weights (raised at start-up, never mid-run)."""


def _full(weights: Mapping[str, float]) -> dict[str, float]:
    unknown = sorted(set(weights) - set(WEIGHTED))
    if unknown:
        raise MixError(f"unknown weighted component(s) {', '.join(unknown)}; the mix weighs "
                       f"{', '.join(WEIGHTED)}")
    return {**FIXED, **{name: float(weights.get(name, 0.0)) for name in WEIGHTED}}


@dataclass(frozen=True)
class Mix:
    """The weight of each component, in rubric order; build with :meth:`preset`,
    :meth:`from_weights` or :meth:`from_env`."""

    weights: dict[str, float] = field(default_factory=lambda: _full(PRESETS[DEFAULT_MIX]))

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", _full(
            {k: v for k, v in self.weights.items() if k not in FIXED}))
        validate(self.weights)

    def weight(self, name: str) -> float:
        """A component's weight (0 for one the mix does not weigh)."""
        return self.weights.get(name, 0.0)

    def needs(self, name: str) -> bool:
        """Whether the component is asked (its weight is above zero)."""
        return self.weight(name) > 0

    @property
    def name(self) -> str:
        """The preset's name, or ``custom``."""
        for name, weights in PRESETS.items():
            if all(abs(w - self.weights[c]) < TOLERANCE for c, w in _full(weights).items()):
                return name
        return "custom"

    def active(self) -> list[str]:
        """Components with a weight above zero, in rubric order."""
        return [c for c, w in self.weights.items() if w > 0]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "weights": dict(self.weights)}

    @classmethod
    def preset(cls, name: str) -> Mix:
        if name not in PRESETS:
            raise MixError(f"unknown mix {name!r}; choose from {', '.join(PRESETS)}, or give "
                           f"weights: " + ",".join(f"{c}=W" for c in WEIGHTED))
        return cls(_full(PRESETS[name]))

    @classmethod
    def parse(cls, text: str) -> Mix:
        """A preset's name (``hps-led``) or weights (``judge=0.5,hps=0.3,pigment=0.1``; a
        weighted component not named weighs 0), as ``--mix`` takes it.

        Raises:
            MixError: an unknown name or component, a weight that is not a number, or weights
                that break the rule.
        """
        text = text.strip()
        if "=" not in text:
            return cls.preset(text)
        weights: dict[str, float] = {}
        for item in text.split(","):
            name, _, value = item.partition("=")
            try:
                weights[name.strip()] = float(value)
            except ValueError:
                raise MixError(f"--mix: the weight of {name.strip()!r} must be a number, got "
                               f"{value.strip()!r}") from None
        return cls.from_weights(**weights)

    @classmethod
    def from_weights(cls, **weights: float) -> Mix:
        """A mix from the weighted components' weights (unnamed ones: 0)."""
        return cls(_full(weights))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Mix:
        """The weights' variables; none set: the default mix (``judge-led``). A variable left
        unset takes the default mix's weight.

        Raises:
            MixError: one of the judge/HPS pair is set without the other, a value is not a
                number, or the weights are out of range or do not sum to 0.90.
        """
        env = os.environ if environ is None else environ
        given: dict[str, float] = {}
        mistakes = []
        for c in RUBRIC:
            raw = (env.get(c.env) or "").strip() if c.env else ""
            if not raw:
                continue
            try:
                given[c.name] = float(raw)
            except ValueError:
                mistakes.append(MixError(f"{c.env} must be a number, got {raw!r}"))
        if mistakes:
            raise MixError("\n".join(str(m) for m in mistakes))
        if not given:
            return cls.preset(DEFAULT_MIX)
        set_pair = [v for v in PAIRED if (env.get(v) or "").strip()]
        if len(set_pair) == 1:
            given_name, missing = set_pair[0], next(v for v in PAIRED if v != set_pair[0])
            raise MixError(f"{given_name} is set but {missing} is not: set both (e.g. "
                           f"{JUDGE_ENV}=0.3 {HPS_ENV}=0.6 for hps-led) or neither "
                           f"(the default, {DEFAULT_MIX})")
        return cls({**PRESETS[DEFAULT_MIX], **given})

    @classmethod
    def declared_variables(cls) -> list[tuple[str, str, str, str]]:
        """``(variable, "Mix.<component>", default, help)`` of each weighted component, for
        :func:`watercolour.settings.variables`."""
        default = _full(PRESETS[DEFAULT_MIX])
        return [(c.env, f"Mix.{c.name}", f"`{default[c.name]:g}` ({DEFAULT_MIX})",
                 _weight_help(c)) for c in RUBRIC if c.env]


def _weight_help(c: Component) -> str:
    return (f"weight of `{c.name}`: {c.role}; the {', '.join(WEIGHTED)} weights sum to "
            f"{MODEL_SHARE:.2f}")


def validate(weights: Mapping[str, float]) -> None:
    """Raise :class:`MixError` unless every weighted component is in [0, 0.9] and they sum
    to 0.9."""
    for name in WEIGHTED:
        value = weights[name]
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise MixError(f"the {name} weight must be a finite number, got {value!r}")
        if value < 0 or value > MODEL_SHARE + TOLERANCE:
            raise MixError(f"the {name} weight must be between 0 and {MODEL_SHARE:.2f}, "
                           f"got {value:g}")
    total = sum(weights[n] for n in WEIGHTED)
    if abs(total - MODEL_SHARE) > TOLERANCE:
        terms = " + ".join(f"{weights[n]:g} ({n})" for n in WEIGHTED)
        raise MixError(f"the {', '.join(WEIGHTED)} weights must sum to {MODEL_SHARE:.2f} "
                       f"(gate and length take 0.05 each), got {terms} = {total:g}; presets: "
                       + ", ".join(f"{n} (" + ", ".join(f"{k} {v:g}" for k, v in w.items())
                                   + ")" for n, w in PRESETS.items()))


def combine(mix: Mix, raws: Mapping[str, float | None]
            ) -> tuple[float | None, str, str | None, dict[str, dict[str, Any]]]:
    """The total from the components' raw scores: (total, status, unavailable part, parts).

    A vetoing component (the gate) that is 0 rejects the rollout (total 0.0, every
    contribution 0); one that is None, or any other component with a weight above zero that
    is None, makes the rollout unavailable (total None, every contribution None, the part
    named). Otherwise the total is ``sum(weight * raw)``. ``parts`` maps each component to its
    ``raw``, ``weight`` and ``contribution``.
    """
    status, missing = "ok", None
    for c in RUBRIC:
        raw = raws.get(c.name)
        if c.vetoes and raw is None:
            status, missing = "unavailable", c.part or c.name
            break
        if c.vetoes and raw == 0:
            status = "rejected"
    if status == "ok":
        for c in RUBRIC:
            if mix.needs(c.name) and raws.get(c.name) is None:
                status, missing = "unavailable", c.part or c.name
                break
    parts: dict[str, dict[str, Any]] = {}
    for c in RUBRIC:
        w, raw = mix.weight(c.name), raws.get(c.name)
        if status == "ok":
            contribution: float | None = w * raw if (w > 0 and raw is not None) else 0.0
        else:
            contribution = 0.0 if status == "rejected" else None
        parts[c.name] = {"raw": raw, "weight": w, "contribution": contribution}
    if status == "ok":
        total: float | None = round(sum(p["contribution"] for p in parts.values()), 6)
    else:
        total = 0.0 if status == "rejected" else None
    return total, status, missing, parts
