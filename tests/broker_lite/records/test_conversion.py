"""Message format conversion (broker_lite.records.conversion): stored batches down-converted
for Fetch v0-v3 as Kafka's RecordsUtil.downConvert does, read back by kafka-python's own
legacy reader (CRCs checked); and records written again in any format (build_entries)."""

import struct

import pytest
from kafka.record import MemoryRecords

from broker_lite.records import (
    BatchReader,
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    LegacyRecordBatch,
    MessageSetBuilder,
    Record,
    RecordBatchBuilder,
    TimestampType,
    UnsupportedCompressionError,
    build_control_batch,
    build_message_set,
    decompress,
    iter_records,
)
from broker_lite.records.conversion import (
    build_entries,
    down_convert,
    down_convert_batch,
    split_entries,
)

T0 = 1_700_000_000_000
NONE, GZIP, SNAPPY, LZ4, ZSTD = (CompressionType.NONE, CompressionType.GZIP,
                                 CompressionType.SNAPPY, CompressionType.LZ4,
                                 CompressionType.ZSTD)
LEGACY_CODECS = [NONE, GZIP, SNAPPY, LZ4]
BIG = 1 << 20

# (key, value, headers, timestamp)
SAMPLE = [(b"key-0", b"value-0", [("h", b"1")], T0), (None, b"no key", [], T0 + 7),
          (b"k2", None, [], T0 - 3), (b"", b"", [("e", b"")], T0 + 1)]


def v2(samples=SAMPLE, *, base_offset=0, codec=NONE, **options) -> bytes:
    builder = RecordBatchBuilder(compression=codec, base_offset=base_offset, **options)
    for key, value, headers, ts in samples:
        builder.append(value, key=key, timestamp=ts, headers=headers)
    return builder.build()


def kafka_python(buf) -> list[tuple]:
    """(offset, timestamp, timestamp type, key, value, headers) as kafka-python's legacy reader
    sees them, every CRC checked; it must read ``buf`` to its last byte."""
    records = MemoryRecords(bytes(buf))
    out, size = [], 0
    while (batch := records.next_batch()) is not None:
        assert batch.magic < 2
        assert batch.validate_crc()
        size += batch.size_in_bytes
        for record in batch:
            assert record.validate_crc()
            out.append((record.offset, record.timestamp, record.timestamp_type, record.key,
                        record.value, list(record.headers)))
    assert size == len(buf)
    return out


def inner_messages(wrapper: LegacyRecordBatch) -> list[LegacyRecordBatch]:
    """The messages inside a compressed wrapper, as they are written."""
    _, value = wrapper.key_and_value()
    return list(BatchReader(decompress(wrapper.compression, value, magic=wrapper.magic)))


def expected(to_magic, samples=SAMPLE, *, first=0, log_append_time=None) -> list[tuple]:
    out = []
    for i, (key, value, _headers, ts) in enumerate(samples):
        if to_magic == 0:
            timestamp, kind = None, None
        elif log_append_time is not None:
            timestamp, kind = log_append_time, 1
        else:
            timestamp, kind = ts, 0
        out.append((first + i, timestamp, kind, key, value, []))  # headers dropped
    return out


# -- down-conversion ------------------------------------------------------------------------------


@pytest.mark.parametrize("to_magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.kafka_name)
def test_v2_batches_read_by_kafka_pythons_legacy_reader(to_magic, codec):
    stored = v2(base_offset=100, codec=codec) + v2(base_offset=104, codec=codec)
    converted = down_convert(stored, to_magic=to_magic, first_offset=100, max_bytes=BIG)
    assert kafka_python(converted) == expected(to_magic, SAMPLE * 2, first=100)
    assert {b.magic for b in BatchReader(converted, validate=True)} == {to_magic}
    entries = list(BatchReader(converted))
    assert len(entries) == (8 if codec is NONE else 2)  # a message each, or a wrapper a batch
    assert all(b.compression is codec for b in entries)


@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.kafka_name)
def test_a_compacted_batchs_offset_gaps_survive(codec):
    builder = RecordBatchBuilder(compression=codec, base_offset=50)
    for delta in (0, 3, 4, 9):
        builder.append(b"v%d" % delta, key=b"k", timestamp=T0, offset_delta=delta)
    for to_magic in (0, 1):
        converted = down_convert(builder.build(last_offset_delta=11), to_magic=to_magic,
                                 first_offset=50, max_bytes=BIG)
        assert [r[0] for r in kafka_python(converted)] == [50, 53, 54, 59]


def test_an_uncompressed_batch_starts_at_the_fetch_offset_a_compressed_one_does_not():
    plain = down_convert(v2(base_offset=10), to_magic=1, first_offset=12, max_bytes=BIG)
    assert [r[0] for r in kafka_python(plain)] == [12, 13]
    packed = down_convert(v2(base_offset=10, codec=GZIP), to_magic=1, first_offset=12,
                          max_bytes=BIG)
    assert [r[0] for r in kafka_python(packed)] == [10, 11, 12, 13]


def test_control_batches_are_left_out_and_aborted_records_kept():
    txn = dict(producer_id=9, producer_epoch=0, base_sequence=0, is_transactional=True)
    stored = (v2(SAMPLE[:2], base_offset=0, **txn)
              + build_control_batch(EndTransactionMarker(ControlRecordType.ABORT, 0),
                                    producer_id=9, producer_epoch=0, timestamp=T0,
                                    base_offset=2)
              + v2(SAMPLE[2:], base_offset=3))
    converted = down_convert(stored, to_magic=1, first_offset=0, max_bytes=BIG)
    assert [r[0] for r in kafka_python(converted)] == [0, 1, 3, 4]
    only_marker = build_control_batch(EndTransactionMarker(ControlRecordType.COMMIT, 0),
                                      producer_id=9, producer_epoch=0, timestamp=T0)
    assert down_convert(only_marker, to_magic=0, first_offset=0, max_bytes=BIG) == b""


@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.kafka_name)
def test_log_append_time_goes_to_every_v1_message(codec):
    stored = v2(codec=codec, timestamp_type=TimestampType.LOG_APPEND_TIME)
    log_append_time = max(ts for *_, ts in SAMPLE)  # what the builder put in maxTimestamp
    converted = down_convert(stored, to_magic=1, first_offset=0, max_bytes=BIG)
    assert kafka_python(converted) == expected(1, log_append_time=log_append_time)
    # As Kafka's builder writes them: the flag and the time on inner messages too.
    for entry in BatchReader(converted):
        assert entry.timestamp_type is TimestampType.LOG_APPEND_TIME
    if codec is not NONE:
        (wrapper,) = BatchReader(converted)
        for inner in inner_messages(wrapper):
            assert (inner.timestamp, inner.timestamp_type) == \
                (log_append_time, TimestampType.LOG_APPEND_TIME)


def test_legacy_batches_pass_unchanged_or_go_down_to_v0():
    v0 = build_message_set([(b"a", b"0")], magic=0, base_offset=0)
    v1 = build_message_set([(b"b", b"1"), (b"c", b"2")], magic=1, compression=GZIP,
                           timestamp=T0, base_offset=1)
    assert down_convert(v0 + v1, to_magic=1, first_offset=0, max_bytes=BIG) == v0 + v1
    to_v0 = down_convert(v0 + v1, to_magic=0, first_offset=0, max_bytes=BIG)
    assert to_v0.startswith(v0)
    assert kafka_python(to_v0) == [(0, None, None, b"a", b"0", []), (1, None, None, b"b", b"1", []),
                                   (2, None, None, b"c", b"2", [])]


def test_zstd_cannot_be_down_converted():
    zstd = v2(base_offset=4, codec=ZSTD)
    with pytest.raises(UnsupportedCompressionError, match="zstd"):
        down_convert(zstd, to_magic=1, first_offset=4, max_bytes=BIG)
    # after a batch that converts, the zstd one ends the data: the client fetches it next
    converted = down_convert(v2(codec=GZIP) + zstd, to_magic=1, first_offset=0, max_bytes=BIG)
    assert [r[0] for r in kafka_python(converted)] == [0, 1, 2, 3]


def test_the_first_batch_whole_then_whole_messages_within_the_limit():
    stored = v2(base_offset=0) + v2(base_offset=4)
    everything = down_convert(stored, to_magic=0, first_offset=0, max_bytes=BIG)
    sizes = [len(e) for e in split_entries(everything)]
    first_batch = sum(sizes[:4])
    tiny = down_convert(stored, to_magic=0, first_offset=0, max_bytes=10)
    assert tiny == everything[:first_batch]  # larger than the limit, but whole
    some = down_convert(stored, to_magic=0, first_offset=0, max_bytes=first_batch + sizes[4]
                        + sizes[5] - 1)
    assert some == everything[:first_batch + sizes[4]]  # no partial message
    assert [r[0] for r in kafka_python(some)] == [0, 1, 2, 3, 4]


def test_a_partial_trailing_batch_is_not_converted():
    stored = v2(base_offset=0) + v2(base_offset=4)
    converted = down_convert(stored[:-5], to_magic=1, first_offset=0, max_bytes=BIG)
    assert [r[0] for r in kafka_python(converted)] == [0, 1, 2, 3]


def test_down_convert_batch_of_a_control_batch_is_empty():
    (marker,) = BatchReader(build_control_batch(
        EndTransactionMarker(ControlRecordType.COMMIT, 0), producer_id=1, producer_epoch=0))
    assert down_convert_batch(marker, 1, 0) == []


# -- records in any format -------------------------------------------------------------------------


RECORDS = [Record(5, T0, TimestampType.CREATE_TIME, b"a", b"1"),
           Record(6, T0 + 2, TimestampType.CREATE_TIME, None, b"2", (("h", b"x"),)),
           Record(9, T0 + 1, TimestampType.CREATE_TIME, b"c", None)]


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.kafka_name)
def test_build_entries_in_every_format(magic, codec):
    entries = build_entries(RECORDS, magic=magic, compression=codec,
                            timestamp_type=TimestampType.CREATE_TIME)
    assert len(entries) == (3 if magic < 2 and codec is NONE else 1)
    data = b"".join(entries)
    assert list(split_entries(data)) == entries
    got = [(r.offset, r.key, r.value, r.headers) for r in iter_records(data)]
    assert got == [(r.offset, r.key, r.value, r.headers if magic == 2 else ())
                   for r in RECORDS]
    if magic == 1:
        assert [r.timestamp for r in iter_records(data)] == [T0, T0 + 2, T0 + 1]


def test_build_entries_v2_log_append_time_is_the_batch_max_timestamp():
    (batch,) = build_entries(RECORDS, magic=2, compression=NONE,
                             timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=T0 + 50,
                             partition_leader_epoch=3)
    (read,) = BatchReader(batch, validate=True)
    assert (read.max_timestamp, read.timestamp_type, read.partition_leader_epoch,
            read.base_offset, read.last_offset_delta) == (T0 + 50, TimestampType.LOG_APPEND_TIME,
                                                           3, 5, 4)
    assert {r.timestamp for r in read} == {T0 + 50}


def test_message_set_builder_offsets_must_increase():
    builder = MessageSetBuilder(magic=1, base_offset=3)
    builder.append(b"a", offset=4)
    with pytest.raises(ValueError, match="not above"):
        builder.append(b"b", offset=4)
    assert builder.append(b"c") == 5


def test_v1_relative_inner_offsets_start_at_the_first_message():
    builder = MessageSetBuilder(magic=1, compression=GZIP, base_offset=0)
    for offset in (20, 22):
        builder.append(b"v", timestamp=T0, offset=offset)
    data = builder.build()
    (wrapper,) = BatchReader(data)
    assert struct.unpack_from(">q", data)[0] == 22
    assert [m.offset for m in inner_messages(wrapper)] == [0, 2]
    assert [r.offset for r in wrapper] == [20, 22]
