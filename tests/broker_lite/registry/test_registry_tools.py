"""``broker-lite schemas`` and the console tools' ``--value-format`` / ``--key-format``, run as
a user runs them (child processes), against the registry over HTTP; what the console producer
writes, confluent-kafka's deserializers read, and what confluent-kafka's serializers write,
the console consumer prints."""

import json
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.tools.testing import run_tool

from .test_confluent_clients import protobuf_classes

USER = json.dumps({"type": "record", "name": "User", "namespace": "ex", "fields": [
    {"name": "name", "type": "string"},
    {"name": "email", "type": ["null", "string"], "default": None}]})


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def values(bootstrap: str, topic: str) -> list[bytes]:
    with KafkaClient({"bootstrap.servers": bootstrap}) as client:
        return [r.value for chunk in client.read_range(TopicPartition(topic, 0), 0)
                for r in chunk.records()]


def test_the_schemas_tool(kpy_schema_registry, tmp_path):
    url = kpy_schema_registry.url
    subject = f"{unique('tool')}-value"
    schema_file = tmp_path / "user.avsc"
    schema_file.write_text(USER)

    def schemas(*args):
        return run_tool("schemas", "--schema-registry-url", url, *args)

    registered = schemas("--register", "--subject", subject, "--schema-file", schema_file)
    assert registered.returncode == 0, registered.stderr
    schema_id = int(registered.stdout.split()[1])
    assert registered.stdout.strip() == f"id {schema_id} version 1"
    listed = schemas("--list", "--subject-prefix", subject)
    assert listed.stdout == f"{subject}\t1\n"
    shown = json.loads(schemas("--describe", "--subject", subject, "--version", "latest").stdout)
    assert (shown["id"], shown["version"], json.loads(shown["schema"])) == \
        (schema_id, 1, json.loads(USER))
    incompatible = tmp_path / "incompatible.avsc"
    incompatible.write_text(USER.replace('"name": "name", "type": "string"',
                                         '"name": "name", "type": "int"'))
    checked = schemas("--check", "--subject", subject, "--schema-file", incompatible)
    assert checked.returncode == 1
    assert checked.stdout.startswith("incompatible\n") and "TYPE_MISMATCH" in checked.stdout
    assert schemas("--config", "--subject", subject, "--set", "FULL").stdout == "FULL\n"
    assert schemas("--mode", "--subject", subject, "--set", "READONLY").stdout == "READONLY\n"
    refused = schemas("--register", "--subject", subject, "--schema-file", incompatible)
    assert refused.returncode == 1 and "42205" in refused.stderr
    assert schemas("--mode", "--subject", subject, "--set", "READWRITE").returncode == 0
    assert json.loads(schemas("--delete", "--subject", subject).stdout) == [1]
    missing = schemas("--describe", "--subject", subject)
    assert missing.returncode == 1 and "40401" in missing.stderr
    assert json.loads(schemas("--describe", "--id", str(schema_id)).stdout)["schema"] == \
        shown["schema"]  # a soft-deleted version's id still resolves


def test_console_tools_speak_avro_json_schema_and_protobuf(kpy_schema_registry,
                                                           kpy_session_broker, tmp_path):
    bootstrap, url = kpy_session_broker.bootstrap_servers, kpy_schema_registry.url
    registry = SchemaRegistryClient({"url": url})
    schema_file = tmp_path / "user.avsc"
    schema_file.write_text(USER)

    # Avro in, read by confluent-kafka's deserializer; keys in JSON Schema
    topic = unique("avro-console")
    lines = '{"id": 1}|{"name": "ada", "email": {"string": "ada@example.com"}}\n' \
            '{"id": 2}|{"name": "alan", "email": null}\n'
    produced = run_tool("console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
                        "--value-format", "avro", "--key-format", "json-schema",
                        "--property", f"schema.registry.url={url}",
                        "--property", f"value.schema.file={schema_file}",
                        "--property", 'key.schema={"type": "object"}',
                        "--property", "parse.key=true", "--property", "key.separator=|",
                        stdin=lines)
    assert produced.returncode == 0, produced.stderr
    context = SerializationContext(topic, MessageField.VALUE)
    decoded = [AvroDeserializer(registry)(v, context) for v in values(bootstrap, topic)]
    assert decoded == [{"name": "ada", "email": "ada@example.com"},
                       {"name": "alan", "email": None}]
    consumed = run_tool("console-consumer", "--bootstrap-server", bootstrap, "--topic", topic,
                        "--from-beginning", "--max-messages", "2", "--value-format", "avro",
                        "--key-format", "json-schema", "--property", f"schema.registry.url={url}",
                        "--property", "print.key=true")
    assert consumed.returncode == 0, consumed.stderr
    assert [line.split("\t") for line in consumed.stdout.splitlines()] == [
        ['{"id":1}', '{"name": "ada", "email": {"string": "ada@example.com"}}'],
        ['{"id":2}', '{"name": "alan", "email": null}']]

    # confluent-kafka's Avro serializer writes, the console consumer prints
    other = unique("avro-serialized")
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(other, value=AvroSerializer(registry, USER)(
        {"name": "grace", "email": None}, SerializationContext(other, MessageField.VALUE)))
    assert producer.flush(30) == 0
    printed = run_tool("console-consumer", "--bootstrap-server", bootstrap, "--topic", other,
                       "--from-beginning", "--max-messages", "1", "--value-format", "avro",
                       "--property", f"schema.registry.url={url}")
    assert printed.stdout == '{"name": "grace", "email": null}\n'

    # JSON Schema: a line that does not fit is refused, naming its line
    json_topic = unique("json-console")
    schema = '{"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}'
    produced = run_tool("console-producer", "--bootstrap-server", bootstrap, "--topic",
                        json_topic, "--value-format", "json-schema",
                        "--property", f"schema.registry.url={url}",
                        "--property", f"value.schema={schema}", stdin='{"x": 1}\n{"y": 2}\n')
    assert produced.returncode == 1 and "line 2" in produced.stderr
    context = SerializationContext(json_topic, MessageField.VALUE)
    assert [JSONDeserializer(None, schema_registry_client=registry)(v, context)
            for v in values(bootstrap, json_topic)] == [{"x": 1}]

    # Protobuf: the schema registered by confluent-kafka's serializer (with an import),
    # lines written with its latest version, read back by its deserializer
    package = f"shop{uuid.uuid4().hex[:6]}"
    order_class = protobuf_classes(package)
    proto_topic = unique("proto-console")
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    serializer = ProtobufSerializer(order_class, registry, {"use.deprecated.format": False})
    serializer(order_class(id="first"), SerializationContext(proto_topic, MessageField.VALUE))
    produced = run_tool("console-producer", "--bootstrap-server", bootstrap, "--topic",
                        proto_topic, "--value-format", "protobuf",
                        "--property", f"schema.registry.url={url}",
                        stdin='{"id": "o-2", "total": {"units": "5", "currency": "EUR"}}\n')
    assert produced.returncode == 0, produced.stderr
    (payload,) = values(bootstrap, proto_topic)
    decoded = ProtobufDeserializer(order_class, {"use.deprecated.format": False}, registry)(
        payload, SerializationContext(proto_topic, MessageField.VALUE))
    assert (decoded.id, decoded.total.units, decoded.total.currency) == ("o-2", 5, "EUR")
    printed = run_tool("console-consumer", "--bootstrap-server", bootstrap, "--topic",
                       proto_topic, "--from-beginning", "--max-messages", "1",
                       "--value-format", "protobuf", "--property", f"schema.registry.url={url}")
    assert json.loads(printed.stdout) == {"id": "o-2", "total": {"units": "5",
                                                                 "currency": "EUR"}}


def test_a_format_needs_the_registry_url(kpy_session_broker):
    result = run_tool("console-producer", "--bootstrap-server",
                      kpy_session_broker.bootstrap_servers, "--topic", unique("no-url"),
                      "--value-format", "avro", stdin="{}\n")
    assert result.returncode == 1
    assert "schema.registry.url" in result.stderr


@pytest.mark.parametrize("value", [[0], [1, 2], [0, 0, 5]])
def test_protobuf_message_indexes_round_trip(value):
    from broker_lite.tools.schema_codec import read_zigzag_varints, zigzag_varints

    encoded = zigzag_varints(value)
    assert read_zigzag_varints(memoryview(encoded + b"rest"), 0) == (value, len(encoded))
