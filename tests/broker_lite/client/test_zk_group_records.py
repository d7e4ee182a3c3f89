"""The records a group consumer returns from fetched batches, and the position after them: the
answers go through the client's partition reader, as the consumer's polls do."""

import pytest

from broker_lite.client import ClientConfig, PartitionReader, TopicPartition
from broker_lite.client.errors import CorruptMessageError
from broker_lite.client.types import FetchedPartition
from broker_lite.client.zkgroup import ConsumerRecord, consumer_records
from broker_lite.records import (
    ControlRecordType,
    EndTransactionMarker,
    build_batch,
    build_message_set,
)
from broker_lite.records.record import TimestampType
from broker_lite.records.record_batch import build_control_batch

TP = TopicPartition("events", 3)


class Client:
    """All a reader needs of a client to take answers it is handed (it fetches nothing)."""

    config = ClientConfig({"bootstrap.servers": "127.0.0.1:9"})


def decode_records(tp: TopicPartition, data: bytes, position: int):
    """The records of ``data`` (a Fetch answer for ``tp`` at ``position``) and the position
    after them."""
    reader = PartitionReader(Client(), {tp: position})
    chunks = reader.accept({tp: FetchedPartition(memoryview(data), 1000, 1000, 0)})
    return [r for chunk in chunks for r in consumer_records(chunk)], reader.positions[tp]


def test_records_from_the_position_on_and_the_next_position():
    data = (build_batch([(b"k0", b"v0"), (None, b"v1", [("h", b"x")])], base_offset=10,
                        timestamp=1000)
            + build_batch([(b"k2", None)], base_offset=12, timestamp=2000))
    records, position = decode_records(TP, data, 11)
    assert records == [
        ConsumerRecord("events", 3, 11, None, b"v1", 1000, (("h", b"x"),)),
        ConsumerRecord("events", 3, 12, b"k2", None, 2000),
    ]
    assert position == 13
    assert records[0].topic_partition == TP


def test_a_partial_trailing_batch_waits_for_the_next_fetch():
    whole = build_batch([(None, b"a")], base_offset=0, timestamp=1)
    cut = build_batch([(None, b"b" * 100)], base_offset=1, timestamp=1)[:40]
    records, position = decode_records(TP, whole + cut, 0)
    assert [r.offset for r in records] == [0] and position == 1


def test_transaction_markers_move_the_position_but_are_not_records():
    marker = build_control_batch(EndTransactionMarker(ControlRecordType.COMMIT, 0),
                                 producer_id=7, producer_epoch=0, base_offset=5, timestamp=1)
    records, position = decode_records(TP, marker, 5)
    assert records == [] and position == 6


def test_old_message_formats_decode_too():
    data = build_message_set([(b"k", b"v0"), (None, b"v1")], magic=0)
    records, position = decode_records(TP, data, 0)
    assert [(r.offset, r.key, r.value, r.timestamp, r.timestamp_type) for r in records] == \
        [(0, b"k", b"v0", -1, TimestampType.NO_TIMESTAMP_TYPE),
         (1, None, b"v1", -1, TimestampType.NO_TIMESTAMP_TYPE)]
    assert position == 2


def test_nothing_fetched_keeps_the_position():
    assert decode_records(TP, b"", 42) == ([], 42)


def test_corrupt_data_names_the_partition_and_position():
    data = bytearray(build_batch([(None, b"value")], base_offset=0, timestamp=1))
    data[-1] ^= 0xFF  # the CRC no longer matches
    with pytest.raises(CorruptMessageError, match="events-3 at offset 0"):
        decode_records(TP, bytes(data), 0)
