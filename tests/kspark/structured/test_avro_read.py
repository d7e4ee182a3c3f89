"""Records written by confluent-kafka's AvroSerializer read by ``format("kpy")`` with
``value.format=avro`` as equal rows: every Avro primitive and logical type, nested records,
arrays, maps, unions and defaults, through a real registry and a real SparkSession; and a
subject of three versions read with the latest, as Avro's resolution rules say."""

import datetime
import decimal
import json
import uuid

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

UTC = datetime.UTC

EVERYTHING = {
    "type": "record", "name": "Everything", "namespace": "kpy.test", "fields": [
        {"name": "flag", "type": "boolean"},
        {"name": "small", "type": "int"},
        {"name": "big", "type": "long"},
        {"name": "ratio", "type": "float"},
        {"name": "exact", "type": "double"},
        {"name": "raw", "type": "bytes"},
        {"name": "text", "type": "string"},
        {"name": "nothing", "type": "null"},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 3}},
        {"name": "colour", "type": {"type": "enum", "name": "Colour",
                                    "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "clock_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "clock_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "local_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9,
                                   "scale": 2}},
        {"name": "wide", "type": {"type": "fixed", "name": "Wide", "size": 16,
                                  "logicalType": "decimal", "precision": 38, "scale": 4}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "scores", "type": {"type": "map", "values": ["null", "double"]}},
        {"name": "maybe", "type": ["null", "string"], "default": None},
        {"name": "either", "type": ["int", "long"]},
        {"name": "choice", "type": ["null", "string", "int",
                                    {"type": "record", "name": "Point", "fields": [
                                        {"name": "x", "type": "int"},
                                        {"name": "y", "type": "int"}]}]},
        {"name": "nested", "type": {"type": "record", "name": "Nested", "fields": [
            {"name": "points", "type": {"type": "array", "items": "Point"}},
            {"name": "by_name", "type": {"type": "map", "values": "Point"}}]}},
        {"name": "with_default", "type": "string", "default": "unset"},
    ]}


def everything(i: int) -> dict:
    return {
        "flag": i % 2 == 0, "small": -(2 ** 31) + i, "big": 2 ** 62 + i, "ratio": 0.5 + i,
        "exact": -1.25e300 / (i + 1), "raw": bytes([i, 0, 255]), "text": f"héllo {i} ✓",
        "nothing": None, "code": b"ab" + bytes([i]), "colour": ["RED", "GREEN", "BLUE"][i % 3],
        "day": datetime.date(1969, 12, 31) + datetime.timedelta(days=i * 400),
        "clock_ms": datetime.time(13, 14, 15, 678000),
        "clock_us": datetime.time(13, 14, 15, 678901),
        "at_ms": datetime.datetime(2024, 2, 29, 23, 59, 59, 123000, tzinfo=UTC),
        "at_us": datetime.datetime(1901, 1, 1, 0, 0, 0, 1 + i, tzinfo=UTC),
        "local_ms": datetime.datetime(2024, 5, 6, 7, 8, 9, 10000),
        "local_us": datetime.datetime(2024, 5, 6, 7, 8, 9, 10011),
        "price": decimal.Decimal(f"-1234567.{i:02d}"),
        "wide": decimal.Decimal(("-" if i % 2 else "") + "9" * 34 + ".1234"),
        "id": str(uuid.UUID(int=i + 1)), "tags": [f"t{j}" for j in range(i % 3)],
        "scores": {"a": 1.5, "b": None} if i % 2 else {},
        "maybe": None if i % 2 else f"m{i}", "either": i,
        "choice": [None, "word", 42, {"x": i, "y": -i}][i % 4],
        "nested": {"points": [{"x": j, "y": j * j} for j in range(i % 3)],
                   "by_name": {"p": {"x": 1, "y": 2}}},
        "with_default": "set",
    }


def expected_row(record: dict) -> dict:
    """The row spark-avro's mapping gives for ``record``."""
    row = dict(record)
    row["colour"] = record["colour"]
    row["clock_ms"] = 13 * 3600_000 + 14 * 60_000 + 15_678
    row["clock_us"] = (13 * 3600 + 14 * 60 + 15) * 1_000_000 + 678901
    row["at_ms"] = record["at_ms"].replace(tzinfo=None)  # Spark's session time zone is UTC
    row["at_us"] = record["at_us"].replace(tzinfo=None)
    choice = record["choice"]
    row["choice"] = None if choice is None else {
        "member0": choice if isinstance(choice, str) else None,
        "member1": choice if isinstance(choice, int) else None,
        "member2": choice if isinstance(choice, dict) else None}
    return row


def registry_options(registry_url: str) -> dict:
    return {"value.format": "avro", "schema.registry.url": registry_url}


def test_every_avro_type_written_by_confluents_serializer_reads_as_equal_rows(
        spark, kpy_schema_registry, kpy_topic, kpy_produce, kpy_session_broker):
    topic = kpy_topic(partitions=2)
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    serialize = AvroSerializer(registry, json.dumps(EVERYTHING))
    context = SerializationContext(topic, MessageField.VALUE)
    records = [everything(i) for i in range(8)]
    kpy_produce(topic, [(str(i).encode(), serialize(r, context))
                        for i, r in enumerate(records)] + [(b"tombstone", None)])
    df = (spark.read.format("kpy")
          .option("kafka.bootstrap.servers", kpy_session_broker.bootstrap_servers)
          .option("subscribe", topic).options(**registry_options(kpy_schema_registry.url))
          .load())
    value_type = df.schema["value"].dataType
    assert value_type.simpleString() == (
        "struct<flag:boolean,small:int,big:bigint,ratio:float,exact:double,raw:binary,"
        "text:string,nothing:void,code:binary,colour:string,day:date,clock_ms:int,"
        "clock_us:bigint,at_ms:timestamp,at_us:timestamp,local_ms:timestamp_ntz,"
        "local_us:timestamp_ntz,price:decimal(9,2),wide:decimal(38,4),id:string,"
        "tags:array<string>,scores:map<string,double>,maybe:string,either:bigint,"
        "choice:struct<member0:string,member1:int,member2:struct<x:int,y:int>>,"
        "nested:struct<points:array<struct<x:int,y:int>>,by_name:map<string,struct<x:int,"
        "y:int>>>,with_default:string>")
    rows = {row["key"]: row["value"] for row in df.select("key", "value").collect()}
    assert rows.pop(b"tombstone") is None
    got = {int(k): v.asDict(recursive=True) for k, v in rows.items()}
    assert got == {i: expected_row(r) for i, r in enumerate(records)}


V1 = {"type": "record", "name": "Reading", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "count", "type": "int"},
    {"name": "unit", "type": "string"}]}
# v2: a field added with a default
V2 = {"type": "record", "name": "Reading", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "count", "type": "int"},
    {"name": "unit", "type": "string", "default": "C"},
    {"name": "site", "type": "string", "default": "unknown"}]}
# v3: a field removed (unit), an int promoted to long (count)
V3 = {"type": "record", "name": "Reading", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "count", "type": "long"},
    {"name": "site", "type": "string", "default": "unknown"}]}


@pytest.fixture
def three_versions(kpy_schema_registry, kpy_topic, kpy_produce):
    """A topic of records of three versions of its subject, and the registry."""
    topic = kpy_topic(partitions=1)
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    context = SerializationContext(topic, MessageField.VALUE)
    values = []
    for version, records in ((V1, [{"sensor": "a", "count": 1, "unit": "K"}]),
                             (V2, [{"sensor": "b", "count": 2, "unit": "F", "site": "lab"}]),
                             (V3, [{"sensor": "c", "count": 2 ** 40, "site": "roof"}])):
        serialize = AvroSerializer(registry, json.dumps(version))
        values += [serialize(r, context) for r in records]
    kpy_produce(topic, values)
    assert registry.get_versions(f"{topic}-value") == [1, 2, 3]
    return topic, values


def test_three_versions_read_with_the_latest_as_avros_resolution_rules_say(
        spark, kpy_schema_registry, kpy_session_broker, three_versions):
    topic, _ = three_versions
    df = (spark.read.format("kpy")
          .option("kafka.bootstrap.servers", kpy_session_broker.bootstrap_servers)
          .option("subscribe", topic).options(**registry_options(kpy_schema_registry.url))
          .load())
    assert df.schema["value"].dataType.simpleString() == \
        "struct<sensor:string,count:bigint,site:string>"
    rows = [r.value.asDict() for r in df.orderBy("offset").collect()]
    assert rows == [
        {"sensor": "a", "count": 1, "site": "unknown"},  # v1: site from v3's default
        {"sensor": "b", "count": 2, "site": "lab"},  # v2: unit dropped
        {"sensor": "c", "count": 2 ** 40, "site": "roof"},
    ]
    # pinned to version 1: v2's and v3's records read with v1's schema (unit's default from
    # the writer is not the reader's: v3 has no unit and v1's has no default, so v3's record
    # cannot be read as v1)
    pinned = (spark.read.format("kpy")
              .option("kafka.bootstrap.servers", kpy_session_broker.bootstrap_servers)
              .option("subscribe", topic).options(**registry_options(kpy_schema_registry.url))
              .option("value.schema.version", "1").option("mode", "PERMISSIVE").load())
    assert [r.value and r.value.asDict() for r in pinned.orderBy("offset").collect()] == [
        {"sensor": "a", "count": 1, "unit": "K"}, {"sensor": "b", "count": 2, "unit": "F"},
        None]


def test_a_streaming_query_keeps_the_reader_schema_it_started_with(
        spark, kpy_schema_registry, kpy_session_broker, kpy_topic, kpy_produce,
        process_all_available):
    topic = kpy_topic(partitions=1)
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    context = SerializationContext(topic, MessageField.VALUE)
    kpy_produce(topic, [AvroSerializer(registry, json.dumps(V1))(
        {"sensor": "a", "count": 1, "unit": "K"}, context)])
    name = f"readings_{uuid.uuid4().hex[:8]}"
    query = (spark.readStream.format("kpy")
             .option("kafka.bootstrap.servers", kpy_session_broker.bootstrap_servers)
             .option("subscribe", topic).option("startingOffsets", "earliest")
             .options(**registry_options(kpy_schema_registry.url)).load()
             .select("value.*").writeStream.format("memory").queryName(name)
             .trigger(processingTime="500 milliseconds").start())
    try:
        process_all_available(query)
        # a new version while the query runs: its records are read with the query's schema
        kpy_produce(topic, [AvroSerializer(registry, json.dumps(V2))(
            {"sensor": "b", "count": 2, "unit": "F", "site": "lab"}, context)])
        process_all_available(query)
        table = spark.table(name)
        assert table.columns == ["sensor", "count", "unit"]
        assert [r.asDict() for r in table.orderBy("sensor").collect()] == [
            {"sensor": "a", "count": 1, "unit": "K"}, {"sensor": "b", "count": 2, "unit": "F"}]
    finally:
        query.stop()
