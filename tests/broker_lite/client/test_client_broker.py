"""KafkaClient against a real broker_lite (real sockets, real ZooKeeper), with data produced by
confluent-kafka: version negotiation, topic administration, offsets by time, fetches, bounded
range reads of compressed data, and recovery from cut connections and a restarted broker."""

import threading
import uuid

import pyarrow as pa
import pytest
from confluent_kafka import Producer

from broker_lite.client import (
    EARLIEST,
    LATEST,
    KafkaClient,
    KafkaTimeoutError,
    NewTopic,
    OffsetAndTimestamp,
    OffsetOutOfRangeError,
    TopicAlreadyExistsError,
    TopicPartition,
    UnknownTopicOrPartitionError,
)
from broker_lite.client.errors import KafkaConnectionError
from broker_lite.records import BatchReader, iter_records
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.zk.testing import join_all, wait_until

BASE_TS = 1_700_000_000_000


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def produce(servers: str, topic: str, records, *, partition: int = 0, **settings) -> None:
    """Produce ``(key, value, timestamp)`` records with confluent-kafka and wait for them."""
    producer = Producer({"bootstrap.servers": servers, "log_level": 3, "linger.ms": 5, **settings})
    for key, value, timestamp in records:
        producer.produce(topic, partition=partition, key=key, value=value, timestamp=timestamp)
    assert producer.flush(30) == 0


def sample(n: int) -> list[tuple]:
    return [(None if i % 7 == 0 else b"k%d" % i, b"value-%d-" % i + b"x" * (i % 300),
             BASE_TS + 10 * i) for i in range(n)]


@pytest.fixture
def client(broker):
    with KafkaClient({"bootstrap.servers": bootstrap(broker), "request.timeout.ms": "15000",
                      "retry.backoff.ms": "20"}) as client:
        yield client


def test_versions_are_negotiated_with_broker_lite(client, broker):
    client.topics()
    conn = client._cluster.connection("127.0.0.1", broker.port)
    shared = conn.versions.shared
    assert shared[18] == (0, 3)  # ApiVersions
    assert shared[3] == (1, 12)  # Metadata
    assert shared[1] == (4, 17)  # Fetch
    assert shared[2] == (1, 8)  # ListOffsets: broker_lite's maximum
    assert 9 not in shared or shared[9][1] <= 9  # OffsetFetch, once served


def test_topic_administration(client):
    name = unique("admin")
    client.admin.create_topics([(name, 3, 1, {"retention.ms": "123456"})])
    assert client.topics()[name] == 3
    assert client.partitions(name) == [0, 1, 2]
    assert client.admin.describe_configs(name)["retention.ms"] == "123456"
    with pytest.raises(TopicAlreadyExistsError, match=f"topic {name}"):
        client.admin.create_topics([NewTopic(name, 1, 1)])
    client.admin.create_topics([NewTopic(name, 1, 1)], exist_ok=True)
    client.admin.create_partitions({name: 5})
    assert client.partitions(name) == [0, 1, 2, 3, 4]
    described = client.admin.describe_topics([name])[name]
    assert described.partition_count == 5 and all(p.leader == 1
                                                   for p in described.partitions.values())
    client.admin.delete_topics([name])
    assert name not in client.topics()
    with pytest.raises(UnknownTopicOrPartitionError) as info:
        client.partitions(name)
    assert not info.value.retriable  # the cluster says so: no pointless retries
    with pytest.raises(UnknownTopicOrPartitionError):
        client.admin.delete_topics([name])
    client.admin.delete_topics([name], missing_ok=True)


def test_internal_topics_are_listed_only_on_request(client):
    client.topics()  # the client is connected
    name = unique("visible")
    client.admin.create_topics([(name, 1, 1)])
    internal = client.topics(include_internal=True)
    assert name in internal and name in client.topics()
    assert not any(t.startswith("__") for t in client.topics())


def test_list_offsets_by_spec_and_time(client, broker):
    topic = unique("times")
    client.admin.create_topics([(topic, 1, 1)])
    records = sample(200)
    produce(bootstrap(broker), topic, records, **{"batch.size": 2000})
    tp = TopicPartition(topic, 0)
    assert client.list_offsets({tp: EARLIEST}) == {tp: 0}
    assert client.list_offsets({tp: LATEST}) == {tp: 200}
    assert client.list_offsets({tp: BASE_TS + 10 * 57 - 3}) == {tp: 57}
    assert client.list_offsets({tp: BASE_TS + 10 * 57}) == {tp: 57}
    assert client.list_offsets({tp: BASE_TS + 10**9}) == {tp: None}  # no record that late
    assert client.list_offsets_and_timestamps({tp: BASE_TS + 10 * 120 - 1}) == \
        {tp: OffsetAndTimestamp(120, BASE_TS + 10 * 120)}
    assert client.list_offsets({tp: LATEST}, isolation_level="read_committed") == {tp: 200}
    with pytest.raises(UnknownTopicOrPartitionError):
        client.list_offsets({TopicPartition(topic, 1): LATEST})
    with pytest.raises(UnknownTopicOrPartitionError):
        client.list_offsets({TopicPartition(unique("missing"), 0): LATEST})


def test_fetch_returns_raw_batches_watermarks_and_partition_errors(client, broker):
    topic = unique("fetch")
    client.admin.create_topics([(topic, 1, 1)])
    records = sample(50)
    produce(bootstrap(broker), topic, records)
    tp = TopicPartition(topic, 0)
    fetched = client.fetch({tp: 10})[tp]
    assert fetched.error is None
    assert (fetched.high_watermark, fetched.last_stable_offset, fetched.log_start_offset) == \
        (50, 50, 0)
    assert isinstance(fetched.records, memoryview) and fetched.records.readonly  # no copy
    got = [(r.key, r.value, r.timestamp) for r in iter_records(fetched.records) if r.offset >= 10]
    assert got == records[10:]
    beyond = client.fetch({tp: 51})[tp]
    assert isinstance(beyond.error, OffsetOutOfRangeError)  # returned, not raised
    at_end = client.fetch({tp: 50}, max_wait_ms=50)[tp]
    assert (at_end.error, at_end.records, at_end.high_watermark) == (None, b"", 50)


def test_read_range_over_lz4_batches_gives_exactly_the_range(broker):
    topic = unique("lz4")
    records = sample(3000)
    limit = 4096
    with KafkaClient({"bootstrap.servers": bootstrap(broker),
                      "max.partition.fetch.bytes": str(limit)}) as client:
        client.admin.create_topics([(topic, 1, 1)])
        produce(bootstrap(broker), topic, records,
                **{"compression.type": "lz4", "batch.size": 8192})
        tp = TopicPartition(topic, 0)
        start, end = 123, 2777
        chunks = list(client.read_range(tp, start, end))
        assert len(chunks) > 10  # many bounded fetches, not one big one
        decoded = []
        for chunk in chunks:
            batches = list(BatchReader(chunk.data))
            assert sum(b.size_in_bytes for b in batches) == len(chunk.data)  # no partial tail
            assert len(chunk.data) <= max(limit, max(b.size_in_bytes for b in batches))
            assert all(b.compression.name == "LZ4" for b in batches)
            decoded += [(r.offset, r.key, r.value, r.timestamp) for r in chunk.records()]
        assert decoded == [(i, *records[i]) for i in range(start, end)]

        table = pa.Table.from_batches([c.to_arrow() for c in chunks])
        assert table.column("offset").to_pylist() == list(range(start, end))
        assert table.column("value").to_pylist() == [v for _, v, _ in records[start:end]]

        everything = list(client.read_range(tp, 0))  # to the end of the log: stops there
        assert [r.offset for c in everything for r in c.records()] == list(range(3000))
        assert list(client.read_range(tp, 3000)) == []  # at the high watermark
        with pytest.raises(OffsetOutOfRangeError):
            list(client.read_range(tp, 3001))


@pytest.mark.broker
@pytest.mark.zookeeper
def test_read_range_below_the_log_start_raises_out_of_range(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1,
                            {"log.retention.check.interval.ms": "100"})
    try:
        with KafkaClient({"bootstrap.servers": bootstrap(brokers)}) as client:
            topic = unique("retained")
            client.admin.create_topics([(topic, 1, 1, {"segment.bytes": "2048",
                                                       "retention.bytes": "4096"})])
            produce(bootstrap(brokers), topic, sample(400), **{"batch.size": 1000})
            tp = TopicPartition(topic, 0)
            wait_until(lambda: client.list_offsets({tp: EARLIEST})[tp] > 0, timeout=30,
                       message="retention removed the oldest segments")
            with pytest.raises(OffsetOutOfRangeError, match=f"for {tp}"):
                next(client.read_range(tp, 0, 400))
            for _ in range(10):  # retention may move the log start again meanwhile
                log_start = client.list_offsets({tp: EARLIEST})[tp]
                try:
                    first = next(client.read_range(tp, log_start, 400))
                    break
                except OffsetOutOfRangeError:
                    continue
            assert next(first.records()).offset == log_start
    finally:
        stop_brokers(brokers)


def test_cut_connections_are_retried_and_reopened(client, broker):
    topic = unique("cut")
    client.admin.create_topics([(topic, 1, 1)])
    produce(bootstrap(broker), topic, sample(20))
    tp = TopicPartition(topic, 0)
    assert client.list_offsets({tp: LATEST}) == {tp: 20}
    assert broker.server.drop_connections() >= 1  # as a network failure would
    assert client.list_offsets({tp: LATEST}) == {tp: 20}
    broker.server.drop_connections()
    assert client.fetch({tp: 0})[tp].high_watermark == 20


@pytest.mark.broker
@pytest.mark.zookeeper
def test_a_stopped_broker_gives_a_retriable_error_and_the_restarted_one_is_used(
        zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1)
    port = brokers[0].port
    topic, tp = unique("restart"), None
    try:
        with KafkaClient({"bootstrap.servers": bootstrap(brokers), "request.timeout.ms": "1500",
                          "retry.backoff.ms": "20"}) as client:
            client.admin.create_topics([(topic, 1, 1)])
            produce(bootstrap(brokers), topic, sample(30))
            tp = TopicPartition(topic, 0)
            long_poll = []
            poller = threading.Thread(target=lambda: long_poll.append(
                client.fetch({tp: 30}, max_wait_ms=10000)[tp]))
            poller.start()  # a Fetch waiting for data when the broker goes away
            wait_until(lambda: brokers[0].server.connection_count >= 1, message="connected")
            stop_brokers(brokers)
            poller.join(timeout=30)
            assert not poller.is_alive(), "the Fetch still waiting 30 s after the broker stopped"
            error = long_poll[0].error
            assert isinstance(error, KafkaTimeoutError) and error.retriable
            assert isinstance(error.last_error, KafkaConnectionError)
            with pytest.raises(KafkaTimeoutError) as info:
                client.list_offsets({tp: LATEST})
            assert f"127.0.0.1:{port}" in str(info.value)

            brokers = start_brokers(zookeeper_connect, tmp_path, 1,
                                    {"listeners": f"PLAINTEXT://127.0.0.1:{port}"})
            wait_until(lambda: brokers[0].partitions.is_leader(tp.topic, tp.partition), 30,
                       "the restarted broker leads the partition again")
            assert client.list_offsets({tp: LATEST}) == {tp: 30}  # reconnected
    finally:
        stop_brokers(brokers)


def test_one_client_shared_by_threads(client, broker):
    topics = [unique("shared") for _ in range(3)]
    client.admin.create_topics([(t, 2, 1) for t in topics])
    for t in topics:
        for p in range(2):
            produce(bootstrap(broker), t, sample(40), partition=p)
    failures = []

    def worker(n: int) -> None:
        try:
            for i in range(15):
                tp = TopicPartition(topics[(n + i) % 3], i % 2)
                assert client.list_offsets({tp: LATEST}) == {tp: 40}
                fetched = client.fetch({tp: i})[tp]
                assert next(iter_records(fetched.records)).offset <= i
        except Exception as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(6)]
    for t in threads:
        t.start()
    join_all(threads, 120, "worker threads still running after 120 s")
    assert failures == []
