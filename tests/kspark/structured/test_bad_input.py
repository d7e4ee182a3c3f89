"""Bad input to structured reads, through Spark: a registry that cannot be reached (named,
after the retries), an unknown subject, a recursive schema, payloads that are not framed or
are corrupt (FAILFAST names topic, partition, offset and schema id; PERMISSIVE reads null)."""

import json
import socket

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

READING = json.dumps({"type": "record", "name": "Reading", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "count", "type": "int"}]})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_registry_that_cannot_be_reached_is_named_after_the_retries(spark):
    url = f"http://127.0.0.1:{free_port()}"
    df = (spark.read.format("kpy")
          .options(**{"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t",
                      "value.format": "avro", "schema.registry.url": url,
                      "schema.registry.max.retries": "2", "schema.registry.retries.wait.ms": "1"}))
    with pytest.raises(Exception) as raised:
        df.load()
    message = str(raised.value)
    assert f"option 'schema.registry.url': cannot reach the schema registry at {url}: " in message
    assert "(after 3 attempts), while looking up version latest of subject 't-value'" in message


def test_an_unknown_subject_and_a_recursive_schema_are_refused_when_the_read_is_planned(
        spark, kpy_schema_registry):
    options = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "nowhere",
               "value.format": "avro", "schema.registry.url": kpy_schema_registry.url}
    with pytest.raises(Exception, match=r"option 'value\.subject': the schema registry at "
                                        r"http://127\.0\.0\.1:\d+ has no version latest of "
                                        r"subject 'nowhere-value' \(Subject 'nowhere-value' "
                                        r"not found"):
        spark.read.format("kpy").options(**options).load()
    tree = json.dumps({"type": "record", "name": "Tree", "fields": [
        {"name": "children", "type": {"type": "array", "items": "Tree"}}]})
    with pytest.raises(Exception, match=r"option 'value\.avro\.schema': Found recursive "
                                        r"reference in Avro schema, which Spark cannot "
                                        r"represent: the record Tree contains itself"):
        (spark.read.format("kpy")
         .options(**{"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t",
                     "value.format": "avro", "value.avro.schema": tree}).load())


def test_unframed_and_corrupt_payloads_fail_naming_their_place_or_read_null(
        spark, kpy_schema_registry, kpy_session_broker, kpy_topic, kpy_produce):
    topic = kpy_topic(partitions=1)
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    serialize = AvroSerializer(registry, READING)
    good = serialize({"sensor": "a", "count": 1}, SerializationContext(topic, MessageField.VALUE))
    corrupt = good[:5] + b"\x08ab"  # a string of 4 bytes with 2 there
    kpy_produce(topic, [good, b"plain text", good, corrupt])
    schema_id = int.from_bytes(good[1:5], "big")

    def read(mode: str, start: int = 0):
        return (spark.read.format("kpy")
                .options(**{"kafka.bootstrap.servers": kpy_session_broker.bootstrap_servers,
                            "subscribe": topic, "value.format": "avro", "mode": mode,
                            "startingOffsets": json.dumps({topic: {"0": start}}),
                            "schema.registry.url": kpy_schema_registry.url}).load())

    with pytest.raises(Exception) as raised:
        read("FAILFAST").collect()
    assert f"cannot read the value of topic '{topic}' partition 0 offset 1: not in " \
           "Confluent's wire format: the first byte is not the magic byte 0" in str(raised.value)
    assert "mode PERMISSIVE reads such records as null" in str(raised.value)
    with pytest.raises(Exception) as raised:
        read("FAILFAST", start=2).collect()
    assert f"cannot read the value of topic '{topic}' partition 0 offset 3 (schema id " \
           f"{schema_id}): cut short: the bytes or string at byte 1 needs 4 bytes, 2 remain" \
           in str(raised.value)
    rows = read("PERMISSIVE").orderBy("offset").collect()
    assert [r.value and r.value.asDict() for r in rows] == [
        {"sensor": "a", "count": 1}, None, {"sensor": "a", "count": 1}, None]
