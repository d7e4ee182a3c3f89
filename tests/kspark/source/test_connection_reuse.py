"""Spark's Python workers keep their connections from task to task and micro-batch to
micro-batch: a streaming query opens at most one connection per broker per Python worker.

The broker advertises a counting proxy in front of it (``advertised.listeners``), so every
connection any client opens to it, from any process, goes through the proxy and is counted;
Spark's Python processes are sampled meanwhile, since the bound is per Python worker."""

import threading
import time
import uuid

import psutil
import pytest
from tcp_proxy import TcpProxy

from broker_lite.client import KafkaClient, Producer
from broker_lite.server.broker import Broker
from broker_lite.server.testing import broker_config
from broker_lite.zk.testing import wait_until
from kspark.testing.tiers import needs


class PythonWorkers:
    """Samples the Python processes Spark runs (workers forked by ``pyspark.daemon``, the
    streaming source's runner, ...) until stopped: ``pids`` is every one seen."""

    def __init__(self):
        self.pids: set[int] = set()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stopped.is_set():
            for process in psutil.process_iter(["pid", "cmdline"]):
                if any("pyspark" in part for part in process.info["cmdline"] or ()):
                    self.pids.add(process.info["pid"])
            self._stopped.wait(0.2)

    def stop(self) -> set[int]:
        self._stopped.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), "the process sampler still running 30 s after its stop"
        return self.pids


@pytest.fixture
@needs("broker", "zookeeper")
def proxied_broker(kpy_zookeeper_connect, tmp_path):
    """A broker whose every client connection goes through a :class:`CountingProxy`; yields
    (the proxy, bootstrap.servers)."""
    proxy = TcpProxy()
    broker = Broker(broker_config(kpy_zookeeper_connect, tmp_path / "logs", properties={
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}"})).start()
    proxy.start(broker.port)
    try:
        yield proxy, f"127.0.0.1:{proxy.port}"
    finally:
        broker.stop()
        proxy.close()


def keep_producing(bootstrap: str, topic: str, stop: threading.Event) -> threading.Thread:
    """A record to each of the topic's two partitions every 200 ms until ``stop``, over one
    connection opened before the thread starts."""
    client = KafkaClient({"bootstrap.servers": bootstrap})
    producer = Producer(client)
    producer.send_batch(topic, 0, _rows())

    def run() -> None:
        try:
            while not stop.wait(0.2):
                for partition in (0, 1):
                    producer.send_batch(topic, partition, _rows())
        finally:
            client.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _rows():
    import pyarrow as pa

    return pa.record_batch({"value": pa.array([uuid.uuid4().bytes], pa.binary())})


def create_topic(bootstrap: str) -> str:
    topic = f"reuse-{uuid.uuid4().hex[:8]}"
    with KafkaClient({"bootstrap.servers": bootstrap}) as client:
        client.admin.create_topics([(topic, 2, 1, {})])
    return topic


def test_repeated_batch_reads_open_no_connection_per_task(kpy_spark, proxied_broker):
    proxy, bootstrap = proxied_broker
    topic = create_topic(bootstrap)
    stop = threading.Event()
    producing = keep_producing(bootstrap, topic, stop)
    stop.set()
    producing.join(60)
    assert not producing.is_alive(), "the producing thread still running 60 s after its stop"
    before, workers = proxy.accepted, PythonWorkers()
    reads = 8
    for _ in range(reads):
        kpy_spark.read.format("kpy").option("kafka.bootstrap.servers", bootstrap) \
            .option("subscribe", topic).load().count()
    pids = workers.stop()
    opened = proxy.accepted - before
    # 16 tasks (and 8 plannings) over the Python workers seen: one connection each at most
    assert opened <= len(pids), (opened, sorted(pids))
    assert opened < reads * 2


@pytest.mark.slow
def test_a_streaming_query_opens_one_connection_per_broker_per_python_worker(
        kpy_spark, proxied_broker, tmp_path, soak):
    """200 micro-batches (60 without ``--soak``) at one trigger a second, each reading both
    partitions: the query's Python processes open one connection to the broker each, not one
    per task."""
    batches = 200 if soak else 60
    proxy, bootstrap = proxied_broker
    topic = create_topic(bootstrap)
    stop = threading.Event()
    producing = keep_producing(bootstrap, topic, stop)
    before, workers = proxy.accepted, PythonWorkers()
    query = (kpy_spark.readStream.format("kpy").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", topic).option("startingOffsets", "earliest").load()
             .writeStream.format("noop").option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(processingTime="1 second").start())
    try:
        wait_until(lambda: _batches(query) >= batches or query.exception() is not None,
                   timeout=900 if soak else 420, message=f"{batches} micro-batches")
        assert query.exception() is None
    finally:
        query.stop()
        stop.set()
        producing.join(60)
    assert not producing.is_alive(), "the producing thread still running 60 s after its stop"
    pids = workers.stop()
    opened = proxy.accepted - before
    read = [p["numInputRows"] for p in query.recentProgress]
    assert sum(read) > 0 and all(rows > 0 for rows in read[-10:])  # every batch read records
    assert opened <= len(pids), (opened, sorted(pids))
    assert opened < 40  # a connection per task would be two per micro-batch


def _batches(query) -> int:
    """How many micro-batches ``query`` has finished."""
    time.sleep(0.5)
    progress = query.lastProgress
    return -1 if progress is None else progress["batchId"] + 1
