"""What can go wrong between payload bytes and Arrow columns, one class a cause.

Every error of this package is a :class:`PayloadError`. Decoding errors say what was wrong with
the payload; the caller (a Spark task, a UDF) adds where the record was (topic, partition,
offset) through the codec's ``place`` argument, so the message names the record and the
schema id together.
"""

from __future__ import annotations


class PayloadError(ValueError):
    """A payload that cannot be decoded, or a value that cannot be encoded."""

    #: the row of the column being decoded that failed, where the decoder knows it
    row: int | None = None
    #: whether the message names the record's place already
    placed: bool = False


class NotFramedError(PayloadError):
    """A payload not in Confluent's wire format (no magic byte 0 and schema id)."""


class UnknownSchemaError(PayloadError):
    """A schema id (or subject) the registry does not know."""


class CorruptPayloadError(PayloadError):
    """Payload bytes that do not decode with their writer's schema."""


class IncompatibleSchemaError(PayloadError):
    """A writer's schema that cannot be read with the reader's schema (Avro's resolution
    rules, or Protobuf's and JSON's by field number and name)."""


class UnsupportedSchemaError(PayloadError):
    """A schema Spark cannot represent (a recursive type, a decimal wider than 38 digits),
    refused when a read is planned."""


class EncodeError(PayloadError):
    """A value (a Spark struct column) that does not fit the schema it is written with."""
