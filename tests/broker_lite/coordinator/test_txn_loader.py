"""Rebuilding transaction metadata from a real __transaction_state log, and the state manager's
ownership of its partitions: loading, the coordinator epoch, unloading, stale epochs."""

import logging

import pytest

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.topic import LogConfig
from broker_lite.coordinator.common.append import append_records
from broker_lite.coordinator.transaction.config import TransactionConfig
from broker_lite.coordinator.transaction.loader import load_transactions
from broker_lite.coordinator.transaction.manager import TransactionStateManager
from broker_lite.coordinator.transaction.records import (
    TxnRecord,
    transaction_log_key,
    transaction_log_value,
)
from broker_lite.coordinator.transaction.state import TransactionMetadata, TxnState
from broker_lite.log import Log
from broker_lite.protocol import ErrorCode

NOW = 1_700_000_000_000
TP = TopicPartition("events", 0)


@pytest.fixture
def log(tmp_path):
    log = Log(tmp_path / "__transaction_state-0",
              LogConfig(cleanup_policy=("compact",), segment_bytes=1024 * 1024),
              clock=lambda: NOW)
    yield log
    log.close()


def record(state: TxnState, epoch: int = 0, partitions=()) -> TxnRecord:
    return TxnRecord(100, epoch, 60_000, int(state), frozenset(partitions), NOW, NOW - 5)


def write(log: Log, *entries) -> None:
    append_records(log, 0, [(transaction_log_key(txn_id),
                             None if value is None else transaction_log_value(value))
                            for txn_id, value in entries], timestamp_ms=NOW)


def test_the_last_record_of_each_id_counts_and_tombstones_remove(log, caplog):
    write(log, ("a", record(TxnState.EMPTY)), ("b", record(TxnState.ONGOING, 0, {TP})))
    write(log, ("a", record(TxnState.ONGOING, 0, {TP})), ("c", record(TxnState.EMPTY)))
    append_records(log, 0, [(b"\x00\x09garbage", b"\x00\x00")], timestamp_ms=NOW)
    write(log, ("c", None), ("a", record(TxnState.PREPARE_COMMIT, 0, {TP})))
    with caplog.at_level(logging.WARNING):
        loaded = load_transactions(log, buffer_size=64)  # smaller than a batch: still whole
    assert loaded.records == {"a": record(TxnState.PREPARE_COMMIT, 0, {TP}),
                              "b": record(TxnState.ONGOING, 0, {TP})}
    assert loaded.skipped_records == 1 and "offset 4" in caplog.text


def manager_for(log: Log, leader_epoch: int = 5) -> TransactionStateManager:
    manager = TransactionStateManager(TransactionConfig(num_partitions=1),
                                      lambda partition: (log, leader_epoch),
                                      clock_ms=lambda: NOW)
    manager.start()
    return manager


def test_loading_makes_the_partition_owned_in_its_leader_epoch(log):
    write(log, ("tx", record(TxnState.ONGOING, 3, {TP})))
    manager = manager_for(log)
    told = []
    try:
        assert manager.get_state("tx")[0] == ErrorCode.NOT_COORDINATOR
        manager.schedule_load(0, 5, lambda p, epoch, txns: told.append((p, epoch, len(txns))))
        assert manager.wait_for_tasks()
        error, epoch, metadata = manager.get_state("tx")
        assert (error, epoch, told) == (ErrorCode.NONE, 5, [(0, 5, 1)])
        assert (metadata.state, metadata.producer_epoch, metadata.partitions,
                metadata.txn_start_timestamp) == (TxnState.ONGOING, 3, {TP}, NOW - 5)
        manager.schedule_unload(0, 4)  # stale: ignored
        manager.schedule_load(0, 4, lambda *a: told.append(a))  # stale: ignored
        assert manager.wait_for_tasks() and manager.get_state("tx")[1] == 5 and len(told) == 1
        manager.schedule_unload(0, 6)
        assert manager.wait_for_tasks()
        assert manager.get_state("tx")[0] == ErrorCode.NOT_COORDINATOR
    finally:
        manager.shutdown()


def test_transitions_are_written_before_they_apply(log):
    manager = manager_for(log)
    try:
        manager.schedule_load(0, 5, lambda *a: None)
        assert manager.wait_for_tasks()
        metadata = manager.put_if_absent(TransactionMetadata("tx", 100, -1, 60_000))
        with metadata.lock:
            transit = metadata.prepare_increment_producer_epoch(60_000, None, NOW)
            assert manager.append_transit(metadata, 5, transit) == ErrorCode.NONE
            transit = metadata.prepare_add_partitions({TP}, NOW)
            assert manager.append_transit(metadata, 4, transit) == ErrorCode.NOT_COORDINATOR
        assert (metadata.state, metadata.pending_state) == (TxnState.EMPTY, None)
        assert load_transactions(log, buffer_size=1 << 20).records["tx"].state_id == \
            TxnState.EMPTY
    finally:
        manager.shutdown()


def test_a_failed_write_leaves_the_metadata_as_it_was(log):
    manager = TransactionStateManager(TransactionConfig(num_partitions=1), lambda p: None)
    manager.start()
    try:
        manager._owned[0], manager._transactions[0] = 5, {}  # owned, but no leader log now
        metadata = manager.put_if_absent(TransactionMetadata("tx", 100, 0, 60_000))
        with metadata.lock:
            transit = metadata.prepare_add_partitions({TP}, NOW)
            assert manager.append_transit(metadata, 5, transit) == ErrorCode.NOT_COORDINATOR
        assert (metadata.state, metadata.pending_state, metadata.partitions) == (
            TxnState.EMPTY, None, set())
    finally:
        manager.shutdown()
