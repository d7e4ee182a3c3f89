"""Each format's reader, made from the options and, with a registry, the reader's schema.

========================  ==============================================================
format                    reader
========================  ==============================================================
``avro``                  :class:`broker_lite.serde.avro.reader.AvroReader`
``protobuf``              :class:`broker_lite.serde.protobuf.ProtobufReader`
``json-schema``, ``json`` :class:`broker_lite.serde.json_schema.JsonReader`
========================  ==============================================================
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from broker_lite.registry.schemas import ParsedSchema, parse_schema

from .options import SideFormat


def reader_for(side: SideFormat, schema: ParsedSchema | None, given: str | None) -> Any:
    """The reader of ``side``: of ``schema`` (the registry's), or of the schema ``given`` in
    the options."""
    if side.format == "avro":
        from broker_lite.serde.avro.reader import AvroReader

        return AvroReader(schema if schema is not None else parse_schema("AVRO", given or ""))
    if side.format == "protobuf":
        from broker_lite.serde.protobuf import ProtobufReader, descriptor_schema

        if schema is None:
            schema = descriptor_schema(given or "")
        return ProtobufReader(schema, side.protobuf_message or side.record_name)
    from broker_lite.serde.json_schema import JsonReader

    if side.format == "json":
        from .ddl import arrow_of_ddl

        return JsonReader.of_type(arrow_of_ddl(given or ""))
    if schema is None:
        schema = parse_schema("JSON", given or "")
    return JsonReader(schema)


def schema_of_type(side: SideFormat, arrow: pa.DataType, nullable: bool) -> str:
    """The text of a ``side.format`` schema for values of Spark type ``arrow`` (the sink's,
    when none is given)."""
    if side.format == "avro":
        from broker_lite.serde.avro.encode import avro_schema_of

        return json.dumps(avro_schema_of(arrow, nullable=False))
    if side.format == "protobuf":
        from broker_lite.serde.protobuf import proto_of_type

        return proto_of_type(arrow, side.record_name or "topLevelRecord")
    from broker_lite.serde.json_schema import json_schema_of_type

    return json.dumps(json_schema_of_type(arrow))


def encoder_for(side: SideFormat, schema: ParsedSchema, schema_id: int | None) -> Any:
    """The encoder of ``side``'s values with ``schema`` (framed with ``schema_id``)."""
    if side.format == "avro":
        from broker_lite.serde.avro.encode import AvroEncoder

        return AvroEncoder(schema, schema_id)  # type: ignore[arg-type]
    if side.format == "protobuf":
        from broker_lite.serde.protobuf import ProtobufEncoder

        return ProtobufEncoder(schema, side.protobuf_message or side.record_name, schema_id)
    from broker_lite.serde.json_schema import JsonEncoder

    return JsonEncoder(schema, schema_id)
