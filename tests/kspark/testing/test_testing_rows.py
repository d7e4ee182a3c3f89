"""Rows as tests write them -> the Arrow columns kpy's producer takes (kspark.testing.rows)."""

from datetime import UTC, datetime, timedelta

import pandas as pd
import pyarrow as pa
import pytest

from broker_lite.records.arrow.schema import HEADERS_TYPE
from kspark.testing.rows import RowError, to_arrow


def test_values_become_a_binary_value_column():
    table = to_arrow([b"raw", "text", bytearray(b"ba"), memoryview(b"mv"), None])
    assert table.schema == pa.schema([pa.field("value", pa.binary())])
    assert table.column("value").to_pylist() == [b"raw", b"text", b"ba", b"mv", None]


def test_pairs_are_key_and_value():
    table = to_arrow([("k", "v"), (None, b"w"), (b"k2", None)])
    assert table.to_pydict() == {"value": [b"v", b"w", None], "key": [b"k", None, b"k2"]}


def test_dicts_carry_every_field_and_missing_ones_are_null():
    moment = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
    table = to_arrow([
        {"key": "a", "value": "1", "headers": [("trace", b"t1"), ("tag", "x")], "partition": 2,
         "timestamp": moment},
        {"value": "2", "headers": {"only": None}, "timestamp": 1_700_000_000_123},
        {"key": "c", "value": "3"},
    ])
    assert table.schema.field("headers").type == HEADERS_TYPE
    assert table.schema.field("partition").type == pa.int32()
    assert table.schema.field("timestamp").type == pa.int64()
    assert table.to_pydict() == {
        "value": [b"1", b"2", b"3"],
        "key": [b"a", None, b"c"],
        "headers": [[{"key": "trace", "value": b"t1"}, {"key": "tag", "value": b"x"}],
                    [{"key": "only", "value": None}], None],
        "partition": [2, None, None],
        "timestamp": [1_714_564_800_250, 1_700_000_000_123, None],
    }


def test_a_naive_datetime_is_utc():
    naive = datetime(2024, 1, 1) + timedelta(milliseconds=7)
    assert to_arrow([{"value": "v", "timestamp": naive}]).column("timestamp").to_pylist() == \
        [1_704_067_200_007]


def test_arrow_and_pandas_inputs_are_taken_as_they_are():
    table = pa.table({"key": [b"k"], "value": ["v"], "partition": [0]})
    assert to_arrow(table) is table
    batch = table.to_batches()[0]
    assert to_arrow(batch).equals(table)
    frame = pd.DataFrame({"key": ["k1", "k2"], "value": ["v1", "v2"]}, index=[10, 20])
    converted = to_arrow(frame)
    assert converted.column_names == ["key", "value"]  # no index column
    assert converted.column("value").to_pylist() == ["v1", "v2"]


@pytest.mark.parametrize("rows, message", [
    ([{"value": "v", "offset": 3}], "row 0: unknown field 'offset'"),
    (["ok", ("k", "v", "extra")], "row 1: a tuple row is (key, value), got 3 items"),
    ([42], "row 0: value must be bytes, str or None, not int"),
    ([("k", {"json": 1})], "row 0: value must be bytes, str or None, not dict"),
    ([(7, "v")], "row 0: key must be bytes, str or None, not int"),
    ([{"value": "v", "headers": [("h",)]}], "row 0: a header is a (name, value) pair"),
    ([{"value": "v", "headers": [(b"h", b"v")]}], "row 0: a header is a (name, value) pair"),
    ([{"value": "v", "headers": {"h": 1}}], "row 0: header 'h' must be bytes, str or None"),
    ([{"value": "v", "partition": -1}], "row 0: partition must be an int >= 0, got -1"),
    ([{"value": "v", "partition": True}], "row 0: partition must be an int >= 0, got True"),
    ([{"value": "v", "timestamp": 1.5}], "row 0: timestamp must be int milliseconds or a "
                                         "datetime, not float"),
])
def test_bad_rows_are_named(rows, message):
    with pytest.raises(RowError) as raised:
        to_arrow(rows)
    assert message in str(raised.value)


@pytest.mark.parametrize("rows", ["one string", b"bytes", {"value": "v"}, 42])
def test_rows_must_be_a_collection_of_rows(rows):
    with pytest.raises(TypeError, match="rows must be a list of values"):
        to_arrow(rows)


def test_no_rows_make_an_empty_value_column():
    assert to_arrow([]).to_pydict() == {"value": []}
