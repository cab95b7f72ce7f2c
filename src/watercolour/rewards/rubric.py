"""The rubric: the reward's components, each declared once.

A :class:`Component` names a term, says what its slot measures (``role``), how it weighs (a
fixed weight, or a ``WATERCOLOUR_*_WEIGHT`` variable), whether a zero from it vetoes the rest
(the gate) and whether it looks at the render. It is plain data: how it scores a group and
which backend fills it are its term's (:mod:`watercolour.rewards.terms`, which builds each
from the configuration and the pool). Everything else reads :data:`RUBRIC`: the mixes and their
variables (:mod:`~watercolour.rewards.mix`), the total (``combine``), the rewarder, the TRL
reward functions (one per weighted component), the per-step metrics, the rollout log's
columns, the environment client, the CLI and the chapters. Adding a term is one declaration
here and its term (a class with ``build`` and ``score``) in
:data:`watercolour.rewards.terms.TERMS`.

=========  ============================================  =========================  ==========
name       role                                          weight                     backend
=========  ============================================  =========================  ==========
gate       the sketch compiles, uses p5.brush, paints    0.05 (a zero: total 0)     Chromium
length     a ramp on the reply's length                  0.05                       tokenizer
judge      pairwise wins against the pool's references   WATERCOLOUR_JUDGE_WEIGHT   pool-fitted
                                                                                    or a VLM
hps        human preference of the render                WATERCOLOUR_HPS_WEIGHT     offline
                                                                                    aesthetic
                                                                                    or HPSv3
pigment    paint coverage against the love tier          WATERCOLOUR_PIGMENT_WEIGHT pool bands
=========  ============================================  =========================  ==========

The slots are named by role and every record says what filled them
(:attr:`~watercolour.rewards.record.ComponentScore.backend`): in the committed runs the "hps"
slot is the offline aesthetic scorer and "judge" is the pool-fitted judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Component:
    """One term of the reward (see the module docstring)."""

    name: str
    role: str
    """What the slot measures, for people (tables, the CLI, the book)."""
    weight: float | None = None
    """A fixed weight; None for a component weighed by its variable (:attr:`env`)."""
    env: str | None = None
    """The variable that sets its weight (the weighted components share what the fixed ones
    leave: 0.90)."""
    vetoes: bool = False
    """A zero from it rejects the rollout: the total is 0 and nothing else pays."""
    on_render: bool = True
    """Scored only on rollouts the gate passed that are not near copies of a pool painting (a
    near copy's score is 0, recorded as ``zeroed: near_copy``)."""
    part: str | None = None
    """The part an unavailable rollout names when this component could not score (default:
    its name)."""

    def __post_init__(self) -> None:
        if (self.weight is None) == (self.env is None):
            raise ValueError(f"component {self.name!r}: give a fixed weight or a variable")

    @property
    def weighted_by_variable(self) -> bool:
        return self.env is not None


RUBRIC: tuple[Component, ...] = (
    Component("gate", "the sketch compiles, uses p5.brush and leaves paint", weight=0.05,
              vetoes=True, on_render=False, part="render"),
    Component("length", "a ramp on the reply's length", weight=0.05, on_render=False),
    Component("judge", "pairwise wins against references drawn from the pool",
              env="WATERCOLOUR_JUDGE_WEIGHT"),
    Component("hps", "human preference of the render (HPSv3's slot)",
              env="WATERCOLOUR_HPS_WEIGHT"),
    Component("pigment", "paint coverage against the pool's love tier",
              env="WATERCOLOUR_PIGMENT_WEIGHT"),
)

NAMES: tuple[str, ...] = tuple(c.name for c in RUBRIC)
WEIGHTED: tuple[str, ...] = tuple(c.name for c in RUBRIC if c.weighted_by_variable)
"""The components whose weights a mix chooses."""


def component(name: str) -> Component:
    """The component called ``name``.

    Raises:
        KeyError: no such component (the message lists them).
    """
    for c in RUBRIC:
        if c.name == name:
            return c
    raise KeyError(f"no reward component {name!r}; the rubric has {', '.join(NAMES)}")


def roles() -> dict[str, str]:
    """Component name -> its role."""
    return {c.name: c.role for c in RUBRIC}


def describe() -> list[dict[str, Any]]:
    """The rubric as rows (name, role, weight or variable, vetoes, on_render) for tables."""
    return [{"name": c.name, "role": c.role, "weight": c.weight, "variable": c.env,
             "vetoes": c.vetoes, "on_render": c.on_render} for c in RUBRIC]
