"""The reward's record: one typed value per evaluation, from the rewarder to the OpenEnv
observation, the TRL reward functions, the rollout log, the CLI and the chapters.

:class:`RewardRecord` is what an evaluation found (the total, its outcome, every component's
:class:`ComponentScore`, the references, the gate's verdict, the latencies); its JSON form
(:meth:`RewardRecord.to_dict`) is the wire format: the server's observation carries it as
``breakdown`` and a client reads it back with :meth:`RewardRecord.from_dict`. Consumers read
attributes (``record.components["judge"].raw``), never a dict's string paths.

A component's details beyond the common fields (the judge's ``wins``/``answered``/``asked`` and
``votes``, the length term's ``tokens``, the preference score's ``mu``/``sigma``, the pigment
band) are kept as extra fields of its :class:`ComponentScore`, so the record of a new component
needs no new type.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal["ok", "rejected", "unavailable"]


class ComponentScore(BaseModel):
    """One component of one rollout's reward."""

    model_config = ConfigDict(extra="allow")

    raw: float | None = Field(None, description="The component's score in [0, 1] (None: not "
                              "asked, or the rollout is unavailable)")
    weight: float | None = Field(None, description="Its weight in the mix")
    contribution: float | None = Field(None, description="weight * raw (None when the rollout "
                                       "is unavailable)")
    role: str = Field("", description="What the slot measures (e.g. 'human preference')")
    backend: str | None = Field(None, description="What filled the slot (e.g. "
                                "'offline-aesthetic' or 'hpsv3-service')")
    called: bool = Field(False, description="Whether the component was asked")
    error: str | None = Field(None, description="Why the component failed, when it did")
    zeroed: str | None = Field(None, description="Why the raw score was set to 0 (near_copy)")

    @property
    def details(self) -> dict[str, Any]:
        """The component's own fields beyond the common ones."""
        return dict(self.model_extra or {})


class Unavailable(BaseModel):
    """Which part of the reward failed, and why."""

    part: str = Field(..., description="render, judge, hps, pigment, source, server, ...")
    reason: str | None = Field(None, description="What went wrong")


class RewardRecord(BaseModel):
    """Everything one evaluation found (see the module docstring)."""

    model_config = ConfigDict(extra="allow")

    reward: float | None = Field(None, description="The total (None when unavailable, 0.0 "
                                 "when rejected)")
    status: Outcome = Field("unavailable", description="ok, rejected or unavailable")
    unavailable: Unavailable | None = Field(None, description="Set when unavailable")
    near_copy: dict[str, Any] | None = Field(None, description="The pool painting this "
                                             "rollout copies, how, and the similarity")
    subject: str | None = Field(None, description="What was asked for")
    seed: int | None = Field(None, description="The group seed (draws the references)")
    render_seed: int | None = Field(None, description="The seed the sketch rendered with")
    step: int | None = Field(None, description="The training step that scored it")
    mix: dict[str, Any] | None = Field(None, description="The mix's name and weights")
    components: dict[str, ComponentScore] = Field(default_factory=dict,
                                                  description="Per component, by name")
    references: dict[str, Any] | None = Field(None, description="The drawn references: "
                                              "seed, ids, tiers")
    gate: dict[str, Any] | None = Field(None, description="The gate's verdict (without the "
                                        "sketch)")
    latency_s: dict[str, float | None] = Field(default_factory=dict,
                                               description="Seconds per stage")
    env: dict[str, Any] | None = Field(None, description="How an environment server answered "
                                       "(url, attempts, turn, critique, ...)")
    trace: str | None = Field(None, description="The traceback of a failed reward source")

    def raw(self, name: str) -> float | None:
        """A component's raw score, or None when it is absent or was not scored."""
        part = self.components.get(name)
        return part.raw if part is not None else None

    @property
    def gate_passed(self) -> bool | None:
        return (self.gate or {}).get("passed")

    @property
    def violations(self) -> list[str]:
        return list((self.gate or {}).get("violations") or [])

    @property
    def paint_fraction(self) -> float | None:
        return (self.gate or {}).get("paint_fraction")

    @property
    def n_shapes(self) -> int | None:
        return (self.gate or {}).get("n_shapes")

    @property
    def reference_ids(self) -> list[str]:
        return list((self.references or {}).get("ids") or [])

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the wire format)."""
        return self.model_dump(mode="json", exclude_none=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> RewardRecord:
        """A record from its JSON form (an observation's ``breakdown``, a rollout log line)."""
        return cls.model_validate(data or {})


SHOWN_DETAILS = 4
"""How many of a component's details :func:`component_note` shows."""


def component_note(name: str, part: ComponentScore, record: RewardRecord) -> str:
    """What a component found, for people: the gate's paint and shapes; for the others their
    scalar details (tokens, wins/answered/asked, mu, coverage...) and the backend; ``not
    asked`` for a component the mix does not weigh."""
    if name == "gate":
        gate = record.gate or {}
        if gate.get("paint_fraction") is None:
            return ""
        return f"paint {gate['paint_fraction']:.3f}, {gate.get('n_shapes')} shapes"
    if not part.called:
        return "not asked" if not part.zeroed else f"zeroed ({part.zeroed})"
    shown = [f"{k} {_short(v)}" for k, v in part.details.items()
             if isinstance(v, int | float | str) and not isinstance(v, bool)
             and k not in ("latency_s",)][:SHOWN_DETAILS]
    return "; ".join([", ".join(shown), part.backend or ""]).strip("; ")


def _short(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
