"""Deadlines, backoff, and the retry loop every client operation runs in.

An operation gets a :class:`Deadline` when it starts; every socket wait inside it is bounded by
what remains, and retries stop when it passes. Between attempts the loop sleeps with the Java
client's exponential backoff (KIP-580, :class:`ExponentialBackoff`): ``retry.backoff.ms``,
doubling with every attempt up to ``retry.backoff.max.ms``, each wait drawn within +-20% of that
(jitter, so that many tasks retrying together do not hit a broker in step) and never above the
maximum; never past the deadline either. Connection attempts back off the same way between
``reconnect.backoff.ms`` and ``reconnect.backoff.max.ms`` (:mod:`.connection`).
"""

from __future__ import annotations

import math
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


class ExponentialBackoff:
    """The wait after ``attempts`` failed attempts, as the Java client's ``ExponentialBackoff``
    computes it (KIP-580): ``initial_ms * multiplier ** attempts``, the exponent stopping where
    that reaches ``max_ms``, times a random factor within ``1 +- jitter``, and at most
    ``max_ms``. A ``max_ms`` at or below ``initial_ms`` means a constant ``max_ms``, without
    jitter. Stateless: callers count their attempts.

    >>> backoff = ExponentialBackoff(100, 800, jitter=0)
    >>> [backoff.delay_ms(n) for n in range(6)]
    [100, 200, 400, 800, 800, 800]
    >>> ExponentialBackoff(500, 200).delay_ms(7)
    200
    """

    __slots__ = ("exp_max", "initial_ms", "jitter", "max_ms", "multiplier")

    def __init__(self, initial_ms: int, max_ms: int, *, multiplier: int = 2,
                 jitter: float = JITTER):
        self.initial_ms = min(initial_ms, max_ms)
        self.max_ms = max_ms
        self.multiplier = multiplier
        self.jitter = jitter
        self.exp_max = (math.log(max_ms / max(self.initial_ms, 1)) / math.log(multiplier)
                        if max_ms > self.initial_ms else 0.0)

    def delay_ms(self, attempts: int) -> int:
        if self.exp_max == 0:
            return self.initial_ms
        term = self.initial_ms * self.multiplier ** min(attempts, self.exp_max)
        factor = random.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter > 0 else 1.0
        return min(int(term * factor), self.max_ms)


class Backoff:
    """The waits between the attempts of one operation: :class:`ExponentialBackoff` from
    ``base_ms`` up to ``max_ms``, counting the attempts."""

    def __init__(self, base_ms: int, max_ms: int):
        self.exponential = ExponentialBackoff(base_ms, max_ms)
        self.attempts = 0

    def next_delay_s(self) -> float:
        delay = self.exponential.delay_ms(self.attempts)
        self.attempts += 1
        return delay / 1000

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
    last: KafkaClientError | None = None
    while True:
        try:
            return attempt()
        except KafkaClientError as exc:
            if not exc.retriable:
                raise
            last = worth_reporting(exc, last, deadline)
        if on_retriable is not None:
            on_retriable(last)
        if not backoff.wait(deadline):
            raise timed_out(what, deadline, last) from last


def worth_reporting(error: KafkaClientError, previous: KafkaClientError | None,
                    deadline: Deadline) -> KafkaClientError:
    """The error to report if the operation times out: ``error``, unless it only says that an
    attempt ran out of the time left (a timeout at the deadline) and an earlier attempt said
    more (``previous``): a last 1 ms Metadata attempt must not hide the NOT_LEADER_OR_FOLLOWER
    every attempt before it met."""
    if previous is not None and isinstance(error, KafkaTimeoutError) and deadline.expired():
        return previous
    return error


def timed_out(what: str, deadline: Deadline, last: KafkaClientError | None) -> KafkaTimeoutError:
    message = f"{what} did not complete within {deadline.timeout_ms:.0f} ms"
    if last is not None:
        message += f"; last error: {last}"
    return KafkaTimeoutError(message, last_error=last)
