"""``kspark.functions``: Avro, Protobuf and JSON Schema payloads in a binary column that came
another way (here: a DataFrame of bytes) to structs and back, as Arrow-native UDFs, with a
registry (Confluent's framing) and without (bare payloads of a given schema)."""

import json

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf.descriptor_pb2 import FileDescriptorSet
from pyspark.sql import functions as F

from broker_lite.registry.schemas.protobuf import from_proto_text
from kspark.functions import (
    from_avro,
    from_json_schema,
    from_protobuf,
    to_avro,
    to_json_schema,
    to_protobuf,
)

POINT = json.dumps({"type": "record", "name": "Point", "fields": [
    {"name": "x", "type": "int"}, {"name": "label", "type": ["null", "string"]}]})


def test_from_avro_and_to_avro_with_a_registry_and_without(spark, kpy_schema_registry):
    subject = "functions-points-value"
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    serialize = AvroSerializer(registry, POINT)
    context = SerializationContext("functions-points", MessageField.VALUE)
    payloads = [serialize({"x": i, "label": None if i % 2 else f"p{i}"}, context)
                for i in range(4)]
    df = spark.createDataFrame([(p,) for p in payloads] + [(b"junk",)], "payload binary")
    url = kpy_schema_registry.url
    decoded = df.select(from_avro("payload", subject=subject, schemaRegistryAddress=url,
                                  options={"mode": "PERMISSIVE"}).alias("point"))
    assert [r.point and r.point.asDict() for r in decoded.collect()] == [
        {"x": 0, "label": "p0"}, {"x": 1, "label": None}, {"x": 2, "label": "p2"},
        {"x": 3, "label": None}, None]
    with pytest.raises(Exception, match=r"cannot read the payload at row \d+ of its batch: not in "
                                        r"Confluent's wire format"):
        df.select(from_avro("payload", subject=subject, schemaRegistryAddress=url)).collect()
    points = decoded.where("point IS NOT NULL")
    framed = points.select(to_avro("point", subject=subject, schemaRegistryAddress=url)
                           .alias("payload"))
    assert sorted(bytes(r.payload) for r in framed.collect()) == sorted(payloads)
    bare = points.select(to_avro("point", POINT).alias("payload"))
    back = bare.select(from_avro("payload", POINT).alias("point"))
    assert sorted(r.point.x for r in back.collect()) == [0, 1, 2, 3]


ITEM = 'syntax = "proto3"; package fn; message Item { string sku = 1; repeated int32 sizes = 2; }'


def test_from_protobuf_and_from_json_schema_round_trip_their_to_functions(spark):
    descriptor = FileDescriptorSet(file=[from_proto_text(ITEM, {})]).SerializeToString()
    items = spark.createDataFrame([("a", [1, 2]), ("b", [])], "sku string, sizes array<int>")
    encoded = items.select(to_protobuf(F.struct("*"), "fn.Item",
                                       binaryDescriptorSet=descriptor).alias("payload"))
    decoded = encoded.select(from_protobuf("payload", "fn.Item",
                                           binaryDescriptorSet=descriptor).alias("item"))
    assert sorted((r.item.asDict() for r in decoded.collect()), key=str) == \
        [{"sku": "a", "sizes": [1, 2]}, {"sku": "b", "sizes": []}]
    schema = json.dumps({"type": "object", "properties": {
        "sku": {"type": "string"}, "sizes": {"type": "array", "items": {"type": "integer"}}}})
    as_json = items.select(to_json_schema(F.struct("*"), schema).alias("payload"))
    assert sorted(bytes(r.payload) for r in as_json.collect()) == \
        [b'{"sku":"a","sizes":[1,2]}', b'{"sku":"b","sizes":[]}']
    back = as_json.select(from_json_schema("payload", schema).alias("item"))
    assert sorted((r.item.asDict() for r in back.collect()), key=str) == \
        [{"sku": "a", "sizes": [1, 2]}, {"sku": "b", "sizes": []}]
