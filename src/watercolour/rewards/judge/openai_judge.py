"""The real pairwise judge: a vision-language model behind any OpenAI-compatible chat
endpoint, called through ``huggingface_hub.InferenceClient``.

- ``provider`` (Inference Providers, e.g. ``"auto"``, ``"novita"``; needs ``HF_TOKEN``) or
  ``base_url`` (vLLM, ``transformers serve``, any ``/v1`` server; its key comes from
  ``WATERCOLOUR_JUDGE_API_KEY``: ``HF_TOKEN`` goes only to Hugging Face's router); the
  default model is ``Qwen/Qwen3-VL-30B-A3B-Instruct``.
- The two pictures go in as data URLs, downscaled to ``image_side`` pixels.
- The rubric is a text file (:data:`RUBRIC_PATH`, ``rubric.md`` beside this module; pass
  ``rubric=`` for another); the answer must be one JSON object
  ``{"winner": "A" | "B", "reason": "..."}`` (a fenced block or a leading ``<think>`` block
  is tolerated; anything else is unparseable and the vote is dropped, never retried: at
  temperature 0 it would answer the same).
- Each request has a timeout; transient failures (timeouts, refused connections, 408, 429,
  5xx, a body that is not a chat completion) are retried a bounded number of times with
  exponential backoff; other 4xx fail at once; a failure is a vote with ``winner=None``.
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
from importlib import resources
from typing import Any

from PIL import Image

from watercolour.retry import RetriesExhausted, with_retries
from watercolour.rewards.judge.base import Vote

DEFAULT_MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
HF_ROUTER = "https://router.huggingface.co"
KEY_ENV = "WATERCOLOUR_JUDGE_API_KEY"
"""The bearer token for a ``base_url`` endpoint (``HF_TOKEN`` is sent only to Hugging Face's
router, or through a ``provider``)."""
RUBRIC_PATH = resources.files("watercolour.rewards.judge").joinpath("rubric.md")
QUESTION = ("Which is the better watercolour of {subject} by the rubric, image A or image B? "
            "Answer with the JSON object only.")
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


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
    """(winner ``first``/``second`` or None, reason, error) from the model's answer."""
    if text is None:
        return None, None, "empty answer"
    body = _THINK.sub("", text).strip()
    fence = _FENCE.match(body)
    if fence:
        body = fence.group(1).strip()
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, ValueError):
        return None, None, f"unparseable answer: {text[:80]!r}"
    if not isinstance(payload, dict) or "winner" not in payload:
        return None, None, f"answer has no 'winner': {text[:80]!r}"
    winner = str(payload["winner"]).strip().upper()
    if winner not in ("A", "B"):
        return None, None, f"winner must be 'A' or 'B', got {payload['winner']!r}"
    reason = payload.get("reason")
    return ("first" if winner == "A" else "second"), (str(reason)[:300] if reason else None), \
        None


def _transient(err: BaseException) -> bool:
    """Worth retrying: timeouts, connection failures, 408/429/5xx, malformed bodies."""
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status is not None:
        return status in (408, 429) or status >= 500
    return True  # timeouts, refused connections, bodies that are not chat completions


def _describe(err: BaseException) -> str:
    status = getattr(getattr(err, "response", None), "status_code", None)
    text = str(err).splitlines()[0] if str(err) else ""
    head = f"HTTP {status}" if status else type(err).__name__
    return f"{head}: {text}"[:300]


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
        json_mode: bool = False,
        client: Any = None,
    ) -> None:
        from huggingface_hub import InferenceClient

        if base_url and provider:
            raise ValueError("give the judge a base_url or a provider, not both")
        if max_concurrency < 1 or retries < 0 or timeout_s <= 0:
            raise ValueError("max_concurrency >= 1, retries >= 0 and timeout_s > 0 please")
        self.model = model
        self.base_url = base_url
        self.provider = provider
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_concurrency = max_concurrency
        self.image_side = image_side
        self.image_format = image_format
        self.rubric = rubric if rubric is not None else load_rubric()
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.json_mode = json_mode
        if client is not None:
            self.client = client
        elif base_url:
            # never send the Hugging Face token to another host unless asked to
            if token is None:
                token = os.environ.get(KEY_ENV) or (
                    os.environ.get("HF_TOKEN") if base_url.startswith(HF_ROUTER) else None)
            self.client = InferenceClient(base_url=base_url, api_key=token or "-",
                                          timeout=timeout_s)
        else:
            token = token if token is not None else os.environ.get("HF_TOKEN")
            self.client = InferenceClient(provider=provider or "auto", api_key=token,
                                          timeout=timeout_s)
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

    def compare(self, first: bytes, second: bytes, subject: str) -> Vote:
        messages = self.messages(first, second, subject)
        start = time.monotonic()
        params: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens,
                                  "temperature": self.temperature}
        if self.json_mode:
            params["response_format"] = {"type": "json_object"}

        def ask() -> str | None:
            with self._slots:
                output = self.client.chat_completion(messages, **params)
            return _content(output)

        try:
            text, attempt = with_retries(ask, retries=self.retries, backoff_s=self.backoff_s,
                                         transient=_transient)
        except RetriesExhausted as failed:
            return Vote(None, error=_describe(failed.cause), latency_s=time.monotonic() - start,
                        attempts=failed.attempts)
        winner, reason, problem = parse_answer(text)
        return Vote(winner, error=problem, reason=reason, raw=(text or "")[:500],
                    latency_s=time.monotonic() - start, attempts=attempt)

    def compare_many(self, pairs: Sequence[tuple[bytes, bytes]], subject: str) -> list[Vote]:
        """All pairs, at most ``max_concurrency`` at once; votes in the order given."""
        if not pairs:
            return []
        workers = min(self.max_concurrency, len(pairs))
        with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="judge") as pool:
            return list(pool.map(lambda p: self.compare(p[0], p[1], subject), pairs))


def _content(output: Any) -> str | None:
    """The first choice's message text of a chat completion (a dataclass or a dict)."""
    choices = output["choices"] if isinstance(output, dict) else output.choices
    message = choices[0]["message"] if isinstance(choices[0], dict) else choices[0].message
    content = message["content"] if isinstance(message, dict) else message.content
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content
