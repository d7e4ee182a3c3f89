"""The producer against a real broker_lite (real sockets, real ZooKeeper), read back by
confluent-kafka with CRC checks: every codec, keys / headers / timestamps, and partitioning (by
column, by key, sticky), unknown and created topics."""

import pyarrow as pa
import pytest
from producer_checks import consume, raw_batches, unique

from broker_lite.client import (
    KafkaClient,
    Producer,
    TopicPartition,
    UnknownTopicOrPartitionError,
    partitions_for_keys,
)
from broker_lite.records.arrow.schema import HEADERS_TYPE
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers

BASE_TS = 1_700_000_000_000


@pytest.fixture
def client(broker):
    with KafkaClient({"bootstrap.servers": bootstrap(broker), "request.timeout.ms": "15000",
                      "retry.backoff.ms": "20"}) as client:
        yield client


def sample_rows(n: int, *, start: int = 0, value_size: int = 20) -> pa.RecordBatch:
    return pa.record_batch({
        "key": pa.array([None if i % 5 == 0 else b"k%d" % i for i in range(start, start + n)]),
        "value": pa.array([b"v%07d-" % i + b"x" * value_size for i in range(start, start + n)]),
        "headers": pa.array([[{"key": "h", "value": b"%d" % i}] if i % 3 == 0 else []
                             for i in range(start, start + n)], HEADERS_TYPE),
        "timestamp": pa.array([BASE_TS + i for i in range(start, start + n)], pa.int64()),
    })


# -- one partition ---------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_reads_back_through_librdkafka(broker, client, codec):
    topic = unique(f"codec-{codec}")
    client.admin.create_topics([(topic, 1, 1)])
    rows = sample_rows(3000)
    with Producer(client, compression=codec, batch_size=16384) as producer:
        assert producer.idempotent
        assert producer.send_batch(topic, 0, rows) == (0, 3000)
        assert producer.send_batch(topic, 0, sample_rows(10, start=3000)) == (3000, 10)
        producer_id = producer.producer_id
    messages = consume(bootstrap(broker), topic, 0, 3010)
    expected = sample_rows(3010).to_pylist()
    assert [m.value() for m in messages] == [r["value"] for r in expected]
    assert [m.key() for m in messages] == [r["key"] for r in expected]
    assert [m.timestamp()[1] for m in messages] == [r["timestamp"] for r in expected]
    assert [m.headers() or [] for m in messages] == \
        [[(h["key"], h["value"]) for h in r["headers"]] for r in expected]
    assert [m.offset() for m in messages] == list(range(3010))

    batches = raw_batches(client, TopicPartition(topic, 0))
    assert len(batches) > 2  # cut by batch.size
    assert {b.compression.kafka_name for b in batches} == {codec}
    assert {b.producer_id for b in batches} == {producer_id}
    sequences = [(b.base_sequence, b.base_offset) for b in batches]
    assert all(seq == offset for seq, offset in sequences)  # one producer: sequence = offset


def test_non_idempotent_producer_writes_plain_batches(client):
    topic = unique("plain")
    client.admin.create_topics([(topic, 1, 1)])
    with Producer(client, acks="1") as producer:  # acks=1 turns the default idempotence off
        assert not producer.idempotent
        assert producer.send_batch(topic, 0, sample_rows(5)) == (0, 5)
    (batch,) = raw_batches(client, TopicPartition(topic, 0))
    assert (batch.producer_id, batch.base_sequence) == (-1, -1)


def test_string_columns_and_missing_optional_columns(broker, client):
    topic = unique("strings")
    client.admin.create_topics([(topic, 1, 1)])
    rows = pa.table({"key": ["ä", None], "value": ["one", None]})
    with Producer(client) as producer:
        assert producer.send_batch(topic, 0, rows) == (0, 2)
        assert producer.send_batch(topic, 0, rows.slice(0, 0)) == (-1, 0)
    messages = consume(bootstrap(broker), topic, 0, 2)
    assert [(m.key(), m.value()) for m in messages] == [("ä".encode(), b"one"), (None, None)]


# -- partitioning ----------------------------------------------------------------------------------

def test_send_arrow_partitions_by_column_then_key_then_sticky(broker, client):
    topic = unique("partitioned")
    client.admin.create_topics([(topic, 5, 1)])
    n = 2000
    keys = [None if i % 4 == 0 else b"key-%d" % i for i in range(n)]
    explicit = [3 if i % 10 == 1 else None for i in range(n)]
    rows = pa.record_batch({"key": pa.array(keys, pa.binary()),
                            "value": pa.array([b"%d" % i for i in range(n)]),
                            "partition": pa.array(explicit, pa.int32())})
    with Producer(client) as producer:
        written = producer.send_arrow(topic, rows)
    by_key = partitions_for_keys(pa.array(keys, pa.binary()), 5)
    keyless = [i for i in range(n) if keys[i] is None and explicit[i] is None]
    expected = {p: [] for p in range(5)}
    sticky = None
    for p in range(5):
        for message in consume(bootstrap(broker), topic, p, written.get(
                TopicPartition(topic, p), (0, 0))[1]):
            i = int(message.value())
            expected[p].append(i)
            if explicit[i] is not None:
                assert p == 3
            elif keys[i] is not None:
                assert p == by_key[i]
            else:
                sticky = p if sticky is None else sticky
                assert p == sticky  # every keyless row of the call in one partition
    assert sorted(i for values in expected.values() for i in values) == list(range(n))
    assert all(values == sorted(values) for values in expected.values())  # order kept
    assert sum(count for _, count in written.values()) == n
    assert len([i for i in keyless if i in expected[sticky]]) == len(keyless)


@pytest.mark.broker
@pytest.mark.zookeeper
def test_unknown_topics_and_partitions_are_final_errors(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1,
                            {"auto.create.topics.enable": "false"})
    try:
        with KafkaClient({"bootstrap.servers": bootstrap(brokers)}) as client:
            topic = unique("known")
            client.admin.create_topics([(topic, 2, 1)])
            with Producer(client, delivery_timeout_ms=5000) as producer:
                with pytest.raises(UnknownTopicOrPartitionError) as info:
                    producer.send_arrow(unique("missing"), pa.record_batch({"value": [b"v"]}))
                assert not info.value.retriable
                with pytest.raises(UnknownTopicOrPartitionError, match=f"{topic}-7"):
                    producer.send_batch(topic, 7, pa.record_batch({"value": [b"v"]}))
                with pytest.raises(UnknownTopicOrPartitionError,
                                   match=f"{topic}-2: .*2 partitions"):
                    producer.send_arrow(topic, pa.record_batch(
                        {"value": [b"v"], "partition": pa.array([2], pa.int32())}))
    finally:
        stop_brokers(brokers)


def test_a_missing_topic_is_created_when_the_broker_allows_it(client):
    """As Java producers do: the Metadata request asks the broker to create the topic."""
    topic = unique("created")
    with Producer(client, delivery_timeout_ms=10000) as producer:
        written = producer.send_arrow(topic, pa.record_batch({"value": [b"v"]}))
    assert sum(count for _, count in written.values()) == 1
    assert topic in client.topics()
