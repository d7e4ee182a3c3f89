"""JSON payloads to Arrow columns and back: JSON Schema (Confluent's framing) and plain JSON
documents of a given Spark type.

The Spark type of a JSON Schema:

===========================================  ==============================================
JSON Schema                                  Spark (Arrow)
===========================================  ==============================================
``object`` with ``properties``               struct of the properties (each nullable: a
                                             property may be absent)
``object`` with ``additionalProperties: S``  map<string, S>
``array`` with ``items: S``                  array<S>
``string`` (any ``format``), ``enum`` of     string
strings
``integer``; ``number``; ``boolean``         bigint; double; boolean
``["null", T]``, ``oneOf``/``anyOf`` of      T, nullable
null and one schema
``$ref`` to ``#/definitions/...`` or         the schema referred to (a schema that refers
``#/$defs/...``                              to itself is refused, naming it)
===========================================  ==============================================

A record is read by property name: properties the reader's schema lacks are left out, those
the payload lacks are null. Decoding hands all of a batch's documents to Arrow's JSON reader
(``pyarrow.json``: compiled, one pass, no Python object per record) with the reader's type;
where that cannot serve (a map type, which Arrow's reader does not infer, or a batch with a bad
document) each document is parsed with Python's ``json`` and converted, which is also the
reference that says what is wrong with a bad one.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import io
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.json as pa_json

from broker_lite.registry.schemas.json_schema import JsonSchema

from .column import encode_column
from .errors import CorruptPayloadError, PayloadError, UnsupportedSchemaError
from .framing import header


def arrow_of_json_schema(schema: Any, root: Any = None, path: tuple[str, ...] = ()
                         ) -> tuple[pa.DataType, bool]:
    """The Spark type of a JSON Schema and whether it may be null."""
    root = schema if root is None else root
    if schema is True or schema == {}:
        raise UnsupportedSchemaError(f"{'/'.join(path) or 'the schema'} allows any JSON value, "
                                     "which has no Spark type")
    if not isinstance(schema, dict):
        raise UnsupportedSchemaError(f"{'/'.join(path)}: not a schema")
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref in path:
            raise UnsupportedSchemaError(f"Found recursive reference in JSON Schema, which Spark "
                                         f"cannot represent: {ref} refers to itself")
        target = _resolve(ref, root)
        return arrow_of_json_schema(target, root, (*path, ref))
    for combinator in ("oneOf", "anyOf"):
        if combinator in schema:
            options = [s for s in schema[combinator] if s.get("type") != "null"]
            if len(options) != 1:
                raise UnsupportedSchemaError(f"{'/'.join(path) or 'the schema'}: a {combinator} "
                                             "of several types has no Spark type")
            inner, _ = arrow_of_json_schema(options[0], root, path)
            return inner, True
    kind = schema.get("type")
    nullable = False
    if isinstance(kind, list):
        nullable = "null" in kind
        others = [k for k in kind if k != "null"]
        if set(others) == {"integer", "number"}:
            others = ["number"]
        if len(others) != 1:
            raise UnsupportedSchemaError(f"{'/'.join(path) or 'the schema'}: types {kind} have "
                                         "no one Spark type")
        kind = others[0]
    if kind is None and "properties" in schema:
        kind = "object"
    if kind is None and "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        kind = "string"
    if kind == "object":
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        if not properties and isinstance(extra, dict):
            value, value_nullable = arrow_of_json_schema(extra, root, (*path, "*"))
            return pa.map_(pa.field("key", pa.string(), False),
                           pa.field("value", value, value_nullable)), nullable
        fields = [pa.field(name, arrow_of_json_schema(sub, root, (*path, name))[0], True)
                  for name, sub in (properties or {}).items()]
        return pa.struct(fields), nullable
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, dict):
            raise UnsupportedSchemaError(f"{'/'.join(path)}: an array without one items schema")
        item, item_nullable = arrow_of_json_schema(items, root, (*path, "[]"))
        return pa.list_(pa.field("element", item, item_nullable)), nullable
    simple = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(),
              "boolean": pa.bool_(), "null": pa.null()}
    if kind not in simple:
        raise UnsupportedSchemaError(f"{'/'.join(path) or 'the schema'}: type {kind!r} has no "
                                     "Spark type")
    return simple[kind], nullable or kind == "null"


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#/"):
        raise UnsupportedSchemaError(f"$ref {ref!r}: only references within the schema "
                                     "(#/definitions/..., #/$defs/...) are followed")
    target = root
    for part in ref[2:].split("/"):
        if not isinstance(target, dict) or part not in target:
            raise UnsupportedSchemaError(f"$ref {ref!r} refers to nothing")
        target = target[part]
    return target


def _lines(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> bytes | None:
    """The documents ``raw[starts[i]:ends[i]]`` one a line, for Arrow's JSON reader; None
    where a document spans lines (Arrow would count more rows than there are).

    A column read from Kafka holds its payloads back to back, each after its 5-byte header:
    then the region is copied once and each header overwritten with a newline and spaces.
    Otherwise each document is gathered, a newline after it."""
    n = len(starts)
    gaps = starts[1:] - ends[:-1]
    gap = int(gaps[0]) if len(gaps) else 1
    if n and starts[0] >= gap and 1 <= gap <= 16 and bool(np.all(gaps == gap)):
        begin = int(starts[0]) - gap
        region = raw[begin:int(ends[-1])].copy()
        between = (starts - begin)[:, None] - np.arange(gap, 0, -1)[None, :]
        region[between] = ord(" ")
        region[starts[1:] - begin - gap] = ord("\n")
        if np.count_nonzero(region == ord("\n")) != n - 1:
            return None
        return region.tobytes()
    lengths = ends - starts
    total = int(lengths.sum()) + n
    joined = np.empty(total, dtype=np.uint8)
    positions = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
    index = np.repeat(starts - positions, lengths + 1) + np.arange(total)
    is_newline = np.zeros(total, dtype=bool)
    is_newline[positions + lengths] = True
    joined[~is_newline] = raw[index[~is_newline]]
    if np.count_nonzero(joined[~is_newline] == ord("\n")):
        return None
    joined[is_newline] = ord("\n")
    return joined.tobytes()


def _has_map(arrow: pa.DataType) -> bool:
    if pa.types.is_map(arrow):
        return True
    if pa.types.is_struct(arrow):
        return any(_has_map(f.type) for f in arrow)
    if pa.types.is_list(arrow):
        return _has_map(arrow.value_type)
    return False


class JsonReader:
    """JSON documents read as the Spark type of a JSON Schema (or of a given type)."""

    schema_type = "JSON"

    def __init__(self, schema: JsonSchema | None, arrow: pa.DataType | None = None):
        self.schema = schema
        if arrow is None:
            assert schema is not None
            arrow, _ = arrow_of_json_schema(schema.value)
        self.arrow: pa.DataType = arrow

    @classmethod
    def of_type(cls, arrow: pa.DataType) -> JsonReader:
        """Plain JSON documents of Spark type ``arrow`` (``value.format=json``)."""
        return cls(None, arrow)

    def fingerprint(self) -> str:
        return f"json:{self.schema.canonical() if self.schema else ''}:{self.arrow}"

    def decoder(self, writer: Any = None) -> JsonDecoder:
        """Documents are read by property name whatever the writer's schema said."""
        return JsonDecoder(self.arrow)


class JsonDecoder:
    def __init__(self, arrow: pa.DataType):
        self.arrow = arrow
        self.fast = pa.types.is_struct(arrow) and not _has_map(arrow)

    def decode(self, data: Any, starts: np.ndarray, ends: np.ndarray,
               permissive: bool) -> tuple[pa.Array, list[int]]:
        present = np.flatnonzero(starts >= 0)
        if self.fast and len(present):
            array = self._arrow_reader(data, starts[present], ends[present])
            if array is not None:
                if len(present) == len(starts):
                    return array, []
                order = np.full(len(starts), len(present), dtype=np.int64)
                order[present] = np.arange(len(present))
                padded = pa.concat_arrays([array, pa.nulls(1, self.arrow)])
                return padded.take(pa.array(order)), []
        return self.reference(data, starts, ends, permissive)

    def _arrow_reader(self, data: Any, starts: np.ndarray, ends: np.ndarray) -> pa.Array | None:
        """The documents through Arrow's JSON reader; None where it cannot read them all (the
        reference then decides)."""
        raw = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(0, np.uint8)
        lines = _lines(raw, starts, ends)
        if lines is None:
            return None
        total = len(lines)
        try:
            table = pa_json.read_json(
                io.BytesIO(lines),
                read_options=pa_json.ReadOptions(use_threads=False, block_size=max(total, 1)),
                parse_options=pa_json.ParseOptions(explicit_schema=pa.schema(list(self.arrow)),
                                                   unexpected_field_behavior="ignore"))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        if table.num_rows != len(starts):
            return None
        columns = [c.combine_chunks() for c in table.columns]
        return pa.StructArray.from_arrays(columns, fields=list(self.arrow))

    def reference(self, data: Any, starts: np.ndarray, ends: np.ndarray,
                  permissive: bool) -> tuple[pa.Array, list[int]]:
        """Each document parsed by Python's ``json`` and converted to the reader's type."""
        view = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
        rows: list[Any] = []
        failed: list[int] = []
        for row, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            if start < 0:
                rows.append(None)
                continue
            try:
                rows.append(self.decode_one(bytes(view[start:end])))
            except PayloadError as exc:
                if not permissive:
                    exc.row = row
                    raise
                rows.append(None)
                failed.append(row)
        return pa.array(rows, type=self.arrow), failed

    def decode_one(self, payload: bytes) -> Any:
        try:
            document = json.loads(payload)
        except (UnicodeDecodeError, ValueError) as exc:
            raise CorruptPayloadError(f"not a JSON document: {exc}") from None
        return _convert(document, self.arrow, "value")


def _convert(value: Any, arrow: pa.DataType, where: str) -> Any:
    """A parsed JSON value as the Python form of Arrow type ``arrow``."""
    if value is None:
        return None
    if pa.types.is_struct(arrow):
        if not isinstance(value, dict):
            raise CorruptPayloadError(f"{where} is not a JSON object")
        return {f.name: _convert(value.get(f.name), f.type, f"{where}.{f.name}") for f in arrow}
    if pa.types.is_map(arrow):
        if not isinstance(value, dict):
            raise CorruptPayloadError(f"{where} is not a JSON object")
        return [(k, _convert(v, arrow.item_type, f"{where}[{k!r}]")) for k, v in value.items()]
    if pa.types.is_list(arrow):
        if not isinstance(value, list):
            raise CorruptPayloadError(f"{where} is not a JSON array")
        return [_convert(v, arrow.value_type, f"{where}[]") for v in value]
    if pa.types.is_boolean(arrow):
        if not isinstance(value, bool):
            raise CorruptPayloadError(f"{where} is not a boolean")
        return value
    if pa.types.is_integer(arrow):
        if isinstance(value, bool) or not isinstance(value, int):
            raise CorruptPayloadError(f"{where} is not an integer")
        return value
    if pa.types.is_floating(arrow):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CorruptPayloadError(f"{where} is not a number")
        return float(value)
    if pa.types.is_string(arrow):
        if not isinstance(value, str):
            raise CorruptPayloadError(f"{where} is not a string")
        return value
    if pa.types.is_timestamp(arrow) or pa.types.is_date32(arrow):
        try:
            return pa.scalar(value).cast(arrow).as_py() if isinstance(value, str) else \
                pa.scalar(value, arrow).as_py()
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise CorruptPayloadError(f"{where} is not a {arrow}") from None
    if pa.types.is_decimal(arrow):
        return decimal.Decimal(str(value))
    if pa.types.is_binary(arrow):
        return base64.b64decode(value) if isinstance(value, str) else None
    return value


# -- encoding ------------------------------------------------------------------------------------


class JsonEncoder:
    """Values as JSON documents (framed with ``schema_id``, or bare when it is None)."""

    def __init__(self, schema: JsonSchema | None, schema_id: int | None):
        self.schema = schema
        self.prefix = header(schema_id) if schema_id is not None else b""

    def encode(self, column: pa.Array) -> pa.Array:
        def encode_one(value: Any) -> bytes:
            return self.prefix + json.dumps(_plain(value, column.type), separators=(",", ":"),
                                            ensure_ascii=False).encode()

        return encode_column(column, encode_one, "has no JSON form", (TypeError, ValueError))


def _plain(value: Any, arrow: pa.DataType) -> Any:
    """A value of Arrow type ``arrow`` in JSON's terms: a struct's null fields left out (a
    property absent, which a schema without ``null`` in the property's type allows where a
    null would not), a map an object, dates and timestamps ISO 8601 text, bytes base64."""
    if value is None:
        return None
    if pa.types.is_struct(arrow):
        return {f.name: _plain(value[f.name], f.type) for f in arrow
                if value.get(f.name) is not None}
    if pa.types.is_map(arrow):
        return {k: _plain(v, arrow.item_type) for k, v in value}
    if pa.types.is_list(arrow):
        return [_plain(v, arrow.value_type) for v in value]
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def json_schema_of_type(arrow: pa.DataType, nullable: bool = False) -> Any:
    """A JSON Schema (draft-07) whose Spark type is ``arrow``, for the sink."""
    schema: dict[str, Any]
    if pa.types.is_struct(arrow):
        schema = {"type": "object", "properties": {
            f.name: json_schema_of_type(f.type, f.nullable) for f in arrow},
            "required": [f.name for f in arrow if not f.nullable]}
        if not schema["required"]:
            del schema["required"]
    elif pa.types.is_map(arrow):
        schema = {"type": "object", "additionalProperties": json_schema_of_type(
            arrow.item_type, arrow.item_field.nullable)}
    elif pa.types.is_list(arrow):
        schema = {"type": "array", "items": json_schema_of_type(arrow.value_type,
                                                                arrow.value_field.nullable)}
    elif pa.types.is_boolean(arrow):
        schema = {"type": "boolean"}
    elif pa.types.is_integer(arrow):
        schema = {"type": "integer"}
    elif pa.types.is_floating(arrow) or pa.types.is_decimal(arrow):
        schema = {"type": "number"}
    elif pa.types.is_timestamp(arrow):
        schema = {"type": "string", "format": "date-time"}
    elif pa.types.is_date32(arrow):
        schema = {"type": "string", "format": "date"}
    elif pa.types.is_string(arrow) or pa.types.is_binary(arrow):
        schema = {"type": "string"}
    else:
        raise UnsupportedSchemaError(f"no JSON Schema type for Spark's {arrow}")
    if nullable:
        schema = {"oneOf": [{"type": "null"}, schema]}
    return schema
