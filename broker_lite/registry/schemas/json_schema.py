"""JSON Schemas: checked by jsonschema against their draft's meta-schema.

The canonical text is the schema's JSON written compactly, keys in the order given (Confluent's
``JsonSchema.canonicalString()``); the normal form sorts the keys. A schema whose ``$schema``
names no draft is checked as Draft 7, Confluent's default. References are other subjects' JSON
Schemas, reachable from ``$ref`` by the reference's name (a URI such as ``address.json``,
Confluent's "Schema references", JSON Schema); :meth:`JsonSchema.registry` resolves them.

>>> schema = JsonSchema.parse('{"type": "object", "properties": {"a": {"type": "string"}}}',
...                           (), {})
>>> schema.canonical()
'{"type":"object","properties":{"a":{"type":"string"}}}'
>>> JsonSchema.parse('{"type": "text"}', (), {})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
broker_lite.registry.errors.InvalidSchema: Invalid schema: 'text' is not valid under any of ...
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema
from jsonschema.validators import validator_for
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from ..errors import InvalidSchema
from .base import ParsedSchema, Reference


class JsonSchema(ParsedSchema):
    """A JSON Schema: ``value`` (the parsed JSON: an object, or ``true``/``false``)."""

    schema_type = "JSON"

    def __init__(self, value: Any, references: tuple[Reference, ...],
                 dependencies: Mapping[str, ParsedSchema]):
        super().__init__(references, dependencies)
        self.value = value

    @classmethod
    def parse(cls, text: str, references: tuple[Reference, ...],
              dependencies: Mapping[str, ParsedSchema]) -> JsonSchema:
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, TypeError) as exc:
            raise InvalidSchema(f"Invalid schema: not JSON ({exc})") from None
        if not isinstance(value, dict | bool):
            raise InvalidSchema("Invalid schema: a JSON Schema is an object or a boolean")
        try:
            # a boolean is a whole schema too (draft 6 on), which the stubs leave out
            validator_for(value, default=jsonschema.Draft7Validator).check_schema(
                value)  # type: ignore[arg-type]
        except jsonschema.SchemaError as exc:
            raise InvalidSchema(f"Invalid schema: {exc.message}") from None
        return cls(value, references, dependencies)

    def canonical(self) -> str:
        return json.dumps(self.value, separators=(",", ":"), ensure_ascii=False)

    def normalized(self) -> JsonSchema:
        return JsonSchema(json.loads(json.dumps(self.value, sort_keys=True)), self.references,
                          self.dependencies)

    def registry(self) -> Registry:
        """The referenced schemas by reference name, for resolving ``$ref`` (theirs too)."""
        resources: list[tuple[str, Resource]] = []
        pending = list(self.dependencies.items())
        seen: set[str] = set()
        while pending:
            name, dependency = pending.pop()
            if name in seen or not isinstance(dependency, JsonSchema):
                continue
            seen.add(name)
            resources.append((name, DRAFT7.create_resource(dependency.value)))
            pending.extend(dependency.dependencies.items())
        return Registry().with_resources(resources)
