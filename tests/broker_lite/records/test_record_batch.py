import struct

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_lite.records import (
    CompressionType,
    ControlRecordType,
    CorruptRecordError,
    EndTransactionMarker,
    RecordBatch,
    RecordBatchBuilder,
    TimestampType,
    UnsupportedCompressionError,
    build_batch,
    build_control_batch,
)
from broker_lite.records.record_batch import CRC_OFFSET, HEADER_SIZE, encode_record


def test_golden_batch_from_kafka_dump_log():
    # kafka-dump-log of Kafka 1.0.0 after producing key="key", value="value" (the v2 record batch
    # of Kafka's implementation chapter, 5.3):
    # baseOffset: 0 ... partitionLeaderEpoch: 0 CreateTime: 1524709879130 size: 76 crc: 2857248333
    data = build_batch([(b"key", b"value")], timestamp=1524709879130, partition_leader_epoch=0)
    batch = RecordBatch(data)
    assert batch.size_in_bytes == 76
    assert batch.crc == 2857248333
    batch.ensure_valid()


def test_header_layout_field_by_field():
    data = build_batch(
        [(b"k", b"v")], timestamp=1000, base_offset=42, partition_leader_epoch=7,
        producer_id=99, producer_epoch=3, base_sequence=11, is_transactional=True,
        compression=CompressionType.NONE,
    )
    fields = struct.unpack_from(">qiibIhiqqqhii", data)
    crc = crc32c.crc32c(data[21:])
    assert fields == (42, len(data) - 12, 7, 2, crc, 0x10, 0, 1000, 1000, 99, 3, 11, 1)
    record = data[HEADER_SIZE:]
    # body of 8 bytes (zigzag 16): attributes 0, timestampDelta 0, offsetDelta 0,
    # key length 1 (zigzag 2) "k", value length 1 "v", 0 headers
    assert record == bytes([16, 0, 0, 0, 2]) + b"k" + bytes([2]) + b"v" + bytes([0])


def test_record_encoding_with_header_and_nulls():
    encoded = encode_record(3, -2, None, None, [("h", None)])
    # body: attr 0, tsDelta -2 -> 3, offsetDelta 3 -> 6, key -1 -> 1, value -1 -> 1,
    #       1 header -> 2, "h" len 1 -> 2, value -1 -> 1
    body = bytes([0, 3, 6, 1, 1, 2, 2]) + b"h" + bytes([1])
    assert encoded == bytes([len(body) * 2]) + body


@pytest.mark.parametrize("codec", list(CompressionType))
def test_round_trip_every_codec(codec):
    records = [
        (b"key-1", b"value-1", [("trace", b"abc"), ("empty", b""), ("null", None)]),
        (None, b"no key"),
        (b"no value", None),
        (None, None),
        (b"", b""),
        (b"k" * 300, b"v" * 70_000),  # multi-byte varints, several lz4/snappy blocks
    ]
    data = build_batch(records, timestamp=1_700_000_000_123, compression=codec, base_offset=100)
    batch = RecordBatch(data)
    batch.ensure_valid()
    assert batch.compression is codec
    assert batch.record_count == len(records)
    assert (batch.base_offset, batch.last_offset, batch.next_offset) == (100, 105, 106)
    decoded = list(batch)
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp, r.timestamp_type)
            for r in decoded] == [
        (100 + i, key, value, tuple(rest[0]) if rest else (), 1_700_000_000_123,
         TimestampType.CREATE_TIME)
        for i, (key, value, *rest) in enumerate(records)
    ]


def test_timestamps_deltas_and_max():
    builder = RecordBatchBuilder()
    for ts in (5000, 4000, 9000):
        builder.append(b"x", timestamp=ts)
    batch = RecordBatch(builder.build())
    assert (batch.base_timestamp, batch.max_timestamp) == (5000, 9000)
    assert [r.timestamp for r in batch] == [5000, 4000, 9000]


def test_log_append_time_gives_every_record_the_max_timestamp():
    builder = RecordBatchBuilder(timestamp_type=TimestampType.LOG_APPEND_TIME)
    builder.append(b"a", timestamp=10)
    builder.append(b"b", timestamp=20)
    batch = RecordBatch(builder.build())
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert [(r.timestamp, r.timestamp_type) for r in batch] == [
        (20, TimestampType.LOG_APPEND_TIME)] * 2


def test_explicit_offset_deltas_leave_gaps_as_compaction_does():
    builder = RecordBatchBuilder(base_offset=10)
    builder.append(b"a", timestamp=1, offset_delta=0)
    builder.append(b"b", timestamp=1, offset_delta=5)
    with pytest.raises(ValueError):
        builder.append(b"c", timestamp=1, offset_delta=5)
    batch = RecordBatch(builder.build())
    assert [r.offset for r in batch] == [10, 15]
    assert batch.last_offset == 15


def test_producer_fields_and_last_sequence_wraps():
    data = build_batch([(None, b"a"), (None, b"b")], producer_id=7, producer_epoch=1,
                       base_sequence=2**31 - 1)
    batch = RecordBatch(data)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (7, 1, 2**31 - 1)
    assert batch.last_sequence == 0


def test_empty_batch():
    batch = RecordBatch(RecordBatchBuilder().build())
    batch.ensure_valid()
    assert list(batch) == []
    assert batch.record_count == 0


def test_control_batch_commit_marker():
    marker = EndTransactionMarker(ControlRecordType.COMMIT, coordinator_epoch=9)
    batch = RecordBatch(build_control_batch(marker, producer_id=5, producer_epoch=2, timestamp=1))
    batch.ensure_valid()
    assert batch.is_control_batch and batch.is_transactional
    assert batch.end_transaction_marker() == marker
    (record,) = list(batch)
    assert record.key == b"\x00\x00\x00\x01"
    assert record.value == b"\x00\x00\x00\x00\x00\x09"


def test_crc_mismatch_names_the_batch_and_both_crcs():
    data = bytearray(build_batch([(b"k", b"value")], timestamp=1, base_offset=77))
    data[-2] ^= 0x01
    with pytest.raises(CorruptRecordError, match=r"base offset 77.*stored CRC-32C"):
        RecordBatch(data).ensure_valid()


def test_partition_leader_epoch_and_base_offset_are_outside_the_crc():
    data = bytearray(build_batch([(b"k", b"v")], timestamp=1))
    struct.pack_into(">qii", data, 0, 123, len(data) - 12, 45)
    batch = RecordBatch(data)
    batch.ensure_valid()
    assert (batch.base_offset, batch.partition_leader_epoch) == (123, 45)


def test_wrong_magic_is_corrupt():
    data = bytearray(build_batch([(b"k", b"v")], timestamp=1))
    data[16] = 3
    with pytest.raises(CorruptRecordError, match="magic 3"):
        RecordBatch(data).ensure_valid()


def test_unknown_codec_is_reported():
    data = bytearray(build_batch([(b"k", b"v")], timestamp=1))
    data[22] |= 0x07
    struct.pack_into(">I", data, CRC_OFFSET, crc32c.crc32c(bytes(data[21:])))
    with pytest.raises(UnsupportedCompressionError):
        RecordBatch(data).ensure_valid()


def test_record_count_beyond_the_records_is_corrupt():
    data = bytearray(build_batch([(b"k", b"v")], timestamp=1))
    struct.pack_into(">i", data, 57, 2)
    with pytest.raises(CorruptRecordError):
        list(RecordBatch(data))


def test_trailing_bytes_after_the_records_are_corrupt():
    data = build_batch([(b"k", b"v")], timestamp=1)
    data = bytearray(data + b"\x00")
    struct.pack_into(">i", data, 8, len(data) - 12)
    with pytest.raises(CorruptRecordError, match="after its 1 records"):
        list(RecordBatch(data))


def test_declared_length_beyond_the_buffer_is_corrupt():
    data = build_batch([(b"k", b"v")], timestamp=1)
    with pytest.raises(CorruptRecordError, match="declares"):
        RecordBatch(data[:-1])


def test_view_into_a_larger_buffer():
    first = build_batch([(None, b"a")], timestamp=1)
    second = build_batch([(None, b"b")], timestamp=1, base_offset=1)
    batch = RecordBatch(memoryview(first + second), len(first))
    assert bytes(batch.raw()) == second
    assert [r.value for r in batch] == [b"b"]


records_strategy = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=40),
        st.none() | st.binary(max_size=300),
        st.lists(st.tuples(st.text(max_size=10), st.none() | st.binary(max_size=20)), max_size=3),
        st.integers(0, 2**41),
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(records=records_strategy, codec=st.sampled_from(list(CompressionType)))
def test_round_trip_property(records, codec):
    builder = RecordBatchBuilder(compression=codec)
    for key, value, headers, ts in records:
        builder.append(value, key=key, headers=headers, timestamp=ts)
    batch = RecordBatch(builder.build())
    batch.ensure_valid()
    assert [(r.key, r.value, r.headers, r.timestamp) for r in batch] == [
        (key, value, tuple(headers), ts) for key, value, headers, ts in records
    ]
