"""The retry loop: retriable errors retried with growing, capped backoff until the deadline (as
the Java client's, KIP-580), others raised at once, and a timeout that says what failed and
why."""

import time
from itertools import pairwise

import pytest
from scripted_broker import ScriptedBroker

from broker_lite.client import KafkaClient, KafkaTimeoutError
from broker_lite.client.errors import (
    LeaderNotAvailableError,
    OffsetOutOfRangeError,
)
from broker_lite.client.retry import JITTER, Backoff, Deadline, ExponentialBackoff, retry
from broker_lite.protocol import ApiKey, ErrorCode


def test_backoff_doubles_up_to_the_cap_with_jitter():
    backoff = Backoff(100, 1000)
    delays = [backoff.next_delay_s() * 1000 for _ in range(7)]
    for delay, nominal in zip(delays, [100, 200, 400, 800, 1000, 1000, 1000], strict=True):
        assert nominal * (1 - JITTER) - 1 <= delay <= min(nominal * (1 + JITTER), 1000)


def test_jitter_never_takes_a_wait_above_the_maximum():
    """As Kafka's ExponentialBackoff (KIP-580): the random factor applies before the cap."""
    backoff = ExponentialBackoff(100, 1000)
    at_cap = [backoff.delay_ms(attempts) for attempts in range(4, 400)]
    assert max(at_cap) <= 1000 and min(at_cap) >= 800 * (1 - JITTER) - 1
    assert len(set(at_cap)) > 10  # jittered, not constant
    assert 100 * (1 - JITTER) - 1 <= backoff.delay_ms(0) <= 100 * (1 + JITTER)


def test_a_maximum_below_the_first_wait_is_a_constant_wait():
    backoff = ExponentialBackoff(500, 200)
    assert {backoff.delay_ms(attempts) for attempts in range(50)} == {200}


def test_retries_wait_longer_each_time_up_to_the_maximum():
    """A metadata lookup answered LEADER_NOT_AVAILABLE again and again: the requests come
    retry.backoff.ms apart, then twice that, ..., then retry.backoff.max.ms apart."""
    with ScriptedBroker() as broker:
        answer = broker.metadata({"t": 1})

        def electing(header, body):
            response = answer(header, body)
            response["topics"][0]["error_code"] = ErrorCode.LEADER_NOT_AVAILABLE
            return response

        broker.handlers[ApiKey.METADATA] = electing
        with KafkaClient({"bootstrap.servers": broker.bootstrap, "request.timeout.ms": "2500",
                          "retry.backoff.ms": "50", "retry.backoff.max.ms": "400"}) as client:
            with pytest.raises(KafkaTimeoutError, match="LEADER_NOT_AVAILABLE"):
                client.partitions("t")
        arrivals = broker.arrivals_of(ApiKey.METADATA)
    gaps = [b - a for a, b in pairwise(arrivals)]
    nominal = [min(0.05 * 2 ** n, 0.4) for n in range(len(gaps))]
    assert all(gap >= wait * (1 - JITTER) - 0.002 for gap, wait in zip(gaps, nominal, strict=True))
    # 50 + 100 + 200 ms, then at most 400 ms each: no more than 2.5 s allows, at least 6
    assert len(gaps) >= 6
    assert len(gaps) <= 3 + (2.5 - 0.35 * (1 - JITTER)) / (0.4 * (1 - JITTER)) + 1


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


def test_an_attempt_cut_short_by_the_deadline_does_not_hide_the_error_before_it():
    """The last attempt gets what is left of the time, and times out: the reason the
    operation did not complete is the error before it."""
    deadline = Deadline(200)
    errors = iter([LeaderNotAvailableError("LEADER_NOT_AVAILABLE for t-0: election")])

    def attempt():
        error = next(errors, None)
        if error is not None:
            raise error
        time.sleep(deadline.remaining_s())
        raise KafkaTimeoutError("broker b1 did not answer ListOffsets within 150 ms")

    with pytest.raises(KafkaTimeoutError) as info:
        retry("list_offsets for 1 partition(s)", deadline, Backoff(10, 20), attempt)
    assert str(info.value) == ("list_offsets for 1 partition(s) did not complete within 200 ms; "
                               "last error: LEADER_NOT_AVAILABLE for t-0: election")


def test_a_timeout_with_time_left_is_the_last_error():
    deadline = Deadline(300)
    errors = iter([LeaderNotAvailableError("LEADER_NOT_AVAILABLE for t-0: election"),
                   KafkaTimeoutError("broker b1 did not answer ListOffsets within 5 ms")])

    def attempt():
        error = next(errors, None)
        if error is None:
            time.sleep(deadline.remaining_s())
            raise KafkaTimeoutError("broker b1 did not answer ListOffsets within 250 ms")
        raise error

    with pytest.raises(KafkaTimeoutError) as info:
        retry("list_offsets for 1 partition(s)", deadline, Backoff(10, 20), attempt)
    assert str(info.value).endswith("last error: broker b1 did not answer ListOffsets "
                                    "within 5 ms")


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
