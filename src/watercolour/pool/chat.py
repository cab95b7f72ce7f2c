"""A small client for OpenAI-compatible chat endpoints (``POST {base_url}/chat/completions``).

The same code talks to Hugging Face Inference Providers (their OpenAI-compatible router,
``https://router.huggingface.co/v1``, with an ``HF_TOKEN``), a local vLLM server, or
``transformers serve``. It is plain HTTP (the standard library), with a timeout per request,
bounded retries with backoff for what is worth retrying (timeouts, refused connections,
429 and 5xx answers, replies that are not the JSON promised) and none for what is not (other
4xx: a wrong model id, a bad token).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from watercolour.retry import RetriesExhausted, with_retries

HF_ROUTER = "https://router.huggingface.co/v1"
"""Inference Providers' OpenAI-compatible endpoint."""


class ChatError(RuntimeError):
    """A chat request failed. ``transient``: worth retrying (and an infrastructure failure,
    not the model's fault, when retries run out)."""

    def __init__(self, message: str, *, transient: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.status = status


@dataclass
class ChatReply:
    text: str
    model: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None
    attempts: int = 1
    seconds: float = 0.0


@dataclass
class ChatClient:
    """One model behind one OpenAI-compatible endpoint.

    >>> client = ChatClient("http://127.0.0.1:8000/v1", model="local-model")
    >>> client.complete([{"role": "user", "content": "Paint a hibiscus."}]).text
    """

    base_url: str = HF_ROUTER
    model: str = ""
    api_key: str | None = None
    """Bearer token; None reads ``HF_TOKEN`` for the Hugging Face router, else sends none."""
    timeout_s: float = 120.0
    """Per request (connect and each read)."""
    retries: int = 2
    """Further attempts after a transient failure."""
    backoff_s: float = 1.0
    """Wait before retry k: ``backoff_s * 2**(k-1)``."""
    extra_body: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        if self.api_key is None and self.base_url.startswith(HF_ROUTER):
            self.api_key = os.environ.get("HF_TOKEN")

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def complete(self, messages: list[dict[str, Any]], **params: Any) -> ChatReply:
        """Send a chat completion request; retry transient failures; return the reply text.

        Raises:
            ChatError: after the retries, or at once for a non-transient failure.
        """
        body = {"model": self.model, "messages": messages, **self.extra_body, **params}
        start = time.monotonic()
        try:
            reply, attempt = with_retries(
                lambda: self._once(body), retries=self.retries, backoff_s=self.backoff_s,
                transient=lambda err: isinstance(err, ChatError) and err.transient)
        except RetriesExhausted as failed:
            last = failed.cause
            if not isinstance(last, ChatError):
                raise last from None
            raise ChatError(f"{self.model or 'model'} at {self.base_url}: {last} "
                            f"({failed.after})", transient=last.transient,
                            status=last.status) from last
        reply.attempts, reply.seconds = attempt, time.monotonic() - start
        return reply

    def _once(self, body: dict[str, Any]) -> ChatReply:
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            detail = _error_detail(err)
            transient = err.code == 429 or err.code >= 500 or err.code == 408
            raise ChatError(f"HTTP {err.code}: {detail}", transient=transient,
                            status=err.code) from err
        except TimeoutError as err:
            raise ChatError(f"no answer within {self.timeout_s:g} s", transient=True) from err
        except urllib.error.URLError as err:
            reason = err.reason
            if isinstance(reason, TimeoutError):
                raise ChatError(f"no answer within {self.timeout_s:g} s",
                                transient=True) from err
            raise ChatError(f"cannot reach the server: {reason}", transient=True) from err
        except (ConnectionError, OSError) as err:
            raise ChatError(f"connection failed: {err}", transient=True) from err
        return parse_reply(raw)


def _error_detail(err: urllib.error.HTTPError) -> str:
    try:
        text = err.read().decode("utf-8", "replace")
    except Exception:
        return err.reason or ""
    try:
        payload = json.loads(text)
        if isinstance(payload, dict):
            error = payload.get("error", payload)
            if isinstance(error, dict):
                return str(error.get("message") or error)[:300]
            return str(error)[:300]
    except json.JSONDecodeError:
        pass
    return text[:300]


def parse_reply(raw: bytes) -> ChatReply:
    """The text of an OpenAI chat completion; a malformed one is a transient error."""
    try:
        payload = json.loads(raw)
        choice = payload["choices"][0]
        message = choice.get("message") or {}
        content = message.get("content")
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if content is None:
            raise KeyError("message.content")
        return ChatReply(text=str(content), model=str(payload.get("model", "")),
                         usage=payload.get("usage") or {},
                         finish_reason=choice.get("finish_reason"))
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, IndexError, TypeError,
            AttributeError) as err:
        raise ChatError(f"malformed reply ({type(err).__name__}: {str(err)[:100]}): "
                        f"{raw[:120]!r}", transient=True) from err
