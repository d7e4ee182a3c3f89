"""The records of __transaction_state: golden bytes of Kafka's layout, both value versions,
round trips, and bytes that are no record."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator.common.record_codec import encode_versioned
from broker_lite.coordinator.transaction.records import (
    TRANSACTION_LOG_VALUE,
    TransactionLogRecordError,
    TxnRecord,
    parse_transaction_log_key,
    parse_transaction_log_value,
    transaction_log_key,
    transaction_log_value,
)

RECORD = TxnRecord(producer_id=1000, producer_epoch=3, timeout_ms=60000, state_id=1,
                   partitions=frozenset({TopicPartition("a", 1), TopicPartition("a", 0),
                                         TopicPartition("b", 2)}),
                   last_update_timestamp_ms=1700000000123, start_timestamp_ms=1700000000000)


def test_value_version_0_bytes():
    assert transaction_log_value(RECORD).hex() == (
        "0000"                  # version 0
        "00000000000003e8"      # producer id 1000
        "0003"                  # epoch 3
        "0000ea60"              # timeout 60000
        "01"                    # status: Ongoing
        "00000002"              # two topics, sorted, partitions sorted
        "0001" "61" "00000002" "00000000" "00000001"
        "0001" "62" "00000001" "00000002"
        "0000018bcfe5687b"      # last update
        "0000018bcfe56800"      # start
    )


def test_key_bytes_and_round_trip():
    assert transaction_log_key("my-txn").hex() == "0000" "0006" + b"my-txn".hex()
    assert parse_transaction_log_key(transaction_log_key("my-txn")) == "my-txn"
    assert parse_transaction_log_value(transaction_log_value(RECORD)) == RECORD
    assert parse_transaction_log_value(None) is None  # a tombstone


def test_version_1_values_are_read_with_their_tagged_fields():
    data = encode_versioned(TRANSACTION_LOG_VALUE, 1, {
        "producer_id": 7, "previous_producer_id": 6, "next_producer_id": 8,
        "producer_epoch": 0, "transaction_timeout_ms": 100, "transaction_status": 4,
        "transaction_partitions": None, "transaction_last_update_timestamp_ms": 2,
        "transaction_start_timestamp_ms": 1, "client_transaction_version": 2})
    assert parse_transaction_log_value(data) == TxnRecord(7, 0, 100, 4, frozenset(), 2, 1, 6)


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x05\x00\x01a", b"\x00\x00\x00"])
def test_bytes_that_are_no_record(data):
    with pytest.raises(TransactionLogRecordError):
        parse_transaction_log_key(data)
    with pytest.raises(TransactionLogRecordError):
        parse_transaction_log_value(data)


@given(st.builds(
    TxnRecord, st.integers(0, 2**63 - 1), st.integers(-1, 32767), st.integers(0, 2**31 - 1),
    st.integers(0, 7),
    st.frozensets(st.builds(TopicPartition, st.text(min_size=1, max_size=5),
                            st.integers(0, 100)), max_size=5),
    st.integers(-1, 2**62), st.integers(-1, 2**62)))
def test_every_record_round_trips(record):
    assert parse_transaction_log_value(transaction_log_value(record)) == record
