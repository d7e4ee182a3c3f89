"""The retry loop: retriable errors retried with growing, capped backoff until the deadline,
others raised at once, and a timeout that says what failed and why."""

import time

import pytest

from broker_lite.client import KafkaTimeoutError
from broker_lite.client.errors import (
    LeaderNotAvailableError,
    OffsetOutOfRangeError,
)
from broker_lite.client.retry import JITTER, Backoff, Deadline, retry


def test_backoff_doubles_up_to_the_cap_with_jitter():
    backoff = Backoff(100, 1000)
    delays = [backoff.next_delay_s() * 1000 for _ in range(7)]
    for delay, nominal in zip(delays, [100, 200, 400, 800, 1000, 1000, 1000], strict=True):
        assert nominal * (1 - JITTER) <= delay <= nominal * (1 + JITTER)


def test_backoff_never_sleeps_past_the_deadline():
    deadline = Deadline(50)
    backoff = Backoff(10_000, 10_000)
    assert backoff.wait(deadline) is False  # slept the 50 ms left, then the deadline passed
    assert deadline.expired()
    assert Backoff(10, 10).wait(deadline) is False


def test_retriable_errors_are_retried_until_success():
    calls, refreshed = [], []

    def attempt():
        calls.append(1)
        if len(calls) < 3:
            raise LeaderNotAvailableError("election")
        return "done"

    assert retry("op", Deadline(5000), Backoff(1, 1), attempt, refreshed.append) == "done"
    assert len(calls) == 3 and len(refreshed) == 2


def test_other_errors_are_raised_at_once():
    calls = []

    def attempt():
        calls.append(1)
        raise OffsetOutOfRangeError("gone")

    with pytest.raises(OffsetOutOfRangeError):
        retry("op", Deadline(5000), Backoff(1, 1), attempt)
    assert calls == [1]


def test_the_deadline_ends_retries_with_the_last_error():
    def attempt():
        raise LeaderNotAvailableError("LEADER_NOT_AVAILABLE for t-0: election")

    started = time.monotonic()
    with pytest.raises(KafkaTimeoutError) as info:
        retry("list_offsets for 1 partition(s)", Deadline(200), Backoff(10, 20), attempt)
    assert time.monotonic() - started >= 0.2
    assert str(info.value) == ("list_offsets for 1 partition(s) did not complete within 200 ms; "
                               "last error: LEADER_NOT_AVAILABLE for t-0: election")
    assert isinstance(info.value.last_error, LeaderNotAvailableError)
    assert info.value.__cause__ is info.value.last_error
