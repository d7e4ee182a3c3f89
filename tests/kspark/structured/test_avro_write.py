"""The sink writing a struct ``value`` (and ``key``) as Avro in Confluent's framing: read back
by confluent-kafka's AvroDeserializer as equal, the schema derived from the Spark type and
registered (or given, or the subject's latest), exactly once; and a struct that does not fit
the schema refused before anything is written."""

import datetime
import decimal
import json

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.sql import Row

UTC = datetime.UTC

ROWS_DDL = ("id bigint, name string, score double, day date, at timestamp, price decimal(9,2), "
            "tags array<string>, attrs map<string,int>, inner struct<x: int, y: string>")


def rows(n: int) -> list:
    return [Row(id=i, name=f"n{i}", score=i / 4, day=datetime.date(2024, 1, 1 + i),
                at=datetime.datetime(2024, 1, 1, 12, 0, i, 5000),
                price=decimal.Decimal(f"{i}.25"), tags=[f"t{j}" for j in range(i)],
                attrs={"a": i}, inner=Row(x=i, y=None if i % 2 else "y")) for i in range(n)]


def expected_record(row: Row) -> dict:
    """What Confluent's deserializer gives for a row kpy wrote (Spark's timestamps are UTC)."""
    record = row.asDict(recursive=True)
    record["at"] = record["at"].replace(tzinfo=UTC)
    return record


def save(df, options: dict) -> None:
    df.write.format("kpy").mode("append").options(**options).save()


def sink_options(servers, registry_url, topic, **more) -> dict:
    return {"kafka.bootstrap.servers": servers, "topic": topic, "value.format": "avro",
            "schema.registry.url": registry_url, **more}


def test_rows_written_as_avro_read_back_equal_by_confluents_deserializer_and_by_kpy(
        spark, kpy_schema_registry, kpy_session_broker, kpy_topic, kpy_read):
    topic = kpy_topic(partitions=2)
    df = spark.createDataFrame(rows(5), ROWS_DDL)
    save(df.selectExpr("CAST(id AS STRING) AS key", "struct(*) AS value"),
         sink_options(kpy_session_broker.bootstrap_servers, kpy_schema_registry.url, topic))
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    registered = registry.get_latest_version(f"{topic}-value")
    assert json.loads(registered.schema.schema_str)["name"] == "topLevelRecord"
    deserialize = AvroDeserializer(registry)
    context = SerializationContext(topic, MessageField.VALUE)
    got = {int(r["key"]): deserialize(r["value"], context) for r in kpy_read(topic)}
    assert got == {row.id: expected_record(row) for row in rows(5)}
    back = (spark.read.format("kpy")
            .options(**{"kafka.bootstrap.servers": kpy_session_broker.bootstrap_servers,
                        "subscribe": topic, "value.format": "avro",
                        "schema.registry.url": kpy_schema_registry.url}).load())
    assert sorted(back.select("value.*").collect()) == sorted(df.collect())


def test_a_struct_that_does_not_fit_the_subjects_schema_is_refused_and_nothing_is_written(
        spark, kpy_schema_registry, kpy_session_broker, kpy_topic, kpy_read):
    topic = kpy_topic(partitions=1)
    given = json.dumps({"type": "record", "name": "Reading", "fields": [
        {"name": "sensor", "type": "string"}, {"name": "count", "type": "long"}]})
    options = sink_options(kpy_session_broker.bootstrap_servers, kpy_schema_registry.url,
                           topic, **{"value.avro.schema": given})
    wrong = spark.createDataFrame([("a", "many")], "sensor string, count string")
    with pytest.raises(Exception, match=r"column 'value': does not fit the schema: "
                                        r"value\.count is string, the schema has int64"):
        save(wrong.selectExpr("struct(*) AS value"), options)
    missing = spark.createDataFrame([("a",)], "sensor string")
    with pytest.raises(Exception, match=r"column 'value': does not fit the schema: value has "
                                        r"no field 'count'"):
        save(missing.selectExpr("struct(*) AS value"), options)
    # fits by type, but a null in a field that is not nullable: the task fails, the
    # transaction is aborted, nothing is visible
    nulls = spark.createDataFrame([("a", 1), (None, 2)], "sensor string, count long")
    with pytest.raises(Exception, match=r"the value column, row 1 does not fit the Avro schema "
                                        r"\d+: value\.sensor is null, and its Avro type is not "
                                        r"nullable"):
        save(nulls.coalesce(1).selectExpr("struct(*) AS value"), options)
    assert kpy_read(topic) == []
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    assert registry.get_versions(f"{topic}-value") == [1]  # the given schema, registered


def test_use_latest_version_writes_with_the_subjects_latest_schema(
        spark, kpy_schema_registry, kpy_session_broker, kpy_topic, kpy_read):
    topic = kpy_topic(partitions=1)
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    from confluent_kafka.schema_registry import Schema

    latest = {"type": "record", "name": "Reading", "namespace": "kpy", "fields": [
        {"name": "sensor", "type": "string"}, {"name": "count", "type": "long"}]}
    schema_id = registry.register_schema(f"{topic}-value", Schema(json.dumps(latest), "AVRO"))
    df = spark.createDataFrame([("a", 1)], "sensor string, count int")  # int fits long
    save(df.selectExpr("struct(*) AS value"),
         sink_options(kpy_session_broker.bootstrap_servers, kpy_schema_registry.url, topic,
                      **{"use.latest.version": "true", "auto.register.schemas": "false"}))
    (record,) = kpy_read(topic)
    assert record["value"][1:5] == schema_id.to_bytes(4, "big")
    deserialize = AvroDeserializer(registry)
    assert deserialize(record["value"], SerializationContext(topic, MessageField.VALUE)) == \
        {"sensor": "a", "count": 1}
    unregistered = sink_options(kpy_session_broker.bootstrap_servers, kpy_schema_registry.url,
                                topic, **{"auto.register.schemas": "false"})
    with pytest.raises(Exception, match=r"option 'auto\.register\.schemas': false, and the "
                                        r"schema is not registered under subject"):
        save(df.selectExpr("struct(*) AS value"), unregistered)
