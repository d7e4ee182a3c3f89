"""confluent-kafka's SchemaRegistryClient and its Avro, JSON Schema and Protobuf serializers,
unchanged, against the registry over real HTTP, its store a real broker: register,
auto-register, use.latest.version, lookup, references, soft and hard deletes, config and mode;
records produced and consumed through the broker; the _schemas records read raw.

Most tests share the session's registry (``kpy_schema_registry``) with subjects of their own;
those that change the global config or mode run a registry of their own."""

import json
import uuid

import httpx
import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from broker_lite.client import KafkaClient, TopicPartition

USER = json.dumps({"type": "record", "name": "User", "namespace": "ex", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]})
USER_V2 = json.dumps({"type": "record", "name": "User", "namespace": "ex", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "long"},
    {"name": "email", "type": ["null", "string"], "default": None}]})


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def client(kpy_schema_registry):
    return SchemaRegistryClient({"url": kpy_schema_registry.url})


def value_context(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


def round_trip(bootstrap: str, topic: str, payloads: list[bytes]) -> list[bytes]:
    """Produce with confluent-kafka's producer, read back with its consumer."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for payload in payloads:
        producer.produce(topic, value=payload)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("g"),
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    found = []
    try:
        for _ in range(60):
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                found.append(message.value())
            if len(found) == len(payloads):
                break
    finally:
        consumer.close()
    return found


def test_avro_auto_register_produce_consume_and_evolve(client, kpy_session_broker):
    topic = unique("users")
    serializer = AvroSerializer(client, USER)
    context = value_context(topic)
    records = [{"name": "ada", "age": 36}, {"name": "alan", "age": 41}]
    payloads = [serializer(r, context) for r in records]
    assert all(p[0] == 0 for p in payloads)  # Confluent's wire format: magic byte 0, the id
    schema_id = int.from_bytes(payloads[0][1:5], "big")
    assert client.get_latest_version(f"{topic}-value").schema_id == schema_id
    read = round_trip(kpy_session_broker.bootstrap_servers, topic, payloads)
    fresh = SchemaRegistryClient({"url": client._rest_client.base_urls[0]})  # no cache
    deserializer = AvroDeserializer(fresh)
    assert [deserializer(p, context) for p in read] == records
    # the next version, and a reader pinned to the latest with use.latest.version
    v2 = client.register_schema(f"{topic}-value", Schema(USER_V2, "AVRO"))
    assert v2 != schema_id
    reader = SchemaRegistryClient({"url": client._rest_client.base_urls[0]})  # not cached
    latest = AvroSerializer(reader, None, conf={"auto.register.schemas": False,
                                                "use.latest.version": True})
    payload = latest({"name": "grace", "age": 85, "email": None}, context)
    assert int.from_bytes(payload[1:5], "big") == v2
    assert AvroDeserializer(fresh)(payload, context)["age"] == 85
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(f"{topic}-value", Schema(USER.replace('"int"', '"string"'),
                                                        "AVRO"))
    assert (refused.value.http_status_code, refused.value.error_code) == (409, 409)


def test_lookup_without_auto_registering(client):
    subject = f"{unique('lookup')}-value"
    registered = client.register_schema(subject, Schema(USER, "AVRO"))
    found = client.lookup_schema(subject, Schema(json.dumps(json.loads(USER), indent=1),
                                                 "AVRO"))
    assert (found.schema_id, found.version, found.subject) == (registered, 1, subject)
    serializer = AvroSerializer(client, USER, conf={"auto.register.schemas": False})
    topic = subject.removesuffix("-value")
    assert serializer({"name": "x", "age": 1}, value_context(topic))[1:5] == \
        registered.to_bytes(4, "big")
    unknown = AvroSerializer(client, USER_V2, conf={"auto.register.schemas": False})
    with pytest.raises(Exception, match="Schema not found"):
        unknown({"name": "x", "age": 1, "email": None}, value_context(topic))
    # the same schema under another subject has the same id
    assert client.register_schema(unique("other"), Schema(USER, "AVRO")) == registered


def test_avro_references(client):
    user_subject, order_subject = unique("user"), f"{unique('order')}-value"
    client.register_schema(user_subject, Schema(USER, "AVRO"))
    order = json.dumps({"type": "record", "name": "Order", "namespace": "ex",
                        "fields": [{"name": "buyer", "type": "ex.User"}]})
    reference = SchemaReference("ex.User", user_subject, 1)
    order_id = client.register_schema(order_subject, Schema(order, "AVRO", [reference]))
    fetched = client.get_schema(order_id)
    assert [(r.name, r.subject, r.version) for r in fetched.references] == \
        [("ex.User", user_subject, 1)]
    assert client.get_referenced_by(user_subject, 1) == [order_id]
    topic = order_subject.removesuffix("-value")
    serializer = AvroSerializer(client, None, conf={"auto.register.schemas": False,
                                                   "use.latest.version": True})
    payload = serializer({"buyer": {"name": "ada", "age": 36}}, value_context(topic))
    fresh = SchemaRegistryClient({"url": client._rest_client.base_urls[0]})
    assert AvroDeserializer(fresh)(payload, value_context(topic)) == \
        {"buyer": {"name": "ada", "age": 36}}


def protobuf_classes(package: str):
    """Message classes of two files, ``<package>/money.proto`` and ``<package>/order.proto``
    importing it and google's timestamp, built at run time as protoc would generate them."""
    from google.protobuf import timestamp_pb2

    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    money = descriptor_pb2.FileDescriptorProto(name=f"{package}/money.proto", package=package,
                                               syntax="proto3")
    amount = money.message_type.add(name="Money")
    amount.field.add(name="units", number=1, type=3, label=1, json_name="units")
    amount.field.add(name="currency", number=2, type=9, label=1, json_name="currency")
    order = descriptor_pb2.FileDescriptorProto(
        name=f"{package}/order.proto", package=package, syntax="proto3",
        dependency=[f"{package}/money.proto", "google/protobuf/timestamp.proto"])
    message = order.message_type.add(name="Order")
    message.field.add(name="id", number=1, type=9, label=1, json_name="id")
    message.field.add(name="total", number=2, type=11, label=1, type_name=f".{package}.Money",
                      json_name="total")
    message.field.add(name="at", number=3, type=11, label=1,
                      type_name=".google.protobuf.Timestamp", json_name="at")
    pool.Add(money)
    pool.Add(order)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Order"))


def test_protobuf_serializer_registers_its_imports_as_references(client, kpy_session_broker):
    package = f"shop{uuid.uuid4().hex[:6]}"
    order_class = protobuf_classes(package)
    topic = unique("orders")
    serializer = ProtobufSerializer(order_class, client, {"use.deprecated.format": False})
    order = order_class(id="o-1")
    order.total.units, order.total.currency = 12, "EUR"
    order.at.seconds = 1700000000
    payload = serializer(order, value_context(topic))
    # the import became a subject of its own, referenced by the order's schema
    assert f"{package}/money.proto" in client.get_subjects()
    latest = client.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "PROTOBUF"
    assert [r.name for r in latest.schema.references] == [f"{package}/money.proto"]
    assert "message Order" in latest.schema.schema_str  # stored as .proto text
    (read,) = round_trip(kpy_session_broker.bootstrap_servers, topic, [payload])
    fresh = SchemaRegistryClient({"url": client._rest_client.base_urls[0]})
    decoded = ProtobufDeserializer(order_class, {"use.deprecated.format": False},
                                   fresh)(read, value_context(topic))
    assert (decoded.id, decoded.total.units, decoded.at.seconds) == ("o-1", 12, 1700000000)


def test_json_schema_serializer_and_references(client, kpy_session_broker):
    topic = unique("points")
    schema = json.dumps({"type": "object", "properties": {"x": {"type": "integer"},
                                                          "y": {"type": "integer"}},
                         "required": ["x", "y"]})
    serializer = JSONSerializer(schema, client)
    payload = serializer({"x": 1, "y": 2}, value_context(topic))
    (read,) = round_trip(kpy_session_broker.bootstrap_servers, topic, [payload])
    fresh = SchemaRegistryClient({"url": client._rest_client.base_urls[0]})
    assert JSONDeserializer(None, schema_registry_client=fresh)(read, value_context(topic)) \
        == {"x": 1, "y": 2}
    point_subject = f"{topic}-value"
    line = json.dumps({"type": "object", "properties": {
        "from": {"$ref": "point.json"}, "to": {"$ref": "point.json"}}})
    line_id = client.register_schema(unique("line"), Schema(
        line, "JSON", [SchemaReference("point.json", point_subject, 1)]))
    assert client.get_schema(line_id).references[0].subject == point_subject
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(unique("bad"), Schema('{"type": 12}', "JSON"))
    assert refused.value.error_code == 42201


def test_soft_and_hard_deletes(client):
    subject = f"{unique('deletes')}-value"
    first = client.register_schema(subject, Schema(USER, "AVRO"))
    client.register_schema(subject, Schema(USER_V2, "AVRO"))
    assert client.delete_version(subject, 2) == 2
    assert client.get_versions(subject) == [1]
    assert client.delete_version(subject, 2, permanent=True) == 2
    assert client.delete_subject(subject) == [1]
    assert subject not in client.get_subjects()
    with pytest.raises(SchemaRegistryError) as gone:
        client.get_latest_version(subject)
    assert gone.value.error_code == 40401
    assert client.get_schema(first).schema_str  # soft-deleted: the id still resolves
    assert client.delete_subject(subject, permanent=True) == [1]
    with pytest.raises(SchemaRegistryError) as hard:
        client.delete_subject(subject, permanent=True)
    assert hard.value.error_code == 40401


def test_config_and_mode(kpy_schema_registries):
    registry = kpy_schema_registries()
    client = SchemaRegistryClient({"url": registry.url})
    assert client.get_compatibility() == "BACKWARD"
    client.set_compatibility(level="FULL")
    assert client.get_compatibility() == "FULL"
    client.register_schema("cfg-value", Schema(USER, "AVRO"))
    client.set_compatibility("cfg-value", "NONE")
    assert client.get_compatibility("cfg-value") == "NONE"
    assert client.register_schema("cfg-value", Schema('"string"', "AVRO")) > 0
    assert client.get_global_mode() == "READWRITE"
    client.update_mode("cfg-value", "READONLY")
    assert client.get_mode("cfg-value") == "READONLY"
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema("cfg-value", Schema('"long"', "AVRO"))
    assert (refused.value.http_status_code, refused.value.error_code) == (422, 42205)
    client.update_global_mode("READONLY")
    with pytest.raises(SchemaRegistryError):
        client.register_schema("elsewhere", Schema('"long"', "AVRO"))
    client.update_global_mode("READWRITE")
    assert client.register_schema("elsewhere", Schema('"long"', "AVRO")) > 0


def test_the_schemas_topic_holds_confluents_records(kpy_schema_registries,
                                                    kpy_bootstrap_servers):
    registry = kpy_schema_registries(properties={"kafkastore.topic": unique("_schemas")})
    client = SchemaRegistryClient({"url": registry.url})
    schema_id = client.register_schema("raw-value", Schema('"string"', "AVRO"))
    client.set_compatibility("raw-value", "FORWARD")
    client.update_mode("raw-value", "READONLY")
    client.update_mode("raw-value", "READWRITE")
    client.delete_subject("raw-value")
    topic = registry.config["kafkastore.topic"]
    with KafkaClient({"bootstrap.servers": kpy_bootstrap_servers}) as kafka:
        records = [(r.key, r.value) for chunk in kafka.read_range(TopicPartition(topic, 0), 0)
                   for r in chunk.records()]
        config = kafka.admin.configs.describe(
            [__import__("broker_lite.client.admin.configs", fromlist=["x"])
             .ConfigResource.topic(topic)])
        assert kafka.partitions(topic) == [0]
    policy = next(e.value for entries in config.values() for e in entries
                  if e.name == "cleanup.policy")
    assert policy == "compact"
    assert records == [
        (b'{"keytype":"NOOP","magic":0}', None),  # the start's end marker, as Confluent's
        (b'{"keytype":"SCHEMA","subject":"raw-value","version":1,"magic":1}',
         b'{"subject":"raw-value","version":1,"id":%d,"schema":"\\"string\\"","deleted":false}'
         % schema_id),
        (b'{"keytype":"CONFIG","subject":"raw-value","magic":0}',
         b'{"compatibilityLevel":"FORWARD"}'),
        (b'{"keytype":"MODE","subject":"raw-value","magic":0}', b'{"mode":"READONLY"}'),
        (b'{"keytype":"MODE","subject":"raw-value","magic":0}', b'{"mode":"READWRITE"}'),
        (b'{"keytype":"SCHEMA","subject":"raw-value","version":1,"magic":1}',
         b'{"subject":"raw-value","version":1,"id":%d,"schema":"\\"string\\"","deleted":true}'
         % schema_id),
    ]


def test_bad_requests_over_http_leave_the_registry_serving(kpy_schema_registry):
    url = kpy_schema_registry.url
    subject = f"{unique('bad')}-value"
    with httpx.Client(base_url=url, timeout=60) as http:
        def post(body: bytes, content_type: str = "application/vnd.schemaregistry.v1+json"):
            return http.post(f"/subjects/{subject}/versions", content=body,
                             headers={"Content-Type": content_type})

        answer = post(b'{"schema": "\\"int\\"",')
        assert (answer.status_code, answer.json()["error_code"]) == (400, 400)
        answer = post(b'{"schema": "\\"int\\""}', "text/html")
        assert (answer.status_code, answer.json()["error_code"]) == (415, 415)
        huge = json.dumps({"type": "record", "name": "Huge", "doc": "x" * 10_000_000,
                           "fields": []})
        answer = post(json.dumps({"schema": huge}).encode())
        assert (answer.status_code, answer.json()["error_code"]) == (500, 50001)
        assert "x" * 100 not in answer.json()["message"]
        answer = http.get(f"/subjects/{subject}/versions")
        assert (answer.status_code, answer.json()["error_code"]) == (404, 40401)  # nothing
        answer = post(b'{"schema": "\\"int\\""}')
        assert answer.status_code == 200 and answer.json()["version"] == 1
        assert answer.headers["Content-Type"] == "application/vnd.schemaregistry.v1+json"
