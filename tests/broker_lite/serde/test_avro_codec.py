"""The Avro payload codec, as tables of cases without Spark or a registry: types as spark-avro
maps them, Avro's resolution rules between a writer's and a reader's schema, corrupt payloads
refused with the same error on both implementations (``codec_path``), PERMISSIVE rows, and
random records and random damage compared between the two."""

import datetime
import decimal
import io
import json
import re

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker_lite.registry.schemas.avro import AvroSchema
from broker_lite.serde.avro.reader import AvroReader
from broker_lite.serde.column import decode_column
from broker_lite.serde.errors import (
    CorruptPayloadError,
    IncompatibleSchemaError,
    NotFramedError,
    PayloadError,
    UnknownSchemaError,
    UnsupportedSchemaError,
)
from broker_lite.serde.framing import header

from .conftest import SERDE

UTC = datetime.UTC


def schema(definition) -> AvroSchema:
    return AvroSchema.parse(json.dumps(definition), (), {})


def write(definition, value) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(definition), value)
    return out.getvalue()


def decode_array(writer, reader, payloads, permissive=False) -> pa.Array:
    """The payloads (bare, written with ``writer``) read as ``reader``."""
    avro_reader = AvroReader(schema(reader))
    decoder = avro_reader.decoder(schema(writer))
    column = pa.array(payloads, pa.binary())
    return decode_column(column, lambda _: decoder, avro_reader.arrow, permissive=permissive,
                         framed=False)


def decode(writer, reader, payloads, permissive=False) -> list:
    """The payloads read as ``reader``, as Python values."""
    return decode_array(writer, reader, payloads, permissive).to_pylist()


def read_back(definition, value):
    return decode(definition, definition, [write(definition, value)])[0]


# -- types, as spark-avro maps them ----------------------------------------------------------------

TYPES = [
    ("null", None, None, "null"),
    ("boolean", True, True, "bool"),
    ("int", -(2 ** 31), -(2 ** 31), "int32"),
    ("long", 2 ** 63 - 1, 2 ** 63 - 1, "int64"),
    ("float", 1.5, 1.5, "float"),
    ("double", -0.1, -0.1, "double"),
    ("bytes", b"\x00\xff", b"\x00\xff", "binary"),
    ("string", "ünïcode ✓", "ünïcode ✓", "string"),
    ({"type": "fixed", "name": "F", "size": 2}, b"ab", b"ab", "binary"),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, "B", "B", "string"),
    ({"type": "int", "logicalType": "date"}, datetime.date(1, 1, 1), datetime.date(1, 1, 1),
     "date32[day]"),
    ({"type": "int", "logicalType": "time-millis"}, datetime.time(1, 2, 3, 4000), 3723004,
     "int32"),
    ({"type": "long", "logicalType": "time-micros"}, datetime.time(1, 2, 3, 4), 3723000004,
     "int64"),
    ({"type": "long", "logicalType": "timestamp-millis"},
     datetime.datetime(1960, 1, 1, 0, 0, 0, 1000, tzinfo=UTC),
     datetime.datetime(1960, 1, 1, 0, 0, 0, 1000, tzinfo=UTC), "timestamp[us, tz=UTC]"),
    ({"type": "long", "logicalType": "timestamp-micros"},
     datetime.datetime(2038, 1, 19, 3, 14, 8, 1, tzinfo=UTC),
     datetime.datetime(2038, 1, 19, 3, 14, 8, 1, tzinfo=UTC), "timestamp[us, tz=UTC]"),
    ({"type": "long", "logicalType": "local-timestamp-millis"},
     datetime.datetime(2024, 1, 1, 12), datetime.datetime(2024, 1, 1, 12), "timestamp[us]"),
    ({"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
     decimal.Decimal("-999.99"), decimal.Decimal("-999.99"), "decimal128(5, 2)"),
    ({"type": "fixed", "name": "D", "size": 16, "logicalType": "decimal", "precision": 38,
      "scale": 0}, decimal.Decimal("-" + "9" * 38), decimal.Decimal("-" + "9" * 38),
     "decimal128(38, 0)"),
    ({"type": "string", "logicalType": "uuid"}, "00000000-0000-0000-0000-000000000001",
     "00000000-0000-0000-0000-000000000001", "string"),
    ({"type": "array", "items": ["null", "int"]}, [1, None], [1, None],
     "list<element: int32>"),
    ({"type": "map", "values": "long"}, {"a": 1}, [("a", 1)], "map<string, int64>"),
    (["null", "string"], "x", "x", "string"),
    (["int", "long"], 3, 3, "int64"),
    (["float", "double", "null"], 2.5, 2.5, "double"),
    (["null", "int", "string"], "s", {"member0": None, "member1": "s"},
     "struct<member0: int32, member1: string>"),
    (["boolean"], True, True, "bool"),
]


@pytest.mark.parametrize(("avro", "value", "expected", "arrow"), TYPES,
                         ids=[json.dumps(case[0])[:40] for case in TYPES])
def test_each_type_reads_as_spark_avro_maps_it(codec_path, avro, value, expected, arrow):
    assert str(AvroReader(schema(avro)).arrow) == arrow
    assert read_back(avro, value) == expected


def record(*fields, name="R"):
    return {"type": "record", "name": name, "fields": [
        {"name": f[0], "type": f[1], **({"default": f[2]} if len(f) > 2 else {})}
        for f in fields]}


def test_nested_records_arrays_maps_and_a_null_value(codec_path):
    point = record(("x", "int"), ("y", "int"), name="Point")
    shape = record(("points", {"type": "array", "items": point}),
                   ("named", {"type": "map", "values": ["null", "Point"]}),
                   ("centre", ["null", "Point"]), name="Shape")
    value = {"points": [{"x": 1, "y": 2}, {"x": 3, "y": 4}],
             "named": {"o": {"x": 0, "y": 0}, "none": None}, "centre": None}
    assert decode(shape, shape, [write(shape, value), None]) == [
        {"points": [{"x": 1, "y": 2}, {"x": 3, "y": 4}],
         "named": [("o", {"x": 0, "y": 0}), ("none", None)], "centre": None},
        None]


def test_a_recursive_schema_is_refused_naming_the_type():
    tree = {"type": "record", "name": "ex.Tree", "fields": [
        {"name": "value", "type": "int"},
        {"name": "children", "type": {"type": "array", "items": "ex.Tree"}}]}
    with pytest.raises(UnsupportedSchemaError, match=r"record ex\.Tree contains itself "
                                                      r"\(through Tree\.children\)"):
        AvroReader(schema(tree))


def test_a_decimal_wider_than_spark_holds_is_refused():
    wide = {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 0}
    with pytest.raises(UnsupportedSchemaError, match="precision 40: Spark's decimals hold at "
                                                     "most 38 digits"):
        AvroReader(schema(wide))


# -- resolution: the writer's schema read as the reader's ------------------------------------------

RESOLUTION = [
    # promotions
    ("int", "long", 7, 7),
    ("int", "float", 7, 7.0),
    ("int", "double", -7, -7.0),
    ("long", "float", 2 ** 24, float(2 ** 24)),
    ("long", "double", 5, 5.0),
    ("float", "double", 0.5, 0.5),
    ("string", "bytes", "é", "é".encode()),
    ("bytes", "string", b"ok", "ok"),
    # unions on either side
    ("int", ["null", "long"], 3, 3),
    (["null", "int"], "long", 4, 4),
    (["null", "string", "int"], ["int", "null", "string"], "s", {"member0": None,
                                                                "member1": "s"}),
    (["string", "null"], ["null", "string"], None, None),
    # enums: by symbol name, the reader's default for a symbol it lacks
    ({"type": "enum", "name": "E", "symbols": ["A", "B", "C"]},
     {"type": "enum", "name": "E", "symbols": ["C", "A"], "default": "A"}, "B", "A"),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]},
     {"type": "enum", "name": "E", "symbols": ["B", "A"]}, "B", "B"),
    # records: fields by name or alias, added with defaults of every kind, removed
    (record(("a", "int"), ("gone", {"type": "array", "items": "string"}),
            ("m", {"type": "map", "values": record(("z", "int"), name="Z")})),
     record(("a", "long"),
            ("s", "string", "dflt"), ("n", ["null", "int"], None), ("i", "int", -1),
            ("b", "bytes", "\u00ff"), ("f", "double", 2.5), ("t", "boolean", True),
            ("arr", {"type": "array", "items": "int"}, [1, 2]),
            ("mp", {"type": "map", "values": "string"}, {"k": "v"}),
            ("rec", record(("q", "int", 9), name="Q"), {}),
            ("en", {"type": "enum", "name": "En", "symbols": ["X", "Y"]}, "Y"),
            ("fx", {"type": "fixed", "name": "Fx", "size": 2}, "ab"),
            ("day", {"type": "int", "logicalType": "date"}, 1)),
     {"a": 1, "gone": ["x", "y"], "m": {"k": {"z": 1}}},
     {"a": 1, "s": "dflt", "n": None, "i": -1, "b": b"\xff", "f": 2.5, "t": True,
      "arr": [1, 2], "mp": [("k", "v")], "rec": {"q": 9}, "en": "Y", "fx": b"ab",
      "day": datetime.date(1970, 1, 2)}),
    (record(("old_name", "string")),
     {"type": "record", "name": "R", "fields": [
         {"name": "new_name", "type": "string", "aliases": ["old_name"]}]},
     {"old_name": "renamed"}, {"new_name": "renamed"}),
    (record(("x", "int"), name="ns.Old"),
     {"type": "record", "name": "New", "aliases": ["ns.Old"], "fields": [
         {"name": "x", "type": "int"}]}, {"x": 1}, {"x": 1}),
]


@pytest.mark.parametrize(("writer", "reader", "value", "expected"), RESOLUTION)
def test_a_writers_schema_reads_as_the_readers_by_avros_rules(codec_path, writer, reader,
                                                              value, expected):
    assert SERDE.same_on_both_paths(lambda: decode(writer, reader, [write(writer, value)])) \
        == [expected]


INCOMPATIBLE = [
    ("long", "int", 1, "the writer's long cannot be read as the reader's int"),
    ("string", "int", "x", "the writer's string cannot be read as the reader's int"),
    (record(("a", "int")), record(("a", "int"), ("b", "int")), {"a": 1},
     "the reader's field R.b is not in the writer's schema and has no default"),
    (record(("a", "int")), record(("a", "int"), name="Other"), {"a": 1},
     "the writer's record R cannot be read as the reader's record Other"),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]},
     {"type": "enum", "name": "E", "symbols": ["A"]}, "B",
     "the writer's enum symbol number 1 is not among the reader's symbols, which have no "
     "default"),
    (["int", "string"], "int", "x", "the writer's string cannot be read as the reader's int"),
    ({"type": "fixed", "name": "F", "size": 2}, {"type": "fixed", "name": "F", "size": 3},
     b"ab", "the writer's fixed F cannot be read as the reader's fixed F"),
]


@pytest.mark.parametrize(("writer", "reader", "value", "message"), INCOMPATIBLE)
def test_what_the_rules_do_not_allow_fails_each_record_saying_why(codec_path, writer, reader,
                                                                  value, message):
    payload = write(writer, value)
    with pytest.raises(IncompatibleSchemaError, match=f"^row 0: {message}"):
        SERDE.same_on_both_paths(lambda: decode(writer, reader, [payload]))
    assert decode(writer, reader, [payload, None], permissive=True) == [None, None]


def test_a_union_branch_the_reader_can_read_is_read_and_one_it_cannot_fails(codec_path):
    writer, reader = ["null", "int", "string"], ["null", "long"]
    good, bad = write(writer, 5), write(writer, "x")
    assert decode(writer, reader, [good, None], permissive=True) == [5, None]
    assert decode(writer, reader, [good, bad], permissive=True) == [5, None]


# -- corrupt payloads ------------------------------------------------------------------------------

SHAPE = record(("n", "int"), ("s", "string"), ("l", {"type": "array", "items": "long"}),
               ("u", ["null", "double"]), ("b", "boolean"),
               ("d", {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 1}),
               ("t", {"type": "long", "logicalType": "timestamp-millis"}))
GOOD = write(SHAPE, {"n": 1, "s": "é", "l": [1, 2], "u": 1.0, "b": True,
                     "d": decimal.Decimal("1.5"), "t": 0})

CORRUPT = [
    (GOOD[:3], "cut short: the bytes or string at byte 2 needs 2 bytes, 1 remain"),
    (GOOD + b"\x00", "1 bytes left over after the value (it ends at byte 21 of 22)"),
    (b"\xff" * 11, "the int at byte 0 is longer than a 64-bit varint"),
    (b"\x80\x80\x80\x80\x10", "the int at byte 0 does not fit in 32 bits"),
    (b"\x02\x01", "the bytes or string at byte 2 has a negative length (-1)"),
    (b"\x02\x04\xc3", "cut short: the bytes or string at byte 2 needs 2 bytes, 1 remain"),
    (b"\x02\x04\xc3\x28", "the string at byte 1 is not UTF-8 (invalid continuation byte at its "
                          "byte 0)"),
    (b"\x02\x00\x7e", "the block at byte 2 claims 63 items, more than the 0 bytes left"),
    (b"\x02\x00\x00\x06", "union branch 3 at byte 3: the writer's union has 2 branches"),
    (b"\x02\x00\x00\x00\x02", "the boolean at byte 4 is 2, not 0 or 1"),
    (b"\x02\x00\x00\x00\x01\x04\x7f\xff",
     "the decimal at byte 5 has more than 4 digits"),
    (b"\x02\x00\x00\x00\x01\x00\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01",
     "the timestamp at byte 6 is out of the range of Spark's timestamps"),
]


@pytest.mark.parametrize(("payload", "message"), CORRUPT,
                         ids=[message[:30] for _, message in CORRUPT])
def test_a_corrupt_payload_fails_with_the_same_error_on_both_paths(codec_path, payload,
                                                                   message):
    with pytest.raises(CorruptPayloadError) as raised:
        SERDE.same_on_both_paths(lambda: decode(SHAPE, SHAPE, [GOOD, payload]))
    assert str(raised.value) == f"row 1: {message}; mode PERMISSIVE reads such records as null"
    assert SERDE.same_on_both_paths(lambda: decode(SHAPE, SHAPE, [payload, GOOD, payload],
                                                   permissive=True))[0::2] == [None, None]


def test_framing_ids_and_modes_over_a_column_of_several_writers(codec_path):
    v1 = record(("a", "int"))
    v2 = record(("a", "long"), ("b", "string", "-"))
    reader = AvroReader(schema(v2))
    decoders = {1: reader.decoder(schema(v1)), 2: reader.decoder(schema(v2))}

    def decoder_for(schema_id):
        if schema_id not in decoders:
            raise UnknownSchemaError(f"no schema {schema_id}")
        return decoders[schema_id]

    column = pa.array([header(2) + write(v2, {"a": 5, "b": "x"}), header(1) + write(v1, {"a": 1}),
                       None, b"\x01bare", header(9) + b"\x02", header(1) + write(v1, {"a": 2})])
    got = SERDE.same_on_both_paths(lambda: decode_column(
        column, decoder_for, reader.arrow, permissive=True).to_pylist())
    assert got == [{"a": 5, "b": "x"}, {"a": 1, "b": "-"}, None, None, None, {"a": 2, "b": "-"}]
    for rows, error, message in (
            (column[:4], NotFramedError, "row 3: not in Confluent's wire format: the first byte "
                                         "is not the magic byte 0"),
            (column[4:], UnknownSchemaError, "row 0 (schema id 9): no schema 9")):
        with pytest.raises(error, match="^" + re.escape(message)):
            decode_column(rows, decoder_for, reader.arrow, permissive=False,
                          place=lambda row: f"row {row}")


# -- random records and random damage, both implementations ----------------------------------------

EVERY = record(
    ("b", "boolean"), ("i", "int"), ("l", "long"), ("f", "float"), ("d", "double"),
    ("s", "string"), ("y", "bytes"), ("e", {"type": "enum", "name": "E", "symbols": ["P", "Q"]}),
    ("x", {"type": "fixed", "name": "X", "size": 2}),
    ("a", {"type": "array", "items": ["null", "string"]}),
    ("m", {"type": "map", "values": record(("v", "long"), name="V")}),
    ("u", ["null", "int", "string", {"type": "array", "items": "int"}]),
    ("t", {"type": "long", "logicalType": "timestamp-millis"}),
    ("dc", {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 3}),
    ("dt", {"type": "int", "logicalType": "date"}))

every_value = st.fixed_dictionaries({
    "b": st.booleans(), "i": st.integers(-(2 ** 31), 2 ** 31 - 1),
    "l": st.integers(-(2 ** 63), 2 ** 63 - 1),
    "f": st.floats(width=32, allow_nan=False), "d": st.floats(allow_nan=False),
    "s": st.text(max_size=20), "y": st.binary(max_size=20), "e": st.sampled_from(["P", "Q"]),
    "x": st.binary(min_size=2, max_size=2),
    "a": st.lists(st.none() | st.text(max_size=5), max_size=5),
    "m": st.dictionaries(st.text(max_size=5), st.fixed_dictionaries(
        {"v": st.integers(-(2 ** 63), 2 ** 63 - 1)}), max_size=3),
    "u": st.none() | st.integers(-5, 5) | st.text(max_size=5) | st.lists(st.integers(-9, 9),
                                                                          max_size=3),
    "t": st.integers(-(2 ** 40), 2 ** 40),
    "dc": st.integers(-(10 ** 18) + 1, 10 ** 18 - 1).map(lambda n: decimal.Decimal(n).scaleb(-3)),
    "dt": st.integers(-(10 ** 5), 10 ** 5),
})


def expected_every(value: dict) -> dict:
    out = dict(value)
    out["m"] = list(value["m"].items())
    u = value["u"]
    out["u"] = None if u is None else {
        "member0": u if isinstance(u, int) else None, "member1": u if isinstance(u, str) else None,
        "member2": u if isinstance(u, list) else None}
    out["t"] = pa.scalar(value["t"] * 1000, pa.timestamp("us", "UTC")).as_py()
    out["dt"] = datetime.date(1970, 1, 1) + datetime.timedelta(days=value["dt"])
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(every_value, min_size=1, max_size=8))
def test_random_records_read_as_fastavro_wrote_them_on_both_paths(values):
    payloads = [write(EVERY, v) for v in values]
    got = SERDE.same_on_both_paths(lambda: decode(EVERY, EVERY, payloads))
    assert got == [expected_every(v) for v in values]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(every_value, st.data())
def test_damaged_payloads_get_the_same_answer_on_both_paths_never_a_crash(value, data):
    payload = bytearray(write(EVERY, value))
    damage = data.draw(st.sampled_from(["cut", "flip", "insert", "random"]))
    if damage == "cut":
        del payload[data.draw(st.integers(0, len(payload) - 1)):]
    elif damage == "flip":
        at = data.draw(st.integers(0, len(payload) - 1))
        payload[at] ^= 1 << data.draw(st.integers(0, 7))
    elif damage == "insert":
        at = data.draw(st.integers(0, len(payload)))
        payload[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    else:
        payload = bytearray(data.draw(st.binary(max_size=64)))
    for permissive in (False, True):
        try:
            SERDE.same_on_both_paths(lambda p=permissive: decode_array(
                EVERY, EVERY, [bytes(payload)], permissive=p))
        except PayloadError:
            pass


def test_the_starts_and_ends_given_are_checked_by_the_compiled_decoder():
    if SERDE.compiled is None:
        pytest.fail("the compiled payload codecs are not built")  # test_native.py says why
    decoder = AvroReader(schema("long")).decoder()
    with SERDE.on_path("compiled"), pytest.raises(ValueError, match="outside the data"):
        decoder.decode(b"\x02", np.array([0]), np.array([5]), False)
