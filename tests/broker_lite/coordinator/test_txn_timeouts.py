"""Transactions open past their timeout are fenced and aborted by the coordinator, checked every
cleanup interval; a new instance of a producer aborts its predecessor's transaction the same way.
A real __transaction_state log and state manager; the marker writer is a recorder, the clock and
the timer are manual."""

import pytest
from manual_clock import ManualClock

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.topic import LogConfig
from broker_lite.coordinator.common.timer import ManualTimer
from broker_lite.coordinator.transaction.config import TransactionConfig
from broker_lite.coordinator.transaction.coordinator import TransactionCoordinator
from broker_lite.coordinator.transaction.manager import TransactionStateManager
from broker_lite.coordinator.transaction.state import TxnState
from broker_lite.coordinator.transaction.timeouts import TransactionTimeouts
from broker_lite.log import Log
from broker_lite.protocol import ErrorCode

NOW = 1_700_000_000_000
TP = TopicPartition("events", 0)


class RecordingMarkerWriter:
    def __init__(self):
        self.jobs = []

    def start(self):
        return self

    def shutdown(self):
        pass

    def add(self, job):
        self.jobs.append(job)

    def write_all(self):
        """What the real writer does once every marker is in."""
        for job in self.jobs:
            for tp in list(job.pending):
                job.pending.discard(tp)
                job.on_partition_done(tp)
            assert job.on_complete()
        self.jobs.clear()


@pytest.fixture
def setup(tmp_path):
    log = Log(tmp_path / "__transaction_state-0", LogConfig(cleanup_policy=("compact",)))
    clock, writer = ManualClock(NOW), RecordingMarkerWriter()
    manager = TransactionStateManager(TransactionConfig(num_partitions=1),
                                      lambda partition: (log, 0), clock_ms=clock)
    ids = iter(range(1000, 2000))
    coordinator = TransactionCoordinator(TransactionConfig(num_partitions=1), manager, writer,
                                         lambda: next(ids)).start()
    coordinator.on_elected(0, 0)
    assert manager.wait_for_tasks()
    timer = ManualTimer()
    timeouts = TransactionTimeouts(coordinator, 100, timer=timer).start()
    yield coordinator, clock, writer, timer
    timeouts.stop()
    coordinator.shutdown()
    log.close()


def open_transaction(coordinator, transactional_id: str, timeout_ms: int) -> tuple[int, int]:
    result = coordinator.handle_init_producer_id(transactional_id, timeout_ms)
    assert result.error == ErrorCode.NONE
    assert coordinator.handle_add_partitions(transactional_id, result.producer_id,
                                             result.producer_epoch, [TP]) == ErrorCode.NONE
    return result.producer_id, result.producer_epoch


def state_of(coordinator, transactional_id: str):
    return coordinator.manager.get_state(transactional_id)[2]


def test_a_transaction_past_its_timeout_is_fenced_and_aborted(setup):
    coordinator, clock, writer, timer = setup
    producer_id, epoch = open_transaction(coordinator, "slow", 1000)
    open_transaction(coordinator, "patient", 60_000)
    clock.now += 900
    timer.advance(100)
    assert writer.jobs == []  # within its timeout
    clock.now += 200
    timer.advance(100)
    [job] = writer.jobs
    assert (job.transactional_id, job.committed, job.producer_epoch, job.pending) == (
        "slow", False, epoch + 1, {TP})  # the bumped epoch fences the producer at the leader
    slow = state_of(coordinator, "slow")
    assert (slow.state, slow.pending_state) == (TxnState.PREPARE_ABORT, TxnState.COMPLETE_ABORT)
    writer.write_all()
    assert (slow.state, slow.partitions) == (TxnState.COMPLETE_ABORT, set())
    assert state_of(coordinator, "patient").state is TxnState.ONGOING
    assert coordinator.handle_end_txn("slow", producer_id, epoch, True) == \
        ErrorCode.PRODUCER_FENCED
    timer.advance(100)
    assert writer.jobs == []  # aborted once


def test_a_new_instance_aborts_the_open_transaction_first(setup):
    coordinator, _clock, writer, _ = setup
    producer_id, epoch = open_transaction(coordinator, "tx", 60_000)
    retry = coordinator.handle_init_producer_id("tx", 60_000)
    assert retry.error == ErrorCode.CONCURRENT_TRANSACTIONS
    [job] = writer.jobs
    assert (job.committed, job.producer_epoch) == (False, epoch + 1)
    assert coordinator.handle_init_producer_id("tx", 60_000).error == \
        ErrorCode.CONCURRENT_TRANSACTIONS  # while the markers are written
    writer.write_all()
    again = coordinator.handle_init_producer_id("tx", 60_000)
    assert (again.error, again.producer_id, again.producer_epoch) == (
        ErrorCode.NONE, producer_id, epoch + 2)
    assert coordinator.handle_add_partitions("tx", producer_id, epoch, [TP]) == \
        ErrorCode.PRODUCER_FENCED


def test_commit_writes_markers_then_completes(setup):
    coordinator, clock, writer, _ = setup
    producer_id, epoch = open_transaction(coordinator, "tx", 60_000)
    assert coordinator.handle_end_txn("tx", producer_id, epoch, True) == ErrorCode.NONE
    assert coordinator.handle_add_partitions("tx", producer_id, epoch, [TP]) == \
        ErrorCode.CONCURRENT_TRANSACTIONS
    assert coordinator.handle_end_txn("tx", producer_id, epoch, True) == \
        ErrorCode.CONCURRENT_TRANSACTIONS
    assert coordinator.handle_end_txn("tx", producer_id, epoch, False) == \
        ErrorCode.CONCURRENT_TRANSACTIONS  # the completion is pending, whatever is asked
    [job] = writer.jobs
    assert (job.committed, job.coordinator_epoch, job.pending) == (True, 0, {TP})
    writer.write_all()
    assert state_of(coordinator, "tx").state is TxnState.COMPLETE_COMMIT
    assert coordinator.handle_end_txn("tx", producer_id, epoch, True) == ErrorCode.NONE
    assert coordinator.handle_end_txn("tx", producer_id, epoch, False) == \
        ErrorCode.INVALID_TXN_STATE
    clock.now += 120_000
    assert coordinator.abort_timed_out_transactions() == 0  # nothing open
