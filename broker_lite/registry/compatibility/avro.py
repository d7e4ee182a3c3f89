"""Avro's schema resolution (the Avro specification, "Schema Resolution"), as a checker.

A reader can read a writer's data when the two schemas *match*, recursively:

- the same primitive type, or a promotion: ``int`` to ``long``, ``float``, ``double``;
  ``long`` to ``float``, ``double``; ``float`` to ``double``; ``string`` and ``bytes`` both
  ways;
- records, enums and fixed of the same (unqualified) name, or whose reader lists the writer's
  full name among its ``aliases``; records field by field, a reader field found in the writer
  by its name or one of its aliases, or else having a ``default``; enums whose reader holds
  every writer symbol, unless it has a ``default`` to read the others as; fixed of one size;
- arrays whose items match, maps whose values match;
- unions: every branch of a writer union must match the reader (a union reader: some branch of
  it); a non-union writer must match some branch of a union reader.

The error types and their wording are those of Avro's ``SchemaCompatibility`` (Java), which
Confluent's registry reports: ``NAME_MISMATCH``, ``FIXED_SIZE_MISMATCH``,
``MISSING_ENUM_SYMBOLS``, ``READER_FIELD_MISSING_DEFAULT_VALUE``, ``TYPE_MISMATCH``,
``MISSING_UNION_BRANCH``.

>>> from broker_lite.registry.schemas.avro import AvroSchema
>>> def avro(text): return AvroSchema.parse(text, (), {})
>>> can_read(avro('"long"'), avro('"int"'))
[]
>>> [i.error_type for i in can_read(avro('"int"'), avro('"long"'))]
['TYPE_MISMATCH']
"""

from __future__ import annotations

from typing import Any

from ..schemas.avro import PRIMITIVES, AvroSchema
from .incompatibility import Incompatibility

#: reader type -> the writer types it reads besides its own
PROMOTIONS = {
    "long": {"int"},
    "float": {"int", "long"},
    "double": {"int", "long", "float"},
    "string": {"bytes"},
    "bytes": {"string"},
}
NAMED = ("record", "enum", "fixed", "error")


def can_read(reader: AvroSchema, writer: AvroSchema) -> list[Incompatibility]:
    """Why data written with ``writer`` cannot be read with ``reader`` (empty: it can)."""
    return _Resolver(reader, writer).match(reader.parsed, writer.parsed, "/")


def _kind(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, dict):
        kind = schema["type"]
        return kind if isinstance(kind, str) else _kind(kind)
    return str(schema)


def _short(name: str) -> str:
    return name.rpartition(".")[2]


def _aliases(schema: dict[str, Any]) -> set[str]:
    """A named type's aliases, as full names (an alias without a dot is in its namespace)."""
    namespace = schema["name"].rpartition(".")[0]
    return {a if "." in a or not namespace else f"{namespace}.{a}"
            for a in schema.get("aliases", ())}


def _path(base: str, *parts: object) -> str:
    return base.rstrip("/") + "/" + "/".join(str(p) for p in parts)


class _Resolver:
    def __init__(self, reader: AvroSchema, writer: AvroSchema):
        self.reader = reader
        self.writer = writer
        self.assumed: set[tuple[str, str]] = set()  # named pairs being compared (recursion)

    def match(self, reader: Any, writer: Any, path: str) -> list[Incompatibility]:
        reader, writer = self.reader.resolve(reader), self.writer.resolve(writer)
        reader_kind, writer_kind = _kind(reader), _kind(writer)
        if writer_kind == "union":
            found: list[Incompatibility] = []
            for index, branch in enumerate(writer):
                if reader_kind == "union":
                    if not any(not self.match(r, branch, path) for r in reader):
                        found.append(Incompatibility(
                            "MISSING_UNION_BRANCH", _path(path, index),
                            f"reader union lacking writer type: {_describe(branch).upper()}"))
                else:
                    found.extend(self.match(reader, branch, path))
            return found
        if reader_kind == "union":
            if any(not self.match(branch, writer, path) for branch in reader):
                return []
            return [Incompatibility("MISSING_UNION_BRANCH", path,
                                    f"reader union lacking writer type: "
                                    f"{_describe(writer).upper()}")]
        if reader_kind in PRIMITIVES or writer_kind in PRIMITIVES:
            if reader_kind == writer_kind or writer_kind in PROMOTIONS.get(reader_kind, ()):
                return []
            return [_mismatch(reader_kind, writer_kind, path)]
        if reader_kind != writer_kind and not {reader_kind, writer_kind} <= {"record", "error"}:
            return [_mismatch(reader_kind, writer_kind, path)]
        if reader_kind in NAMED:
            if _short(reader["name"]) != _short(writer["name"]) and \
                    writer["name"] not in _aliases(reader):
                return [Incompatibility("NAME_MISMATCH", _path(path, "name"),
                                        f"expected: {writer['name']}")]
            pair = (reader["name"], writer["name"])
            if pair in self.assumed:
                return []  # a recursive type: assume the pair matches while checking it
            self.assumed.add(pair)
            try:
                if reader_kind == "enum":
                    return _enums(reader, writer, path)
                if reader_kind == "fixed":
                    if reader["size"] != writer["size"]:
                        return [Incompatibility(
                            "FIXED_SIZE_MISMATCH", _path(path, "size"),
                            f"expected: {writer['size']}, found: {reader['size']}")]
                    return []
                return self.records(reader, writer, path)
            finally:
                self.assumed.discard(pair)
        if reader_kind == "array":
            return self.match(reader["items"], writer["items"], _path(path, "items"))
        if reader_kind == "map":
            return self.match(reader["values"], writer["values"], _path(path, "values"))
        return [_mismatch(reader_kind, writer_kind, path)]

    def records(self, reader: dict[str, Any], writer: dict[str, Any],
                path: str) -> list[Incompatibility]:
        written = {field["name"]: field for field in writer["fields"]}
        found: list[Incompatibility] = []
        for index, field in enumerate(reader["fields"]):
            names = [field["name"], *field.get("aliases", ())]
            source = next((written[n] for n in names if n in written), None)
            if source is None:
                if "default" not in field:
                    found.append(Incompatibility(
                        "READER_FIELD_MISSING_DEFAULT_VALUE", _path(path, "fields", index),
                        f"The field '{field['name']}' at path "
                        f"'{_path(path, 'fields', index)}' in the reader's schema has no "
                        f"default value and is missing in the writer's schema"))
            else:
                found.extend(self.match(field["type"], source["type"],
                                        _path(path, "fields", index, "type")))
        return found


def _enums(reader: dict[str, Any], writer: dict[str, Any], path: str) -> list[Incompatibility]:
    missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
    if not missing or reader.get("default") in reader["symbols"]:
        return []
    return [Incompatibility("MISSING_ENUM_SYMBOLS", _path(path, "symbols"),
                            f"The reader's enum {reader['name']} lacks the writer's "
                            f"symbols {', '.join(missing)}")]


def _describe(schema: Any) -> str:
    kind = _kind(schema)
    return schema["name"] if kind in NAMED and isinstance(schema, dict) else kind


def _mismatch(reader_kind: str, writer_kind: str, path: str) -> Incompatibility:
    return Incompatibility("TYPE_MISMATCH", path,
                           f"reader type: {reader_kind.upper()} not compatible with writer "
                           f"type: {writer_kind.upper()}")
