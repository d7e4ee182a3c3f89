"""Avro schemas: parsed and checked by fastavro, kept as Confluent keeps them.

The canonical text is the schema's JSON written compactly (no whitespace), keys in the order
given, a primitive type without attributes by its bare name (``{"type": "int"}`` is ``"int"``),
as Confluent's ``AvroSchema.canonicalString()`` renders Avro's ``Schema.toString()``.
The normal form (``normalize=true``) names every named type by its full name and sorts keys,
so that two spellings of one schema meet. References are Avro named types defined by other
subjects' schemas (Confluent's "Schema references", Avro): their names are known while this
one is parsed, as if defined before it.

>>> schema = AvroSchema.parse('{"type": "record", "name": "Pair", "namespace": "ex",'
...                           ' "fields": [{"name": "a", "type": "int"}]}', (), {})
>>> schema.canonical()
'{"type":"record","name":"Pair","namespace":"ex","fields":[{"name":"a","type":"int"}]}'
>>> sorted(schema.names)
['ex.Pair']
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fastavro.schema import SchemaParseException, UnknownType, parse_schema

from ..errors import InvalidSchema
from .base import ParsedSchema, Reference


class AvroSchema(ParsedSchema):
    """An Avro schema: ``raw`` (its JSON as given), ``parsed`` (fastavro's form: full names,
    named types after their definition as their full name) and ``names`` (every named type it
    can use, its references' included: full name -> parsed definition)."""

    schema_type = "AVRO"

    def __init__(self, raw: Any, parsed: Any, names: dict[str, Any],
                 references: tuple[Reference, ...], dependencies: Mapping[str, ParsedSchema]):
        super().__init__(references, dependencies)
        self.raw = raw
        self.parsed = parsed
        self.names = names

    @classmethod
    def parse(cls, text: str, references: tuple[Reference, ...],
              dependencies: Mapping[str, ParsedSchema]) -> AvroSchema:
        try:
            raw = json.loads(text)
        except (json.JSONDecodeError, TypeError) as exc:
            raise InvalidSchema(f"Invalid schema {text[:200]!r}: not JSON ({exc})") from None
        names: dict[str, Any] = {}
        for dependency in dependencies.values():
            if isinstance(dependency, AvroSchema):
                names.update(dependency.names)
        try:
            parsed = parse_schema(raw, named_schemas=names, _write_hint=False)
        except (SchemaParseException, UnknownType, ValueError, TypeError, KeyError,
                AttributeError) as exc:
            detail = f"unknown type {exc}" if isinstance(exc, UnknownType) else str(exc)
            raise InvalidSchema(f"Invalid schema {text[:200]!r}: {detail}") from None
        return cls(raw, parsed, names, references, dependencies)

    def canonical(self) -> str:
        return json.dumps(_collapse(self.raw), separators=(",", ":"), ensure_ascii=False)

    def normalized(self) -> AvroSchema:
        return AvroSchema(self.parsed, self.parsed, self.names, self.references,
                          self.dependencies)._sorted()

    def _sorted(self) -> AvroSchema:
        self.raw = json.loads(json.dumps(self.parsed, sort_keys=True))
        return self

    def resolve(self, schema: Any) -> Any:
        """The definition a parsed schema stands for: a named type's by its full name."""
        if isinstance(schema, str) and schema in self.names:
            return self.names[schema]
        return schema


PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def _collapse(schema: Any) -> Any:
    """``schema`` with every attribute-less primitive written as its name, as Avro writes it.

    >>> _collapse({"type": "array", "items": {"type": "long"}})
    {'type': 'array', 'items': 'long'}
    """
    if isinstance(schema, list):
        return [_collapse(branch) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.keys() == {"type"} and schema["type"] in PRIMITIVES:
        return schema["type"]
    collapsed = dict(schema)
    for key in ("type", "items", "values"):
        if key in collapsed and not isinstance(collapsed[key], str):
            collapsed[key] = _collapse(collapsed[key])
    if isinstance(collapsed.get("fields"), list):
        collapsed["fields"] = [{**f, "type": _collapse(f.get("type"))} if isinstance(f, dict)
                               else f for f in collapsed["fields"]]
    return collapsed
