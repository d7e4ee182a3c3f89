"""Tables of compatibility cases, each a pair of schemas and what each of the seven levels says.

A case is ``(name, schema type, [versions registered first], new schema, {level: verdict})``:
the verdict of every level for registering ``new`` after the versions (True: compatible). The
expected verdicts follow from the rules: BACKWARD asks whether the new schema reads the latest
version's data, FORWARD whether the latest reads the new one's, FULL both; the transitive
levels ask the same of every version, which the three-version cases tell apart.
"""

from __future__ import annotations

import json

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
          "FULL_TRANSITIVE")


def verdicts(backward: bool, forward: bool, backward_transitive: bool | None = None,
             forward_transitive: bool | None = None) -> dict[str, bool]:
    """Every level's verdict from the two directions (against the latest, and against all)."""
    bt = backward if backward_transitive is None else backward_transitive
    ft = forward if forward_transitive is None else forward_transitive
    return {"NONE": True, "BACKWARD": backward, "BACKWARD_TRANSITIVE": bt,
            "FORWARD": forward, "FORWARD_TRANSITIVE": ft, "FULL": backward and forward,
            "FULL_TRANSITIVE": bt and ft}


def record(*fields: dict, name: str = "R", **extra) -> str:
    return json.dumps({"type": "record", "name": name, "fields": list(fields), **extra})


def field(name: str, type_, **extra) -> dict:
    return {"name": name, "type": type_, **extra}


def enum(*symbols: str, **extra) -> dict:
    return {"type": "enum", "name": "E", "symbols": list(symbols), **extra}


AVRO = [
    ("same schema", [record(field("a", "int"))], record(field("a", "int")),
     verdicts(True, True)),
    ("int promoted to long", [record(field("a", "int"))], record(field("a", "long")),
     verdicts(True, False)),
    ("long narrowed to int", [record(field("a", "long"))], record(field("a", "int")),
     verdicts(False, True)),
    ("int to float and double", [record(field("a", "int"))], record(field("a", "double")),
     verdicts(True, False)),
    ("float to double", [record(field("a", "float"))], record(field("a", "double")),
     verdicts(True, False)),
    ("string and bytes read each other", [record(field("a", "string"))],
     record(field("a", "bytes")), verdicts(True, True)),
    ("int to string is a mismatch", [record(field("a", "int"))], record(field("a", "string")),
     verdicts(False, False)),
    ("field added with a default", [record(field("a", "int"))],
     record(field("a", "int"), field("b", "string", default="x")), verdicts(True, True)),
    ("field added without a default", [record(field("a", "int"))],
     record(field("a", "int"), field("b", "string")), verdicts(False, True)),
    ("field removed that had a default", [record(field("a", "int"), field("b", "int", default=0))],
     record(field("a", "int")), verdicts(True, True)),
    ("field removed without a default", [record(field("a", "int"), field("b", "int"))],
     record(field("a", "int")), verdicts(True, False)),
    ("field renamed with an alias", [record(field("a", "int"))],
     record(field("b", "int", aliases=["a"])), verdicts(True, False)),
    ("field renamed without an alias", [record(field("a", "int"))], record(field("b", "int")),
     verdicts(False, False)),
    ("record renamed with an alias", [record(field("a", "int"), name="Old")],
     record(field("a", "int"), name="New", aliases=["Old"]), verdicts(True, False)),
    ("record renamed without an alias", [record(field("a", "int"), name="Old")],
     record(field("a", "int"), name="New"), verdicts(False, False)),
    ("namespace changed (names compare unqualified)",
     [record(field("a", "int"), namespace="one")], record(field("a", "int"), namespace="two"),
     verdicts(True, True)),
    ("enum symbol added", [record(field("e", enum("A", "B")))],
     record(field("e", enum("A", "B", "C"))), verdicts(True, False)),
    ("enum symbol removed", [record(field("e", enum("A", "B", "C")))],
     record(field("e", enum("A", "B"))), verdicts(False, True)),
    ("enum symbol removed, the reader has a default",
     [record(field("e", enum("A", "B", "C")))], record(field("e", enum("A", "B", default="A"))),
     verdicts(True, True)),
    ("fixed resized", [record(field("f", {"type": "fixed", "name": "F", "size": 4}))],
     record(field("f", {"type": "fixed", "name": "F", "size": 8})), verdicts(False, False)),
    ("array items promoted", [record(field("l", {"type": "array", "items": "int"}))],
     record(field("l", {"type": "array", "items": "long"})), verdicts(True, False)),
    ("map values changed", [record(field("m", {"type": "map", "values": "int"}))],
     record(field("m", {"type": "map", "values": "string"})), verdicts(False, False)),
    ("union branch added", [record(field("u", ["null", "int"], default=None))],
     record(field("u", ["null", "int", "string"], default=None)), verdicts(True, False)),
    ("union branch removed", [record(field("u", ["null", "int", "string"], default=None))],
     record(field("u", ["null", "int"], default=None)), verdicts(False, True)),
    ("type made nullable", [record(field("a", "int"))],
     record(field("a", ["null", "int"], default=None)), verdicts(True, False)),
    ("nullable made required", [record(field("a", ["null", "int"], default=None))],
     record(field("a", "int")), verdicts(False, True)),
    ("recursive record, field added with a default",
     [record(field("next", ["null", "R"], default=None))],
     record(field("next", ["null", "R"], default=None), field("v", "int", default=0)),
     verdicts(True, True)),
    ("transitive: a field dropped a version ago comes back with another type",
     [record(field("a", "int"), field("b", "string")), record(field("a", "int"))],
     record(field("a", "int"), field("b", "int", default=0)),
     verdicts(True, True, backward_transitive=False, forward_transitive=False)),
    ("transitive: a field dropped a version ago comes back with its type and a default",
     [record(field("a", "int"), field("b", "string")), record(field("a", "int"))],
     record(field("a", "int"), field("b", "string", default="")), verdicts(True, True)),
]


def jschema(properties: dict, *, required: tuple[str, ...] = (), closed: bool | None = None,
            **extra) -> str:
    body: dict = {"type": "object", "properties": properties}
    if required:
        body["required"] = list(required)
    if closed is not None:
        body["additionalProperties"] = not closed
    body.update(extra)
    return json.dumps(body)


JSON = [
    ("same schema", [jschema({"a": {"type": "string"}})], jschema({"a": {"type": "string"}}),
     verdicts(True, True)),
    ("integer widened to number", [jschema({"a": {"type": "integer"}})],
     jschema({"a": {"type": "number"}}), verdicts(True, False)),
    ("type changed", [jschema({"a": {"type": "string"}})], jschema({"a": {"type": "boolean"}}),
     verdicts(False, False)),
    ("property added to an open content model", [jschema({"a": {"type": "string"}})],
     jschema({"a": {"type": "string"}, "b": {"type": "string"}}), verdicts(False, True)),
    ("property added to a closed content model",
     [jschema({"a": {"type": "string"}}, closed=True)],
     jschema({"a": {"type": "string"}, "b": {"type": "string"}}, closed=True),
     verdicts(True, False)),
    ("property removed from a closed content model",
     [jschema({"a": {"type": "string"}, "b": {"type": "string"}}, closed=True)],
     jschema({"a": {"type": "string"}}, closed=True), verdicts(False, True)),
    ("required property added", [jschema({"a": {"type": "string"}})],
     jschema({"a": {"type": "string"}}, required=("a",)), verdicts(False, True)),
    ("additionalProperties closed", [jschema({"a": {"type": "string"}})],
     jschema({"a": {"type": "string"}}, closed=True), verdicts(False, True)),
    ("enum extended", [jschema({"a": {"enum": ["x", "y"]}})],
     jschema({"a": {"enum": ["x", "y", "z"]}}), verdicts(True, False)),
    ("maximum decreased", [jschema({"a": {"type": "integer", "maximum": 10}})],
     jschema({"a": {"type": "integer", "maximum": 5}}), verdicts(False, True)),
    ("minimum decreased", [jschema({"a": {"type": "integer", "minimum": 5}})],
     jschema({"a": {"type": "integer", "minimum": 0}}), verdicts(True, False)),
    ("maxLength added", [jschema({"a": {"type": "string"}})],
     jschema({"a": {"type": "string", "maxLength": 3}}), verdicts(False, True)),
    ("$ref followed: the definition narrowed",
     [jschema({"a": {"$ref": "#/definitions/n"}}, definitions={"n": {"type": "number"}})],
     jschema({"a": {"$ref": "#/definitions/n"}}, definitions={"n": {"type": "integer"}}),
     verdicts(False, True)),
    ("transitive: a type narrowed two versions ago",
     [jschema({"a": {"type": "number"}}), jschema({"a": {"type": "integer"}})],
     jschema({"a": {"type": "integer", "description": "a count"}}),
     verdicts(True, True, backward_transitive=False, forward_transitive=True)),
]


def proto(body: str, package: str = "shop") -> str:
    return f'syntax = "proto3";\npackage {package};\n{body}\n'


PROTOBUF = [
    ("same schema", [proto("message M { int32 a = 1; }")], proto("message M { int32 a = 1; }"),
     verdicts(True, True)),
    ("field added", [proto("message M { int32 a = 1; }")],
     proto("message M { int32 a = 1; string b = 2; }"), verdicts(True, True)),
    ("field removed", [proto("message M { int32 a = 1; string b = 2; }")],
     proto("message M { int32 a = 1; }"), verdicts(True, True)),
    ("int32 to int64 (one wire type)", [proto("message M { int32 a = 1; }")],
     proto("message M { int64 a = 1; }"), verdicts(True, True)),
    ("int32 to string", [proto("message M { int32 a = 1; }")],
     proto("message M { string a = 1; }"), verdicts(False, False)),
    ("string to bytes", [proto("message M { string a = 1; }")],
     proto("message M { bytes a = 1; }"), verdicts(True, True)),
    ("sint32 to int32 (zigzag differs)", [proto("message M { sint32 a = 1; }")],
     proto("message M { int32 a = 1; }"), verdicts(False, False)),
    ("scalar to message", [proto("message M { int32 a = 1; } message N { int32 x = 1; }")],
     proto("message M { N a = 1; } message N { int32 x = 1; }"), verdicts(False, False)),
    ("message type of a field changed",
     [proto("message M { N a = 1; } message N { int32 x = 1; } message O { int32 x = 1; }")],
     proto("message M { O a = 1; } message N { int32 x = 1; } message O { int32 x = 1; }"),
     verdicts(False, False)),
    ("package changed", [proto("message M { int32 a = 1; }")],
     proto("message M { int32 a = 1; }", package="other"), verdicts(False, False)),
    ("message removed", [proto("message M { int32 a = 1; } message N { int32 b = 1; }")],
     proto("message M { int32 a = 1; }"), verdicts(False, True)),
    ("two fields moved into a new oneof",
     [proto("message M { int32 a = 1; int32 b = 2; }")],
     proto("message M { oneof o { int32 a = 1; int32 b = 2; } }"), verdicts(False, True)),
    ("field moved into an existing oneof",
     [proto("message M { oneof o { int32 a = 1; } int32 b = 2; }")],
     proto("message M { oneof o { int32 a = 1; int32 b = 2; } }"), verdicts(False, True)),
    ("a removed field's number reused after it was reserved",
     [proto("message M { int32 a = 1; reserved 2; }")],
     proto("message M { int32 a = 1; string b = 2; }"), verdicts(False, True)),
    ("transitive: a removed field's number reused with another type",
     [proto("message M { int32 a = 1; string b = 2; }"), proto("message M { int32 a = 1; }")],
     proto("message M { int32 a = 1; int64 b = 2; }"),
     verdicts(True, True, backward_transitive=False, forward_transitive=False)),
]

CASES = {"AVRO": AVRO, "JSON": JSON, "PROTOBUF": PROTOBUF}
