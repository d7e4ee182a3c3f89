"""Registry-framed payloads to Arrow columns and back, sans I/O.

Confluent's serializers write a record's key or value as a header (a magic byte and the id of
the writer's schema in a schema registry) followed by the data in the schema's format: Avro,
Protobuf or JSON. This package turns a column of such payloads into an Arrow column of the
reader's type, Spark's mapping of the schema, and Arrow columns into payloads, without a Python
object per record where it is compiled. It reads schemas (the registry's schema types,
:mod:`broker_lite.registry.schemas`) but never a registry: whoever calls it looks writers'
schemas up and hands them in.

==================  ==========================================================================
module              concept
==================  ==========================================================================
``errors``          what can go wrong, one class a cause
``framing``         Confluent's wire format: magic byte, schema id, Protobuf message indexes
``column``          a column of payloads decoded: framing, writers by id, FAILFAST/PERMISSIVE
``avro``            Avro: Spark's type mapping, (writer, reader) programs, their interpreter,
                    the encoder, schemas derived from Spark types
``protobuf``        Protobuf: from_protobuf's type mapping, decoding and encoding by descriptor
``json_schema``     JSON Schema (and plain JSON with a given type): mapping, decoding, encoding
``_native``         the compiled twin of the Avro interpreter (``KPY_PURE_PYTHON=1``: off)
==================  ==========================================================================
"""
