"""Offsets committed inside a transaction (TxnOffsetCommit): pending in the group's cache until
the transaction's marker reaches __consumer_offsets, then visible (COMMIT) or dropped (ABORT),
also when the partition is loaded while the transaction is still open."""

import pytest

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.topic import LogConfig
from broker_lite.coordinator import GroupConfig, GroupCoordinator, OffsetConfig
from broker_lite.coordinator.common.timer import ManualTimer
from broker_lite.coordinator.group.offsets import CommittedOffset, OffsetAndMetadata
from broker_lite.coordinator.transaction.markers import write_markers_locally
from broker_lite.log import Log
from broker_lite.protocol import ErrorCode
from broker_lite.zk.testing import wait_until

T0, T1 = TopicPartition("in", 0), TopicPartition("in", 1)
PRODUCER = 4000


class LocalPartitions:
    """The one __consumer_offsets partition, led here (what write_markers_locally needs)."""

    def __init__(self, log: Log):
        self.log = log

    def state(self, topic, partition):
        return type("State", (), {"leader_epoch": 0})()

    def leader_log(self, topic, partition):
        return self.log


@pytest.fixture
def log(tmp_path):
    log = Log(tmp_path / "__consumer_offsets-0", LogConfig(cleanup_policy=("compact",)))
    yield log
    log.close()


def started(log: Log) -> GroupCoordinator:
    coordinator = GroupCoordinator(GroupConfig(), OffsetConfig(num_partitions=1),
                                   lambda p: (log, 0), timer=ManualTimer()).start()
    coordinator.on_elected(0, 0)
    wait_until(lambda: coordinator.manager.owned_partitions() == {0}, message="loaded")
    return coordinator


def commit_in_transaction(coordinator, offsets: dict, epoch: int = 0) -> None:
    group = coordinator.manager.get_or_create_group("g")
    with group.lock:
        errors = coordinator.append_transactional_offsets(
            group, {tp: OffsetAndMetadata(o) for tp, o in offsets.items()}, PRODUCER, epoch)
    assert set(errors.values()) == {0}


def end(coordinator, log: Log, committed: bool, epoch: int = 0) -> None:
    errors = write_markers_locally(
        LocalPartitions(log), PRODUCER, epoch, 0, committed,
        [TopicPartition("__consumer_offsets", 0)], timestamp_ms=1,
        on_offsets_completed=coordinator.on_transaction_completed)
    assert set(errors.values()) == {0}


def fetched(coordinator) -> dict:
    error, offsets = coordinator.handle_fetch_offsets("g", [T0, T1])
    assert error is None or error == 0
    return {tp: o.offset for tp, o in offsets.items() if o is not None}


@pytest.mark.parametrize("committed,visible", [(True, {T0: 5, T1: 7}), (False, {})])
def test_commits_count_only_once_the_transaction_commits(log, committed, visible):
    coordinator = started(log)
    try:
        commit_in_transaction(coordinator, {T0: 5, T1: 7})
        assert fetched(coordinator) == {}
        end(coordinator, log, committed)
        assert fetched(coordinator) == visible
    finally:
        coordinator.shutdown()


def test_a_transaction_open_at_load_time_is_decided_by_its_marker(log):
    first = started(log)
    commit_in_transaction(first, {T0: 3})
    first.shutdown()
    second = started(log)
    try:
        group = second.manager.get_group("g")
        assert fetched(second) == {} and group.offsets.has_pending_txn(PRODUCER)
        end(second, log, True)
        assert fetched(second) == {T0: 3}
    finally:
        second.shutdown()
    third = started(log)  # and the log now says so too
    try:
        assert fetched(third) == {T0: 3}
    finally:
        third.shutdown()


def test_a_later_plain_commit_wins_over_an_earlier_transactional_one(log):
    coordinator = started(log)
    try:
        commit_in_transaction(coordinator, {T0: 3})
        assert coordinator.handle_commit_offsets("g", "", None, -1,
                                                 {T0: OffsetAndMetadata(9)}) == {T0: 0}
        end(coordinator, log, True)
        assert fetched(coordinator) == {T0: 9}
    finally:
        coordinator.shutdown()


def test_require_stable_answers_unstable_while_a_transaction_commits_the_offset(log):
    coordinator = started(log)
    try:
        coordinator.manager.get_or_create_group("g")
        group = coordinator.manager.get_group("g")
        with group.lock:
            group.offsets.on_append(T1, CommittedOffset(0, OffsetAndMetadata(2)))
        commit_in_transaction(coordinator, {T0: 5})
        error, stable = coordinator.handle_fetch_offsets("g", [T0, T1], require_stable=True)
        assert error == ErrorCode.NONE
        assert stable[T0] == ErrorCode.UNSTABLE_OFFSET_COMMIT and stable[T1].offset == 2
        _, unstable_ok = coordinator.handle_fetch_offsets("g", [T0, T1])
        assert unstable_ok[T0] is None and unstable_ok[T1].offset == 2
        end(coordinator, log, True)
        _, stable = coordinator.handle_fetch_offsets("g", [T0, T1], require_stable=True)
        assert stable[T0].offset == 5 and stable[T1].offset == 2
    finally:
        coordinator.shutdown()
