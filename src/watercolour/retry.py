"""Bounded retries with exponential backoff, shared by the clients of remote services
(the painters' and critic's chat endpoint, the VLM judge, the HPSv3 service)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class RetriesExhausted(Exception):
    """A call failed for good: ``cause`` is its last failure, ``attempts`` how many were made
    (1 when the failure was not worth retrying)."""

    def __init__(self, cause: Exception, attempts: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.attempts = attempts

    @property
    def after(self) -> str:
        """``after 3 attempts``, for error messages."""
        return f"after {self.attempts} attempt{'s' if self.attempts > 1 else ''}"


def with_retries(
    call: Callable[[], T],
    *,
    retries: int,
    backoff_s: float,
    transient: Callable[[Exception], bool],
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """``call()``'s value and the attempt that gave it.

    A failure that ``transient`` accepts is tried again, at most ``retries`` more times,
    after waiting ``backoff_s * 2**(k-1)`` seconds before retry ``k``.

    Raises:
        RetriesExhausted: wrapping the last failure, once retries run out or at once for a
            failure that is not transient.
    """
    if retries < 0 or backoff_s < 0:
        raise ValueError(f"retries and backoff_s must be >= 0, got {retries} and {backoff_s}")
    attempt = 1
    while True:
        try:
            return call(), attempt
        except Exception as err:
            if attempt > retries or not transient(err):
                raise RetriesExhausted(err, attempt) from err
        sleep(backoff_s * 2 ** (attempt - 1))
        attempt += 1
