"""Delayed operations: completed once, by their condition, their delay, or the broker stopping;
never left watched once complete."""

import threading
import time

import pytest

from broker_lite.coordinator.common.timer import ManualTimer
from broker_lite.server.purgatory import DelayedOperation, DelayedOperationPurgatory, Purgatory
from broker_lite.zk.testing import join_all


class Waiting(DelayedOperation):
    """Completes once ``level[0] >= goal``; records how it ended."""

    def __init__(self, level: list[int], goal: int, delay_ms: float | None = 1000):
        super().__init__(delay_ms)
        self.level, self.goal = level, goal
        self.completions, self.expired = 0, False
        self.checks = 0

    def try_complete(self) -> bool:
        self.checks += 1
        return self.level[0] >= self.goal and self.force_complete()

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expired = True


@pytest.fixture
def timer():
    return ManualTimer()


@pytest.fixture
def purgatory(timer):
    return DelayedOperationPurgatory("Test", timer)


def test_an_operation_that_can_complete_now_is_not_watched(purgatory):
    operation = Waiting([5], 1)
    assert purgatory.try_complete_else_watch(operation, ["a"]) is True
    assert operation.completions == 1 and purgatory.delayed == 0 and purgatory.watched_keys == 0


def test_a_change_under_a_watched_key_completes_it(purgatory):
    level = [0]
    operation = Waiting(level, 2)
    assert purgatory.try_complete_else_watch(operation, ["a", "b"]) is False
    assert (purgatory.delayed, purgatory.watched_keys) == (1, 2)
    assert purgatory.check_and_complete("c") == 0  # not watched there: not even checked
    level[0] = 1
    assert purgatory.check_and_complete("a") == 0
    level[0] = 2
    assert purgatory.check_and_complete("b") == 1
    assert operation.completions == 1 and not operation.expired
    assert (purgatory.delayed, purgatory.watched_keys) == (0, 0)
    assert purgatory.check_and_complete("a") == 0


def test_the_delay_completes_it_with_what_there_is(purgatory, timer):
    operation = Waiting([0], 1, delay_ms=500)
    purgatory.try_complete_else_watch(operation, ["a"])
    timer.advance(499)
    assert operation.completions == 0
    timer.advance(1)
    assert operation.completions == 1 and operation.expired
    assert (purgatory.delayed, purgatory.watched_keys) == (0, 0)  # gone from its watch lists


def test_completed_from_outside_it_leaves_every_watch_list(purgatory, timer):
    operation = Waiting([0], 1, delay_ms=None)
    purgatory.try_complete_else_watch(operation, ["a", "b", "c"])
    assert operation.force_complete() is True
    assert operation.force_complete() is False
    assert operation.completions == 1
    assert (purgatory.delayed, purgatory.watched_keys) == (0, 0)
    timer.advance(10**9)  # no delay: nothing scheduled
    assert not operation.expired


def test_completed_early_its_delay_does_not_fire(purgatory, timer):
    level = [0]
    operation = Waiting(level, 1, delay_ms=100)
    purgatory.try_complete_else_watch(operation, ["a"])
    level[0] = 1
    purgatory.check_and_complete("a")
    timer.advance(200)
    assert operation.completions == 1 and not operation.expired


def test_a_stopping_purgatory_completes_everything_now_and_later(purgatory):
    waiting = [Waiting([0], 1, delay_ms=None) for _ in range(3)]
    for operation in waiting:
        purgatory.try_complete_else_watch(operation, ["a"])
    assert purgatory.complete_all() == 3
    assert all(op.completions == 1 for op in waiting)
    late = Waiting([0], 1)
    assert purgatory.try_complete_else_watch(late, ["a"]) is True
    assert late.completions == 1 and purgatory.delayed == 0


def test_checked_from_many_threads_it_completes_once(purgatory):
    level = [0]
    operations = [Waiting(level, 1, delay_ms=None) for _ in range(50)]
    for operation in operations:
        purgatory.try_complete_else_watch(operation, ["a"])
    level[0] = 1
    threads = [threading.Thread(target=purgatory.check_and_complete, args=("a",), daemon=True)
               for _ in range(8)]
    for thread in threads:
        thread.start()
    join_all(threads, 30, "check_and_complete still running after 30 s")
    assert [op.completions for op in operations] == [1] * 50
    assert purgatory.delayed == 0


def test_a_real_timer_thread_expires_operations():
    purgatory = Purgatory()
    try:
        operation = Waiting([0], 1, delay_ms=100)
        started = time.monotonic()
        purgatory.fetch.try_complete_else_watch(operation, ["a"])
        deadline = time.monotonic() + 5
        while not operation.expired and time.monotonic() < deadline:
            time.sleep(0.01)
        assert operation.expired and 0.09 <= time.monotonic() - started < 5
    finally:
        purgatory.stop()


def test_appends_wake_the_fetches_and_produces_of_their_partitions(timer):
    purgatory = Purgatory(timer)
    level = [0]
    fetch, produce, other = Waiting(level, 1), Waiting(level, 1), Waiting(level, 1)
    purgatory.fetch.try_complete_else_watch(fetch, [("events", 0)])
    purgatory.produce.try_complete_else_watch(produce, [("events", 0)])
    purgatory.fetch.try_complete_else_watch(other, [("events", 1)])
    level[0] = 1
    purgatory.notify_appended([("events", 0)])
    assert (fetch.completions, produce.completions, other.completions) == (1, 1, 0)
    purgatory.notify_appended()  # an append to partitions not named: every wait re-checks
    assert other.completions == 1


def test_stop_answers_every_wait(timer):
    purgatory = Purgatory(timer)
    assert [kind.name for kind in purgatory.purgatories] == [
        "Fetch", "Produce", "Rebalance", "DeleteRecords"]
    waits = [Waiting([0], 1) for _ in purgatory.purgatories]
    for wait, kind in zip(waits, purgatory.purgatories, strict=True):
        kind.try_complete_else_watch(wait, ["k"])
    purgatory.stop()
    assert purgatory.stopping and [w.completions for w in waits] == [1, 1, 1, 1]
