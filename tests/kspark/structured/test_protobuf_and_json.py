"""Protobuf and JSON Schema topics through ``format("kpy")``: records written by
confluent-kafka's ProtobufSerializer and JSONSerializer read as equal rows (scalars, enums,
nested messages, repeated fields, maps, oneofs, well-known types; objects, arrays, maps,
nullable properties), and rows written by kpy read by Confluent's deserializers as equal."""

import datetime
import json

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pool, message_factory, timestamp_pb2

from broker_lite.registry.schemas.protobuf import from_proto_text

PROTO = """
syntax = "proto3";
package kpy.test;
import "google/protobuf/timestamp.proto";

message Order {
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
  message Line { string sku = 1; int32 quantity = 2; }
  int64 id = 1;
  string customer = 2;
  double total = 3;
  bool gift = 4;
  bytes token = 5;
  Status status = 6;
  repeated Line lines = 7;
  map<string, int64> counters = 8;
  google.protobuf.Timestamp at = 9;
  optional string note = 10;
  oneof payment { string card = 11; int64 voucher = 12; }
  uint32 small = 13;
  sint64 delta = 14;
  float ratio = 15;
  Line first = 16;
}
"""


def order_class():
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    proto = from_proto_text(PROTO, {})
    proto.name = "kpy/test/order.proto"
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("kpy.test.Order"))


def orders(cls):
    made = []
    for i in range(4):
        order = cls(id=i, customer=f"c{i}", total=i * 1.5, gift=i % 2 == 1,
                    token=bytes([i]), status=i % 3, small=4_000_000_000 if i == 3 else i,
                    delta=-i, ratio=0.25)
        for j in range(i):
            order.lines.add(sku=f"s{j}", quantity=j)
        order.counters["views"] = i
        order.at.FromDatetime(datetime.datetime(2024, 1, 1, 0, 0, i))
        if i % 2:
            order.note = "ring twice"
            order.card = "visa"
        elif i:
            order.voucher = 100 + i
        if i == 2:
            order.first.sku = "first"
        made.append(order)
    return made


def expected_order(order) -> dict:
    return {
        "id": order.id, "customer": order.customer, "total": order.total, "gift": order.gift,
        "token": order.token, "status": ["NEW", "PAID", "SHIPPED"][order.status],
        "lines": [{"sku": line.sku, "quantity": line.quantity} for line in order.lines],
        "counters": dict(order.counters),
        "at": order.at.ToDatetime(),  # UTC, as Spark's session shows it
        "note": order.note if order.HasField("note") else None,
        "card": order.card if order.HasField("card") else None,
        "voucher": order.voucher if order.HasField("voucher") else None,
        "small": order.small - 2 ** 32 if order.small >= 2 ** 31 else order.small,
        "delta": order.delta, "ratio": order.ratio,
        "first": {"sku": order.first.sku, "quantity": order.first.quantity}
        if order.HasField("first") else None,
    }


def read(spark, servers, topic, fmt, registry_url, **more):
    return (spark.read.format("kpy")
            .options(**{"kafka.bootstrap.servers": servers, "subscribe": topic,
                        "value.format": fmt, "schema.registry.url": registry_url, **more})
            .load())


def test_protobuf_written_by_confluent_reads_as_equal_rows_and_kpy_writes_what_it_reads(
        spark, kpy_schema_registry, kpy_session_broker, kpy_topic, kpy_produce, kpy_read):
    topic, copy = kpy_topic(partitions=1), kpy_topic(partitions=1)
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    cls = order_class()
    serialize = ProtobufSerializer(cls, registry, {"use.deprecated.format": False})
    made = orders(cls)
    kpy_produce(topic, [serialize(o, SerializationContext(topic, MessageField.VALUE))
                        for o in made])
    servers = kpy_session_broker.bootstrap_servers
    df = read(spark, servers, topic, "protobuf", kpy_schema_registry.url)
    assert df.schema["value"].dataType.simpleString().startswith(
        "struct<id:bigint,customer:string,total:double,gift:boolean,token:binary,"
        "status:string,lines:array<struct<sku:string,quantity:int>>,"
        "counters:map<string,bigint>,at:timestamp,note:string,card:string,voucher:bigint,"
        "small:int,delta:bigint,ratio:float,first:struct<sku:string,quantity:int>>")
    got = [r.value.asDict(recursive=True) for r in df.orderBy("offset").collect()]
    assert got == [expected_order(o) for o in made]
    # written back by kpy with the subject's schema, read by Confluent's deserializer
    (df.select("value").write.format("kpy").mode("append")
     .options(**{"kafka.bootstrap.servers": servers, "topic": copy, "value.format": "protobuf",
                 "schema.registry.url": kpy_schema_registry.url,
                 "value.subject": f"{topic}-value", "use.latest.version": "true"}).save())
    deserialize = ProtobufDeserializer(cls, {"use.deprecated.format": False}, registry)
    back = [deserialize(r["value"], SerializationContext(copy, MessageField.VALUE))
            for r in kpy_read(copy)]
    assert sorted(back, key=lambda o: o.id) == made


PERSON = {
    "$schema": "http://json-schema.org/draft-07/schema#", "title": "Person", "type": "object",
    "properties": {
        "name": {"type": "string"}, "age": {"type": "integer"}, "height": {"type": "number"},
        "member": {"type": "boolean"}, "nick": {"type": ["null", "string"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {"$ref": "#/definitions/Address"},
        "scores": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
    "required": ["name", "age"],
    "definitions": {"Address": {"type": "object", "properties": {
        "city": {"type": "string"}, "zip": {"type": "string"}}}},
}


def people():
    return [{"name": "ada", "age": 36, "height": 1.65, "member": True, "nick": None,
             "tags": ["math"], "address": {"city": "London", "zip": "N1"}, "scores": {"x": 1}},
            {"name": "bob", "age": 7, "tags": [], "scores": {}},
            {"name": "cy", "age": 70, "height": 2, "member": False, "nick": "c",
             "address": {"city": "Oslo"}, "scores": {"a": 1, "b": 2}}]


def expected_person(person: dict) -> dict:
    fields = PERSON["properties"]
    row = {name: person.get(name) for name in fields}
    if row["height"] is not None:
        row["height"] = float(row["height"])
    if row["address"] is not None:
        row["address"] = {"city": row["address"].get("city"), "zip": row["address"].get("zip")}
    return row


def without_nulls(value):
    """A struct as kpy writes it in JSON: null properties left out."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    return value


def test_json_schema_written_by_confluent_reads_as_equal_rows_and_kpy_writes_what_it_reads(
        spark, kpy_schema_registry, kpy_session_broker, kpy_topic, kpy_produce, kpy_read):
    topic, copy = kpy_topic(partitions=1), kpy_topic(partitions=1)
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    serialize = JSONSerializer(json.dumps(PERSON), registry)
    kpy_produce(topic, [serialize(p, SerializationContext(topic, MessageField.VALUE))
                        for p in people()])
    servers = kpy_session_broker.bootstrap_servers
    df = read(spark, servers, topic, "json-schema", kpy_schema_registry.url)
    assert df.schema["value"].dataType.simpleString() == (
        "struct<name:string,age:bigint,height:double,member:boolean,nick:string,"
        "tags:array<string>,address:struct<city:string,zip:string>,scores:map<string,bigint>>")
    got = [r.value.asDict(recursive=True) for r in df.orderBy("offset").collect()]
    assert got == [expected_person(p) for p in people()]
    (df.select("value").write.format("kpy").mode("append")
     .options(**{"kafka.bootstrap.servers": servers, "topic": copy,
                 "value.format": "json-schema", "schema.registry.url": kpy_schema_registry.url,
                 "value.subject": f"{topic}-value", "use.latest.version": "true"}).save())
    deserialize = JSONDeserializer(None, schema_registry_client=registry)
    back = [deserialize(r["value"], SerializationContext(copy, MessageField.VALUE))
            for r in kpy_read(copy)]
    assert back == [without_nulls(expected_person(p)) for p in people()]


def test_plain_json_with_a_ddl_type_reads_and_writes_without_a_registry(
        spark, kpy_session_broker, kpy_topic, kpy_produce, kpy_read):
    topic = kpy_topic(partitions=1)
    kpy_produce(topic, [b'{"a": 1, "b": ["x"], "extra": true}', b'{"a": null}', None])
    servers = kpy_session_broker.bootstrap_servers
    df = (spark.read.format("kpy")
          .options(**{"kafka.bootstrap.servers": servers, "subscribe": topic,
                      "value.format": "json", "value.schema": "a bigint, b array<string>"})
          .load())
    assert [r.value and r.value.asDict() for r in df.orderBy("offset").collect()] == [
        {"a": 1, "b": ["x"]}, {"a": None, "b": None}, None]
