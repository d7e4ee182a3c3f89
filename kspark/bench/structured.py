"""Benchmark: registry-framed payloads to Arrow columns, and a structured Spark read, in one
run.

    python -m kspark.bench.structured [--records 200000] [--spark-records 2000000] [--repeat 5]

Part one, on one pinned core, in this process: ``--records`` values of a 10-field record of
about 50 bytes (three short strings, a ``timestamp-millis`` long, an int, a nullable string, a
double, a boolean, an array of strings, one more string), each in Confluent's framing, decoded
into one Arrow column

* by kpy's Avro codec, compiled (:mod:`broker_lite.serde._native`) and pure Python;
* the obvious way in Python: ``fastavro.schemaless_reader`` per record, then
  ``pyarrow.Table.from_pylist`` (the peer of the targets);
* the same record as a Protobuf message (kpy's decoder, against ``FromString`` and
  ``json_format.MessageToDict`` per record then ``from_pylist``) and as a JSON Schema document
  (kpy's decoder, Arrow's JSON reader, against ``json.loads`` per record then ``from_pylist``).

Figures are rows per second, medians over ``--repeat`` rounds in which the ways take turns (the
slow ways on a tenth of the records, enough for a steady rate).

Part two: broker_lite as its own process and a schema registry, a topic of ``--spark-records``
such Avro values in 4 partitions; ``spark.read.format("kpy")`` of it with ``value.format=avro``
(the value a struct) against the same read with ``value.format=binary`` (the value bytes, as
Spark's Kafka source gives it), both written to Spark's ``noop`` sink, alternating, medians.

Targets: Avro to Arrow at least 1,000,000 rows/s and at least 10x the fastavro way; the Avro
Spark read at least 0.5x the binary one.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import fastavro
import pyarrow as pa

from broker_lite.registry.schemas import parse_schema
from broker_lite.serde import _native
from broker_lite.serde.avro.reader import AvroReader
from broker_lite.serde.column import decode_column
from broker_lite.serde.framing import header

RECORD = {"type": "record", "name": "PageView", "namespace": "kpy.bench", "fields": [
    {"name": "user", "type": "string"}, {"name": "page", "type": "string"},
    {"name": "country", "type": "string"},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "duration_ms", "type": "int"}, {"name": "referrer", "type": ["null", "string"]},
    {"name": "score", "type": "double"}, {"name": "mobile", "type": "boolean"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "session", "type": "string"}]}
PROTO = """
syntax = "proto3";
package kpy.bench;
message PageView {
  string user = 1; string page = 2; string country = 3; int64 at = 4; int32 duration_ms = 5;
  optional string referrer = 6; double score = 7; bool mobile = 8; repeated string tags = 9;
  string session = 10;
}
"""
JSON_SCHEMA = {"type": "object", "properties": {
    "user": {"type": "string"}, "page": {"type": "string"}, "country": {"type": "string"},
    "at": {"type": "integer"}, "duration_ms": {"type": "integer"},
    "referrer": {"type": ["null", "string"]}, "score": {"type": "number"},
    "mobile": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
    "session": {"type": "string"}}}


def records(n: int, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    countries = ["de", "fr", "us", "jp"]
    return [{"user": f"u{rng.randrange(10_000)}", "page": f"/p/{rng.randrange(100)}",
             "country": countries[i % 4], "at": 1_700_000_000_000 + i,
             "duration_ms": rng.randrange(60_000),
             "referrer": None if i % 3 else "search", "score": rng.random(),
             "mobile": i % 2 == 0, "tags": ["a", "bc"][:i % 3], "session": f"s{i % 977}"}
            for i in range(n)]


def avro_payloads(rows: list[dict], schema_id: int = 1) -> list[bytes]:
    parsed = fastavro.parse_schema(RECORD)
    prefix = header(schema_id)
    out = []
    buffer = io.BytesIO()
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        fastavro.schemaless_writer(buffer, parsed, row)
        out.append(prefix + buffer.getvalue())
    return out


def rate(seconds: list[float], rows: int) -> float:
    return rows / statistics.median(seconds)


def measure(ways: dict[str, tuple[Callable[[], object], int]], repeat: int
            ) -> dict[str, float]:
    """Rows per second of each way ({name: (fn, rows it decodes)}), the ways taking turns."""
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(repeat):
        for name, (fn, _rows) in ways.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: rate(times[name], ways[name][1]) for name in ways}


def codec_figures(n: int, repeat: int) -> dict[str, float]:
    """Part one: rows per second of each way of decoding."""
    from google.protobuf import json_format, message_factory

    from broker_lite.serde.json_schema import JsonReader
    from broker_lite.serde.protobuf import ProtobufReader, message_of

    rows = records(n)
    small = max(n // 10, 1000)
    avro = avro_payloads(rows)
    column = pa.array(avro, pa.binary())
    reader = AvroReader(parse_schema("AVRO", json.dumps(RECORD)))
    decoder = reader.decoder()
    parsed = fastavro.parse_schema(RECORD)

    def kpy_avro(payloads: pa.Array) -> pa.Array:
        return decode_column(payloads, lambda _: decoder, reader.arrow, permissive=False)

    def fastavro_way(payloads: list[bytes]) -> pa.Table:
        return pa.Table.from_pylist([fastavro.schemaless_reader(io.BytesIO(p[5:]), parsed, None)
                                     for p in payloads])

    compiled = _native.compiled()

    def on(codec: object, fn: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            saved = _native.codec
            _native.codec = codec
            try:
                return fn()
            finally:
                _native.codec = saved
        return run

    proto = parse_schema("PROTOBUF", PROTO)
    proto_reader = ProtobufReader(proto)  # type: ignore[arg-type]
    message_class = message_factory.GetMessageClass(message_of(proto, None))  # type: ignore
    proto_payloads = []
    for row in rows:
        message = message_class(**{k: v for k, v in row.items() if v is not None})
        proto_payloads.append(header(2) + b"\x00" + message.SerializeToString())
    proto_column = pa.array(proto_payloads, pa.binary())
    proto_decoder = proto_reader.decoder(proto)  # type: ignore[arg-type]

    json_reader = JsonReader(parse_schema("JSON", json.dumps(JSON_SCHEMA)))  # type: ignore
    json_payloads = [header(3) + json.dumps(row, separators=(",", ":")).encode()
                     for row in rows]
    json_column = pa.array(json_payloads, pa.binary())
    json_decoder = json_reader.decoder()

    def protobuf_way(payloads: list[bytes]) -> pa.Table:
        return pa.Table.from_pylist([json_format.MessageToDict(
            message_class.FromString(p[6:]), preserving_proto_field_name=True)
            for p in payloads])

    ways: dict[str, tuple[Callable[[], object], int]] = {
        "avro_fastavro": (lambda: fastavro_way(avro[:small]), small),
        "avro_python": (on(None, lambda: kpy_avro(column[:small])), small),
        "protobuf_kpy": (lambda: decode_column(proto_column[:small], lambda _: proto_decoder,
                                               proto_reader.arrow, permissive=False), small),
        "protobuf_python": (lambda: protobuf_way(proto_payloads[:small]), small),
        "json_kpy": (lambda: decode_column(json_column, lambda _: json_decoder,
                                           json_reader.arrow, permissive=False), n),
        "json_python": (lambda: pa.Table.from_pylist([json.loads(p[5:])
                                                      for p in json_payloads[:small]]), small),
    }
    if compiled is not None:
        ways["avro_compiled"] = (on(compiled, lambda: kpy_avro(column)), n)
    return measure(ways, repeat)


def spark_figures(records_count: int, repeat: int) -> dict[str, float]:
    """Part two: seconds of a Spark read of a topic of Avro values, struct and binary."""
    import kspark
    from broker_lite.client import KafkaClient
    from broker_lite.records.arrow.encode import arrow_to_batch
    from broker_lite.registry import RegistryConfig, SchemaRegistry
    from broker_lite.registry.client import RegistryClient
    from broker_lite.server.bench import BrokerLiteProcess
    from kspark.bench.source_read import RECORDS_PER_BATCH, RawProducer

    partitions = 4
    times: dict[str, list[float]] = {"avro": [], "binary": []}
    with tempfile.TemporaryDirectory(prefix="kpy-bench-") as tmp:
        broker = BrokerLiteProcess(Path(tmp))
        registry = None
        spark = None
        try:
            registry = SchemaRegistry(RegistryConfig({
                "kafkastore.bootstrap.servers": broker.bootstrap,
                "listeners": "http://127.0.0.1:0"})).start()
            topic = f"bench-avro-{uuid.uuid4().hex[:8]}"
            schema_id = int(RegistryClient({"url": registry.url}).register(
                f"{topic}-value", json.dumps(RECORD))["id"])
            with KafkaClient({"bootstrap.servers": broker.bootstrap}) as client:
                client.admin.create_topics([(topic, partitions, 1, {})])
            template = avro_payloads(records(RECORDS_PER_BATCH), schema_id)
            producer = RawProducer(broker.bootstrap)
            per_partition = records_count // partitions
            started = time.perf_counter()
            for partition in range(partitions):
                for start in range(0, per_partition, RECORDS_PER_BATCH):
                    count = min(RECORDS_PER_BATCH, per_partition - start)
                    producer.send(topic, partition, arrow_to_batch(pa.table({
                        "value": pa.array(template[:count], pa.binary())})))
            producer.close()
            print(f"loaded {per_partition * partitions:,} Avro values into {partitions} "
                  f"partitions in {time.perf_counter() - started:.1f} s")
            spark = kspark.session("kpy-bench-structured",
                                   config={"spark.sql.shuffle.partitions": "4"})
            spark.sparkContext.setLogLevel("ERROR")
            options = {"kafka.bootstrap.servers": broker.bootstrap, "subscribe": topic,
                       "schema.registry.url": registry.url}

            def read(fmt: str) -> None:
                (spark.read.format("kpy").options(**options).option("value.format", fmt)
                 .load().write.format("noop").mode("overwrite").save())

            read("avro")  # warm up: the JVM, the Python workers, their imports
            read("binary")
            for _ in range(repeat):
                for fmt in ("avro", "binary"):
                    start = time.perf_counter()
                    read(fmt)
                    times[fmt].append(time.perf_counter() - start)
        finally:
            if spark is not None:
                spark.stop()
            if registry is not None:
                registry.stop()
            broker.stop()
    return {fmt: statistics.median(seconds) for fmt, seconds in times.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--spark-records", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(_native.describe())
    pinned = hasattr(os, "sched_setaffinity")
    if pinned:
        allowed = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(allowed)})
    figures = codec_figures(args.records, args.repeat)
    if pinned:
        os.sched_setaffinity(0, allowed)
    payload_bytes = statistics.mean(len(p) - 5 for p in avro_payloads(records(1000)))
    print(f"\nConfluent-framed payloads to Arrow, one core, {args.records:,} records "
          f"(Avro data {payload_bytes:.0f} bytes), medians of {args.repeat}:")
    names = {"avro_compiled": "Avro, kpy compiled", "avro_python": "Avro, kpy pure Python",
             "avro_fastavro": "Avro, fastavro.schemaless_reader + Table.from_pylist",
             "protobuf_kpy": "Protobuf, kpy", "protobuf_python":
                 "Protobuf, FromString + MessageToDict + Table.from_pylist",
             "json_kpy": "JSON Schema, kpy (Arrow's JSON reader)",
             "json_python": "JSON Schema, json.loads + Table.from_pylist"}
    for way, label in names.items():
        if way in figures:
            print(f"  {label:<58} {figures[way]:>12,.0f} rows/s")
    base = figures["avro_fastavro"]
    compiled = figures.get("avro_compiled")
    if compiled is not None:
        print(f"  Avro compiled / fastavro way: {compiled / base:.1f}x (target >= 10x); "
              f"{compiled:,.0f} rows/s (target >= 1,000,000)")
    else:
        print("  Avro compiled: not built (no C compiler at install, or KPY_PURE_PYTHON set)")
    print(f"  Protobuf kpy / the Python way: "
          f"{figures['protobuf_kpy'] / figures['protobuf_python']:.1f}x; JSON Schema kpy / the "
          f"Python way: {figures['json_kpy'] / figures['json_python']:.1f}x")
    if args.spark_records:
        seconds = spark_figures(args.spark_records, max(args.repeat // 2, 2))
        records_read = args.spark_records // 4 * 4
        print(f"\nspark.read.format(\"kpy\") of {records_read:,} Avro values, noop sink, "
              f"medians:")
        for fmt in ("avro", "binary"):
            print(f"  value.format={fmt:<7} {seconds[fmt]:8.2f} s  "
                  f"{records_read / seconds[fmt]:>12,.0f} rows/s")
        print(f"  avro / binary: {seconds['binary'] / seconds['avro']:.2f}x (target >= 0.5x)")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
