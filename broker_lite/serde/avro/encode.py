"""Arrow columns into Avro payloads, and the Avro schema of a Spark type.

Encoding takes a column of the Spark type an Avro schema maps to (:mod:`.schema`) and writes
each value with fastavro's compiled writer, after turning Spark's form of it into Avro's: a
map's entries into a dict, a union read as a struct of members into its one non-null member,
timestamps and dates as Python's. (A value per row is made here: encoding is not the
decoder's hot loop, and fastavro's writer is compiled.) A value the schema cannot hold (a null
in a field that is not nullable, a string for an int) is an
:class:`~broker_lite.serde.errors.EncodeError` naming the row and the field.

The schema of a Spark type, when the sink is not given one, is spark-avro's
(``SchemaConverters.toAvroType``): a struct is a record (the top one named ``topLevelRecord``,
nested ones after their field, in the namespace of their parent), a nullable type the union of
it and ``null`` (the type first), ``binary`` bytes, ``date`` an int ``date``, ``timestamp`` a long
``timestamp-micros``, ``timestamp_ntz`` a long ``local-timestamp-micros``, ``decimal(p, s)`` bytes
with a ``decimal`` logical type, ``byte`` and ``short`` int, an array an array, a map with string
keys a map.

>>> import pyarrow as pa
>>> arrow = pa.struct([pa.field("id", pa.int64(), False), pa.field("tags", pa.list_(pa.string()))])
>>> avro_schema_of(arrow, nullable=False)["fields"][1]
{'name': 'tags', 'type': [{'type': 'array', 'items': ['string', 'null']}, 'null']}
"""

from __future__ import annotations

import io
from typing import Any

import fastavro
import pyarrow as pa

from broker_lite.registry.schemas.avro import AvroSchema

from ..column import encode_column
from ..errors import UnsupportedSchemaError
from ..framing import header
from .schema import expand, union_kind


def avro_schema_of(arrow: pa.DataType, nullable: bool, name: str = "topLevelRecord",
                   namespace: str = "") -> Any:
    """The Avro schema (as JSON data) of Spark type ``arrow``, as spark-avro derives it."""
    schema: Any
    if pa.types.is_struct(arrow):
        space = f"{namespace}.{name}" if namespace else name
        schema = {"type": "record", "name": name, **({"namespace": namespace} if namespace
                                                      else {}),
                  "fields": [{"name": f.name, "type": avro_schema_of(f.type, f.nullable, f.name,
                                                                     space)}
                             for f in arrow]}
    elif pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        field = arrow.value_field
        schema = {"type": "array", "items": avro_schema_of(field.type, field.nullable, name,
                                                           namespace)}
    elif pa.types.is_map(arrow):
        if not pa.types.is_string(arrow.key_type):
            raise UnsupportedSchemaError(f"Avro maps have string keys, not {arrow.key_type}")
        field = arrow.item_field
        schema = {"type": "map", "values": avro_schema_of(field.type, field.nullable, name,
                                                          namespace)}
    elif pa.types.is_decimal(arrow):
        schema = {"type": "bytes", "logicalType": "decimal", "precision": arrow.precision,
                  "scale": arrow.scale}
    elif pa.types.is_timestamp(arrow):
        schema = {"type": "long", "logicalType": "timestamp-micros" if arrow.tz else
                  "local-timestamp-micros"}
    elif pa.types.is_date32(arrow):
        schema = {"type": "int", "logicalType": "date"}
    else:
        primitive = {pa.bool_(): "boolean", pa.int8(): "int", pa.int16(): "int",
                     pa.int32(): "int", pa.int64(): "long", pa.float32(): "float",
                     pa.float64(): "double", pa.string(): "string", pa.large_string(): "string",
                     pa.binary(): "bytes", pa.large_binary(): "bytes", pa.null(): "null"}
        if arrow not in primitive:
            raise UnsupportedSchemaError(f"no Avro type for Spark's {arrow}")
        schema = primitive[arrow]
        if schema == "null":
            return schema
    return [schema, "null"] if nullable else schema


class AvroEncoder:
    """Values of the Spark type ``schema`` maps to, written with ``schema`` (framed with
    ``schema_id``, or bare when it is None)."""

    def __init__(self, schema: AvroSchema, schema_id: int | None):
        self.schema = schema
        self.schema_id = schema_id
        self.node = expand(schema.parsed, schema.names)
        referenced = {name: definition for dependency in schema.dependencies.values()
                      if isinstance(dependency, AvroSchema)
                      for name, definition in dependency.names.items()}
        self.parsed = fastavro.parse_schema(schema.raw, named_schemas=referenced)
        self.prefix = header(schema_id) if schema_id is not None else b""

    def encode(self, column: pa.Array) -> pa.Array:
        """The payloads of ``column``'s values (a null value: a null payload)."""
        buffer = io.BytesIO()

        def encode_one(value: Any) -> bytes:
            buffer.seek(0)
            buffer.truncate()
            fastavro.schemaless_writer(buffer, self.parsed, _datum(self.node, value, "value"))
            return self.prefix + buffer.getvalue()

        named = "" if self.schema_id is None else f" {self.schema_id}"
        return encode_column(column, encode_one, f"does not fit the Avro schema{named}",
                             (ValueError, TypeError, KeyError, AttributeError, OverflowError))


def _datum(node: Any, value: Any, where: str) -> Any:
    """Spark's form of a value (as Arrow's ``to_pylist`` gives it) in Avro's, for fastavro."""
    if value is None:
        if isinstance(node, list) and any(b["type"] == "null" for b in node):
            return None
        if not isinstance(node, list) and node["type"] == "null":
            return None
        raise ValueError(f"{where} is null, and its Avro type is not nullable")
    if isinstance(node, list):
        kind = union_kind(node)
        others = [b for b in node if b["type"] != "null"]
        if kind == "members":
            chosen = [(i, v) for i, v in enumerate(value.values()) if v is not None]
            if len(chosen) != 1:
                raise ValueError(f"{where}: a union's struct must have exactly one member set")
            index, inner = chosen[0]
            return _tagged(others[index], _datum(others[index], inner, where))
        if kind == "nullable":
            return _datum(others[0], value, where)
        return value
    kind = node["type"]
    if kind == "record":
        if not isinstance(value, dict):
            raise TypeError(f"{where} is not a struct")
        return {f["name"]: _datum(f["type"], value.get(f["name"]), f"{where}.{f['name']}")
                for f in node["fields"]}
    if kind == "array":
        return [_datum(node["items"], item, f"{where}[]") for item in value]
    if kind == "map":
        return {k: _datum(node["values"], v, f"{where}[{k!r}]") for k, v in value}
    return value


def _tagged(branch: Any, datum: Any) -> Any:
    """A union value with its branch named, where fastavro can be told (named types)."""
    if branch["type"] in ("record", "enum", "fixed"):
        return (branch["name"], datum)
    return datum
