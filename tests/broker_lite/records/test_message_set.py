import gzip
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_lite.records import (
    CompressionType,
    CorruptRecordError,
    LegacyRecordBatch,
    MessageSetBuilder,
    TimestampType,
    UnsupportedCompressionError,
    build_message_set,
    iter_batches,
)
from broker_lite.records.message_set import encode_message

LEGACY_CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY,
                 CompressionType.LZ4]


def test_golden_v0_message_from_kafka_dump_log():
    # kafka 0.8.2.1 DumpLogSegments after producing key="key", value="value":
    # offset: 0 position: 0 isvalid: true payloadsize: 5 magic: 0 ... crc: 592888119; file is 34 B
    data = build_message_set([(b"key", b"value")], magic=0)
    assert len(data) == 34
    message = LegacyRecordBatch(data)
    assert message.crc == 592888119
    message.ensure_valid()


def test_v1_message_layout_and_size():
    # The same message in v1 takes 42 bytes: 8 more for the timestamp.
    data = build_message_set([(b"key", b"value")], magic=1, timestamp=1234)
    assert len(data) == 42
    offset, size, crc, magic, attributes, timestamp = struct.unpack_from(">qiIbbq", data)
    assert (offset, size, magic, attributes, timestamp) == (0, 30, 1, 0, 1234)
    assert crc == zlib.crc32(data[16:])
    assert data[26:] == b"\x00\x00\x00\x03key\x00\x00\x00\x05value"


def test_null_key_and_value_are_length_minus_one():
    data = encode_message(5, 0, 0, -1, None, None)
    assert data[-8:] == b"\xff\xff\xff\xff\xff\xff\xff\xff"
    (record,) = list(LegacyRecordBatch(data))
    assert (record.offset, record.key, record.value) == (5, None, None)
    assert record.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_round_trip_every_magic_and_codec(magic, codec):
    records = [(b"k1", b"v1"), (None, b"v2"), (b"k3", None), (b"big", b"x" * 100_000)]
    data = build_message_set(records, magic=magic, compression=codec, timestamp=99,
                             base_offset=1000)
    batches = list(iter_batches(data, validate=True))
    decoded = [r for b in batches for r in b]
    assert [(r.offset, r.key, r.value) for r in decoded] == [
        (1000 + i, k, v) for i, (k, v) in enumerate(records)
    ]
    expected_ts = 99 if magic == 1 else -1
    assert all(r.timestamp == expected_ts for r in decoded)
    if codec is CompressionType.NONE:
        assert len(batches) == len(records)
    else:
        (wrapper,) = batches
        assert wrapper.compression is codec
        assert (wrapper.base_offset, wrapper.last_offset, wrapper.record_count) == (1000, 1003, 4)


def test_v1_inner_offsets_are_relative_and_v0_absolute():
    for magic, expected_inner in ((0, [50, 51]), (1, [0, 1])):
        data = build_message_set([(None, b"a"), (None, b"b")], magic=magic,
                                 compression=CompressionType.GZIP, base_offset=50)
        wrapper = LegacyRecordBatch(data)
        assert wrapper.offset == 51
        assert [e.offset for e in wrapper._inner_entries()] == expected_inner
        assert [r.offset for r in wrapper] == [50, 51]


def test_v1_wrapper_offset_assigned_by_broker_shifts_relative_inner_offsets():
    data = bytearray(build_message_set([(None, b"a"), (None, b"b"), (None, b"c")], magic=1,
                                       compression=CompressionType.SNAPPY))
    struct.pack_into(">q", data, 0, 502)  # the broker patches the wrapper offset only
    assert [r.offset for r in LegacyRecordBatch(data)] == [500, 501, 502]


def test_v1_log_append_time_wrapper_timestamp_applies_to_inner_messages():
    builder = MessageSetBuilder(magic=1, compression=CompressionType.GZIP,
                                timestamp_type=TimestampType.LOG_APPEND_TIME)
    builder.append(b"a", timestamp=1)
    builder.append(b"b", timestamp=2)
    wrapper = LegacyRecordBatch(builder.build())
    assert wrapper.timestamp == 2
    assert [(r.timestamp, r.timestamp_type) for r in wrapper] == [
        (2, TimestampType.LOG_APPEND_TIME)] * 2


def test_crc32_mismatch_is_corrupt():
    data = bytearray(build_message_set([(b"k", b"v")], magic=1, timestamp=1))
    data[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="stored CRC-32"):
        LegacyRecordBatch(data).ensure_valid()


def test_zstd_is_refused_in_legacy_formats():
    with pytest.raises(UnsupportedCompressionError):
        build_message_set([(None, b"a")], magic=1, compression=CompressionType.ZSTD)


def test_headers_are_refused_in_legacy_formats():
    with pytest.raises(ValueError, match="no record headers"):
        MessageSetBuilder(magic=1).append(b"v", headers=[("h", b"1")])


def test_nested_compression_is_corrupt():
    inner = build_message_set([(None, b"a")], magic=1, compression=CompressionType.GZIP)
    outer = encode_message(0, 1, int(CompressionType.GZIP), 0, None, gzip.compress(inner))
    with pytest.raises(CorruptRecordError, match="nested compression"):
        list(LegacyRecordBatch(outer))


def test_key_length_overrunning_the_message_is_corrupt():
    data = bytearray(build_message_set([(b"k", b"v")], magic=0))
    struct.pack_into(">i", data, 18, 1000)  # key length
    with pytest.raises(CorruptRecordError, match="overruns"):
        LegacyRecordBatch(data).key_and_value()


@settings(max_examples=100, deadline=None)
@given(
    records=st.lists(st.tuples(st.none() | st.binary(max_size=50),
                               st.none() | st.binary(max_size=200)),
                     min_size=1, max_size=20),
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
)
def test_round_trip_property(records, magic, codec):
    data = build_message_set(records, magic=magic, compression=codec, timestamp=7)
    decoded = [r for b in iter_batches(data, validate=True) for r in b]
    assert [(r.key, r.value) for r in decoded] == records


def test_v1_wrapper_from_a_producer_keeps_its_relative_offsets():
    # A producer that has no offsets yet may write the wrapper offset as 0 (kafka-python,
    # librdkafka do); the relative inner offsets then stand, as the Java client reads them.
    data = bytearray(build_message_set([(None, b"a"), (None, b"b"), (None, b"c")], magic=1,
                                       compression=CompressionType.LZ4))
    struct.pack_into(">q", data, 0, 0)
    assert [r.offset for r in LegacyRecordBatch(data)] == [0, 1, 2]
