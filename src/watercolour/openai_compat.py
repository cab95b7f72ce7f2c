"""The one client for OpenAI-compatible chat endpoints, used by the painters, the critic and
the pairwise judge.

It speaks plain HTTP (the standard library) to ``POST {base_url}/chat/completions`` and
``GET {base_url}/models``, so the same code talks to Hugging Face Inference Providers (their
router, :data:`HF_ROUTER`, with an ``HF_TOKEN``), a local vLLM server or ``transformers serve``
-- and works with ``HF_HUB_OFFLINE=1``, which only ``huggingface_hub`` reads.

- Each request has a timeout; what is worth retrying (:func:`retryable_status`: timeouts,
  refused connections, 408, 429, 5xx, a body that is not a chat completion) is retried a
  bounded number of times with exponential backoff; other 4xx (a wrong model id, a bad
  token) fail at once.
- A well-formed reply whose message has no content (a reasoning model that spent its tokens
  thinking) is :class:`EmptyReply`: the model's failure, with the reason, never retried.
- Inference Providers: name one with the model id's suffix, ``model:provider`` (e.g.
  ``Qwen/Qwen3-VL-30B-A3B-Instruct:novita``); without a suffix the router picks
  (``auto``). :func:`validate_provider` checks a name against the pinned
  ``huggingface_hub``'s list; the router needs a Hugging Face token (``hf_...``).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from watercolour.errors import InputError, SetupError
from watercolour.retry import RetriesExhausted, with_retries

HF_ROUTER = "https://router.huggingface.co/v1"
"""Inference Providers' OpenAI-compatible endpoint."""
TOKEN_ENV = "HF_TOKEN"
"""Sent only to :data:`HF_ROUTER` (and ``*.hf.space``): never to another host unasked."""


class ChatError(SetupError):
    """A chat request failed. ``transient``: worth retrying (and an infrastructure failure,
    not the model's fault, when retries run out)."""

    def __init__(self, message: str, *, transient: bool, status: int | None = None,
                 attempts: int = 1) -> None:
        super().__init__(message)
        self.transient = transient
        self.status = status
        self.attempts = attempts
        """Requests made before giving up."""


class EmptyReply(ChatError):
    """The model answered without content (``content: null``): its own failure, not
    retried."""

    def __init__(self, message: str, *, finish_reason: str | None = None,
                 usage: Mapping[str, Any] | None = None, model: str = "") -> None:
        super().__init__(message, transient=False)
        self.finish_reason = finish_reason
        self.usage = dict(usage or {})
        self.model = model


class ModelsNotServed(InputError):
    """Model ids the endpoint does not serve (a start-up error)."""


def retryable_status(status: int) -> bool:
    """Whether an HTTP error status is worth retrying: 408, 429 and 5xx."""
    return status in (408, 429) or status >= 500


def error_text(status: int, body: bytes | str) -> str:
    """``HTTP 404: model x not found``: the status and the server's message (an OpenAI
    ``{"error": {"message": ...}}`` body, or the first 300 characters of any other)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    detail = text[:300]
    try:
        payload = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error", payload.get("detail", payload))
        if isinstance(error, dict):
            error = error.get("message") or error
        detail = str(error)[:300]
    return f"HTTP {status}: {detail}".rstrip(": ")


def join_content(content: Any) -> str | None:
    """A message's text: a string as it is, a list of content parts joined (their ``text``),
    None as None."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content)


def token_for(base_url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``HF_TOKEN`` for Hugging Face's router and Spaces, None for every other host."""
    env = os.environ if environ is None else environ
    host = urllib.parse.urlsplit(base_url).hostname or ""
    if base_url.startswith(HF_ROUTER.rsplit("/", 1)[0]) or host.endswith(".hf.space"):
        return env.get(TOKEN_ENV) or None
    return None


# ---------------------------------------------------------------- providers


def accepted_providers() -> tuple[str, ...]:
    """``auto`` and the provider names the pinned ``huggingface_hub`` knows."""
    from huggingface_hub.inference._providers import PROVIDERS

    return ("auto", *sorted(PROVIDERS))


def split_provider(model: str) -> tuple[str, str | None]:
    """``("org/model", "novita")`` from ``org/model:novita``; no suffix: ``(model, None)``."""
    base, sep, suffix = model.rpartition(":")
    if sep and "/" not in suffix and suffix:
        return base, suffix
    return model, None


def validate_provider(provider: str, token: str | None) -> None:
    """Raise a one-line :class:`ValueError` unless ``provider`` is a name the pinned
    ``huggingface_hub`` accepts and ``token`` is a Hugging Face token (the router, and
    ``auto``'s routing, need one)."""
    names = accepted_providers()
    if provider not in names:
        raise ValueError(f"unknown Inference Provider {provider!r}: choose one of "
                         f"{', '.join(names)}")
    if not (token or "").startswith("hf_"):
        what = ("'auto' picks a provider through Hugging Face's router, which"
                if provider == "auto" else f"{provider!r} through Hugging Face's router")
        raise ValueError(f"{what} needs a Hugging Face token: set {TOKEN_ENV}=hf_... "
                         "(for a provider's own key, use its OpenAI-compatible base URL)")


# ---------------------------------------------------------------- the client


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
        if self.timeout_s <= 0 or self.retries < 0:
            raise ValueError("timeout_s > 0 and retries >= 0 please")
        self.base_url = self.base_url.rstrip("/")
        if self.api_key is None:
            self.api_key = token_for(self.base_url)

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def complete(self, messages: list[dict[str, Any]], **params: Any) -> ChatReply:
        """Send a chat completion request; retry transient failures; return the reply.

        Raises:
            EmptyReply: the reply had no content (at once).
            ChatError: after the retries, or at once for a non-transient failure.
        """
        body = {"model": self.model, "messages": messages, **self.extra_body, **params}
        start = time.monotonic()
        try:
            reply, attempt = with_retries(
                lambda: parse_reply(self._send("POST", self.url, body)), retries=self.retries,
                backoff_s=self.backoff_s,
                transient=lambda err: isinstance(err, ChatError) and err.transient)
        except RetriesExhausted as failed:
            last = failed.cause
            if isinstance(last, EmptyReply) or not isinstance(last, ChatError):
                raise last from None
            raise ChatError(f"{self.model or 'model'} at {self.base_url}: {last} "
                            f"({failed.after})", transient=last.transient,
                            status=last.status, attempts=failed.attempts) from last
        reply.attempts, reply.seconds = attempt, time.monotonic() - start
        return reply

    def models(self) -> list[str]:
        """The ids ``GET {base_url}/models`` lists. Raises :class:`ChatError`."""
        raw = self._send("GET", f"{self.base_url}/models", None)
        try:
            return [str(m["id"]) for m in json.loads(raw)["data"]]
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as err:
            raise ChatError(f"{self.base_url}/models: not a model list ({err})",
                            transient=True) from err

    def _send(self, method: str, url: str, body: dict[str, Any] | None) -> bytes:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.read()
        except OSError as err:  # HTTPError, URLError, timeouts, resets
            raise request_failure(err, self.timeout_s) from err


def request_failure(err: OSError, timeout_s: float) -> ChatError:
    """What a failed ``urllib`` request means, as a :class:`ChatError`: an HTTP error's
    status and message (:func:`error_text`; transient by :func:`retryable_status`), or a
    timeout, a refused or broken connection (transient)."""
    if isinstance(err, urllib.error.HTTPError):
        try:
            detail = err.read()
        except OSError:
            detail = str(err.reason or "").encode()
        return ChatError(error_text(err.code, detail), transient=retryable_status(err.code),
                         status=err.code)
    reason = err.reason if isinstance(err, urllib.error.URLError) else err
    if isinstance(reason, TimeoutError) or "timed out" in str(reason):
        return ChatError(f"no answer within {timeout_s:g} s", transient=True)
    if isinstance(err, urllib.error.URLError):
        return ChatError(f"cannot reach the server: {reason}", transient=True)
    return ChatError(f"connection failed: {err}", transient=True)


def parse_reply(raw: bytes) -> ChatReply:
    """The text of an OpenAI chat completion. A malformed body is a transient
    :class:`ChatError`; a message without content is :class:`EmptyReply`."""
    try:
        payload = json.loads(raw)
        choice = payload["choices"][0]
        message = choice.get("message") or {}
        content = join_content(message.get("content"))
        finish, usage = choice.get("finish_reason"), payload.get("usage") or {}
        model = str(payload.get("model", ""))
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, IndexError, TypeError,
            AttributeError) as err:
        raise ChatError(f"malformed reply ({type(err).__name__}: {str(err)[:100]}): "
                        f"{raw[:120]!r}", transient=True) from err
    if content is None:
        raise EmptyReply(_why_empty(message, finish, usage), finish_reason=finish,
                         usage=usage, model=model)
    return ChatReply(text=content, model=model, usage=usage, finish_reason=finish)


def _why_empty(message: Mapping[str, Any], finish: str | None, usage: Mapping[str, Any]
               ) -> str:
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    tokens = usage.get("completion_tokens")
    spent = f" after {tokens} completion tokens" if tokens is not None else ""
    why = (f", {len(str(reasoning))} characters of reasoning" if reasoning else "")
    hint = (": it ran out of tokens before answering (raise max_tokens or turn thinking off)"
            if finish == "length" else "")
    return f"the model returned no content (finish_reason={finish}{spent}{why}){hint}"


def check_served(client: ChatClient, models: Iterable[str]) -> bool:
    """Raise :class:`ModelsNotServed` (one line) naming the ids among ``models`` that
    ``GET /models`` does not list (a ``:provider`` suffix is ignored). An endpoint without
    that route (404, 405) cannot be checked: False. Raises :class:`ChatError` when the list
    cannot be read otherwise (a bad token, a server that is down)."""
    try:
        served = set(client.models())
    except ChatError as err:
        if err.status in (404, 405):
            return False
        raise
    missing = [m for m in models if split_provider(m)[0] not in served and m not in served]
    if missing:
        raise ModelsNotServed(f"{client.base_url} does not serve {', '.join(missing)} "
                              f"({len(served)} models listed at {client.base_url}/models)")
    return True
