"""The HPSv3 scoring service's client: plain HTTP with a timeout, bounded retries.

The service (:mod:`watercolour.rewards.hps.service.app`, run in its own virtual environment)
answers ``POST /score`` with ``{"prompt": str, "images": [base64 PNG, ...]}`` ->
``{"scores": [{"mu": float, "sigma": float}, ...], "scorer": str, "seconds": float}`` and
``GET /health`` (``{"status": "loading" | "ready" | "failed", ...}``). Any failure (refused
connection, timeout, 5xx -- a 503 while the model is still loading or after it failed to
load --, a body that is not that JSON, a wrong number of scores) after the retries raises
:class:`~watercolour.rewards.hps.base.ScorerUnavailable`: the rollout's reward is ``None``.
A 4xx (the request's own fault) is not retried. A private Space (``https://*.hf.space``) gets
``HF_TOKEN`` as its bearer token; no other host does unless ``token`` is given.
"""

from __future__ import annotations

import base64
import json
import math
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from watercolour.openai_compat import request_failure, retryable_status, token_for
from watercolour.retry import RetriesExhausted, with_retries
from watercolour.rewards.hps.base import PreferenceScore, ScorerUnavailable
from watercolour.rewards.hps.mapping import HpsMapping

BATCH = 32
"""Pictures per request (the service takes at most 64)."""


class HpsClient:
    """Scores renders with the HPSv3 service at ``url`` (e.g. ``http://127.0.0.1:8765``)."""

    def __init__(self, url: str, *, timeout_s: float = 60.0, retries: int = 1,
                 backoff_s: float = 1.0, mapping: HpsMapping | None = None,
                 token: str | None = None) -> None:
        if timeout_s <= 0 or retries < 0:
            raise ValueError("timeout_s > 0 and retries >= 0 please")
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.mapping = mapping or HpsMapping()
        self.token = token if token is not None else token_for(self.url)
        self.name = f"hpsv3@{self.url}"

    def _request(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url + path, data=data, headers=headers,
                                         method="POST" if data is not None else "GET")
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            raw = response.read()
        return json.loads(raw)

    def health(self) -> dict[str, Any]:
        """The service's ``/health`` answer; raises :class:`ScorerUnavailable`."""
        try:
            return self._request("/health")
        except Exception as err:
            raise ScorerUnavailable(f"HPS service at {self.url}: {_describe(err, self)}") \
                from err

    def score_raw(self, pngs: Sequence[bytes], prompt: str) -> list[tuple[float, float | None]]:
        """(mu, sigma) per picture, as the service returns them."""
        body = {"prompt": prompt,
                "images": [base64.b64encode(p).decode("ascii") for p in pngs]}
        try:
            scores, _ = with_retries(lambda: _parse(self._request("/score", body), len(pngs)),
                                     retries=self.retries, backoff_s=self.backoff_s,
                                     transient=_transient)
        except RetriesExhausted as failed:
            message = f"HPS service at {self.url}: {_describe(failed.cause, self)} ({failed.after})"
            raise ScorerUnavailable(message) from failed.cause
        return scores

    def score(self, pngs: Sequence[bytes], prompt: str) -> list[PreferenceScore]:
        """Scores in order, :data:`BATCH` pictures per request."""
        raw: list[tuple[float, float | None]] = []
        for start in range(0, len(pngs), BATCH):
            raw += self.score_raw(pngs[start:start + BATCH], prompt)
        return [PreferenceScore(mu, sigma, self.mapping.unit(mu)) for mu, sigma in raw]


def _transient(err: Exception) -> bool:
    """Everything but a 4xx other than 408/429 (the request's own fault) is worth retrying:
    timeouts, refused connections, 5xx (503: still loading), malformed bodies."""
    if isinstance(err, urllib.error.HTTPError):
        return retryable_status(err.code)
    return True


def _parse(payload: Any, n: int) -> list[tuple[float, float | None]]:
    try:
        scores = payload["scores"]
        if len(scores) != n:
            raise ValueError(f"{len(scores)} scores for {n} images")
        out = []
        for s in scores:
            mu = float(s["mu"])
            sigma = None if s.get("sigma") is None else float(s["sigma"])
            if not math.isfinite(mu):
                raise ValueError(f"mu is {mu}")
            out.append((mu, sigma))
        return out
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"malformed answer ({type(err).__name__}: {err})") from err


def _describe(err: BaseException, client: HpsClient) -> str:
    if isinstance(err, OSError):
        return str(request_failure(err, client.timeout_s))
    if isinstance(err, json.JSONDecodeError):
        return "the answer is not JSON"
    return f"{type(err).__name__}: {err}"[:300]
