"""What every schema type has in common: references, a canonical text, and parsing by type.

A schema arrives as text with a type (``AVRO``, the default, ``JSON`` or ``PROTOBUF``) and
references to schemas registered under other subjects (``{"name", "subject", "version"}``;
Confluent's API reference, "Schema references"). The registry resolves the references to their
parsed schemas (``dependencies``, by reference name) before it parses the text, since the text
may use what they define (an Avro named type, a Protobuf import, a JSON ``$ref``).

Two registrations are of the same schema when type, canonical text and references are equal
(:attr:`ParsedSchema.identity`): that is what gets one global id. ``normalize=true`` compares
normalized forms instead (:meth:`ParsedSchema.normalized`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ..errors import InvalidSchema

SCHEMA_TYPES = ("AVRO", "JSON", "PROTOBUF")
DEFAULT_SCHEMA_TYPE = "AVRO"


@dataclass(frozen=True, order=True)
class Reference:
    """A reference from a schema to the schema ``version`` of ``subject``, known in the text as
    ``name`` (an Avro full name, a Protobuf import path, a JSON ``$ref`` URI)."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


class ParsedSchema(ABC):
    """A schema that parsed: its type, canonical text and references."""

    schema_type: ClassVar[str]

    def __init__(self, references: tuple[Reference, ...],
                 dependencies: Mapping[str, ParsedSchema]):
        self.references = references
        self.dependencies = dict(dependencies)

    @abstractmethod
    def canonical(self) -> str:
        """The text stored and served: Confluent's canonical string for the type."""

    @abstractmethod
    def normalized(self) -> ParsedSchema:
        """The same schema in normal form (``normalize=true``)."""

    def formatted(self, fmt: str | None) -> str:
        """The text in ``format`` (``?format=``); types with other formats override this."""
        return self.canonical()

    @property
    def identity(self) -> tuple[str, str, tuple[Reference, ...]]:
        """What makes two registrations the same schema."""
        return self.schema_type, self.canonical(), self.references


def check_schema_type(schema_type: object) -> str:
    """``schema_type`` when it is one the registry knows; else :class:`InvalidSchema`.

    >>> check_schema_type("PROTOBUF")
    'PROTOBUF'
    >>> check_schema_type("XML")
    Traceback (most recent call last):
    ...
    broker_lite.registry.errors.InvalidSchema: Invalid schema type XML
    """
    if schema_type not in SCHEMA_TYPES:
        raise InvalidSchema(f"Invalid schema type {schema_type}")
    return str(schema_type)
