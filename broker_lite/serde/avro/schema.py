"""Avro schemas as the codecs use them: every named type written out where it is used, and
the Spark type (as Arrow) each maps to, as spark-avro's ``SchemaConverters.toSqlType`` maps it.

:func:`expand` turns a parsed schema (fastavro's form, with its named types) into a tree of
plain dicts and lists in which a reference to a named type is replaced by its definition. A
type that contains itself (a linked list, a tree) has no such tree, and Spark has no type for
it: it is refused, naming the type (spark-avro: "Found recursive reference in Avro schema").

The mapping (:func:`arrow_type`), Spark type by Spark type, in Arrow's spelling of it:

=====================================  =========================================================
Avro                                   Spark (Arrow)
=====================================  =========================================================
null                                   null (``pa.null()``)
boolean, int, long, float, double      boolean, int, bigint, float, double
bytes, fixed                           binary
string (also ``uuid``), enum           string
``decimal`` (bytes or fixed)           decimal(precision, scale) (``decimal128``), precision up
                                       to 38
``date`` (int)                         date (``date32``)
``time-millis`` (int)                  int; ``time-micros`` (long): bigint
``timestamp-millis``/``-micros``       timestamp (``timestamp[us, tz=UTC]``)
``local-timestamp-millis``/``-micros`` timestamp_ntz (``timestamp[us]``)
record                                 struct (a field nullable when its type is)
array                                  array (contains null when the items may be null)
map                                    map<string, T>
union of null and T                    T, nullable
union of int and long (and null)       bigint; of float and double: double
any other union                        struct<member0, member1, ...>, each member nullable, the
                                       null branch making the struct nullable
=====================================  =========================================================

>>> arrow_type(expand({"type": "array", "items": ["null", "string"]}, {}))
(ListType(list<element: string>), False)
>>> expand({"type": "record", "name": "Node", "fields": [
...     {"name": "next", "type": ["null", "Node"]}]}, {})
Traceback (most recent call last):
...
broker_lite.serde.errors.UnsupportedSchemaError: Found recursive reference in Avro schema, \
which Spark cannot represent: the record Node contains itself (through Node.next)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from ..errors import UnsupportedSchemaError

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = frozenset({"record", "error", "enum", "fixed"})
MAX_DECIMAL_PRECISION = 38
TIMESTAMP_UTC = pa.timestamp("us", tz="UTC")
TIMESTAMP_NTZ = pa.timestamp("us")

#: logical type -> (its underlying Avro type, Arrow type)
LOGICAL = {
    ("int", "date"): pa.date32(),
    ("long", "timestamp-millis"): TIMESTAMP_UTC,
    ("long", "timestamp-micros"): TIMESTAMP_UTC,
    ("long", "local-timestamp-millis"): TIMESTAMP_NTZ,
    ("long", "local-timestamp-micros"): TIMESTAMP_NTZ,
}
PLAIN = {"null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(),
         "float": pa.float32(), "double": pa.float64(), "bytes": pa.binary(),
         "string": pa.string()}


def expand(schema: Any, names: Mapping[str, Any], namespace: str = "") -> Any:
    """``schema`` (parsed, or as JSON) with every named type written out where it is used:
    primitives as ``{"type": name, ...}``, unions as lists. Named types are keyed by full name
    in ``names`` (fastavro's ``named_schemas``, :attr:`AvroSchema.names`)."""
    return _expand(schema, dict(names), namespace, ())


def _full_name(name: str, namespace: str) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _expand(schema: Any, names: dict[str, Any], namespace: str,
            path: tuple[tuple[str, str], ...]) -> Any:
    if isinstance(schema, list):
        return [_expand(branch, names, namespace, path) for branch in schema]
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            return {"type": schema}
        full = schema if schema in names else _full_name(schema, namespace)
        if full not in names:
            raise UnsupportedSchemaError(f"unknown Avro type {schema!r}")
        for i, (name, _) in enumerate(path):
            if name == full:
                through = " -> ".join(f"{n.rpartition('.')[2]}.{f}" for n, f in path[i:])
                raise UnsupportedSchemaError(
                    "Found recursive reference in Avro schema, which Spark cannot represent: "
                    f"the record {full} contains itself (through {through})")
        return _expand(names[full], names, full.rpartition(".")[0], path)
    if not isinstance(schema, dict):
        raise UnsupportedSchemaError(f"not an Avro schema: {schema!r}")
    kind = schema.get("type")
    if isinstance(kind, dict | list) or (isinstance(kind, str) and kind not in PRIMITIVES
                                         and kind not in NAMED and kind not in ("array", "map")):
        return _expand(kind, names, namespace, path)
    if kind in PRIMITIVES:
        return {key: value for key, value in schema.items() if not key.startswith("__")}
    if kind == "array":
        return {"type": "array", "items": _expand(schema["items"], names, namespace, path)}
    if kind == "map":
        return {"type": "map", "values": _expand(schema["values"], names, namespace, path)}
    full = _full_name(schema["name"], schema.get("namespace", namespace))
    space = full.rpartition(".")[0]
    node = {key: value for key, value in schema.items()
            if key not in ("fields", "name", "namespace") and not key.startswith("__")}
    node["name"] = full
    node["aliases"] = [_full_name(a, space) for a in schema.get("aliases", ())]
    names.setdefault(full, schema)
    if kind in ("record", "error"):
        node["type"] = "record"
        node["fields"] = [
            {**{k: v for k, v in f.items() if k != "type"},
             "type": _expand(f["type"], names, space, (*path, (full, f["name"])))}
            for f in schema["fields"]]
    return node


def type_name(node: Any) -> str:
    """How a type is named in messages: ``int``, ``record ex.Pair``, ``union [null, int]``."""
    if isinstance(node, list):
        return "union [" + ", ".join(type_name(b) for b in node) + "]"
    kind = node["type"]
    if kind in NAMED:
        return f"{kind} {node['name']}"
    if kind == "array":
        return f"array<{type_name(node['items'])}>"
    if kind == "map":
        return f"map<{type_name(node['values'])}>"
    logical = node.get("logicalType")
    return f"{kind} ({logical})" if logical else kind


def decimal_of(node: Any) -> tuple[int, int] | None:
    """``(precision, scale)`` of a valid ``decimal`` logical type on bytes or fixed."""
    if node.get("logicalType") != "decimal" or node["type"] not in ("bytes", "fixed"):
        return None
    precision, scale = node.get("precision"), node.get("scale", 0)
    if not isinstance(precision, int) or not isinstance(scale, int) or precision <= 0 or \
            not 0 <= scale <= precision:
        return None  # an invalid logical type is ignored (the Avro specification)
    if node["type"] == "fixed" and precision > _max_digits(node["size"]):
        return None
    return precision, scale


def _max_digits(size: int) -> int:
    """The most decimal digits a two's-complement number of ``size`` bytes holds."""
    return len(str(2 ** (8 * size - 1) - 1)) - 1


def union_kind(branches: list[Any]) -> str:
    """How a union maps to Spark: ``null`` (only null), ``nullable`` (null and one type, or one
    type), ``promoted`` (int and long, or float and double, with or without null) or
    ``members`` (a struct of members)."""
    others = [b for b in branches if b["type"] != "null"]
    if not others:
        return "null"
    if len(others) == 1:
        return "nullable"
    kinds = {b["type"] for b in others}
    if len(others) == 2 and kinds in ({"int", "long"}, {"float", "double"}) and \
            not any(b.get("logicalType") for b in others):
        return "promoted"
    return "members"


def arrow_type(node: Any) -> tuple[pa.DataType, bool]:
    """The Spark type ``node`` maps to, in Arrow, and whether it may be null."""
    if isinstance(node, list):
        kind = union_kind(node)
        has_null = any(b["type"] == "null" for b in node)
        others = [b for b in node if b["type"] != "null"]
        if kind == "null":
            return pa.null(), True
        if kind == "nullable":
            inner, nullable = arrow_type(others[0])
            return inner, nullable or has_null
        if kind == "promoted":
            wide = "long" if {b["type"] for b in others} == {"int", "long"} else "double"
            return PLAIN[wide], has_null
        return pa.struct([pa.field(f"member{i}", arrow_type(b)[0], True)
                          for i, b in enumerate(others)]), has_null
    kind = node["type"]
    if kind == "record":
        fields = []
        for f in node["fields"]:
            inner, nullable = arrow_type(f["type"])
            fields.append(pa.field(f["name"], inner, nullable))
        return pa.struct(fields), False
    if kind == "array":
        inner, nullable = arrow_type(node["items"])
        return pa.list_(pa.field("element", inner, nullable)), False
    if kind == "map":
        inner, nullable = arrow_type(node["values"])
        return pa.map_(pa.field("key", pa.string(), False),
                       pa.field("value", inner, nullable)), False
    if kind == "enum":
        return pa.string(), False
    decimal = decimal_of(node)
    if decimal is not None:
        if decimal[0] > MAX_DECIMAL_PRECISION:
            raise UnsupportedSchemaError(
                f"the Avro type {type_name(node)} has precision {decimal[0]}: Spark's decimals "
                f"hold at most {MAX_DECIMAL_PRECISION} digits")
        return pa.decimal128(*decimal), False
    if kind == "fixed":
        return pa.binary(), False
    logical = LOGICAL.get((kind, node.get("logicalType")))
    if logical is not None:
        return logical, False
    return PLAIN[kind], kind == "null"
