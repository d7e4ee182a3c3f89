import numpy as np
import pyarrow as pa
import pytest
from codec_paths import CodecPaths
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_lite.records import _native, iter_batches
from broker_lite.records.arrow import HEADERS_TYPE
from broker_lite.records.arrow.encode import arrow_to_batch
from broker_lite.records.arrow.sizes import record_sizes
from broker_lite.records.record_batch import HEADER_SIZE
from broker_lite.records.varint import decode_varint

same_on_both_paths = CodecPaths(_native).same_on_both_paths
T0 = 1_700_000_000_000


def sizes_on_both_paths(rows: pa.RecordBatch, default_timestamp: int = T0) -> list[int]:
    """The sizes, checked to be the same from the reference and the compiled twin."""
    return same_on_both_paths(lambda: record_sizes(rows, default_timestamp).tolist())


def encoded_sizes(rows: pa.RecordBatch) -> list[int]:
    """Each record's size in the batch the encoder writes of all ``rows`` (uncompressed)."""
    data = arrow_to_batch(rows, timestamp=T0)
    (batch,) = iter_batches(data, validate=True)
    assert batch.record_count == rows.num_rows
    at, sizes = HEADER_SIZE, []
    while at < len(data):
        length, body = decode_varint(data, at)
        sizes.append(body - at + length)
        at = body + length
    return sizes


rows_strategy = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=300),
        st.none() | st.binary(max_size=300),
        st.none() | st.lists(st.tuples(st.text(max_size=10), st.none() | st.binary(max_size=20)),
                             max_size=3),
        st.integers(T0 - 2**40, T0 + 2**40),
    ),
    max_size=200,
)


def columns(rows: list, *, with_timestamps: bool, key_type: pa.DataType | None = None,
            value_type: pa.DataType | None = None) -> pa.RecordBatch:
    arrays = {
        "key": pa.array([r[0] for r in rows], key_type or pa.binary()),
        "value": pa.array([r[1] for r in rows], value_type or pa.binary()),
        "headers": pa.array([None if r[2] is None else [{"key": k, "value": v} for k, v in r[2]]
                             for r in rows], HEADERS_TYPE),
    }
    if with_timestamps:
        arrays["timestamp"] = pa.array([r[3] for r in rows], pa.int64())
    return pa.record_batch(arrays)


@settings(max_examples=150, deadline=None)
@given(rows=rows_strategy, with_timestamps=st.booleans())
def test_sizes_bound_every_encoded_record_and_are_exact_with_one_timestamp(rows, with_timestamps):
    batch = columns(rows, with_timestamps=with_timestamps)
    sizes, encoded = sizes_on_both_paths(batch), encoded_sizes(batch)
    assert len(sizes) == len(encoded) == len(rows)
    assert all(bound >= size for bound, size in zip(sizes, encoded, strict=True))
    if not with_timestamps:  # every record carries the default: the bound is the size
        assert sizes == encoded


def test_sizes_of_strings_views_and_large_types_are_those_of_the_bytes():
    rows = [("ключ", "значение" * 40), (None, ""), ("k", None)]
    expected = sizes_on_both_paths(columns(
        [(k and k.encode(), v if v is None else v.encode(), None, T0) for k, v in rows],
        with_timestamps=False))
    for kind in (pa.string(), pa.large_string(), pa.string_view(), pa.large_binary()):
        as_kind = [(k, v, None, T0) for k, v in rows] if "string" in str(kind) else \
            [(k and k.encode(), v if v is None else v.encode(), None, T0) for k, v in rows]
        assert sizes_on_both_paths(columns(as_kind, with_timestamps=False, key_type=kind,
                                           value_type=kind)) == expected, kind


def test_sliced_rows_are_sized_from_their_own_offsets():
    rows = [(b"k" * i, b"v" * (10 * i), None, T0) for i in range(300)]
    whole = sizes_on_both_paths(columns(rows, with_timestamps=False))
    tail = sizes_on_both_paths(columns(rows, with_timestamps=False).slice(200))
    # offsetDelta is bounded by the index in the input it is given: a slice starts again at 0,
    # so its first 64 rows take a 1-byte offsetDelta where the whole input's took 2
    assert tail == [size - (1 if index < 64 else 0) for index, size in enumerate(whole[200:])]


def test_null_typed_key_and_missing_columns_are_nulls_and_no_headers():
    rows = pa.record_batch({"key": pa.nulls(2), "value": [b"abc", None]})
    assert sizes_on_both_paths(rows) == [10, 7]
    assert sizes_on_both_paths(pa.record_batch({"value": [b"abc", None]})) == [10, 7]
    assert sizes_on_both_paths(pa.record_batch({"value": pa.array([], pa.binary())})) == []


@pytest.mark.parametrize("column, message", [
    ({"key": pa.array([1, 2])}, "column 'key' must be binary or string, not int64"),
    ({"value": pa.array([1.5, 2.5])}, "column 'value' must be binary or string, not double"),
    ({"timestamp": pa.array(["a", "b"])}, "column 'timestamp' must be a timestamp or int64 ms"),
    ({"headers": pa.array([1, 2])}, "column 'headers' must be a list of struct<key, value>"),
])
def test_mistyped_columns_give_the_same_error_on_both_paths(column, message):
    arrays = {"value": pa.array([b"a", b"b"]), **column}
    with pytest.raises(TypeError, match=message):
        sizes_on_both_paths(pa.record_batch(arrays))


def test_a_timestamp_far_from_the_others_widens_every_bound():
    rows = pa.record_batch({"value": [b"a", b"b"], "timestamp": pa.array([0, 2**35], pa.int64())})
    # each row may be first or last in its batch: both deltas get the 6-byte varint of 2**35
    assert sizes_on_both_paths(rows) == [len_ + 5 for len_ in sizes_on_both_paths(
        pa.record_batch({"value": [b"a", b"b"]}))]
    assert np.all(np.array(encoded_sizes(rows)) <= np.array(sizes_on_both_paths(rows)))
