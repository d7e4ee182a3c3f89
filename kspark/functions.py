"""Functions for binary columns that come another way (files, other sources, a ``binary``
read): Avro, Protobuf and JSON Schema payloads to structs and back, with or without a schema
registry, shaped like Databricks' ``from_avro`` with a registry and Spark's ``from_protobuf``.

Each runs as an Arrow-native UDF (:func:`pyspark.sql.functions.arrow_udf`): a batch of
payloads goes through :mod:`broker_lite.serde` (compiled for Avro) straight to an Arrow
column. The schema is resolved on the driver when the function is called (the subject's
latest version, or the one given); a writer's schema the call did not meet is fetched once per
Python worker, never per record.

* ``from_avro(col, jsonFormatSchema=None, options=None, *, subject=None,
  schemaRegistryAddress=None)``: Avro payloads to a struct, framed (a registry) or bare (of
  ``jsonFormatSchema``); ``to_avro(...)``: a struct to Avro payloads, framed with the subject's
  latest schema or with the one given (registered under the subject), or bare;
* ``from_protobuf(col, messageName=None, descFilePath=None, options=None,
  binaryDescriptorSet=None, *, subject=None, schemaRegistryAddress=None)`` and
  ``to_protobuf(...)``: the same for Protobuf messages;
* ``from_json_schema(col, schema=None, options=None, *, subject=None,
  schemaRegistryAddress=None)`` and ``to_json_schema(...)``: the same for JSON Schema.

``options`` are the source's names without the side (``mode``: ``FAILFAST`` or
``PERMISSIVE``; ``schema.registry.basic.auth.user.info``, ``schema.registry.ssl.ca.location``,
...; ``schema.version``, ``schema.id``), so a job moves between a read's options and these
functions unchanged::

    from kspark.functions import from_avro
    df.select(from_avro("value", subject="events-value",
                        schemaRegistryAddress="https://registry:8081",
                        options={"schema.registry.basic.auth.user.info": "etl:..."})
              .alias("event"))
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql.functions import arrow_udf
from pyspark.sql.types import BinaryType

from broker_lite.serde.column import decode_column
from broker_lite.serde.errors import PayloadError
from kspark.options import OptionError
from kspark.structured.options import REGISTRY_PREFIX, StructuredOptions, parse_structured
from kspark.structured.plan import plan_read
from kspark.structured.reading import StructuredReadError, decoder_for
from kspark.structured.writing import SideWrite, side_write

ColumnOrName = Column | str


def _options(fmt: str, schema_option: str | None, schema: str | None,
             options: Mapping[str, str] | None, subject: str | None, address: str | None,
             message: str | None = None) -> StructuredOptions:
    given = {str(k): str(v) for k, v in (options or {}).items()}
    values = {"value.format": fmt}
    if schema is not None and schema_option is not None:
        values[f"value.{schema_option}"] = schema
    if subject is not None:
        values["value.subject"] = subject
    if message is not None:
        values["value.protobuf.message"] = message
    registry = {}
    for name, value in given.items():
        if name.startswith(REGISTRY_PREFIX):
            registry[name[len(REGISTRY_PREFIX):]] = value
        elif name == "mode":
            values["mode"] = value
        else:
            values[f"value.{name}"] = value
    if address is not None:
        registry["url"] = address
    return parse_structured(lambda name: values.get(name), registry)


def _from(col: ColumnOrName, options: StructuredOptions) -> Column:
    plan = plan_read(options, [])
    side = plan.sides["value"]
    assert side is not None
    permissive = options.permissive

    def decode(payloads: pa.Array) -> pa.Array:
        try:
            decoded = decode_column(payloads, decoder_for(side), side.reader.arrow,
                                    permissive=permissive, framed=side.framed,
                                    place=lambda row: f"the payload at row {row} of its batch")
        except PayloadError as exc:
            raise StructuredReadError(f"cannot read {exc}") from None
        return decoded if decoded.type == side.arrow else decoded.cast(side.arrow)

    return arrow_udf(decode, side.spark_type)(col)


def _to(col: ColumnOrName, options: StructuredOptions, write: SideWrite) -> Column:
    from kspark.structured.formats import encoder_for

    encoders: list[Any] = []

    def encode(values: pa.Array) -> pa.Array:
        if not encoders:
            encoders.append(encoder_for(write.side, write.schema, write.schema_id))
        return encoders[0].encode(values)

    return arrow_udf(encode, BinaryType())(col)


def _writer(options: StructuredOptions) -> SideWrite:
    """The schema ``to_*`` writes with: the one given (registered under the subject when a
    registry is named), else the subject's latest version."""
    side = options.value
    if side.given_schema is None:
        if not options.registry.get("url"):
            raise OptionError("schemaRegistryAddress", "give the schema, or a registry and a "
                                                       "subject whose latest version to use")
        options = StructuredOptions(options.key, side, options.registry, options.mode,
                                    auto_register=False, use_latest_version=True)
    reader = plan_read(StructuredOptions(options.key, side, options.registry, "FAILFAST"),
                       []).sides["value"] if side.given_schema is None else None
    arrow = reader.arrow if reader is not None else _given_arrow(side)
    return side_write(side, options, arrow, True, None)


def _given_arrow(side: Any) -> pa.DataType:
    from kspark.structured.formats import reader_for

    return reader_for(side, None, side.given_schema).arrow


def from_avro(data: ColumnOrName, jsonFormatSchema: str | None = None,
              options: Mapping[str, str] | None = None, *, subject: str | None = None,
              schemaRegistryAddress: str | None = None) -> Column:
    """Avro payloads to a struct of the reader's schema: ``jsonFormatSchema`` (bare payloads),
    or the subject's latest version (or ``options["schema.version"]``) of the registry at
    ``schemaRegistryAddress`` (Confluent-framed payloads, each read with its writer's schema)."""
    return _from(data, _options("avro", "avro.schema", jsonFormatSchema, options, subject,
                                schemaRegistryAddress))


def to_avro(data: ColumnOrName, jsonFormatSchema: str | None = None,
            options: Mapping[str, str] | None = None, *, subject: str | None = None,
            schemaRegistryAddress: str | None = None) -> Column:
    """A struct to Avro payloads: with a registry, framed with ``jsonFormatSchema`` (registered
    under ``subject``) or the subject's latest schema; without one, bare."""
    structured = _options("avro", "avro.schema", jsonFormatSchema, options, subject,
                          schemaRegistryAddress)
    return _to(data, structured, _writer(structured))


def _descriptor(descFilePath: str | None, binaryDescriptorSet: bytes | None) -> str | None:
    if binaryDescriptorSet is not None:
        return base64.b64encode(binaryDescriptorSet).decode()
    return descFilePath


def from_protobuf(data: ColumnOrName, messageName: str | None = None,
                  descFilePath: str | None = None, options: Mapping[str, str] | None = None,
                  binaryDescriptorSet: bytes | None = None, *, subject: str | None = None,
                  schemaRegistryAddress: str | None = None) -> Column:
    """Protobuf payloads to a struct of ``messageName`` of a descriptor set (a file, or its
    bytes: bare payloads) or of the subject's latest schema (framed payloads)."""
    return _from(data, _options("protobuf", "protobuf.descriptor",
                                _descriptor(descFilePath, binaryDescriptorSet), options,
                                subject, schemaRegistryAddress, messageName))


def to_protobuf(data: ColumnOrName, messageName: str | None = None,
                descFilePath: str | None = None, options: Mapping[str, str] | None = None,
                binaryDescriptorSet: bytes | None = None, *, subject: str | None = None,
                schemaRegistryAddress: str | None = None) -> Column:
    """A struct to Protobuf payloads of ``messageName``."""
    structured = _options("protobuf", "protobuf.descriptor",
                          _descriptor(descFilePath, binaryDescriptorSet), options, subject,
                          schemaRegistryAddress, messageName)
    return _to(data, structured, _writer(structured))


def from_json_schema(data: ColumnOrName, schema: str | None = None,
                     options: Mapping[str, str] | None = None, *, subject: str | None = None,
                     schemaRegistryAddress: str | None = None) -> Column:
    """JSON Schema payloads to a struct: of ``schema`` (bare documents) or of the subject's
    latest schema (framed)."""
    return _from(data, _options("json-schema", "schema", schema, options, subject,
                                schemaRegistryAddress))


def to_json_schema(data: ColumnOrName, schema: str | None = None,
                   options: Mapping[str, str] | None = None, *, subject: str | None = None,
                   schemaRegistryAddress: str | None = None) -> Column:
    """A struct to JSON Schema payloads."""
    structured = _options("json-schema", "schema", schema, options, subject,
                          schemaRegistryAddress)
    return _to(data, structured, _writer(structured))


__all__ = ["from_avro", "from_json_schema", "from_protobuf", "to_avro", "to_json_schema",
           "to_protobuf"]
