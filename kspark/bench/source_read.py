"""Benchmark: loading a topic into Spark with ``format("kpy")``, against the ceiling of any
Python data source (one that only yields ready-made Arrow batches), against Spark reading the
same rows from Parquet, and against the client people use today (one confluent-kafka consumer
draining the topic in Python), in one run.

    python -m kspark.bench.source_read [--records 10000000] [--partitions 4] [--repeat 3]

broker_lite runs as its own process (embedded ZooKeeper, logs on disk) and is loaded with
``--records`` records of 100-byte values (no keys) spread evenly over ``--partitions``
partitions, as uncompressed v2 batches of 8,000 records. The same rows, in the source's row
schema, are written to a Parquet file. Each way then loads every row:

* kpy: ``spark.read.format("kpy")...load()`` written to Spark's ``noop`` sink (every row is
  produced, nothing is stored);
* ceiling: ``spark.read.format("kpy-ceiling")`` (:mod:`kspark.bench.ceiling_source`), a Python
  data source yielding ready-made Arrow batches of the same schema, row count, partitions and
  batch size, to ``noop``;
* Parquet: ``spark.read.parquet(...)`` to the ``noop`` sink;
* confluent-kafka: one consumer assigned every partition from the beginning, counting records
  until it has them all;
* kpy streaming: ``spark.readStream.format("kpy")`` with Trigger.AvailableNow to ``noop``, the
  wall time from ``start()`` to the end of the query;
* ceiling streaming: the ceiling source read the same way, which is what Spark's streaming
  query costs any Python source: its streaming / batch ratio is the most a source can reach.

Spark runs ``local[*]`` on this machine. Figures are medians over ``--repeat`` rounds, the ways
alternating within each round; peak memory is the largest resident set (VmHWM) of Spark's Python
workers after the kpy reads; the CPU seconds each way took are printed by process (Spark's JVM,
its Python processes, the broker), which on a machine whose cores a read fills is what sets the
ratios. Where the streaming read's time goes is printed from its queries'
progress (Spark's ``durationMs``: planning, ``latestOffset``, the batch itself, the offset and
commit logs) and the time before the first trigger and after the last, beside the ceiling's.
Targets: kpy >= 0.9x the ceiling, >= 0.85x Parquet and >= 1.5x confluent-kafka; the streaming
read >= 0.8x the batch read and >= 0.9x the ceiling's streaming read. The CPU seconds of Spark's
Python workers are also printed per 10M records, kpy's beside the ceiling's.
"""

import argparse
import json
import os
import socket
import statistics
import struct
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from broker_lite.client import KafkaClient
from broker_lite.protocol import ApiKey, encode_request, parse_response
from broker_lite.records import _native
from broker_lite.records.arrow.encode import arrow_to_batch
from broker_lite.records.arrow.schema import RECORD_SCHEMA
from broker_lite.server.bench import BrokerLiteProcess, process_stat
from kspark.bench.ceiling_source import VALUE_BYTES, CeilingDataSource, values
from kspark.source.connect import READ_DEFAULTS

RECORDS_PER_BATCH = 8_000  # about 0.9 MB: under message.max.bytes (1 MiB)
BASE_TIMESTAMP_MS = 1_700_000_000_000


class RawProducer:
    """Produce requests of pre-built batches over one connection (acks=1)."""

    def __init__(self, bootstrap: str):
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        self.correlation = 0

    def send(self, topic: str, partition: int, batch: bytes) -> None:
        self.correlation += 1
        self.sock.sendall(encode_request(ApiKey.PRODUCE, 9, self.correlation, "kpy-bench", {
            "transactional_id": None, "acks": 1, "timeout_ms": 30_000,
            "topic_data": [{"name": topic, "partition_data": [
                {"index": partition, "records": batch}]}]}))
        (size,) = struct.unpack(">i", self._read(4))
        _, response = parse_response(ApiKey.PRODUCE, 9, self._read(size))
        error = response["responses"][0]["partition_responses"][0]["error_code"]
        if error:
            raise RuntimeError(f"produce to {topic}-{partition} failed with error {error}")

    def _read(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            data += chunk
        return bytes(data)

    def close(self) -> None:
        self.sock.close()


def load(bootstrap: str, topic: str, records: int, partitions: int, parquet: Path) -> int:
    """The same rows into the topic and into a Parquet file of the source's row schema; the
    size in bytes of a full record batch."""
    producer = RawProducer(bootstrap)
    writer = pq.ParquetWriter(parquet, RECORD_SCHEMA)
    per_partition = records // partitions
    batch_bytes = 0
    try:
        for partition in range(partitions):
            for start in range(0, per_partition, RECORDS_PER_BATCH):
                n = min(RECORDS_PER_BATCH, per_partition - start)
                value = values(n, seed=partition * 1_000_003 + start)
                timestamps = np.arange(start, start + n, dtype=np.int64) + BASE_TIMESTAMP_MS
                table = pa.table({"key": pa.nulls(n, pa.binary()), "value": value,
                                  "timestamp": pa.array(timestamps)})
                batch = arrow_to_batch(table)
                batch_bytes = max(batch_bytes, len(batch))
                producer.send(topic, partition, batch)
                writer.write_batch(pa.record_batch([
                    pa.nulls(n, pa.binary()), value, pa.array([topic] * n, pa.string()),
                    pa.array(np.full(n, partition, np.int32)),
                    pa.array(np.arange(start, start + n, dtype=np.int64)),
                    pa.array(timestamps * 1000, RECORD_SCHEMA.field("timestamp").type),
                    pa.array(np.zeros(n, np.int32))], schema=RECORD_SCHEMA))
    finally:
        producer.close()
        writer.close()
    return batch_bytes


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


class CpuMeter:
    """CPU seconds used by Spark's JVM, by the Python processes it starts (workers, the
    streaming source's process; those that ended are counted in their parents' children
    times) and by the broker, from /proc."""

    def __init__(self, jvm_pid: int, broker: BrokerLiteProcess):
        self.jvm_pid, self.broker = jvm_pid, broker

    def read(self) -> dict[str, float]:
        ticks = os.sysconf("SC_CLK_TCK")
        stats, children = {}, {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                fields = process_stat(int(pid))
            except OSError:
                continue  # ended meanwhile
            stats[int(pid)] = [int(f) for f in fields[11:15]]  # utime stime cutime cstime
            children.setdefault(int(fields[1]), []).append(int(pid))
        jvm = stats.get(self.jvm_pid, [0, 0, 0, 0])
        python = (jvm[2] + jvm[3]) / ticks  # Python processes the JVM has waited for
        todo = list(children.get(self.jvm_pid, ()))
        while todo:
            pid = todo.pop()
            python += sum(stats[pid]) / ticks
            todo.extend(children.get(pid, ()))
        return {"JVM": (jvm[0] + jvm[1]) / ticks, "Python": python,
                "broker": self.broker.cpu_seconds()}

    def measure(self, action) -> tuple[float, dict[str, float]]:
        """The wall seconds of ``action()`` and the CPU seconds it took, by process."""
        before = self.read()
        seconds = timed(action)
        after = self.read()
        return seconds, {what: after[what] - before[what] for what in after}


def kpy_batch(spark, bootstrap: str, topic: str) -> None:
    (spark.read.format("kpy").option("kafka.bootstrap.servers", bootstrap)
     .option("subscribe", topic).load().write.format("noop").mode("overwrite").save())


def ceiling_read(spark, records: int, partitions: int, rows_per_batch: int) -> None:
    (spark.read.format(CeilingDataSource.name()).option("records", str(records))
     .option("partitions", str(partitions)).option("rowsPerBatch", str(rows_per_batch)).load()
     .write.format("noop").mode("overwrite").save())


def rows_per_fetch(batch_bytes: int) -> int:
    """The rows one fetch of the kpy source brings: the whole batches that fit in its
    ``max.partition.fetch.bytes``."""
    limit = int(READ_DEFAULTS["max.partition.fetch.bytes"])
    return RECORDS_PER_BATCH * max(1, limit // batch_bytes)


@dataclass
class StreamRun:
    """One streaming read: wall time from ``start()`` to its end, and its progress."""

    started: float  # epoch seconds
    ended: float
    progress: list[dict]

    @property
    def seconds(self) -> float:
        return self.ended - self.started

    def phases(self) -> dict[str, float]:
        """Seconds per phase: before the first trigger, Spark's ``durationMs`` summed over the
        triggers (what ``triggerExecution`` holds beyond the others is ``other``), after the
        last trigger."""
        phases: dict[str, float] = {}
        for progress in self.progress:
            durations = progress["durationMs"]
            for name, ms in durations.items():
                if name != "triggerExecution":
                    phases[name] = phases.get(name, 0.0) + ms / 1000
            listed = sum(ms for name, ms in durations.items() if name != "triggerExecution")
            phases["other"] = phases.get("other", 0.0) + max(
                0, durations.get("triggerExecution", 0) - listed) / 1000
        if self.progress:
            first, last = self.progress[0], self.progress[-1]
            last_end = _epoch(last["timestamp"]) + last["durationMs"]["triggerExecution"] / 1000
            phases = {"before the first trigger": _epoch(first["timestamp"]) - self.started,
                      **phases, "after the last trigger": self.ended - last_end}
        return phases


def _epoch(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def kpy_stream(spark, bootstrap: str, topic: str, checkpoint: Path) -> StreamRun:
    return _available_now(spark.readStream.format("kpy").option("kafka.bootstrap.servers",
                                                                bootstrap)
                          .option("subscribe", topic).option("startingOffsets", "earliest"),
                          checkpoint)


def ceiling_stream(spark, records: int, partitions: int, rows_per_batch: int,
                   checkpoint: Path) -> StreamRun:
    return _available_now(spark.readStream.format(CeilingDataSource.name())
                          .option("records", str(records)).option("partitions", str(partitions))
                          .option("rowsPerBatch", str(rows_per_batch)), checkpoint)


def _available_now(reader, checkpoint: Path) -> StreamRun:
    """The stream of ``reader`` into Spark's ``noop`` sink with Trigger.AvailableNow, timed from
    ``start()`` to the end of the query."""
    started = time.time()
    query = (reader.load().writeStream.format("noop")
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination()
    ended = time.time()
    if query.exception() is not None:
        raise RuntimeError(f"the streaming read failed: {query.exception()}")
    return StreamRun(started, ended, [json.loads(p.json) for p in query.recentProgress])


def parquet_read(spark, path: Path) -> None:
    spark.read.parquet(str(path)).write.format("noop").mode("overwrite").save()


def confluent_drain(settings: dict, topic: str, partitions: int, records: int) -> None:
    """One confluent-kafka consumer (``settings``: bootstrap servers, security) reads every
    partition of ``topic`` from the beginning until it has ``records`` records."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({**settings, "group.id": f"bench-{uuid.uuid4()}",
                         "enable.auto.commit": False, "fetch.queue.backoff.ms": 5,
                         "log_level": 3})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    received, deadline = 0, time.monotonic() + 900
    try:
        while received < records and time.monotonic() < deadline:
            for message in consumer.consume(min(10_000, records - received), 1.0):
                if message.error() is None:
                    received += 1
    finally:
        consumer.close()
    if received < records:
        raise RuntimeError(f"confluent-kafka consumed {received} of {records} records")


def python_worker_peak_rss_mb() -> float:
    """The largest peak resident set among Spark's Python worker processes."""
    peak = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"pyspark.daemon" not in cmdline and b"pyspark.worker" not in cmdline:
                continue
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            continue
    return peak / 1024


WAYS = {
    "kpy": "kpy batch read (spark.read.format('kpy'))",
    "ceiling": "ceiling: a Python source of ready Arrow batches",
    "parquet": "Spark reading Parquet",
    "confluent": "confluent-kafka consumer, one Python process",
    "kpy_stream": "kpy streaming read, AvailableNow, noop sink",
    "ceiling_stream": "ceiling streaming read, AvailableNow, noop sink",
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    records = args.records // args.partitions * args.partitions

    import kspark

    with tempfile.TemporaryDirectory(prefix="kpy-bench-") as tmp:
        tmp = Path(tmp)
        broker = BrokerLiteProcess(tmp)
        spark = None
        try:
            topic = f"bench-{uuid.uuid4().hex[:8]}"
            with KafkaClient({"bootstrap.servers": broker.bootstrap}) as client:
                client.admin.create_topics([(topic, args.partitions, 1, {})])
            started = time.perf_counter()
            batch_bytes = load(broker.bootstrap, topic, records, args.partitions,
                               tmp / "rows.parquet")
            print(f"loaded {records:,} records of {VALUE_BYTES}-byte values into "
                  f"{args.partitions} partitions in {time.perf_counter() - started:.1f} s")
            spark = kspark.session("kpy-bench", config={"spark.sql.shuffle.partitions": "4"})
            spark.sparkContext.setLogLevel("ERROR")
            spark.dataSource.register(CeilingDataSource)
            batch_rows = rows_per_fetch(batch_bytes)
            ceiling = partial(ceiling_read, spark, records, args.partitions, batch_rows)
            kpy_batch(spark, broker.bootstrap, topic)  # warm up: JVM, workers, imports
            parquet_read(spark, tmp / "rows.parquet")
            ceiling()
            times: dict[str, list[float]] = {way: [] for way in WAYS}
            cpu: dict[str, list[dict[str, float]]] = {"kpy": [], "ceiling": [], "parquet": []}
            meter = CpuMeter(spark.sparkContext._gateway.proc.pid, broker)
            batch_reads = {"kpy": lambda: kpy_batch(spark, broker.bootstrap, topic),
                           "ceiling": ceiling,
                           "parquet": lambda: parquet_read(spark, tmp / "rows.parquet")}
            streams: dict[str, list[StreamRun]] = {"kpy": [], "ceiling": []}
            for round_ in range(args.repeat):
                for way, read in batch_reads.items():
                    seconds, used = meter.measure(read)
                    times[way].append(seconds)
                    cpu[way].append(used)
                times["confluent"].append(timed(lambda: confluent_drain(
                    {"bootstrap.servers": broker.bootstrap}, topic, args.partitions, records)))
                streams["kpy"].append(kpy_stream(spark, broker.bootstrap, topic,
                                                 tmp / f"checkpoint-{round_}"))
                streams["ceiling"].append(ceiling_stream(
                    spark, records, args.partitions, batch_rows, tmp / f"ceiling-{round_}"))
                for way, runs in streams.items():
                    times[f"{way}_stream"].append(runs[-1].seconds)
            peak_mb = python_worker_peak_rss_mb()
        finally:
            if spark is not None:
                spark.stop()
            broker.stop()
    report(records, args.repeat, times, streams, cpu, peak_mb)


def report(records: int, repeat: int, times: dict[str, list[float]],
           streams: dict[str, list[StreamRun]], cpu: dict[str, list[dict[str, float]]],
           peak_mb: float) -> None:
    rate = {way: records / statistics.median(seconds) for way, seconds in times.items()}
    print(f"median of {repeat} rounds, records/s (MB/s of values):")
    for way, label in WAYS.items():
        print(f"  {label:<48} {rate[way]:>12,.0f} ({rate[way] * VALUE_BYTES / 1e6:,.1f} MB/s)")
    print(f"ratios: kpy / ceiling {rate['kpy'] / rate['ceiling']:.2f} (target >= 0.9), "
          f"kpy / Parquet {rate['kpy'] / rate['parquet']:.2f} (target >= 0.85), "
          f"kpy / confluent-kafka {rate['kpy'] / rate['confluent']:.2f} (target >= 1.5), "
          f"streaming / batch {rate['kpy_stream'] / rate['kpy']:.2f} (target >= 0.8; the "
          f"ceiling's {rate['ceiling_stream'] / rate['ceiling']:.2f}), kpy streaming / ceiling "
          f"streaming {rate['kpy_stream'] / rate['ceiling_stream']:.2f} (target >= 0.9)")
    print(f"CPU seconds of the batch reads, by process (medians; {os.cpu_count()} cores):")
    for way, rounds in cpu.items():
        used = {what: statistics.median(r[what] for r in rounds) for what in rounds[0]}
        print(f"  {way:<8} " + ", ".join(f"{what} {seconds:.2f}" for what, seconds in used.items())
              + f", in all {sum(used.values()):.2f} in {statistics.median(times[way]):.2f} s")
    python = {way: statistics.median(r["Python"] for r in rounds) * 10_000_000 / records
              for way, rounds in cpu.items()}
    print(f"Spark's Python workers, CPU seconds per 10M records read: kpy {python['kpy']:.2f} "
          f"({_native.describe()}), ceiling {python['ceiling']:.2f}")
    for way, runs in streams.items():
        median = sorted(runs, key=lambda run: run.seconds)[len(runs) // 2]
        print(f"{way} streaming read, median round: {median.seconds:.2f} s in "
              f"{len(median.progress)} micro-batch(es); seconds by phase:")
        print("  " + ", ".join(f"{name} {seconds:.2f}"
                               for name, seconds in median.phases().items()))
    print(f"peak Python worker memory (VmHWM): {peak_mb:,.0f} MiB")


if __name__ == "__main__":
    main()
