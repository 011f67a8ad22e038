"""Bounded exponential backoff that honours ``Retry-After``, shared by the HTTP backends."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from typing import TypeVar

from .base import Unreachable

T = TypeVar("T")

ATTEMPTS = 5  # the first try and four retries
BASE_DELAY = 0.25  # seconds before the first retry; doubles each time
MAX_DELAY = 20.0  # no single wait is longer, whatever Retry-After says


class RetryLater(Exception):
    """Raised inside a retried call for a 429, a 5xx, a timeout or a dropped connection."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def with_retries(
    call: Callable[[int], T],
    *,
    what: str,
    attempts: int | None = None,
    base_delay: float | None = None,
    max_delay: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``call(attempt)`` until it returns, retrying ``RetryLater`` with backoff.

    The attempt number (0 first) is passed in, so a call can tell a retry from a first try: a
    retried write that meets a failed precondition may be meeting its own earlier success.

    The defaults are this module's constants, read at each call so tests can shorten them.

    Raises:
        Unreachable: still failing after ``attempts`` tries; says why and how often it tried.
    """
    attempts = ATTEMPTS if attempts is None else attempts
    base_delay = BASE_DELAY if base_delay is None else base_delay
    max_delay = MAX_DELAY if max_delay is None else max_delay
    for attempt in range(attempts):
        try:
            return call(attempt)
        except RetryLater as exc:
            if attempt == attempts - 1:
                raise Unreachable(f"{what} failed {attempts} times; last: {exc.reason}.") from exc
            if exc.retry_after is not None:
                delay = exc.retry_after
            else:  # full jitter, so clients that failed together do not retry together
                delay = random.uniform(0.5, 1.0) * base_delay * 2**attempt
            sleep(min(delay, max_delay))
    raise AssertionError("unreachable")  # pragma: no cover
