"""The shared retry helper: what is retried, how long it waits, what it reports."""

from __future__ import annotations

import pytest

from watercolour.retry import RetriesExhausted, with_retries


class Flaky:
    """Fails with the given exceptions in turn, then returns ``"ok"``."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def test_transient_failures_are_retried_with_doubling_waits() -> None:
    waits: list[float] = []
    call = Flaky(TimeoutError("slow"), ConnectionError("refused"))
    value, attempt = with_retries(call, retries=2, backoff_s=0.5, transient=lambda e: True,
                                  sleep=waits.append)
    assert (value, attempt, call.calls) == ("ok", 3, 3)
    assert waits == [0.5, 1.0]


def test_a_failure_that_is_not_transient_is_not_retried() -> None:
    waits: list[float] = []
    call = Flaky(ValueError("bad request"))
    with pytest.raises(RetriesExhausted) as info:
        with_retries(call, retries=5, backoff_s=1.0,
                     transient=lambda e: not isinstance(e, ValueError), sleep=waits.append)
    assert call.calls == 1 and waits == []
    assert info.value.attempts == 1 and isinstance(info.value.cause, ValueError)
    assert info.value.after == "after 1 attempt"


def test_the_last_failure_is_reported_once_retries_run_out() -> None:
    call = Flaky(TimeoutError("one"), TimeoutError("two"), TimeoutError("three"))
    with pytest.raises(RetriesExhausted) as info:
        with_retries(call, retries=1, backoff_s=0.0, transient=lambda e: True,
                     sleep=lambda s: None)
    assert call.calls == 2 and info.value.attempts == 2
    assert str(info.value.cause) == "two" and info.value.after == "after 2 attempts"


def test_negative_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="retries"):
        with_retries(Flaky(), retries=-1, backoff_s=1.0, transient=lambda e: True)
