"""``format("kpy")`` as users deploy Spark, with a plain SparkSession and no ``kspark.register``:
on a multi-process cluster (``local-cluster``: executors are JVMs of their own, each with its
own Python workers) and through a Spark Connect server. Each runs in a process of its own
against this test's broker_lite: a batch read, a streaming read whose progress is committed to
its consumer group, and exactly-once writes, checked with a read_committed consumer."""

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark import find_spark_home

from broker_lite.server.testing import bootstrap

pytestmark = [pytest.mark.slow, pytest.mark.spark]

RECORDS = 300

# Run with `session` bound to a SparkSession (classic or Connect); prints one JSON line.
PIPELINE = """
import json
kafka = {{"kafka.bootstrap.servers": "{servers}"}}
batch = session.read.format("kpy").options(**kafka).option("subscribe", "{source}").load()
values = sorted(r.value.decode() for r in batch.select("value").collect())
query = (session.readStream.format("kpy").options(**kafka).option("subscribe", "{source}")
         .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "100")
         .option("kafka.group.id", "{group}").load()
         .selectExpr("key", "upper(CAST(value AS STRING)) AS value")
         .writeStream.format("kpy").options(**kafka).option("topic", "{target}")
         .option("checkpointLocation", "{checkpoint}").trigger(availableNow=True).start())
assert query.awaitTermination(300), f"the query still running after 300 s: {{query.status}}"
(session.createDataFrame([("batch-write",)], "value string").write.format("kpy")
 .options(**kafka).option("topic", "{target}").mode("append").save())
print("RESULT " + json.dumps({{"values": values, "batches": len(query.recentProgress)}}))
"""


def create_topics(servers, **partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    futures = admin.create_topics([NewTopic(t, n, 1) for t, n in partitions.items()])
    for future in futures.values():
        future.result(30)


def produce(servers, topic) -> list[bytes]:
    producer = Producer({"bootstrap.servers": servers, "log_level": 3})
    values = [f"record-{i}".encode() for i in range(RECORDS)]
    for i, value in enumerate(values):
        producer.produce(topic, key=f"k{i % 17}".encode(), value=value)
    assert producer.flush(30) == 0
    return values


def run_pipeline(servers, tmp_path, session_code: str, *, timeout_s: float = 480) -> tuple:
    """Run :data:`PIPELINE` after ``session_code``; returns (result, values produced, source
    topic, target topic, group)."""
    source, target = f"src-{uuid.uuid4().hex[:8]}", f"out-{uuid.uuid4().hex[:8]}"
    group = f"kpy-deployed-{uuid.uuid4().hex[:6]}"
    create_topics(servers, **{source: 3, target: 2})
    produced = produce(servers, source)
    script = textwrap.dedent(session_code) + textwrap.dedent(PIPELINE.format(
        servers=servers, source=source, target=target, group=group,
        checkpoint=tmp_path / "checkpoint"))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=timeout_s,
                          env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    errors = [line for line in done.stderr.splitlines() if "Exception" in line or "Error" in line]
    assert done.returncode == 0, "\n".join(errors[:8]) or done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    result = json.loads(line[len("RESULT "):])
    assert result["values"] == sorted(v.decode() for v in produced)
    return result, produced, source, target, group


def check_written_once(servers, read_committed, produced, target) -> None:
    seen = read_committed(servers, target, RECORDS + 1)
    assert sorted(m.value() for m in seen) == sorted([v.upper() for v in produced]
                                                     + [b"batch-write"])


def check_group_progress(servers, source, group) -> None:
    """The group's committed offsets are the end of every partition of ``source``."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group, "log_level": 3})
    try:
        partitions = [KafkaTopicPartition(source, p) for p in range(3)]
        committed = consumer.committed(partitions, timeout=30)
        ends = [consumer.get_watermark_offsets(tp, timeout=30)[1] for tp in partitions]
    finally:
        consumer.close()
    assert [tp.offset for tp in committed] == ends and sum(ends) == RECORDS


def test_a_multi_process_cluster(broker, tmp_path, read_committed):
    servers = bootstrap(broker)
    result, produced, source, target, group = run_pipeline(servers, tmp_path, """
        from pyspark.sql import SparkSession
        session = (SparkSession.builder.master("local-cluster[2,1,1024]")
                   .config("spark.ui.enabled", "false").getOrCreate())
        import time
        deadline = time.monotonic() + 120  # executors register a while after the session starts
        while (executors := session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1) \
                < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert executors == 2, executors
    """)
    assert result["batches"] >= 3  # maxOffsetsPerTrigger=100 over 300 records
    check_written_once(servers, read_committed, produced, target)
    check_group_progress(servers, source, group)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def connect_server(tmp_path):
    """A Spark Connect server (Spark's SparkConnectServer, as ``start-connect-server.sh`` runs
    it) on a free port, with Python workers on this interpreter; yields its ``sc://`` URL."""
    port = free_port()
    log = (tmp_path / "connect-server.log").open("w")
    server = subprocess.Popen(
        [str(Path(find_spark_home._find_spark_home(), "bin", "spark-submit")),
         "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
         "--name", "Spark Connect server", "--master", "local[2]",
         "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
         "--conf", "spark.ui.enabled=false", "--conf", f"spark.pyspark.python={sys.executable}"],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, (tmp_path / "connect-server.log").read_text()[-3000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the Spark Connect server did not start"
                time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(30)
        log.close()


def test_spark_connect(broker, tmp_path, read_committed, connect_server):
    servers = bootstrap(broker)
    _result, produced, source, target, group = run_pipeline(servers, tmp_path, f"""
        from pyspark.sql import SparkSession
        session = SparkSession.builder.remote("{connect_server}").getOrCreate()
        assert type(session).__module__ == "pyspark.sql.connect.session", type(session)
    """)
    check_written_once(servers, read_committed, produced, target)
    check_group_progress(servers, source, group)
