"""The seven levels: which versions a new schema is checked against, in which direction (see
the package's docstring)."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidCompatibilityLevel
from ..schemas.avro import AvroSchema
from ..schemas.base import ParsedSchema
from ..schemas.json_schema import JsonSchema
from ..schemas.protobuf import ProtobufSchema
from . import avro, json_schema, protobuf
from .incompatibility import Incompatibility

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
          "FULL_TRANSITIVE")
DEFAULT_LEVEL = "BACKWARD"


def check_level(level: object) -> str:
    """``level`` in upper case when it is one of :data:`LEVELS`; else
    :class:`InvalidCompatibilityLevel`.

    >>> check_level("full_transitive")
    'FULL_TRANSITIVE'
    """
    if not isinstance(level, str) or level.upper() not in LEVELS:
        raise InvalidCompatibilityLevel(level)
    return level.upper()


def can_read(reader: ParsedSchema, writer: ParsedSchema) -> list[Incompatibility]:
    """What keeps a reader of ``reader`` from reading data written with ``writer``."""
    if reader.schema_type != writer.schema_type:
        return [Incompatibility("TYPE_MISMATCH", "/", f"the schema type changed from "
                                f"{writer.schema_type} to {reader.schema_type}")]
    if isinstance(reader, AvroSchema) and isinstance(writer, AvroSchema):
        return avro.can_read(reader, writer)
    if isinstance(reader, JsonSchema) and isinstance(writer, JsonSchema):
        return json_schema.can_read(reader, writer)
    if isinstance(reader, ProtobufSchema) and isinstance(writer, ProtobufSchema):
        return protobuf.can_read(reader, writer)
    raise TypeError(f"no compatibility rules for {type(reader).__name__}")


def check(level: str, new: ParsedSchema, previous: Sequence[ParsedSchema]
          ) -> list[Incompatibility]:
    """What makes ``new`` incompatible at ``level`` with ``previous`` (a subject's live
    versions, oldest first); empty when it is compatible."""
    level = check_level(level)
    if level == "NONE" or not previous:
        return []
    against = previous if level.endswith("_TRANSITIVE") else previous[-1:]
    found: list[Incompatibility] = []
    for old in reversed(against):  # the latest first, as Confluent reports
        if level.startswith(("BACKWARD", "FULL")):
            found.extend(can_read(new, old))
        if level.startswith(("FORWARD", "FULL")):
            found.extend(can_read(old, new))
        if found:
            break
    return found

