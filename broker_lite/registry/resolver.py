"""Schemas of a registry, parsed, by id or by subject and version, their references resolved.

A registered schema may reference schemas registered under other subjects (an Avro named
type, a Protobuf import, a JSON ``$ref``): each reference names a subject and version, whose
schema is fetched and parsed first, and handed to the parser as a dependency
(:func:`broker_lite.registry.schemas.parse_schema`). Every answer is kept: a schema id names
one schema forever, so an id is fetched once per resolver.
"""

from __future__ import annotations

from typing import Any

from .client import RegistryClient, RegistryRequestError
from .errors import InvalidSchema
from .schemas import ParsedSchema, Reference, parse_schema


class SchemaNotFound(LookupError):
    """A subject, version or schema id the registry does not know."""


class SchemaResolver:
    """Parsed schemas from the registry ``client`` talks to."""

    def __init__(self, client: RegistryClient):
        self.client = client
        self._by_id: dict[int, ParsedSchema] = {}
        self._by_reference: dict[tuple[str, int], ParsedSchema] = {}

    def by_id(self, schema_id: int) -> ParsedSchema:
        """The schema with id ``schema_id``."""
        if schema_id not in self._by_id:
            found = self._get(lambda: self.client.schema(schema_id), f"schema id {schema_id}")
            self._by_id[schema_id] = self._parse(found)
        return self._by_id[schema_id]

    def by_version(self, subject: str, version: int | str = "latest"
                   ) -> tuple[int, int, ParsedSchema]:
        """``(id, version, schema)`` of ``subject``'s ``version`` (``latest`` by default)."""
        found = self._get(lambda: self.client.version(subject, version),
                          f"version {version} of subject {subject!r}")
        schema_id = int(found["id"])
        if schema_id not in self._by_id:
            self._by_id[schema_id] = self._parse(found)
        return schema_id, int(found["version"]), self._by_id[schema_id]

    def versions(self, subject: str) -> list[int]:
        return self._get(lambda: self.client.versions(subject), f"subject {subject!r}")

    def _get(self, call: Any, what: str) -> Any:
        try:
            return call()
        except RegistryRequestError as exc:
            if exc.status == 404:
                raise SchemaNotFound(f"the schema registry at {self.client.url} has no {what} "
                                     f"({exc})") from None
            raise

    def _parse(self, found: dict[str, Any]) -> ParsedSchema:
        references = tuple(Reference(r["name"], r["subject"], int(r["version"]))
                           for r in found.get("references") or ())
        dependencies = {r.name: self._reference(r) for r in references}
        try:
            return parse_schema(found.get("schemaType") or "AVRO", found["schema"], references,
                                dependencies)
        except InvalidSchema as exc:
            raise InvalidSchema(f"the registry's schema {found.get('id', '')} does not parse: "
                                f"{exc}") from None

    def _reference(self, reference: Reference) -> ParsedSchema:
        key = (reference.subject, reference.version)
        if key not in self._by_reference:
            found = self._get(lambda: self.client.version(reference.subject, reference.version),
                              f"version {reference.version} of subject {reference.subject!r}")
            self._by_reference[key] = self._parse(found)
        return self._by_reference[key]
