"""The environment's wire types: the action (the model's reply), the observation (the reward
and everything behind it), one turn's record and the state (the episode). Pydantic models on
OpenEnv's bases, so unknown fields, wrong types and oversized or malformed replies are refused
with a clear error before anything is rendered.

The episode's reward (:data:`EPISODE_REWARD_RULE`; the arithmetic is
:func:`watercolour.env.server.environment.episode_reward`) is the last turn's reward, less an
optional penalty for a revision that made the painting worse: never more than the last turn's
sketch earns when it is submitted on every turn, so a sabotaged first turn cannot pay. The
size limits (:data:`MAX_REPLY_CHARS`, :data:`MAX_MESSAGE_BYTES`) are declared in
:mod:`watercolour.env.limits`."""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from watercolour.env.limits import MAX_MESSAGE_BYTES, MAX_REPLY_CHARS  # noqa: F401 (declared there)
from watercolour.rewards.record import ComponentScore, RewardRecord

Status = Literal["ready", "ok", "rejected", "unavailable"]
TurnStatus = Literal["ok", "rejected", "unavailable"]

MULTI_TURN_DEFAULT = 2
"""The turns of a multi-turn episode when a caller asks for revision without a count (the
default of :func:`watercolour.env.client.play_episode`): one sketch, one revision."""

EPISODE_REWARD_RULE = (
    "The episode's reward is the last turn's reward R_K, less penalty * max(0, R_best - R_K), "
    "where R_best is the best reward of the earlier turns (a revision that made the painting "
    "worse costs), and never below 0. Nothing is ever added: the episode never earns more "
    "than its last sketch earns when submitted on every turn, so a weak first turn gains "
    "nothing. penalty is the server's WATERCOLOUR_ENV_REGRESSION_PENALTY (default 0: the "
    "episode's reward is the last turn's); a reset cannot change it. A rejected turn's reward "
    "is 0 and a revision is still allowed; an unavailable turn ends the episode with reward "
    "null, never 0. Until the last turn, an observation's reward is that turn's own reward.")
"""The episode's reward, in words (every step's observation carries it in its metadata)."""


class WatercolourAction(Action):
    """One turn of the policy: its whole reply (prose and a fenced p5.js sketch)."""

    reply: str = Field(..., max_length=MAX_REPLY_CHARS,
                       description="The model's reply: the sketch is taken from its fenced "
                       "JavaScript block (or the whole text when it is bare code).")



    _problem: str | None = PrivateAttr(None)

    @model_validator(mode="wrap")
    @classmethod
    def _utf8(cls, data: Any, handler: Any) -> WatercolourAction:
        # pydantic refuses lone surrogates with an error that echoes them and cannot be
        # serialised; keep the text (U+FFFD in their place) and the problem, for step() to
        # refuse with a clear message.
        problem = None
        if isinstance(data, dict) and isinstance(data.get("reply"), str):
            problem = reply_problem(data["reply"])
            if problem:
                data = {**data, "reply": data["reply"].encode("utf-8", "replace").decode()}
        action = handler(data)
        action._problem = problem
        return action

    @property
    def problem(self) -> str | None:
        """Why this reply cannot be scored as text, or None."""
        return self._problem


def reply_problem(reply: str) -> str | None:
    """Why a reply cannot be scored as text (lone surrogates: not valid UTF-8), or None."""
    try:
        reply.encode("utf-8")
    except UnicodeEncodeError as err:
        return f"the reply is not valid UTF-8 text (a lone surrogate at character {err.start})"
    return None


class TurnRecord(BaseModel):
    """One turn of an episode as the environment kept it: what was drawn, what was said about
    it and what it earned."""

    model_config = ConfigDict(extra="forbid")

    turn: int = Field(..., description="1 for the first sketch, 2 for its first revision, ...")
    status: TurnStatus = Field(..., description="ok, rejected (reward 0) or unavailable "
                               "(reward null)")
    reward: float | None = Field(None, description="This turn's own reward (the rewarder's "
                                 "total; null when unavailable)")
    passed: bool | None = Field(None, description="The gate's verdict on this turn's sketch")
    violations: list[str] = Field(default_factory=list, description="The gate's violations")
    critique: str = Field("", description="The critique this turn's render got")
    sketch: str | None = Field(None, description="The sketch the gate took from the reply")
    reply_sha256: str = Field(..., description="SHA-256 of the whole reply")
    render_sha256: str | None = Field(None, description="SHA-256 of the render's PNG (null "
                                      "when nothing was rendered)")
    cache_hit: bool | None = Field(None, description="Whether the render came from the "
                                   "render cache (an unchanged revision: true)")
    unavailable: dict[str, Any] | None = Field(None, description="Which part failed and why "
                                               "(unavailable turns only)")


class WatercolourObservation(Observation):
    """What the environment answers: after ``reset`` the prompt (status ``ready``), after
    ``step`` the reward and its whole breakdown."""

    status: Status = Field("ready", description="ready (after reset), ok (scored), rejected "
                           "(the sketch's fault: reward 0), unavailable (infrastructure failed "
                           "after bounded retries: reward null, never 0)")
    unavailable: dict[str, Any] | None = Field(
        None, description="Which part failed (render, judge, hps, server) and why; null "
        "unless the status is unavailable")
    subject: str = Field("", description="What the policy was asked to paint")
    prompt: list[dict[str, str]] = Field(
        default_factory=list, description="The chat messages of the request (after reset; "
        "after a step of a multi-turn episode, the critique turn to append)")
    breakdown: RewardRecord | None = Field(
        None, description="The reward's record (watercolour.rewards.record.RewardRecord: "
        "reward, status, unavailable, components with raw, weight, contribution, role, backend "
        "and details, references, gate, latency_s, mix, seeds); null before a step")
    reference_ids: list[str] = Field(default_factory=list,
                                     description="The pool paintings this group is judged "
                                     "against (drawn from the reset seed)")
    critique: str = Field("", description="A short note on the render's own measurable "
                          "properties (paint, shapes, edges, brightness, errors); never the "
                          "references or the score")
    reply_sha256: str | None = Field(None, description="SHA-256 of the reply this observation "
                                     "answers, so a client can match reply and answer")
    turn: int = Field(0, description="Steps taken in this episode")
    max_turns: int = Field(1, description="Steps the episode allows (reset turns=K)")
    latency_s: dict[str, float | None] = Field(
        default_factory=dict, description="Seconds per stage (gate, render, judge, hps, "
        "total) and the server's whole step")
    cache_hit: bool | None = Field(None, description="Whether the render came from the "
                                   "render cache")
    png_base64: str | None = Field(None, description="The render as base64 PNG, when the "
                                   "episode asked for it (reset include_png=true or "
                                   "show_render=true)")
    turn_reward: float | None = Field(None, description="This turn's own reward (on the last "
                                      "turn it can differ from reward, the episode's, by the "
                                      "regression penalty)")
    episode_reward: float | None = Field(None, description="The episode's reward, on the "
                                         "observation that ends it (null before, and when a "
                                         "turn was unavailable); the rule: EPISODE_REWARD_RULE "
                                         "(metadata.episode.rule)")
    render_sha256: str | None = Field(None, description="SHA-256 of this turn's render")

    # read from the record (not sent twice)
    @property
    def components(self) -> dict[str, ComponentScore]:
        """Per component of the rubric: its score (empty before a step)."""
        return dict(self.breakdown.components) if self.breakdown is not None else {}

    @property
    def passed(self) -> bool | None:
        """The gate's verdict (None before a step)."""
        return self.breakdown.gate_passed if self.breakdown is not None else None

    @property
    def violations(self) -> list[str]:
        """The gate's violation names, in vocabulary order."""
        return self.breakdown.violations if self.breakdown is not None else []

    @property
    def paint_fraction(self) -> float | None:
        """Share of the canvas that is not bare paper."""
        return self.breakdown.paint_fraction if self.breakdown is not None else None

    @property
    def n_shapes(self) -> int | None:
        """Filled p5.brush shapes the sketch drew."""
        return self.breakdown.n_shapes if self.breakdown is not None else None


class WatercolourState(State):
    """The episode: which references it faces, what it asked for, how far it got."""

    seed: int | None = Field(None, description="The group seed (the references are drawn "
                             "from it; every rollout of a GRPO group shares it)")
    render_seed: int | None = Field(None, description="The seed the sketch is rendered with")
    subject: str = Field("", description="What the policy is asked to paint")
    reference_ids: list[str] = Field(default_factory=list,
                                     description="The pool paintings drawn for this group")
    love_references: int | None = Field(None, description="How many of the references come "
                                        "from the pool's love tier (reset love_references; "
                                        "null: the default, references // 2)")
    turn: int = Field(0, description="Steps taken in this episode")
    max_turns: int = Field(1, description="Steps the episode allows (1: single turn)")
    include_png: bool = Field(False, description="Whether observations carry the render")
    done: bool = Field(False, description="Whether the episode is over")
    regression_penalty: float = Field(0.0, description="What the episode's reward loses per "
                                      "unit the last turn falls below the best earlier turn "
                                      "(the server's WATERCOLOUR_ENV_REGRESSION_PENALTY)")
    history: list[TurnRecord] = Field(default_factory=list, description="Every turn so far, "
                                      "in order")
    reward: float | None = Field(None, description="The episode's reward once it is over "
                                 "(null before, and when a turn was unavailable)")


class RewardSettings(BaseModel):
    """What a server scores with, as ``GET /reward`` answers it: the settings of the reward a
    trainer must share with it (TRL's reward weights come from the mix, each group's love
    count from the references). Read-only: the server's ``WATERCOLOUR_*`` variables set them
    at start and no request changes them."""

    model_config = ConfigDict(extra="ignore")  # a newer server may say more

    mix: dict[str, float] = Field(description="Each rubric component's weight "
                                  "(WATERCOLOUR_*_WEIGHT).")
    mix_name: str = Field(description="The mix's preset name (judge-led, hps-led, hps-only), "
                          "or custom.")
    references: int = Field(description="References drawn for a group "
                            "(WATERCOLOUR_REFERENCES).")
    gate_mode: str = Field(description="The gate's mode, library or allowlist "
                           "(WATERCOLOUR_GATE_MODE).")
    pool: str | None = Field(None, description="The reference pool's source (WATERCOLOUR_POOL); "
                             "null: none loaded.")
    tiers: dict[str, list[str]] = Field(default_factory=dict, description="The pool's "
                                        "paintings' ids by tier (love, okay, ...): what a "
                                        "references curriculum draws from.")
