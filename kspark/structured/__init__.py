"""Structured keys and values: topics whose records are Avro, Protobuf or JSON (framed by a
schema registry, or bare with a given schema) read as struct columns and written from them.

==============  ================================================================================
module          concept
==============  ================================================================================
``options``     ``key.*``, ``value.*``, ``schema.registry.*``, ``mode`` and the sink's flags
``ddl``         Spark's DDL types (``a int, b array<string>``) parsed into Arrow, without Spark
``formats``     each format's reader (:mod:`broker_lite.serde`), from a schema
``plan``        the driver: reader schemas resolved when a read is planned, writers met
``rows``        the row schema of a structured read
``reading``     an executor: key and value columns decoded, decoders kept per Python worker
``writing``     the sink: writer schemas resolved (registered) on the driver, rows encoded
==============  ================================================================================

The codecs themselves, payload bytes to Arrow and back, are :mod:`broker_lite.serde`, below
Spark.
"""
