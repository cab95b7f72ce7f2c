"""The environment's wire types: the action (the model's reply), the observation (the reward
and everything behind it) and the state (the episode). Pydantic models on OpenEnv's bases, so
unknown fields, wrong types and oversized or malformed replies are refused with a clear error
before anything is rendered."""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field, PrivateAttr, model_validator

MAX_REPLY_CHARS = 1_000_000
"""The longest reply the server accepts (the gate itself rejects sketches over 100 000
characters as the sketch's fault; this bound only protects the server)."""

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The largest websocket message the server reads (``watercolour serve``); a larger one is
refused at the protocol level (close code 1009, *message too big*) before it is parsed."""

Status = Literal["ready", "ok", "rejected", "unavailable"]


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
    components: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per component (gate, length, judge, hps): raw, "
        "weight, contribution and details (tokens, wins/answered/asked, mu/sigma, backend)")
    breakdown: dict[str, Any] = Field(
        default_factory=dict, description="The reward's whole record, as "
        "watercolour.rewards.Evaluation.to_dict() gives it (reward, status, unavailable, "
        "components, references, gate, latency_s, mix, seeds)")
    passed: bool | None = Field(None, description="The gate's verdict (null before a step)")
    violations: list[str] = Field(default_factory=list,
                                  description="The gate's violation names, in vocabulary order")
    paint_fraction: float | None = Field(None, description="Share of the canvas that is not "
                                         "bare paper")
    n_shapes: int | None = Field(None, description="Filled p5.brush shapes the sketch drew")
    reference_ids: list[str] = Field(default_factory=list,
                                     description="The pool paintings this group is judged "
                                     "against (drawn from the reset seed)")
    critique: str = Field("", description="A short note on the render's own measurable "
                          "properties (paint, shapes, edges, brightness, errors); never the "
                          "references or the score")
    reply_sha256: str | None = Field(None, description="SHA-256 of the reply this observation "
                                     "answers, so a client can match reply and answer")
    turn: int = Field(0, description="Steps taken in this episode")
    max_turns: int = Field(1, description="Steps the episode allows")
    latency_s: dict[str, float | None] = Field(
        default_factory=dict, description="Seconds per stage (gate, render, judge, hps, "
        "total) and the server's whole step")
    cache_hit: bool | None = Field(None, description="Whether the render came from the "
                                   "render cache")
    png_base64: str | None = Field(None, description="The render as base64 PNG, when the "
                                   "episode asked for it (reset include_png=true)")


class WatercolourState(State):
    """The episode: which references it faces, what it asked for, how far it got."""

    seed: int | None = Field(None, description="The group seed (the references are drawn "
                             "from it; every rollout of a GRPO group shares it)")
    render_seed: int | None = Field(None, description="The seed the sketch is rendered with")
    subject: str = Field("", description="What the policy is asked to paint")
    reference_ids: list[str] = Field(default_factory=list,
                                     description="The pool paintings drawn for this group")
    turn: int = Field(0, description="Steps taken in this episode")
    max_turns: int = Field(1, description="Steps the episode allows (1: single turn)")
    include_png: bool = Field(False, description="Whether observations carry the render")
    done: bool = Field(False, description="Whether the episode is over")
