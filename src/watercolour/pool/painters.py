"""Painters: whatever writes a sketch for a subject, round after round, from critiques.

One interface (:class:`Painter`), two implementations:

- :class:`ProceduralPainter` (the embedded default): the procedural painter of
  :mod:`watercolour.pool.procedural`; it reads the critic's issues and revises its plan.
- :class:`OpenAIPainter`: a language model behind any OpenAI-compatible chat endpoint
  (Inference Providers through their router, a local vLLM server, ``transformers serve``).
  Vision models see the reference photo (a local file or a URL); text models get its
  description. In later rounds the model sees its previous sketch and the critique (and the
  render, when it is a vision model).

Painters are stateless: a request carries the whole history of the painting, so a build that
resumes after a crash rebuilds the same request from its log.
"""

from __future__ import annotations

import base64
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from watercolour.gates import extract_sketch
from watercolour.openai_compat import HF_ROUTER, ChatClient, EmptyReply, check_served
from watercolour.pool import procedural
from watercolour.prompt import ANY_SUBJECT, system_prompt_template

DEFAULT_PAINTER_MODELS: tuple[str, ...] = (
    "Qwen/Qwen3-Coder-480B-A35B-Instruct",
    "moonshotai/Kimi-K2-Instruct",
    "deepseek-ai/DeepSeek-V3.1",
    "zai-org/GLM-4.5",
)
"""Four open-weight painters from four model families on Inference Providers. The write-ups
say the published pool came from four open-weight models of different families but do not
name them: these are our stand-ins, chosen the same way."""

DEFAULT_CRITIC_MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
"""A vision model for the critic (the model the reproduction's pairwise judge used)."""

HIBISCUS_DESCRIPTION = (
    "A single hibiscus flower seen from the front: five broad, overlapping, ruffled petals in "
    "warm peach fading to pale apricot at the edges, a deep crimson throat at the centre, and "
    "a long pale stamen column tipped with yellow pollen and red stigma pads, sweeping up and "
    "to the right. Glossy dark green leaves behind the bloom, soft blurred background."
)

SYSTEM_PROMPT = system_prompt_template(ANY_SUBJECT)
"""The painters' system prompt (:mod:`watercolour.prompt`, the subject named in the user turn),
with a ``{size}`` field for the request's canvas."""


@dataclass
class Reference:
    """The reference photo painters work from."""

    image: str | None = None
    """A local file or an http(s) URL; None when there is no photo."""
    description: str = HIBISCUS_DESCRIPTION
    """What text-only painters are told the photo shows."""

    def image_url(self) -> str | None:
        """A URL a vision model can fetch, or a ``data:`` URL for a local file."""
        if self.image is None:
            return None
        if self.image.startswith(("http://", "https://", "data:")):
            return self.image
        path = Path(self.image)
        mime = mimetypes.guess_type(path.name)[0] or "image/jpeg"
        return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


@dataclass
class Attempt:
    """One earlier round of the same painting."""

    round: int
    sketch: str | None
    critique: str
    issues: list[str] = field(default_factory=list)
    png: bytes | None = None


@dataclass
class PaintRequest:
    subject: str
    seed: int
    round: int = 1
    history: list[Attempt] = field(default_factory=list)
    reference: Reference | None = None
    size: int = 512


@dataclass
class PaintReply:
    code: str | None
    """The sketch; None when the reply held no code."""
    text: str = ""
    """The painter's whole reply (for models; empty for the procedural painter)."""
    meta: dict[str, Any] = field(default_factory=dict)


class Painter(Protocol):
    name: str

    def paint(self, request: PaintRequest) -> PaintReply: ...


# ---------------------------------------------------------------- procedural


class ProceduralPainter:
    """The procedural painter behind the :class:`Painter` interface.

    Round 1 is :func:`procedural.plan_painting` of the request's seed (its variant, good or
    flawed, is decided by the seed); each later round applies the previous critiques' issues
    with :func:`procedural.revise`.
    """

    name = "procedural"

    def __init__(self, style: str | None = None) -> None:
        self.style = style

    def plan(self, request: PaintRequest) -> procedural.Plan:
        plan = procedural.plan_painting(request.seed, subject=request.subject,
                                        size=request.size, style=self.style)
        for attempt in sorted(request.history, key=lambda a: a.round):
            plan = procedural.revise(plan, attempt.issues)
        return plan

    def paint(self, request: PaintRequest) -> PaintReply:
        plan = self.plan(request)
        return PaintReply(procedural.sketch(plan), "", {"variant": plan.variant,
                                                        "style": plan.style,
                                                        "revisions": list(plan.revisions)})


# ---------------------------------------------------------------- models

class OpenAIPainter:
    """A model that writes sketches, through an OpenAI-compatible chat endpoint."""

    def __init__(
        self,
        client: ChatClient,
        vision: bool = False,
        system_prompt: str = SYSTEM_PROMPT,
        max_tokens: int = 6000,
        temperature: float = 0.8,
        name: str | None = None,
    ) -> None:
        self.client = client
        self.vision = vision
        self.system_prompt = system_prompt
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.name = name or client.model.split("/")[-1] or "model"

    def messages(self, request: PaintRequest) -> list[dict[str, Any]]:
        reference = request.reference or Reference()
        ask = f"Paint {request.subject} in watercolour."
        url = reference.image_url() if self.vision else None
        if url:
            first: Any = [{"type": "image_url", "image_url": {"url": url}},
                          {"type": "text", "text": f"{ask} Work from this photo."}]
        else:
            first = f"{ask} The reference photo shows: {reference.description}"
        messages = [{"role": "system", "content": self.system_prompt.format(size=request.size)},
                    {"role": "user", "content": first}]
        for attempt in sorted(request.history, key=lambda a: a.round):
            sketch = attempt.sketch or "(no sketch)"
            messages.append({"role": "assistant", "content": f"```javascript\n{sketch}\n```"})
            feedback = (f"A critic looked at the render of round {attempt.round}: "
                        f"{attempt.critique}\nWrite an improved version of the whole sketch.")
            if self.vision and attempt.png is not None:
                png_url = "data:image/png;base64," + base64.b64encode(attempt.png).decode()
                messages.append({"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": png_url}},
                    {"type": "text", "text": feedback}]})
            else:
                messages.append({"role": "user", "content": feedback})
        return messages

    def paint(self, request: PaintRequest) -> PaintReply:
        """The model's sketch. A reply without content (a reasoning model that spent its
        tokens) is the model's failure: no sketch, the reason in ``meta["error"]``."""
        try:
            reply = self.client.complete(self.messages(request), max_tokens=self.max_tokens,
                                         temperature=self.temperature, seed=request.seed)
        except EmptyReply as empty:
            return PaintReply(None, "", {"model": empty.model or self.client.model,
                                         "usage": empty.usage, "error": str(empty),
                                         "finish_reason": empty.finish_reason})
        return PaintReply(extract_sketch(reply.text).code, reply.text,
                          {"model": reply.model or self.client.model, "usage": reply.usage,
                           "attempts": reply.attempts, "seconds": round(reply.seconds, 3),
                           "finish_reason": reply.finish_reason})


def model_painters(models: list[str] | tuple[str, ...] = DEFAULT_PAINTER_MODELS,
                   base_url: str | None = None, api_key: str | None = None,
                   vision: bool = False, timeout_s: float = 300.0, retries: int = 2
                   ) -> list[OpenAIPainter]:
    """One :class:`OpenAIPainter` per model id, all behind the same endpoint.

    With a token (``api_key``, or ``HF_TOKEN`` for the router) the ids are checked against
    the endpoint's ``GET /models`` first: an id it does not serve raises
    :class:`~watercolour.openai_compat.ModelsNotServed` here, not a failure per painting."""
    clients = [ChatClient(base_url or HF_ROUTER, model=m, api_key=api_key,
                          timeout_s=timeout_s, retries=retries) for m in models]
    if clients and clients[0].api_key:
        check_served(clients[0], models)
    return [OpenAIPainter(client, vision=vision) for client in clients]
