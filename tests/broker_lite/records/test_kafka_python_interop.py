"""Interoperability of broker_lite.records / broker_lite.records.arrow with kafka-python's own
record codec.

Both directions, every message format kafka-python writes (magic 0, 1, 2) and every codec it
allows with that magic:

* kafka-python builds (``MemoryRecordsBuilder``, ``DefaultRecordBatchBuilder``,
  ``LegacyRecordBatchBuilder``) -> ``iter_batches(validate=True)`` / ``batches_to_arrow`` here;
* built here (``RecordBatchBuilder``, ``build_batch``, ``MessageSetBuilder``,
  ``build_message_set``, ``arrow_to_batch``) -> kafka-python's ``MemoryRecords``.

A note on the producer form of compressed v0/v1 message sets: kafka-python (like librdkafka) writes
the wrapper message with offset 0 and leaves it to the broker to rewrite it to the offset of the
last inner message. The tests that compare full batches therefore patch the wrapper offset the way
a broker stores it (the offset lies outside the CRC); the produce form itself is covered by
``test_kafka_python_v0_compressed_produce_form`` and
``test_kafka_python_v1_compressed_produce_form``.
"""

import struct

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords, MemoryRecordsBuilder
from kafka.record.default_records import (
    ControlRecord,
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
)
from kafka.record.legacy_records import LegacyRecordBatch as KafkaLegacyRecordBatch
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from broker_lite.records import (
    BatchReader,
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    LegacyRecordBatch,
    MessageSetBuilder,
    Record,
    RecordBatch,
    RecordBatchBuilder,
    TimestampType,
    build_batch,
    build_control_batch,
    build_message_set,
    iter_batches,
    iter_records,
)
from broker_lite.records.arrow.decode import batches_to_arrow
from broker_lite.records.arrow.encode import arrow_to_batch
from broker_lite.records.arrow.schema import HEADERS_TYPE

NONE, GZIP, SNAPPY, LZ4, ZSTD = (
    CompressionType.NONE,
    CompressionType.GZIP,
    CompressionType.SNAPPY,
    CompressionType.LZ4,
    CompressionType.ZSTD,
)

# Every (magic, codec) pair kafka-python supports: zstd only with message format v2.
PAIRS = [(m, c) for m in (0, 1, 2) for c in CompressionType if not (c is ZSTD and m < 2)]
PAIR_IDS = [f"v{m}-{c.kafka_name}" for m, c in PAIRS]
LEGACY_COMPRESSED = [(m, c) for m, c in PAIRS if m < 2 and c is not NONE]

T0 = 1_700_000_000_000
BATCH_SIZE = 1 << 20
PRODUCER_ID, PRODUCER_EPOCH, BASE_SEQUENCE = 123_456_789_012, 7, 1_000

# (key, value, headers, timestamp). The last record is large and repetitive so that kafka-python's
# v2 builder, which falls back to no compression when compressing does not shrink the batch,
# really compresses.
SAMPLE = [
    (b"key-0", b"value-0", [("h1", b"x"), ("h2", None)], T0),
    (None, b"no key", [], T0 + 1),
    (b"k2", None, [("empty", b"")], T0 - 5),  # earlier than the first: negative delta
    (b"", b"", [], T0 + 1000),
    (b"k\x00\xff", bytes(range(256)), [("\u00fcn\u00efc\u00f8de \u2603", b"\x00\x01")], T0 + 2),
    (None, None, [], T0 + 3),
    (b"big", b"abcdefgh" * 1000, [("h", b"y" * 100), ("h", b"dup")], T0 + 4),
]


def _headers_for(magic, headers):
    return tuple(headers) if magic == 2 else ()


def expected_records(magic, samples=SAMPLE, *, first_offset=0, log_append_time=None):
    """The records a consumer must see for ``samples`` appended as magic ``magic``."""
    out = []
    for i, (key, value, headers, ts) in enumerate(samples):
        if magic == 0:
            timestamp, ts_type = -1, TimestampType.NO_TIMESTAMP_TYPE
        elif log_append_time is not None:
            timestamp, ts_type = log_append_time, TimestampType.LOG_APPEND_TIME
        else:
            timestamp, ts_type = ts, TimestampType.CREATE_TIME
        out.append(Record(first_offset + i, timestamp, ts_type, key, value,
                          _headers_for(magic, headers)))
    return out


def kafka_python_build(magic, codec, samples=SAMPLE, *, transactional=False, offset=0):
    """Bytes of ``samples`` as kafka-python's MemoryRecordsBuilder writes them."""
    producer = {}
    if transactional:
        producer = dict(transactional=True, producer_id=PRODUCER_ID,
                        producer_epoch=PRODUCER_EPOCH, base_sequence=BASE_SEQUENCE)
    builder = MemoryRecordsBuilder(magic, int(codec), BATCH_SIZE, offset=offset, **producer)
    for key, value, headers, ts in samples:
        meta = builder.append(ts, key, value, list(headers) if magic == 2 else None)
        assert meta is not None
    builder.close()
    return bytes(builder.buffer())


def as_stored(buf: bytes, last_offset: int) -> bytes:
    """A compressed v0/v1 producer message set with the wrapper offset a broker would store."""
    out = bytearray(buf)
    struct.pack_into(">q", out, 0, last_offset)
    return bytes(out)


def kafka_python_read(buf):
    """(batch, records) for every batch of ``buf`` as kafka-python reads it, CRCs checked."""
    records = MemoryRecords(bytes(buf))
    out = []
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc(), f"kafka-python: bad CRC in {batch}"
        recs = list(batch)
        for rec in recs:
            assert rec.validate_crc()
        out.append((batch, recs))
    return out


def kafka_python_records(buf):
    return [r for _, recs in kafka_python_read(buf) for r in recs]


def as_kafka_python_tuples(records):
    """Our Record objects in kafka-python's terms (v0: no timestamp, no timestamp type)."""
    out = []
    for r in records:
        no_timestamp = r.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE
        ts_type = None if no_timestamp else int(r.timestamp_type)
        timestamp = None if no_timestamp else r.timestamp
        out.append((r.offset, timestamp, ts_type, r.key, r.value, list(r.headers)))
    return out


def kafka_python_tuples(records):
    return [(r.offset, r.timestamp, r.timestamp_type, r.key, r.value, list(r.headers))
            for r in records]


def arrow_rows(records, topic="t", partition=3):
    """The rows ``batches_to_arrow(..., include_headers=True)`` must return for ``records``."""
    return [
        {
            "key": r.key, "value": r.value, "topic": topic, "partition": partition,
            "offset": r.offset, "timestamp_us": r.timestamp * 1000,
            "timestampType": int(r.timestamp_type),
            # a record without headers has null headers, as in Spark's Kafka source
            "headers": [{"key": k, "value": v} for k, v in r.headers] or None,
        }
        for r in records
    ]


def arrow_to_rows(rb: pa.RecordBatch):
    rows = rb.to_pydict()
    rows["timestamp_us"] = rb.column("timestamp").cast(pa.int64()).to_pylist()
    del rows["timestamp"]
    return [dict(zip(rows, values, strict=True)) for values in zip(*rows.values(), strict=True)]


# -- constants ------------------------------------------------------------------------------------


def test_codec_ids_and_attribute_masks_agree_with_kafka_python():
    for cls in (DefaultRecordBatch, KafkaLegacyRecordBatch):
        assert cls.CODEC_NONE == NONE and cls.CODEC_GZIP == GZIP
        assert cls.CODEC_SNAPPY == SNAPPY and cls.CODEC_LZ4 == LZ4
        assert cls.TIMESTAMP_TYPE_MASK == 0x08 and cls.CODEC_MASK == 0x07
    assert DefaultRecordBatch.CODEC_ZSTD == ZSTD
    assert DefaultRecordBatch.TRANSACTIONAL_MASK == 0x10
    assert DefaultRecordBatch.CONTROL_MASK == 0x20
    assert DefaultRecordBatch.HEADER_STRUCT.size == 61


# -- kafka-python -> here --------------------------------------------------------------------------


V2_CASES = [pytest.param(c, t, id=f"v2-{c.kafka_name}-{'txn' if t else 'plain'}")
            for c in CompressionType for t in (False, True)]


@pytest.mark.parametrize("codec,transactional", V2_CASES)
def test_kafka_python_v2_batch_decodes(codec, transactional):
    buf = kafka_python_build(2, codec, transactional=transactional)
    # kafka-python sends a batch uncompressed when compression does not help; SAMPLE is
    # compressible, so the codec really is the one asked for.
    assert DefaultRecordBatch(buf).compression_type == codec

    reader = BatchReader(buf, validate=True)
    batches = list(reader)
    assert not reader.incomplete and reader.position == len(buf)
    assert len(batches) == 1
    batch = batches[0]
    assert isinstance(batch, RecordBatch)
    n = len(SAMPLE)
    assert batch.magic == 2
    assert batch.base_offset == 0 and batch.last_offset == n - 1 and batch.next_offset == n
    assert batch.record_count == n
    assert batch.compression is codec
    assert batch.timestamp_type is TimestampType.CREATE_TIME
    assert batch.base_timestamp == SAMPLE[0][3]
    assert batch.max_timestamp == max(s[3] for s in SAMPLE)
    assert batch.is_control_batch is False
    assert batch.is_transactional is transactional
    if transactional:
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
            PRODUCER_ID, PRODUCER_EPOCH, BASE_SEQUENCE)
        assert batch.last_sequence == BASE_SEQUENCE + n - 1
    else:
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
        assert batch.last_sequence == -1
    assert batch.is_valid()
    assert bytes(batch.raw()) == buf

    expected = expected_records(2)
    assert list(batch) == expected
    assert list(iter_records(buf)) == expected

    rb = batches_to_arrow(iter_batches(buf, validate=True), topic="t", partition=3,
                          include_headers=True)
    assert rb.schema.field("headers").type == HEADERS_TYPE
    assert arrow_to_rows(rb) == arrow_rows(expected)


@pytest.mark.parametrize("magic,codec", [p for p in PAIRS if p[0] < 2],
                         ids=[i for p, i in zip(PAIRS, PAIR_IDS, strict=True) if p[0] < 2])
def test_kafka_python_legacy_message_set_decodes(magic, codec):
    samples = [(k, v, (), ts) for k, v, _, ts in SAMPLE]
    n = len(samples)
    buf = kafka_python_build(magic, codec, samples)
    if codec is not NONE:
        buf = as_stored(buf, n - 1)

    reader = BatchReader(buf, validate=True)
    batches = list(reader)
    assert not reader.incomplete and reader.position == len(buf)
    expected = expected_records(magic, samples)
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    for batch in batches:
        assert isinstance(batch, LegacyRecordBatch)
        assert batch.magic == magic
        assert batch.compression is codec
        assert batch.timestamp_type is ts_type
        assert batch.is_control_batch is False and batch.is_transactional is False
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
        assert batch.is_valid()
    if codec is NONE:
        # One entry per message, each a batch of one record.
        assert len(batches) == n
        for i, batch in enumerate(batches):
            assert batch.base_offset == batch.last_offset == i
            assert batch.record_count == 1
            assert list(batch) == [expected[i]]
    else:
        assert len(batches) == 1
        (batch,) = batches
        assert batch.base_offset == 0 and batch.last_offset == n - 1
        assert batch.record_count == n
        assert list(batch) == expected
    assert list(iter_records(buf)) == expected
    # kafka-python agrees on the very same bytes.
    assert kafka_python_tuples(kafka_python_records(buf)) == as_kafka_python_tuples(expected)

    rb = batches_to_arrow(iter_batches(buf, validate=True), topic="t", partition=3,
                          include_headers=True)
    assert arrow_to_rows(rb) == arrow_rows(expected)


@pytest.mark.parametrize("codec", [NONE, GZIP, SNAPPY, LZ4], ids=lambda c: c.kafka_name)
@pytest.mark.parametrize("magic", [0, 1])
def test_kafka_python_legacy_batch_builder_decodes(magic, codec):
    """The lower-level LegacyRecordBatchBuilder, used directly."""
    builder = LegacyRecordBatchBuilder(magic, int(codec), BATCH_SIZE)
    samples = [(b"a", b"1" * 50, (), T0), (None, b"2" * 50, (), T0 + 9), (b"c", None, (), T0 + 3)]
    for i, (key, value, _, ts) in enumerate(samples):
        assert builder.append(i, ts, key, value) is not None
    buf = bytes(builder.build())
    if codec is not NONE:
        buf = as_stored(buf, len(samples) - 1)
    assert list(iter_records(buf)) == expected_records(magic, samples)


@pytest.mark.parametrize("codec", list(CompressionType), ids=lambda c: c.kafka_name)
def test_kafka_python_default_batch_builder_decodes(codec):
    """The lower-level DefaultRecordBatchBuilder, used directly, with sparse offset deltas."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=int(codec), is_transactional=True, producer_id=5,
        producer_epoch=0, base_sequence=0, batch_size=BATCH_SIZE)
    deltas = [0, 3, 4, 10]
    for delta in deltas:
        builder.append(delta, timestamp=T0 + delta, key=b"k%d" % delta,
                       value=b"v" * 300, headers=[("d", str(delta).encode())])
    buf = bytes(builder.build())
    (batch,) = iter_batches(buf, validate=True)
    assert batch.last_offset == 10 and batch.record_count == 4
    assert batch.producer_id == 5 and batch.producer_epoch == 0 and batch.base_sequence == 0
    assert batch.is_transactional
    assert [(r.offset, r.timestamp, r.key, r.headers) for r in batch] == [
        (d, T0 + d, b"k%d" % d, (("d", str(d).encode()),)) for d in deltas]
    rb = batches_to_arrow([batch], topic="t", partition=0, include_headers=True)
    assert rb.column("offset").to_pylist() == deltas


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4], ids=lambda c: c.kafka_name)
def test_kafka_python_v0_compressed_produce_form(codec):
    """v0 inner offsets are absolute, so the producer's wrapper offset 0 does not matter."""
    samples = [(b"a", b"x" * 40, (), T0), (b"b", b"y" * 40, (), T0), (None, b"z", (), T0)]
    buf = kafka_python_build(0, codec, samples)
    assert struct.unpack_from(">q", buf)[0] == 0
    assert list(iter_records(buf)) == expected_records(0, samples)


def test_kafka_python_v1_compressed_produce_form():
    samples = [(b"a", b"x" * 40, (), T0), (b"b", b"y" * 40, (), T0 + 1), (None, b"z", (), T0 + 2)]
    for codec in (GZIP, SNAPPY, LZ4):
        buf = kafka_python_build(1, codec, samples)
        assert struct.unpack_from(">q", buf)[0] == 0  # the producer form
        # kafka-python reads its own bytes as offsets 0, 1, 2 ...
        assert [r.offset for r in kafka_python_records(buf)] == [0, 1, 2]
        # ... and so must we.
        assert [r.offset for r in iter_records(buf)] == [0, 1, 2], codec


def test_kafka_python_multi_batch_buffer_mixing_magics():
    """Batches of magic 0, 1 and 2 back to back, as a log that was upgraded holds them."""
    plan = [  # (magic, codec, records)
        (0, NONE, 2), (1, GZIP, 3), (2, SNAPPY, 2), (0, LZ4, 3), (2, ZSTD, 4),
        (1, NONE, 2), (0, GZIP, 2), (2, NONE, 1), (1, LZ4, 2), (2, GZIP, 3), (1, SNAPPY, 2),
        (0, SNAPPY, 2), (2, LZ4, 2),
    ]
    parts, expected, entries = [], [], []
    next_offset = 100
    for index, (magic, codec, count) in enumerate(plan):
        samples = [
            (b"k%d-%d" % (index, i) if i % 2 else None, b"value %d %d " % (index, i) * 30,
             [("batch", b"%d" % index)] if magic == 2 else (), T0 + 10 * index + i)
            for i in range(count)
        ]
        last = next_offset + count - 1
        if magic == 2:
            buf = bytearray(kafka_python_build(2, codec, samples))
            struct.pack_into(">q", buf, 0, next_offset)  # the broker assigns the base offset
            struct.pack_into(">i", buf, 12, 4)  # ... and the partition leader epoch
            buf = bytes(buf)
        elif codec is NONE:
            buf = kafka_python_build(magic, codec, samples, offset=next_offset)
        elif magic == 0:  # inner offsets absolute
            buf = as_stored(kafka_python_build(0, codec, samples, offset=next_offset), last)
        else:  # v1: inner offsets relative, the wrapper holds the absolute last offset
            buf = as_stored(kafka_python_build(1, codec, samples), last)
        parts.append(buf)
        expected += expected_records(magic, samples, first_offset=next_offset)
        if magic < 2 and codec is NONE:  # one entry per message
            entries += [(magic, codec, o, o) for o in range(next_offset, last + 1)]
        else:
            entries.append((magic, codec, next_offset, last))
        next_offset += count
    data = b"".join(parts)

    reader = BatchReader(data, validate=True)
    batches = list(reader)
    assert not reader.incomplete and reader.position == len(data)
    assert [(b.magic, b.compression, b.base_offset, b.last_offset) for b in batches] == entries
    for batch in batches:
        if batch.magic == 2:
            assert batch.partition_leader_epoch == 4
    assert list(iter_records(data)) == expected
    assert [r for b in iter_batches(data, validate=True) for r in b] == expected

    rb = batches_to_arrow(iter_batches(data, validate=True), topic="t", partition=3,
                          include_headers=True)
    assert arrow_to_rows(rb) == arrow_rows(expected)
    # with an offset window that cuts batches of every kind
    window = batches_to_arrow(iter_batches(data, validate=True), topic="t", partition=3,
                              start_offset=103, end_offset=120, include_headers=True)
    assert arrow_to_rows(window) == arrow_rows([r for r in expected if 103 <= r.offset < 120])

    # kafka-python reads the same buffer the same way.
    assert kafka_python_tuples(kafka_python_records(data)) == as_kafka_python_tuples(expected)


# -- here -> kafka-python --------------------------------------------------------------------------


def _arrow_table(samples):
    return pa.table({
        "key": pa.array([s[0] for s in samples], pa.binary()),
        "value": pa.array([s[1] for s in samples], pa.binary()),
        "headers": pa.array([[{"key": k, "value": v} for k, v in s[2]] for s in samples],
                            HEADERS_TYPE),
        "timestamp": pa.array([s[3] for s in samples], pa.int64()),
    })


def _build_here(magic, codec, how, base_offset, **producer):
    if magic == 2:
        if how == "builder":
            builder = RecordBatchBuilder(compression=codec, base_offset=base_offset, **producer)
            for key, value, headers, ts in SAMPLE:
                builder.append(value, key=key, timestamp=ts, headers=headers)
            return builder.build(), SAMPLE
        if how == "function":
            samples = [(k, v, h, T0 + 42) for k, v, h, _ in SAMPLE]
            return build_batch([(k, v, h) for k, v, h, _ in samples], timestamp=T0 + 42,
                               compression=codec, base_offset=base_offset, **producer), samples
        return arrow_to_batch(_arrow_table(SAMPLE), compression=codec, base_offset=base_offset,
                              **producer), SAMPLE
    samples = [(k, v, (), ts) for k, v, _, ts in SAMPLE]
    if how == "builder":
        builder = MessageSetBuilder(magic=magic, compression=codec, base_offset=base_offset)
        for key, value, _, ts in samples:
            builder.append(value, key=key, timestamp=ts)
        return builder.build(), samples
    samples = [(k, v, (), T0 + 42) for k, v, _, _ in samples]
    return build_message_set([(k, v) for k, v, _, _ in samples], magic=magic, timestamp=T0 + 42,
                             compression=codec, base_offset=base_offset), samples


HERE_CASES = [
    pytest.param(m, c, how, id=f"v{m}-{c.kafka_name}-{how}")
    for m, c in PAIRS
    for how in (("builder", "function", "arrow") if m == 2 else ("builder", "function"))
]


@pytest.mark.parametrize("magic,codec,how", HERE_CASES)
def test_batches_built_here_read_by_kafka_python(magic, codec, how):
    base_offset = 1000
    producer = {}
    if magic == 2:
        producer = dict(producer_id=PRODUCER_ID, producer_epoch=PRODUCER_EPOCH,
                        base_sequence=BASE_SEQUENCE, is_transactional=True)
    buf, samples = _build_here(magic, codec, how, base_offset, **producer)
    expected = expected_records(magic, samples, first_offset=base_offset)

    read = kafka_python_read(buf)
    if magic == 2:
        assert len(read) == 1
        batch, _records = read[0]
        assert isinstance(batch, DefaultRecordBatch)
        assert batch.magic == 2
        assert batch.compression_type == codec
        assert batch.base_offset == base_offset
        assert batch.last_offset == base_offset + len(samples) - 1
        assert batch.records_count == len(samples)
        assert batch.first_timestamp == samples[0][3]
        assert batch.max_timestamp == max(s[3] for s in samples)
        assert batch.timestamp_type == 0
        assert batch.is_transactional and not batch.is_control_batch
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
            PRODUCER_ID, PRODUCER_EPOCH, BASE_SEQUENCE)
        assert batch.last_sequence == BASE_SEQUENCE + len(samples) - 1
    else:
        batches = [b for b, _ in read]
        assert all(isinstance(b, KafkaLegacyRecordBatch) for b in batches)
        assert all(b.magic == magic and b.compression_type == codec for b in batches)
        assert len(batches) == (len(samples) if codec is NONE else 1)
        if codec is not NONE:
            # the wrapper holds the offset of the last inner message
            assert batches[0].base_offset == base_offset + len(samples) - 1
    assert kafka_python_tuples(kafka_python_records(buf)) == as_kafka_python_tuples(expected)
    # and we read back what we wrote
    assert list(iter_records(buf)) == expected


@pytest.mark.parametrize("codec", list(CompressionType), ids=lambda c: c.kafka_name)
def test_log_append_time_v2_built_here_read_by_kafka_python(codec):
    builder = RecordBatchBuilder(compression=codec, timestamp_type=TimestampType.LOG_APPEND_TIME)
    for key, value, headers, ts in SAMPLE:
        builder.append(value, key=key, timestamp=ts, headers=headers)
    buf = builder.build()
    max_ts = max(s[3] for s in SAMPLE)
    expected = expected_records(2, log_append_time=max_ts)
    (batch, records), = kafka_python_read(buf)
    assert batch.timestamp_type == 1
    assert kafka_python_tuples(records) == as_kafka_python_tuples(expected)
    assert list(iter_records(buf)) == expected
    rb = batches_to_arrow(iter_batches(buf), topic="t", partition=3, include_headers=True)
    assert arrow_to_rows(rb) == arrow_rows(expected)


@pytest.mark.parametrize("codec", [NONE, GZIP, SNAPPY, LZ4], ids=lambda c: c.kafka_name)
def test_log_append_time_v1_built_here_read_by_kafka_python(codec):
    samples = [(b"a", b"x" * 30, (), T0 + 5), (None, b"y" * 30, (), T0 + 1),
               (b"c", None, (), T0 + 3)]
    builder = MessageSetBuilder(magic=1, compression=codec,
                                timestamp_type=TimestampType.LOG_APPEND_TIME, base_offset=7)
    for key, value, _, ts in samples:
        builder.append(value, key=key, timestamp=ts)
    buf = builder.build()
    if codec is NONE:  # each message carries its own (log append) timestamp
        expected = [Record(7 + i, s[3], TimestampType.LOG_APPEND_TIME, s[0], s[1])
                    for i, s in enumerate(samples)]
    else:  # the wrapper's timestamp applies to every inner message
        expected = expected_records(1, samples, first_offset=7, log_append_time=T0 + 5)
    assert kafka_python_tuples(kafka_python_records(buf)) == as_kafka_python_tuples(expected)
    assert list(iter_records(buf)) == expected


# -- control batches ------------------------------------------------------------------------------


@pytest.mark.parametrize("marker_type", list(ControlRecordType), ids=lambda t: t.name)
def test_control_batch_interop(marker_type):
    pid, epoch = 9_876_543_210, 3
    data = build_batch([(b"k1", b"v1", [("h", b"1")]), (None, b"v2")], timestamp=T0,
                       compression=LZ4, base_offset=50, producer_id=pid, producer_epoch=epoch,
                       base_sequence=0, is_transactional=True)
    marker = EndTransactionMarker(marker_type, coordinator_epoch=5)
    control = build_control_batch(marker, producer_id=pid, producer_epoch=epoch, timestamp=T0 + 1,
                                  base_offset=52)
    buf = data + control

    read = kafka_python_read(buf)
    assert [b.is_control_batch for b, _ in read] == [False, True]
    control_batch, control_records = read[1]
    assert control_batch.is_transactional
    assert (control_batch.producer_id, control_batch.producer_epoch) == (pid, epoch)
    assert control_batch.base_offset == 52
    (record,) = control_records
    assert isinstance(record, ControlRecord)
    assert record.offset == 52 and record.version == 0 and record.type == marker_type
    assert record.commit is (marker_type is ControlRecordType.COMMIT)
    assert struct.unpack(">hi", record.value) == (0, 5)

    batches = list(iter_batches(buf, validate=True))
    assert [b.is_control_batch for b in batches] == [False, True]
    assert batches[1].end_transaction_marker() == marker
    assert batches[1].is_transactional

    expected = [Record(50, T0, TimestampType.CREATE_TIME, b"k1", b"v1", (("h", b"1"),)),
                Record(51, T0, TimestampType.CREATE_TIME, None, b"v2")]
    assert list(iter_records(buf)) == expected  # the marker is not a data record
    rb = batches_to_arrow(iter_batches(buf, validate=True), topic="t", partition=3,
                          include_headers=True)
    assert arrow_to_rows(rb) == arrow_rows(expected)
    only_control = batches_to_arrow(iter_batches(control), topic="t", partition=3,
                                    include_headers=True)
    assert only_control.num_rows == 0
    assert list(iter_records(control)) == []


# -- property: random records both ways ------------------------------------------------------------

_bytes_or_none = st.one_of(st.none(), st.binary(max_size=40))
_header_key = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=8)
_record = st.tuples(
    _bytes_or_none,
    _bytes_or_none,
    st.lists(st.tuples(_header_key, _bytes_or_none), max_size=3),
    st.integers(min_value=0, max_value=2**42),
)


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(_record, min_size=1, max_size=15),
       codec=st.sampled_from(list(CompressionType)))
def test_property_random_records_round_trip_with_kafka_python(records, codec):
    expected = [Record(i, ts, TimestampType.CREATE_TIME, k, v, tuple(h))
                for i, (k, v, h, ts) in enumerate(records)]

    # kafka-python builds, we decode (records, and Arrow rows)
    theirs = kafka_python_build(2, codec, records)
    assert list(iter_records(theirs)) == expected
    rb = batches_to_arrow(iter_batches(theirs, validate=True), topic="t", partition=3,
                          include_headers=True)
    assert arrow_to_rows(rb) == arrow_rows(expected)

    # we build, kafka-python decodes
    builder = RecordBatchBuilder(compression=codec)
    for key, value, headers, ts in records:
        builder.append(value, key=key, timestamp=ts, headers=headers)
    ours = builder.build()
    assert kafka_python_tuples(kafka_python_records(ours)) == as_kafka_python_tuples(expected)
    # and so does the Arrow encoder's output
    from_arrow = arrow_to_batch(_arrow_table(records), compression=codec)
    assert kafka_python_tuples(kafka_python_records(from_arrow)) == as_kafka_python_tuples(expected)
