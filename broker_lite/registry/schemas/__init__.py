"""Schema types: parsing, canonical and normal forms, one module a type.

==================  ==========================================================================
module              concept
==================  ==========================================================================
``base``            references, the :class:`ParsedSchema` contract, schema type names
``avro``            Avro schemas (fastavro parses them)
``json_schema``     JSON Schemas (jsonschema checks them against their draft's meta-schema)
``protobuf``        Protobuf files: ``.proto`` text (proto-schema-parser) or a serialized
                    ``FileDescriptorProto``, both ways
==================  ==========================================================================

:func:`parse_schema` parses any of them.
"""

from __future__ import annotations

from collections.abc import Mapping

from .base import DEFAULT_SCHEMA_TYPE, SCHEMA_TYPES, ParsedSchema, Reference, check_schema_type


def parse_schema(schema_type: str, text: str, references: tuple[Reference, ...] = (),
                 dependencies: Mapping[str, ParsedSchema] | None = None) -> ParsedSchema:
    """Parse ``text`` as a schema of ``schema_type`` whose references resolve to
    ``dependencies`` (reference name -> parsed schema); :class:`InvalidSchema` when it does not
    parse.

    >>> parse_schema("AVRO", '{"type": "string"}').canonical()
    '"string"'
    """
    schema_type = check_schema_type(schema_type)
    dependencies = dependencies or {}
    if schema_type == "AVRO":
        from .avro import AvroSchema

        return AvroSchema.parse(text, references, dependencies)
    if schema_type == "JSON":
        from .json_schema import JsonSchema

        return JsonSchema.parse(text, references, dependencies)
    from .protobuf import ProtobufSchema

    return ProtobufSchema.parse(text, references, dependencies)


__all__ = ["DEFAULT_SCHEMA_TYPE", "SCHEMA_TYPES", "ParsedSchema", "Reference",
           "check_schema_type", "parse_schema"]
