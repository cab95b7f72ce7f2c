"""The real pairwise judge: a vision-language model behind any OpenAI-compatible chat
endpoint, called through :class:`watercolour.openai_compat.ChatClient` (plain HTTP: it works
with ``HF_HUB_OFFLINE=1``).

- ``base_url`` (vLLM, ``transformers serve``, any ``/v1`` server; its key comes from
  ``WATERCOLOUR_JUDGE_API_KEY``: ``HF_TOKEN`` goes only to Hugging Face's router) or
  ``provider`` (Inference Providers through their router, :data:`~watercolour.openai_compat.
  HF_ROUTER`: ``auto`` or a name the pinned ``huggingface_hub`` accepts, checked when the judge
  is made; the router needs ``HF_TOKEN=hf_...``). A provider can also ride on the model id,
  ``model:provider`` (e.g. ``Qwen/Qwen3-VL-30B-A3B-Instruct:novita``), with the router as the
  base URL. The default model is ``Qwen/Qwen3-VL-30B-A3B-Instruct``.
- The two pictures go in as data URLs, downscaled to ``image_side`` pixels.
- The rubric is a text file (:data:`RUBRIC_PATH`, ``rubric.md`` beside this module; pass
  ``rubric=`` for another). The answer is asked for as structured output
  (:data:`VERDICT_SCHEMA`, ``response_format`` with a strict JSON schema: the winner, an enum,
  first; a bounded reason), which vLLM and the router honour; an endpoint that rejects
  ``response_format`` is asked again without it, once, and never again. Parsing stays
  tolerant (``transformers serve`` ignores the schema): a fenced block, a leading ``<think>``
  block, prose around the object, or a verdict cut off after its winner all count; anything
  else is unparseable and the vote is dropped, never retried (at temperature 0 it would
  answer the same).
- Each request has a timeout; transient failures (timeouts, refused connections, 408, 429,
  5xx, a body that is not a chat completion) are retried a bounded number of times with
  exponential backoff; other 4xx and an empty answer (``content: null``) fail at once; a
  failure is a vote with ``winner=None``.
- At most ``max_concurrency`` requests are in flight per judge (across threads).
"""

from __future__ import annotations

import base64
import concurrent.futures
import io
import json
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from PIL import Image

from watercolour import settings
from watercolour.openai_compat import (
    HF_ROUTER,
    ChatClient,
    ChatError,
    EmptyReply,
    split_provider,
    token_for,
    validate_provider,
)
from watercolour.rewards.judge.base import Vote
from watercolour.settings import setting

DEFAULT_MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
KEY_ENV = "WATERCOLOUR_JUDGE_API_KEY"


@dataclass
class JudgeKey:
    """The judge endpoint's secret, read when its client is built and never recorded."""

    api_key: str | None = setting(
        None, env=KEY_ENV, help="the bearer token for WATERCOLOUR_JUDGE_BASE_URL (HF_TOKEN is "
        "sent only to Hugging Face's router, or through a provider)")


RUBRIC_PATH = resources.files("watercolour.rewards.judge").joinpath("rubric.md")
QUESTION = ("Which is the better watercolour of {subject} by the rubric, image A or image B? "
            "Answer with the JSON object only.")
REASON_CHARS = 200
"""The longest reason the schema allows."""
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "winner": {"type": "string", "enum": ["A", "B"]},
                "reason": {"type": "string", "maxLength": REASON_CHARS},
            },
            "required": ["winner", "reason"],
            "additionalProperties": False,
        },
    },
}
"""``response_format`` for the verdict: the winner first, so a cut-off answer still has it."""
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_CUT_OFF = re.compile(r'^\s*\{\s*"winner"\s*:\s*"([ABab])"\s*(?:,|$)')


def judge_client(model: str, *, base_url: str | None = None, provider: str | None = None,
                 token: str | None = None, timeout_s: float = 60.0, retries: int = 2,
                 backoff_s: float = 1.0) -> ChatClient:
    """The judge's :class:`ChatClient`, its provider checked (a one-line ``ValueError`` for
    an unknown name, or a provider without a Hugging Face token).

    ``base_url``: that endpoint, with ``token`` or ``WATERCOLOUR_JUDGE_API_KEY`` (or
    ``HF_TOKEN`` when it is the router). ``provider`` (or neither): the router, with
    ``model:provider`` (``auto``: the router picks) and ``token`` or ``HF_TOKEN``."""
    if base_url and provider:
        raise ValueError("give the judge a base_url or a provider, not both")
    if base_url:
        key = token if token is not None else (settings.from_env(JudgeKey).api_key
                                                or token_for(base_url))
        suffix = split_provider(model)[1]
        if suffix and base_url.rstrip("/") == HF_ROUTER:
            validate_provider(suffix, key)
        return ChatClient(base_url, model=model, api_key=key or "", timeout_s=timeout_s,
                          retries=retries, backoff_s=backoff_s)
    key = token if token is not None else token_for(HF_ROUTER)
    bare, suffix = split_provider(model)
    chosen = provider or suffix or "auto"
    validate_provider(chosen, key)
    routed = bare if chosen == "auto" else f"{bare}:{chosen}"
    return ChatClient(HF_ROUTER, model=routed, api_key=key, timeout_s=timeout_s,
                      retries=retries, backoff_s=backoff_s)


def load_rubric(path: str | os.PathLike[str] | None = None) -> str:
    """The rubric text (each ``{subject}`` in it is replaced per request; nothing else is
    interpreted)."""
    if path is None:
        return RUBRIC_PATH.read_text(encoding="utf-8")
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def data_url(png: bytes, side: int = 448, fmt: str = "PNG") -> str:
    """The picture downscaled so its longer side is at most ``side``, as a data URL."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    if max(image.size) > side:
        image.thumbnail((side, side), Image.LANCZOS)
    buffer = io.BytesIO()
    if fmt.upper() == "JPEG":
        image.save(buffer, format="JPEG", quality=92)
        mime = "image/jpeg"
    else:
        image.save(buffer, format="PNG", optimize=False)
        mime = "image/png"
    return f"data:{mime};base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def parse_answer(text: str | None) -> tuple[str | None, str | None, str | None]:
    """(winner ``first``/``second`` or None, reason, error) from the model's answer: a JSON
    object, bare or in a fence, after a ``<think>`` block or inside prose; or one cut off
    after its winner (the reason is then None)."""
    if text is None:
        return None, None, "empty answer"
    body = _THINK.sub("", text).strip()
    fence = _FENCE.match(body)
    if fence:
        body = fence.group(1).strip()
    payload = _json_object(body)
    if payload is None:
        cut = _CUT_OFF.match(body)
        if cut:
            return ("first" if cut.group(1).upper() == "A" else "second"), None, None
        return None, None, f"unparseable answer: {text[:80]!r}"
    if "winner" not in payload:
        return None, None, f"answer has no 'winner': {text[:80]!r}"
    winner = str(payload["winner"]).strip().upper()
    if winner not in ("A", "B"):
        return None, None, f"winner must be 'A' or 'B', got {payload['winner']!r}"
    reason = payload.get("reason")
    return ("first" if winner == "A" else "second"), \
        (str(reason)[:REASON_CHARS] if reason else None), None


def _json_object(body: str) -> dict[str, Any] | None:
    """The JSON object that is ``body``, or the outermost one inside it; else None."""
    for candidate in (body, *(m.group(0) for m in [_OBJECT.search(body)] if m)):
        try:
            payload = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(payload, dict):
            return payload
    return None


def _rejects_schema(err: ChatError) -> bool:
    """A 400/422 that names ``response_format`` or the schema: the endpoint cannot do
    structured output."""
    text = str(err).lower()
    return err.status in (400, 422) and ("response_format" in text or "schema" in text)


class OpenAIJudge:
    """A vision-language model as the pairwise judge (see the module docstring)."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        provider: str | None = None,
        token: str | None = None,
        timeout_s: float = 60.0,
        retries: int = 2,
        backoff_s: float = 1.0,
        max_concurrency: int = 8,
        image_side: int = 448,
        image_format: str = "PNG",
        rubric: str | None = None,
        max_tokens: int = 200,
        temperature: float = 0.0,
        structured: bool = True,
        client: ChatClient | None = None,
    ) -> None:
        if max_concurrency < 1 or retries < 0 or timeout_s <= 0:
            raise ValueError("max_concurrency >= 1, retries >= 0 and timeout_s > 0 please")
        self.client = client or judge_client(model, base_url=base_url, provider=provider,
                                             token=token, timeout_s=timeout_s,
                                             retries=retries, backoff_s=backoff_s)
        self.model = model
        self.base_url = base_url
        self.provider = provider
        self.max_concurrency = max_concurrency
        self.image_side = image_side
        self.image_format = image_format
        self.rubric = rubric if rubric is not None else load_rubric()
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.structured = structured
        """Ask for :data:`VERDICT_SCHEMA`; turned off for good by an endpoint that rejects
        it."""
        self.name = f"openai:{model}"
        self._slots = threading.BoundedSemaphore(max_concurrency)

    def messages(self, first: bytes, second: bytes, subject: str) -> list[dict[str, Any]]:
        side, fmt = self.image_side, self.image_format
        return [
            {"role": "system", "content": self.rubric.replace("{subject}", subject)},
            {"role": "user", "content": [
                {"type": "text", "text": "Image A:"},
                {"type": "image_url", "image_url": {"url": data_url(first, side, fmt)}},
                {"type": "text", "text": "Image B:"},
                {"type": "image_url", "image_url": {"url": data_url(second, side, fmt)}},
                {"type": "text", "text": QUESTION.format(subject=subject)},
            ]},
        ]

    def _ask(self, messages: list[dict[str, Any]]) -> tuple[str, int]:
        params: dict[str, Any] = {"max_tokens": self.max_tokens,
                                  "temperature": self.temperature}
        structured = self.structured
        if structured:
            params["response_format"] = VERDICT_SCHEMA
        try:
            with self._slots:
                reply = self.client.complete(messages, **params)
        except ChatError as err:
            if not (structured and _rejects_schema(err)):
                raise
            self.structured = False
            params.pop("response_format")
            with self._slots:
                reply = self.client.complete(messages, **params)
            reply.attempts += 1
        return reply.text, reply.attempts

    def compare(self, first: bytes, second: bytes, subject: str) -> Vote:
        messages = self.messages(first, second, subject)
        start = time.monotonic()
        try:
            text, attempts = self._ask(messages)
        except EmptyReply as empty:
            return Vote(None, error=str(empty)[:300], latency_s=time.monotonic() - start)
        except ChatError as failed:
            return Vote(None, error=str(failed)[:300], latency_s=time.monotonic() - start,
                        attempts=failed.attempts)
        winner, reason, problem = parse_answer(text)
        return Vote(winner, error=problem, reason=reason, raw=text[:500],
                    latency_s=time.monotonic() - start, attempts=attempts)

    def compare_many(self, pairs: Sequence[tuple[bytes, bytes]], subject: str) -> list[Vote]:
        """All pairs, at most ``max_concurrency`` at once; votes in the order given."""
        if not pairs:
            return []
        workers = min(self.max_concurrency, len(pairs))
        with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="judge") as pool:
            return list(pool.map(lambda p: self.compare(p[0], p[1], subject), pairs))

