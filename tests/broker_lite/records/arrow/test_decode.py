import datetime as dt

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_lite.records import (
    BatchReader,
    CompressionType,
    ControlRecordType,
    CorruptRecordError,
    EndTransactionMarker,
    InvalidTimestampError,
    RecordBatchBuilder,
    TimestampType,
    assemble_batch,
    build_batch,
    build_control_batch,
    build_message_set,
    iter_batches,
    iter_records,
)
from broker_lite.records.arrow import (
    RECORD_SCHEMA,
    RECORD_SCHEMA_WITH_HEADERS,
    batches_to_arrow,
)
from broker_lite.records.record_batch import encode_record

# Every test runs on both implementations of the codecs: [python] and [compiled] in its id.
pytestmark = pytest.mark.usefixtures("codec_path")


def decode(data, **kwargs):
    kwargs.setdefault("include_headers", True)
    return batches_to_arrow(iter_batches(data, validate=True), topic="events", partition=7,
                            **kwargs)


def expected_rows(data, include_headers=True, start=None, end=None):
    """The same records through the record-by-record reader, as Spark rows."""
    rows = []
    for r in iter_records(data):
        if (start is not None and r.offset < start) or (end is not None and r.offset >= end):
            continue
        row = {
            "key": r.key, "value": r.value, "topic": "events", "partition": 7,
            "offset": r.offset,
            "timestamp": dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
            + dt.timedelta(milliseconds=r.timestamp),
            "timestampType": int(r.timestamp_type),
        }
        if include_headers:
            row["headers"] = [{"key": k, "value": v} for k, v in r.headers] or None
        rows.append(row)
    return rows


def test_schema_is_sparks_kafka_schema():
    data = build_batch([(b"k", b"v")], timestamp=1)
    assert decode(data, include_headers=False).schema == RECORD_SCHEMA
    assert decode(data).schema == RECORD_SCHEMA_WITH_HEADERS
    assert [f.name for f in RECORD_SCHEMA_WITH_HEADERS] == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]


@pytest.mark.parametrize("codec", list(CompressionType))
def test_every_codec_matches_the_record_reader(codec):
    records = [
        (b"short", b"tiny", [("a", b"1")]),
        (None, b"exactly12byt"),
        (b"thirteen-byte", None, [("k", None), ("", b"")]),
        (b"", b""),
        (b"long-key" * 10, b"v" * 200),  # two-byte length prefix
        (None, b"w" * 20_000),  # three-byte length prefix
    ]
    data = b"".join(
        build_batch(records, timestamp=1_600_000_000_000 + i, compression=codec,
                    base_offset=i * len(records))
        for i in range(3)
    )
    assert decode(data).to_pylist() == expected_rows(data)


def test_timestamps_are_microseconds_utc_and_log_append_time_is_kept():
    builder = RecordBatchBuilder(timestamp_type=TimestampType.LOG_APPEND_TIME)
    builder.append(b"a", timestamp=1_000)
    builder.append(b"b", timestamp=2_500)
    table = decode(builder.build())
    assert table.column("timestamp").type == pa.timestamp("us", tz="UTC")
    assert table.column("timestamp").cast(pa.int64()).to_pylist() == [2_500_000, 2_500_000]
    assert table.column("timestampType").to_pylist() == [1, 1]


def test_control_batches_are_skipped():
    data = (build_batch([(None, b"a")], timestamp=1, producer_id=1, producer_epoch=0,
                        is_transactional=True)
            + build_control_batch(EndTransactionMarker(ControlRecordType.COMMIT, 0),
                                  producer_id=1, producer_epoch=0, base_offset=1, timestamp=2)
            + build_batch([(None, b"b")], timestamp=3, base_offset=2))
    table = decode(data)
    assert table.column("offset").to_pylist() == [0, 2]
    assert table.column("value").to_pylist() == [b"a", b"b"]


def test_offset_range_is_start_inclusive_end_exclusive_across_batches():
    data = b"".join(build_batch([(None, bytes([i, j])) for j in range(5)], timestamp=1,
                                base_offset=i * 5) for i in range(4))
    table = decode(data, start_offset=3, end_offset=17)
    assert table.column("offset").to_pylist() == list(range(3, 17))
    assert table.to_pylist() == expected_rows(data, start=3, end=17)


def test_batches_wholly_outside_the_range_are_not_decompressed():
    good = build_batch([(None, b"in range")], timestamp=1, base_offset=10,
                       compression=CompressionType.GZIP)
    bad = bytearray(build_batch([(None, b"x" * 50)], timestamp=1, compression=CompressionType.GZIP))
    bad[-5:] = b"\xff" * 5  # would fail to decompress; unvalidated reader so the CRC is not read
    table = batches_to_arrow(BatchReader(bytes(bad) + good), topic="events", partition=7,
                             start_offset=10)
    assert table.column("value").to_pylist() == [b"in range"]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP,
                                   CompressionType.SNAPPY, CompressionType.LZ4])
def test_legacy_formats_decode_in_order_with_v2(magic, codec):
    data = (build_message_set([(b"k", b"old"), (None, None)], magic=magic, compression=codec,
                              timestamp=5)
            + build_batch([(b"k2", b"new", [("h", b"1")])], timestamp=6, base_offset=2)
            + build_message_set([(None, b"old again")], magic=magic, base_offset=3, timestamp=7))
    assert decode(data).to_pylist() == expected_rows(data)


def test_a_record_without_headers_has_null_headers_as_in_spark():
    # Spark's Kafka source gives null, not [], so that `headers IS NULL` finds such records.
    data = (build_batch([(b"k", b"a", [("h", b"1")]), (b"k", b"b"), (b"k", b"c", [])],
                        timestamp=1)
            + build_message_set([(None, b"old")], magic=1, base_offset=3, timestamp=2))
    headers = decode(data).column("headers")
    assert headers.to_pylist() == [[{"key": "h", "value": b"1"}], None, None, None]
    assert headers.null_count == 3


def test_empty_input_gives_an_empty_batch_with_the_schema():
    table = decode(b"")
    assert table.num_rows == 0 and table.schema == RECORD_SCHEMA_WITH_HEADERS


def test_malformed_utf8_header_key_is_replaced_as_the_java_client_does():
    builder_records = encode_record(0, 0, None, b"v", [("ok", b"x")]).replace(b"ok", b"\xffk")
    data = assemble_batch(builder_records, record_count=1, last_offset_delta=0,
                          base_timestamp=1, max_timestamp=1)
    (row,) = decode(data).to_pylist()
    assert row["headers"] == [{"key": "\ufffdk", "value": b"x"}]


def corrupt_records_batch(records_section: bytes, count: int) -> bytes:
    """A batch with a valid CRC around malformed records: only record parsing can catch it."""
    return assemble_batch(records_section, record_count=count, last_offset_delta=count - 1,
                          base_timestamp=1, max_timestamp=1)


def record(body: bytes) -> bytes:
    """A record's bytes from its body: the zigzag length prefix in front (bodies < 64 bytes)."""
    return bytes([len(body) * 2]) + body


@pytest.mark.parametrize(
    "section,count,message",
    [
        (encode_record(0, 0, None, b"v"), 2, "records of a batch end at"),  # count too high
        (encode_record(0, 0, None, b"v") + b"\x00", 1, "records of a batch end at"),  # trailing
        (b"\x01" + bytes(10), 1, "negative length"),  # record length -1
        # attributes, timestampDelta, offsetDelta, keyLength -2
        (record(bytes([0, 0, 0, 3, 1, 0])), 1, "key or value length below -1"),
        # keyLength 20 in a 10-byte record
        (record(bytes([0, 0, 0, 40]) + bytes(6)), 1, "ends before its valueLength"),
        # null key and value, headerCount 1, no header
        (record(bytes([0, 0, 0, 1, 1, 2])), 1, "more headers than its bytes can hold"),
        # headerCount 1, header key "A", then no value length
        (record(bytes([0, 0, 0, 1, 1, 2, 2, 0x41])), 1, "ends before its header value length"),
        # an 11-byte timestampDelta
        (record(b"\x00" + b"\xff" * 10 + b"\x01" + bytes([0, 1, 1, 0])), 1,
         "timestampDelta is longer than 10 bytes"),
        # offsetDelta with 35 bits
        (record(bytes([0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 1, 1, 0])), 1, "exceeds 32 bits"),
        # a two-byte valueLength whose second byte would be past the record
        (record(bytes([0, 0, 0, 1, 0x81])), 1, "valueLength runs past the end of the record"),
        # value ends before the record does, leaving a byte unaccounted for
        (record(bytes([0, 0, 0, 1, 1, 0, 0])), 1, "do not fill its declared length"),
    ],
)
def test_malformed_records_raise_corrupt_record_error(section, count, message):
    with pytest.raises(CorruptRecordError, match=message):
        decode(corrupt_records_batch(section, count))


records_strategy = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=30),
        st.none() | st.binary(max_size=300),
        st.lists(st.tuples(st.text(max_size=15), st.none() | st.binary(max_size=20)), max_size=3),
        st.integers(0, 2**41),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(batches=st.lists(records_strategy, min_size=1, max_size=4),
       codec=st.sampled_from(list(CompressionType)), include_headers=st.booleans())
def test_matches_the_record_reader_for_random_records(batches, codec, include_headers):
    data = b""
    next_offset = 0
    for records in batches:
        builder = RecordBatchBuilder(compression=codec, base_offset=next_offset)
        for key, value, headers, ts in records:
            builder.append(value, key=key, headers=headers, timestamp=ts)
        data += builder.build()
        next_offset += max(len(records), 1)
    assert decode(data, include_headers=include_headers).to_pylist() == \
        expected_rows(data, include_headers)


@pytest.mark.parametrize("timestamps", [
    [2**62],  # beyond int64 microseconds
    [-(2**63)],  # INT64_MIN, whose absolute value does not exist in int64
    [0, 2**62],  # a later record out of range
])
def test_timestamps_spark_cannot_represent_are_refused(timestamps):
    builder = RecordBatchBuilder(base_offset=40)
    for ts in timestamps:
        builder.append(b"v", timestamp=ts)
    data = builder.build()
    with pytest.raises(InvalidTimestampError, match=r"record at offset 4[01] has a timestamp"):
        decode(data)


def test_legacy_timestamps_spark_cannot_represent_are_refused():
    data = build_message_set([(None, b"v")], magic=1, timestamp=2**62, base_offset=3)
    with pytest.raises(InvalidTimestampError, match="offset 3"):
        decode(data)


def test_value_overrunning_its_record_is_refused_before_any_view_is_built():
    # value length 2**31 - 1 in a 6-byte record: must not become an Arrow view past the buffer
    section = record(bytes([0, 0, 0, 1]) + bytes([0xFE, 0xFF, 0xFF, 0xFF, 0x0F]) + bytes([0]))
    with pytest.raises(CorruptRecordError, match="value overruns"):
        decode(corrupt_records_batch(section, 1))


def test_huge_header_counts_are_refused_before_allocating():
    # two records each declaring 2**31 - 1 headers: more than their bytes could hold
    body = bytes([0, 0, 0, 1, 1]) + bytes([0xFE, 0xFF, 0xFF, 0xFF, 0x0F])
    with pytest.raises(CorruptRecordError, match="more headers than its bytes can hold"):
        decode(corrupt_records_batch(record(body) * 2, 2))


def test_timestamp_sum_wrapping_back_into_range_is_refused():
    # baseTimestamp + timestampDelta = 2**64 - 2000, which int64 arithmetic wraps to -2000 ms
    near_max = 2**63 - 1000
    data = assemble_batch(encode_record(0, near_max, None, b"v"), record_count=1,
                          last_offset_delta=0, base_timestamp=near_max, max_timestamp=near_max,
                          base_offset=9)
    with pytest.raises(InvalidTimestampError, match="offset 9"):
        decode(data)


# Records of one size are followed in vectorized runs: streaks of equal records, broken by other
# sizes, by varint deltas growing a byte (offsets 64 and 8192, timestamps), and by single odd ones.
streaks_strategy = st.lists(
    st.tuples(st.integers(1, 120), st.integers(0, 300), st.booleans(), st.integers(0, 3)),
    min_size=1, max_size=8,
)


@settings(max_examples=80, deadline=None)
@given(streaks=streaks_strategy, codec=st.sampled_from([CompressionType.NONE,
                                                        CompressionType.LZ4]))
def test_runs_of_equal_records_match_the_record_reader(streaks, codec):
    builder = RecordBatchBuilder(compression=codec)
    for count, size, keyed, timestamp_step in streaks:
        for i in range(count):
            builder.append(b"v" * size, key=b"key" if keyed else None,
                           timestamp=1_600_000_000_000 + timestamp_step * 40 * i)
    data = builder.build()
    assert decode(data).to_pylist() == expected_rows(data)


def test_a_large_batch_of_fixed_size_records_decodes_across_varint_growth():
    records = [(None, b"%0100d" % i) for i in range(20_000)]  # offset deltas 64 and 8192
    data = build_batch(records, timestamp=1_700_000_000_000)
    assert decode(data, include_headers=False).column("value").to_pylist() == \
        [v for _, v in records]


def test_runs_of_tombstones_beside_runs_of_values_and_odd_records_match_the_record_reader():
    """Keys and values of runs are copied a run at a time, the others one by one: tombstones
    (null values) in a run, a run of values, odd sizes and an empty value between them."""
    builder = RecordBatchBuilder()
    timestamp = 1_700_000_000_000
    for i in range(200):
        builder.append(None, key=b"k%04d" % i, timestamp=timestamp)
    for size in (3, 0, 250, 17):
        builder.append(b"o" * size, key=None, timestamp=timestamp)
    for i in range(300):
        builder.append(b"%0100d" % i, key=b"key", timestamp=timestamp)
    builder.append(b"last", key=b"k", timestamp=timestamp)
    data = builder.build()
    rows = decode(data).to_pylist()
    assert rows == expected_rows(data)
    assert [r["value"] for r in rows[:200]] == [None] * 200
    assert rows[203]["value"] == b"o" * 17 and rows[204]["value"] == b"%0100d" % 0


def test_a_record_breaking_a_run_with_another_length_is_found():
    """In the middle of a run, one record claims to be a byte longer: the run must stop there,
    and the batch no longer adds up."""
    records = [encode_record(offset_delta=i % 60, timestamp_delta=0, key=None,
                             value=b"x" * 50) for i in range(200)]
    broken = bytearray(records[100])
    broken[0] += 2  # zigzag: the length one more
    section = b"".join(records[:100]) + bytes(broken) + b"".join(records[101:])
    with pytest.raises(CorruptRecordError):
        decode(corrupt_records_batch(section, 200))


# Records of one size usually share one layout and are decoded as a run; these have one size but
# layouts that differ: a longer timestamp or offset delta, a key instead of value bytes, headers.
_DELTA_BYTES = {1: 3, 2: 100, 3: 10_000, 4: 2_000_000, 5: 2**29}  # zigzag varint sizes
layouts_strategy = st.lists(  # streaks of one layout
    st.tuples(st.tuples(st.sampled_from(sorted(_DELTA_BYTES)), st.integers(0, 2), st.booleans()),
              st.integers(1, 40)),
    min_size=1, max_size=6,
).map(lambda streaks: [layout for layout, count in streaks for _ in range(count)])


def one_size_records(layouts, size=60):
    """Records of exactly ``size`` bytes whatever their layout: the value takes what is left."""
    records = []
    for i, (delta_bytes, key_bytes, header) in enumerate(layouts):
        key = b"k" * key_bytes if key_bytes else None
        headers = [("h", b"")] if header else []
        probe = encode_record(i, _DELTA_BYTES[delta_bytes], key, b"", headers)
        value = b"%d" % i
        value = value + b"v" * (size - len(probe) - len(value))
        record_bytes = encode_record(i, _DELTA_BYTES[delta_bytes], key, value, headers)
        assert len(record_bytes) == size
        records.append(record_bytes)
    return records


@settings(max_examples=80, deadline=None)
@given(layouts=layouts_strategy, include_headers=st.booleans())
def test_records_of_one_size_with_other_layouts_match_the_record_reader(layouts,
                                                                        include_headers):
    records = one_size_records(layouts)
    data = assemble_batch(b"".join(records), record_count=len(records),
                          last_offset_delta=len(records) - 1, base_timestamp=1_000,
                          max_timestamp=1_000 + 2**29, base_offset=500)
    assert decode(data, include_headers=include_headers).to_pylist() == \
        expected_rows(data, include_headers)


def test_a_run_record_of_another_layout_in_the_middle_is_decoded_on_its_own():
    layouts = [(2, 0, False)] * 50 + [(3, 1, False)] + [(2, 0, False)] * 50
    records = one_size_records(layouts)
    data = assemble_batch(b"".join(records), record_count=101, last_offset_delta=100,
                          base_timestamp=0, max_timestamp=10_000)
    rows = decode(data).to_pylist()
    assert rows == expected_rows(data)
    assert rows[50]["key"] == b"k" and rows[50]["value"].startswith(b"50v")


def test_uncompressed_batches_are_decoded_in_the_buffer_they_were_read_from():
    """A Fetch response's records, several batches and a cut one at the end, as one buffer: the
    batches decode in place, and decode as when each is alone."""
    batches = [build_batch([(None, b"%040d" % (i * 100 + j)) for j in range(100)],
                           base_offset=i * 100, timestamp=1_700_000_000_000) for i in range(3)]
    response = b"".join(batches) + batches[0][:40]
    in_place = list(BatchReader(response))
    assert all(b.records_span()[0] is in_place[0].records_span()[0] for b in in_place)
    rows = batches_to_arrow(in_place, topic="events", partition=7).to_pylist()
    assert rows == [row for batch in batches for row in decode(batch, include_headers=False)
                    .to_pylist()]
    assert [row["offset"] for row in rows] == list(range(300))
