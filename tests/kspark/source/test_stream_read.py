"""``spark.readStream.format("kpy")`` against a real broker_lite and ZooKeeper: every record
exactly once across micro-batches, query restarts and broker restarts; read limits; new topics;
data loss; and the query's progress committed to its consumer group."""

import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaTopicPartition

from broker_lite.server.broker import Broker
from broker_lite.server.testing import bootstrap, broker_config
from broker_lite.zk.testing import wait_until

from .conftest import create_topic, produce, sample_rows


class Collected:
    """What a ``foreachBatch`` sink saw: (batch id, [(topic, partition, offset, value)])."""

    def __init__(self):
        self.batches: list[tuple[int, list]] = []
        self._lock = threading.Lock()

    def __call__(self, df, batch_id):
        rows = [(r.topic, r.partition, r.offset, r.value)
                for r in df.select("topic", "partition", "offset", "value").collect()]
        with self._lock:
            self.batches.append((batch_id, rows))

    @property
    def rows(self) -> list:
        with self._lock:
            return [row for _, rows in self.batches for row in rows]

    def positions(self) -> list:
        return sorted((t, p, o) for t, p, o, _ in self.rows)


def stream(spark, servers, **options):
    reader = spark.readStream.format("kpy").option("kafka.bootstrap.servers", servers)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def run_available_now(df, checkpoint, sink: Collected, timeout_s: float = 120):
    query = (df.writeStream.foreachBatch(sink).option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(timeout_s), "the query did not finish"
    assert query.exception() is None, query.exception()
    return query


def positions_of(produced) -> list:
    return sorted((p.topic, p.partition, p.offset) for p in produced)


def test_every_record_once_across_bounded_micro_batches(spark, servers, topic_name, tmp_path):
    create_topic(servers, topic_name, 3)
    produced = produce(servers, topic_name, sample_rows(600))
    sink = Collected()
    df = stream(spark, servers, subscribe=topic_name, startingOffsets="earliest",
                maxOffsetsPerTrigger="100")
    run_available_now(df, tmp_path / "checkpoint", sink)
    assert sink.positions() == positions_of(produced)
    sizes = [len(rows) for _, rows in sink.batches if rows]
    assert len(sizes) >= 6, sizes
    assert max(sizes) <= 100 + 2, sizes  # a partition's share is rounded up to one record
    values = {(p.topic, p.partition, p.offset): p.value for p in produced}
    assert all(values[(t, p, o)] == v for t, p, o, v in sink.rows)


def test_a_restarted_query_resumes_from_its_checkpoint(spark, servers, topic_name, tmp_path):
    create_topic(servers, topic_name, 2)
    first = produce(servers, topic_name, sample_rows(200, "first"))
    df = stream(spark, servers, subscribe=topic_name, startingOffsets="earliest")
    before, after = Collected(), Collected()
    run_available_now(df, tmp_path / "cp", before)
    second = produce(servers, topic_name, sample_rows(150, "second"))
    run_available_now(df, tmp_path / "cp", after)
    assert before.positions() == positions_of(first)
    assert after.positions() == positions_of(second)


@pytest.mark.broker
@pytest.mark.zookeeper
def test_a_query_rides_through_a_broker_restart(spark, zookeeper_connect, tmp_path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = broker_config(zookeeper_connect, tmp_path / "logs", 1,
                           {"listeners": f"PLAINTEXT://127.0.0.1:{port}"})
    broker = Broker(config).start()
    servers = bootstrap(broker)
    topic = create_topic(servers, f"restart-{uuid.uuid4().hex[:6]}", 2)
    produced = produce(servers, topic, sample_rows(100, "a"))
    sink = Collected()
    df = stream(spark, servers, subscribe=topic, startingOffsets="earliest",
                **{"kafka.request.timeout.ms": "60000"})
    query = (df.writeStream.foreachBatch(sink).option("checkpointLocation",
                                                      str(tmp_path / "cp"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        wait_until(lambda: len(sink.rows) >= 100, 60, "first records")
        broker.stop()
        time.sleep(2)
        broker = Broker(config).start()
        produced += produce(servers, topic, sample_rows(100, "b"))
        wait_until(lambda: len(sink.rows) >= 200 or query.exception(), 90, "records after restart")
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
        broker.stop()
    assert sink.positions() == positions_of(produced)


def test_subscribe_pattern_picks_up_new_topics_from_their_start(spark, servers, tmp_path):
    prefix = f"pat{uuid.uuid4().hex[:6]}"
    first = create_topic(servers, f"{prefix}-a", 1)
    produced = produce(servers, first, sample_rows(20, "a"))
    sink = Collected()
    df = stream(spark, servers, subscribePattern=f"{prefix}-.*", startingOffsets="earliest")
    query = (df.writeStream.foreachBatch(sink).option("checkpointLocation",
                                                      str(tmp_path / "cp"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        wait_until(lambda: len(sink.rows) >= 20, 60, "the first topic")
        second = create_topic(servers, f"{prefix}-b", 2)
        produced += produce(servers, second, sample_rows(30, "b"))
        wait_until(lambda: len(sink.rows) >= 50 or query.exception(), 60, "the new topic")
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    assert sink.positions() == positions_of(produced)


@pytest.mark.parametrize("fail_on_data_loss", [True, False])
def test_records_lost_to_retention_fail_or_are_skipped(spark, broker, topic_name, tmp_path,
                                                       fail_on_data_loss):
    servers = bootstrap(broker)
    create_topic(servers, topic_name, 1, **{"segment.bytes": "2048",
                                            "retention.bytes": "4096"})
    first = produce(servers, topic_name, sample_rows(20, "a"), partition=0)
    df = stream(spark, servers, subscribe=topic_name, startingOffsets="earliest",
                failOnDataLoss=str(fail_on_data_loss).lower())
    seen = Collected()
    run_available_now(df, tmp_path / "cp", seen)
    assert seen.positions() == positions_of(first)
    # Much more arrives while the query is stopped, and retention drops its beginning.
    later = produce(servers, topic_name, sample_rows(400, "b"), partition=0,
                    **{"batch.num.messages": 10})
    broker.logs.enforce_retention()
    log_start = broker.logs.get(topic_name, 0).log_start_offset
    assert log_start > len(first)
    resumed = Collected()
    query = (df.writeStream.foreachBatch(resumed)
             .option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    try:
        query.awaitTermination(120)
    except Exception:  # a failed query raises here; its exception is checked below
        pass
    assert not query.isActive, f"the query still running after 120 s: {query.status}"
    if fail_on_data_loss:
        assert query.exception() is not None
        assert "failOnDataLoss" in str(query.exception())
        assert resumed.rows == []
    else:
        assert query.exception() is None, query.exception()
        assert resumed.positions() == [(p.topic, p.partition, p.offset) for p in later
                                       if p.offset >= log_start]


def test_progress_is_committed_to_the_query_group(spark, servers, topic_name, tmp_path):
    create_topic(servers, topic_name, 3)
    produced = produce(servers, topic_name, sample_rows(300))
    group = f"kpy-query-{uuid.uuid4().hex[:6]}"
    df = stream(spark, servers, subscribe=topic_name, startingOffsets="earliest",
                maxOffsetsPerTrigger="120", **{"kafka.group.id": group})
    run_available_now(df, tmp_path / "cp", Collected())
    ends = {p: max(r.offset for r in produced if r.partition == p) + 1 for p in range(3)}
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group, "log_level": 3})
    try:
        committed = consumer.committed([KafkaTopicPartition(topic_name, p) for p in range(3)],
                                       timeout=30)
    finally:
        consumer.close()
    assert {tp.partition: tp.offset for tp in committed} == ends


def test_a_new_query_can_start_from_the_group_offsets(spark, servers, topic_name, tmp_path):
    create_topic(servers, topic_name, 2)
    first = produce(servers, topic_name, sample_rows(100, "a"))
    group = f"kpy-resume-{uuid.uuid4().hex[:6]}"
    options = {"subscribe": topic_name, "startingOffsets": "group",
               "startingOffsets.fallback": "earliest", "kafka.group.id": group}
    before, after = Collected(), Collected()
    run_available_now(stream(spark, servers, **options), tmp_path / "one", before)
    second = produce(servers, topic_name, sample_rows(50, "b"))
    # A different checkpoint: the start comes from the group, not from Spark.
    run_available_now(stream(spark, servers, **options), tmp_path / "two", after)
    assert before.positions() == positions_of(first)
    assert after.positions() == positions_of(second)


def test_a_memory_sink_sees_every_record_once(spark, servers, topic_name, tmp_path):
    create_topic(servers, topic_name, 2)
    produced = produce(servers, topic_name, sample_rows(250))
    name = f"kpy_{uuid.uuid4().hex[:8]}"
    query = (stream(spark, servers, subscribe=topic_name, startingOffsets="earliest",
                    maxOffsetsPerTrigger="60")
             .writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(120)
    assert query.exception() is None, query.exception()
    rows = spark.sql(f"SELECT topic, partition, offset FROM {name}").collect()
    assert sorted((r.topic, r.partition, r.offset) for r in rows) == positions_of(produced)
    assert len(query.recentProgress) >= 5  # bounded micro-batches, not one
