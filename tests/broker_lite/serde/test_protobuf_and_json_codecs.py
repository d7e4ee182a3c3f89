"""The Protobuf and JSON payload codecs as tables, without Spark or a registry: Spark's types
for their schemas, resolution by field number and by property name, bad payloads refused with
the error saying why, and, for JSON, Arrow's reader and the Python reference agreeing on random
documents."""

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker_lite.registry.schemas import parse_schema
from broker_lite.serde.column import decode_column
from broker_lite.serde.errors import (
    CorruptPayloadError,
    IncompatibleSchemaError,
    UnsupportedSchemaError,
)
from broker_lite.serde.framing import header, message_indexes
from broker_lite.serde.json_schema import (
    JsonReader,
    arrow_of_json_schema,
    json_schema_of_type,
)
from broker_lite.serde.protobuf import (
    ProtobufEncoder,
    ProtobufReader,
    descriptor_schema,
    proto_of_type,
)

# -- Protobuf ---------------------------------------------------------------------------------

SCALARS = """
syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
message All {
  int32 a = 1; sint32 b = 2; sfixed32 c = 3; uint32 d = 4; fixed32 e = 5;
  int64 f = 6; sint64 g = 7; sfixed64 h = 8; uint64 i = 9; fixed64 j = 10;
  float k = 11; double l = 12; bool m = 13; string n = 14; bytes o = 15;
  enum E { ZERO = 0; ONE = 1; } E p = 16;
  repeated string q = 17; map<int32, string> r = 18;
  google.protobuf.Timestamp s = 19; google.protobuf.Duration t = 20;
  optional int32 u = 21;
  oneof choice { string v = 22; int64 w = 23; }
}
"""


def test_protobuf_types_map_as_from_protobuf_maps_them():
    reader = ProtobufReader(descriptor_schema(SCALARS))
    assert str(reader.arrow) == (
        "struct<a: int32, b: int32, c: int32, d: int32, e: int32, f: int64, g: int64, "
        "h: int64, i: int64, j: int64, k: float, l: double, m: bool, n: string, o: binary, "
        "p: string, q: list<element: string not null>, r: map<int32, string>, "
        "s: timestamp[us, tz=UTC], t: duration[us], u: int32, v: string, w: int64>")


def decode_protobuf(reader, payloads, writer=None, permissive=False):
    decoder = reader.decoder(writer)
    return decode_column(pa.array(payloads, pa.binary()), lambda _: decoder, reader.arrow,
                         permissive=permissive, framed=writer is not None).to_pylist()


def test_protobuf_defaults_presence_unsigned_wrap_and_a_round_trip():
    schema = descriptor_schema(SCALARS)
    reader = ProtobufReader(schema)
    encoder = ProtobufEncoder(schema, None, None)
    value = {"d": -1, "j": -2, "p": "ONE", "q": ["x"], "r": [(1, "one")],
             "s": 1_700_000_000_000_001, "u": 0, "w": 7}
    column = pa.array([value], reader.arrow)
    (payload,) = encoder.encode(column).to_pylist()
    (row,) = decode_protobuf(reader, [payload])
    assert row["d"] == -1 and row["j"] == -2  # 2**32 - 1 and 2**64 - 2 on the wire
    assert row["a"] == 0 and row["n"] == "" and row["m"] is False  # defaults, no presence
    assert row["u"] == 0 and row["v"] is None and row["w"] == 7  # presence: set, unset, set
    assert (row["p"], row["q"], row["r"]) == ("ONE", ["x"], [(1, "one")])
    assert row["s"] == pa.scalar(1_700_000_000_000_001, pa.timestamp("us", "UTC")).as_py()
    assert row["t"] is None  # an unset message


def test_protobuf_reads_by_field_number_and_checks_the_writers_message():
    v1 = parse_schema("PROTOBUF", 'syntax = "proto3"; message M { string a = 1; '
                                  'int64 gone = 2; }')
    v2 = parse_schema("PROTOBUF", 'syntax = "proto3"; message M { string renamed = 1; '
                                  'int64 added = 3; } message Other { int32 x = 1; }')
    writer = ProtobufEncoder(v1, None, 5)
    payloads = writer.encode(pa.array([{"a": "hello", "gone": 9}],
                                      ProtobufReader(v1).arrow)).to_pylist()
    reader = ProtobufReader(v2)
    assert decode_protobuf(reader, payloads, writer=v1) == [{"renamed": "hello", "added": 0}]
    other = header(5) + message_indexes([1]) + b""
    with pytest.raises(IncompatibleSchemaError, match=r"row 0 .*: the writer's message Other "
                                                      r"is not the reader's M"):
        decode_protobuf(reader, [other], writer=v2)
    with pytest.raises(CorruptPayloadError, match=r"row 0 .*: not a M message"):
        decode_protobuf(reader, [header(5) + b"\x00\x0a\x05ab"], writer=v1)
    assert decode_protobuf(reader, [header(5) + b"\x00\x0a\x05ab", payloads[0]], writer=v1,
                           permissive=True) == [None, {"renamed": "hello", "added": 0}]


def test_a_recursive_message_is_refused_naming_it():
    tree = 'syntax = "proto3"; package t; message Node { repeated Node children = 1; }'
    with pytest.raises(UnsupportedSchemaError, match=r"the message t\.Node contains itself"):
        ProtobufReader(descriptor_schema(tree))


def test_a_proto_file_derived_from_a_spark_type_reads_back_as_that_type():
    arrow = pa.struct([pa.field("id", pa.int64(), False), pa.field("name", pa.string()),
                       pa.field("tags", pa.list_(pa.field("element", pa.string(), False))),
                       pa.field("inner", pa.struct([pa.field("x", pa.int32())]))])
    text = proto_of_type(arrow, "kpy.Row")
    reader = ProtobufReader(parse_schema("PROTOBUF", text))
    assert [f.name for f in reader.arrow] == ["id", "name", "tags", "inner"]
    assert reader.full_name == "kpy.Row"


# -- JSON ---------------------------------------------------------------------------------------

JSON_TYPES = [
    ({"type": "string", "format": "date-time"}, "string"),
    ({"type": "integer"}, "int64"),
    ({"type": ["null", "number"]}, "double"),
    ({"enum": ["a", "b"]}, "string"),
    ({"type": "array", "items": {"type": "boolean"}}, "list<element: bool not null>"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "map<string, int64>"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
      "$defs": {"A": {"type": "object", "properties": {"b": {"type": "string"}}}}},
     "struct<a: struct<b: string>>"),
    ({"oneOf": [{"type": "null"}, {"type": "string"}]}, "string"),
]


@pytest.mark.parametrize(("schema", "arrow"), JSON_TYPES)
def test_json_schema_types_map_to_spark_types(schema, arrow):
    assert str(arrow_of_json_schema(schema)[0]) == arrow


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"next": {"$ref": "#"}}},
    {"type": ["string", "integer"]},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    True,
])
def test_json_schemas_without_one_spark_type_are_refused(schema):
    with pytest.raises(UnsupportedSchemaError):
        arrow_of_json_schema(schema)


PERSON = {"type": "object", "properties": {
    "name": {"type": "string"}, "age": {"type": "integer"}, "height": {"type": "number"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "home": {"type": "object", "properties": {"city": {"type": "string"}}}}}
READER = JsonReader(parse_schema("JSON", json.dumps(PERSON)))


def framed(documents):
    return pa.array([None if d is None else header(1) + d for d in documents], pa.binary())


def decode_json(documents, permissive=False):
    decoder = READER.decoder()
    return decode_column(framed(documents), lambda _: decoder, READER.arrow,
                         permissive=permissive)


def test_json_documents_read_by_property_name_and_bad_ones_say_why():
    got = decode_json([b'{"name":"a","age":3,"extra":1}', None, b'{"height":2,"tags":[]}'])
    assert got.to_pylist() == [
        {"name": "a", "age": 3, "height": None, "tags": None, "home": None}, None,
        {"name": None, "age": None, "height": 2.0, "tags": [], "home": None}]
    with pytest.raises(CorruptPayloadError, match=r"^row 1 \(schema id 1\): value\.age is not "
                                                  r"an integer"):
        decode_json([b'{"name":"a"}', b'{"age":"old"}'])
    with pytest.raises(CorruptPayloadError, match=r"^row 0 \(schema id 1\): not a JSON "
                                                  r"document"):
        decode_json([b'{"name":'])
    assert decode_json([b"[1]", b'{"age":1}'], permissive=True).to_pylist()[0] is None


document = st.fixed_dictionaries({}, optional={
    "name": st.none() | st.text(max_size=8), "age": st.integers(-(2 ** 53), 2 ** 53),
    "height": st.floats(allow_nan=False, allow_infinity=False, width=32),
    "tags": st.lists(st.text(max_size=4), max_size=3),
    "home": st.fixed_dictionaries({}, optional={"city": st.text(max_size=5)}),
    "ignored": st.integers()})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.none() | document, min_size=1, max_size=12))
def test_arrows_json_reader_and_the_python_reference_agree(documents):
    payloads = [None if d is None else json.dumps(d).encode() for d in documents]
    column = framed(payloads)
    decoder = READER.decoder()
    from broker_lite.serde.framing import frame

    frames = frame(column)
    starts = np.where(frames.state == 0, frames.starts, -1)
    fast, _ = decoder.decode(frames.data, starts, frames.ends, False)
    reference, _ = decoder.reference(frames.data, starts, frames.ends, False)
    assert fast.to_pylist() == reference.to_pylist()


def test_a_json_schema_derived_from_a_spark_type_maps_back_to_it():
    arrow = pa.struct([pa.field("id", pa.int64(), False), pa.field("tags", pa.list_(
        pa.string())), pa.field("counts", pa.map_(pa.string(), pa.int64()))])
    schema = json_schema_of_type(arrow)
    assert schema["required"] == ["id"]
    assert str(arrow_of_json_schema(schema)[0]) == \
        "struct<id: int64, tags: list<element: string>, counts: map<string, int64>>"
