"""Structured topics on a secured stack: a SASL_SSL cluster (SCRAM) and a schema registry behind
HTTPS and Basic authentication. An exactly-once Avro write, a batch read, a streaming read with
Trigger.AvailableNow writing Avro exactly once to another topic, and one with a processing-time
trigger; no password in a plan, a progress report or an error."""

import json
import logging
import uuid

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from broker_lite.client import KafkaClient
from broker_lite.registry import RegistryConfig, SchemaRegistry


@pytest.fixture
def secured_stack(kpy_secured_broker, tmp_path):
    """The session's SASL_SSL broker, and a registry of this test's own on it (HTTPS, Basic):
    (kafka options for Spark, registry options for Spark, confluent-kafka's registry
    settings, alice's password)."""
    security = kpy_secured_broker.security
    own = uuid.uuid4().hex[:8]
    registry = SchemaRegistry(RegistryConfig({
        **security.registry_properties(kpy_secured_broker.bootstrap_servers, tmp_path),
        "kafkastore.topic": f"_schemas-{own}", "schema.registry.group.id": f"registry-{own}",
    })).start()
    settings = security.registry_client_settings(registry.url, tmp_path, "alice")
    kafka = {f"kafka.{k}": v for k, v in kpy_secured_broker.client_settings(
        "alice", "SCRAM-SHA-512").items()}
    registry_options = {f"schema.registry.{k}": v for k, v in settings.items()}
    yield kafka, registry_options, settings, security.users["alice"]
    registry.stop()


def test_avro_through_https_basic_auth_and_sasl_ssl_batch_and_streaming_exactly_once(
        spark, kpy_secured_broker, secured_stack, tmp_path, process_all_available):
    kafka, registry_options, settings, password = secured_stack
    assert registry_options["schema.registry.url"].startswith("https://")
    source, sink = (f"secured-avro-{uuid.uuid4().hex[:6]}" for _ in range(2))
    with KafkaClient(kpy_secured_broker.client_settings("alice", "SCRAM-SHA-512")) as client:
        client.admin.create_topics([(source, 2, 1), (sink, 1, 1)])
    avro = {**kafka, **registry_options, "value.format": "avro"}
    rows = spark.createDataFrame([(i, f"s{i}") for i in range(30)], "n bigint, s string")
    (rows.selectExpr("CAST(n AS STRING) AS key", "struct(*) AS value").write.format("kpy")
     .mode("append").options(**avro, topic=source).save())
    batch = spark.read.format("kpy").options(**avro, subscribe=source).load()
    assert sorted(r.value.n for r in batch.collect()) == list(range(30))
    assert password not in batch._jdf.queryExecution().toString()

    logs = []

    class Capture(logging.Handler):
        def emit(self, record):
            logs.append(self.format(record))

    capture = Capture(logging.DEBUG)
    logging.getLogger().addHandler(capture)
    try:
        stream = (spark.readStream.format("kpy").options(**avro, subscribe=source)
                  .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "10")
                  .load())
        query = (stream.selectExpr("key", "struct(value.n * 2 AS doubled, value.s AS s) AS value")
                 .writeStream.format("kpy").options(**avro, topic=sink)
                 .option("checkpointLocation", str(tmp_path / "cp"))
                 .trigger(availableNow=True).start())
        assert query.awaitTermination(240)
        assert query.exception() is None, query.exception()
        progress = json.dumps([p for p in query.recentProgress], default=str)
        timed = (spark.readStream.format("kpy").options(**avro, subscribe=sink)
                 .option("startingOffsets", "earliest").load()
                 .select("value.*").writeStream.format("memory")
                 .queryName(f"doubled_{uuid.uuid4().hex[:6]}")
                 .trigger(processingTime="1 second").start())
        try:
            process_all_available(timed)
            seen = spark.sql(f"SELECT doubled FROM {timed.name}").collect()
        finally:
            timed.stop()
    finally:
        logging.getLogger().removeHandler(capture)
    assert sorted(r.doubled for r in seen) == [2 * i for i in range(30)]
    registry = SchemaRegistryClient(settings)
    deserialize = AvroDeserializer(registry)
    with KafkaClient(kpy_secured_broker.client_settings("alice", "SCRAM-SHA-512")) as client:
        from kspark.testing.topics import read_topic

        written = read_topic(client, sink)
    values = sorted(deserialize(r["value"], SerializationContext(sink, MessageField.VALUE))
                    ["doubled"] for r in written)
    assert values == [2 * i for i in range(30)]  # each exactly once, committed
    for text in (progress, *logs):
        assert password not in text
    wrong = {**avro, "schema.registry.basic.auth.user.info": "alice:not-the-password"}
    with pytest.raises(Exception) as refused:
        spark.read.format("kpy").options(**wrong, subscribe=source).load()
    assert "option 'schema.registry.basic.auth.user.info': the schema registry refused the " \
           "login (401" in str(refused.value)
    assert "not-the-password" not in str(refused.value) and password not in str(refused.value)
