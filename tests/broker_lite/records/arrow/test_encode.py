import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_lite.records import CompressionType, RecordBatch, build_batch, iter_batches
from broker_lite.records.arrow import HEADERS_TYPE, batches_to_arrow
from broker_lite.records.arrow.encode import arrow_to_batch

# Every test runs on both implementations of the codecs: [python] and [compiled] in its id.
pytestmark = pytest.mark.usefixtures("codec_path")

ROWS = {
    "key": [b"k1", None, b"a-key-longer-than-twelve-bytes", b""],
    "value": [b"v1", b"x" * 5000, None, b""],
    "headers": [[{"key": "trace", "value": b"1"}], None, [], [{"key": "n", "value": None},
                                                              {"key": "m", "value": b"2"}]],
}
RECORDS = [
    (b"k1", b"v1", [("trace", b"1")]),
    (None, b"x" * 5000, []),
    (b"a-key-longer-than-twelve-bytes", None, []),
    (b"", b"", [("n", None), ("m", b"2")]),
]


def table(**columns):
    types = {"key": pa.binary(), "value": pa.binary(), "headers": HEADERS_TYPE}
    return pa.table({name: pa.array(values, types.get(name)) for name, values in columns.items()})


@pytest.mark.parametrize("codec", list(CompressionType))
def test_byte_identical_to_the_record_by_record_builder(codec):
    encoded = arrow_to_batch(table(**ROWS), compression=codec, timestamp=1_700_000_000_000)
    assert encoded == build_batch(RECORDS, compression=codec, timestamp=1_700_000_000_000)


def test_batch_header_fields():
    batch = RecordBatch(arrow_to_batch(table(**ROWS), timestamp=5, base_offset=100, producer_id=9,
                                       producer_epoch=2, base_sequence=40, is_transactional=True))
    batch.ensure_valid()
    assert (batch.base_offset, batch.last_offset, batch.record_count) == (100, 103, 4)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (9, 2, 40)
    assert batch.is_transactional and not batch.is_control_batch


def test_string_columns_and_timestamp_column():
    rows = pa.table({
        "key": pa.array(["é", None]),
        "value": pa.array(["hello", "world"]),
        "timestamp": pa.array([1_000_000, None], pa.timestamp("us", tz="UTC")),
    })
    batch = RecordBatch(arrow_to_batch(rows, timestamp=42))
    assert [(r.key, r.value, r.timestamp) for r in batch] == [
        ("é".encode(), b"hello", 1_000), (None, b"world", 42)]


def test_int64_millisecond_timestamps_set_base_and_max():
    rows = pa.table({"value": [b"a", b"b", b"c"], "timestamp": pa.array([30, 10, 20], pa.int64())})
    batch = RecordBatch(arrow_to_batch(rows))
    assert (batch.base_timestamp, batch.max_timestamp) == (30, 30)
    assert [r.timestamp for r in batch] == [30, 10, 20]


def test_sliced_and_chunked_input():
    full = table(**ROWS)
    sliced = full.slice(1, 3)
    assert arrow_to_batch(sliced, timestamp=1) == build_batch(RECORDS[1:4], timestamp=1)
    chunked = pa.concat_tables([full.slice(0, 2), full.slice(2, 2)])
    assert arrow_to_batch(chunked, timestamp=1) == build_batch(RECORDS, timestamp=1)
    record_batch = full.to_batches()[0].slice(2)
    assert arrow_to_batch(record_batch, timestamp=1) == build_batch(RECORDS[2:], timestamp=1)


def test_empty_rows_give_an_empty_valid_batch():
    batch = RecordBatch(arrow_to_batch(table(value=[]), timestamp=1))
    batch.ensure_valid()
    assert batch.record_count == 0 and list(batch) == []


def test_missing_value_column_is_named():
    with pytest.raises(ValueError, match="'value'"):
        arrow_to_batch(table(key=[b"k"]))


@pytest.mark.parametrize("name,column", [
    ("value", pa.array([1, 2])),
    ("key", pa.array([1.5, 2.5])),
    ("timestamp", pa.array(["yesterday", "today"])),
    ("headers", pa.array([["a"], ["b"]])),
])
def test_mistyped_columns_are_named(name, column):
    columns = {"value": pa.array([b"a", b"b"]), name: column}
    with pytest.raises(TypeError, match=f"'{name}'"):
        arrow_to_batch(pa.table(columns))


def test_null_header_key_is_refused():
    rows = table(value=[b"v"], headers=[[{"key": None, "value": b"x"}]])
    with pytest.raises(ValueError, match="null key"):
        arrow_to_batch(rows)


rows_strategy = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=30),
        st.none() | st.binary(max_size=400),
        st.none() | st.lists(st.tuples(st.text(max_size=10), st.none() | st.binary(max_size=20)),
                             max_size=3),
        st.integers(0, 2**41),
    ),
    max_size=50,
)


@settings(max_examples=150, deadline=None)
@given(rows=rows_strategy, codec=st.sampled_from(list(CompressionType)))
def test_round_trip_through_arrow_both_ways(rows, codec):
    columns = pa.table({
        "key": pa.array([r[0] for r in rows], pa.binary()),
        "value": pa.array([r[1] for r in rows], pa.binary()),
        "headers": pa.array([None if r[2] is None else [{"key": k, "value": v} for k, v in r[2]]
                             for r in rows], HEADERS_TYPE),
        "timestamp": pa.array([r[3] for r in rows], pa.int64()),
    })
    encoded = arrow_to_batch(columns, compression=codec)
    decoded = batches_to_arrow(iter_batches(encoded, validate=True), topic="t", partition=0,
                               include_headers=True)
    assert decoded.column("key").to_pylist() == [r[0] for r in rows]
    assert decoded.column("value").to_pylist() == [r[1] for r in rows]
    assert decoded.column("headers").to_pylist() == [  # no headers read back as null
        [{"key": k, "value": v} for k, v in r[2]] if r[2] else None for r in rows]
    assert decoded.column("timestamp").cast(pa.int64()).to_pylist() == [r[3] * 1000 for r in rows]
    assert decoded.column("offset").to_pylist() == list(range(len(rows)))
