"""Deadlines, backoff, and the retry loop every client operation runs in.

An operation gets a :class:`Deadline` when it starts; every socket wait inside it is bounded by
what remains, and retries stop when it passes. Between attempts the loop sleeps with exponential
backoff (``retry.backoff.ms`` doubling up to ``retry.backoff.max.ms``, with +-20% jitter so that
many tasks retrying together do not hit a broker in step), never past the deadline.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from .errors import KafkaClientError, KafkaTimeoutError

T = TypeVar("T")
JITTER = 0.2


class Deadline:
    """A point in time (monotonic clock) ``timeout_ms`` from now."""

    __slots__ = ("at", "timeout_ms")

    def __init__(self, timeout_ms: float):
        self.timeout_ms = timeout_ms
        self.at = time.monotonic() + timeout_ms / 1000

    def remaining_s(self) -> float:
        return max(self.at - time.monotonic(), 0.0)

    def expired(self) -> bool:
        return time.monotonic() >= self.at


class Backoff:
    """Exponential backoff: ``base_ms``, doubling up to ``max_ms``, with jitter."""

    def __init__(self, base_ms: int, max_ms: int):
        self.base_ms = base_ms
        self.max_ms = max(max_ms, base_ms)
        self.attempts = 0

    def next_delay_s(self) -> float:
        delay = min(self.base_ms * 2 ** min(self.attempts, 30), self.max_ms)
        self.attempts += 1
        return delay * random.uniform(1 - JITTER, 1 + JITTER) / 1000

    def wait(self, deadline: Deadline) -> bool:
        """Sleep before the next attempt; False (without sleeping) when the deadline has passed."""
        remaining = deadline.remaining_s()
        if remaining <= 0:
            return False
        time.sleep(min(self.next_delay_s(), remaining))
        return not deadline.expired()


def retry(what: str, deadline: Deadline, backoff: Backoff, attempt: Callable[[], T],
          on_retriable: Callable[[KafkaClientError], None] | None = None) -> T:
    """``attempt()`` until it returns; retriable errors are retried after a backoff (after
    ``on_retriable(error)``, which refreshes what needs refreshing), others raised at once.

    When the deadline passes, raises :class:`KafkaTimeoutError` saying ``what`` did not complete
    and why (the last error, also in ``last_error`` and as the cause).
    """
    while True:
        try:
            return attempt()
        except KafkaClientError as exc:
            if not exc.retriable:
                raise
            last = exc
        if on_retriable is not None:
            on_retriable(last)
        if not backoff.wait(deadline):
            raise timed_out(what, deadline, last) from last


def timed_out(what: str, deadline: Deadline, last: KafkaClientError | None) -> KafkaTimeoutError:
    message = f"{what} did not complete within {deadline.timeout_ms:.0f} ms"
    if last is not None:
        message += f"; last error: {last}"
    return KafkaTimeoutError(message, last_error=last)
