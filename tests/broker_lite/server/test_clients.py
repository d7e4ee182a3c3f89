"""Real Kafka clients against a real broker_lite over real sockets: confluent-kafka (librdkafka)
and kafka-python produce with every codec and acks setting, then consume everything back."""

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.common.tiers import needs
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.zk.testing import wait_until

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.fixture(params=[1, 3], ids=["one-broker", "three-brokers"])
@needs("broker", "zookeeper")
def deployment(request, zookeeper_connect, tmp_path):
    """A single broker, or a three-broker cluster (the partition lands on any of them)."""
    brokers = start_brokers(zookeeper_connect, tmp_path, request.param)
    yield brokers
    stop_brokers(brokers)


def sample(n: int, tag: str) -> list[tuple]:
    """(key, value, headers, timestamp ms) with null keys, empty values and headers."""
    base = 1_700_000_000_000
    return [
        (None if i % 5 == 0 else f"{tag}-key-{i}".encode(),
         b"" if i % 7 == 0 else f"{tag}-value-{i}-".encode() + b"x" * (i % 200),
         [("trace", f"{i}".encode()), ("tag", tag.encode())] if i % 3 == 0 else [],
         base + i)
        for i in range(n)
    ]


def created_for_acks_0(brokers, topic: str, acks) -> None:
    """With acks=0 nothing tells the producer of a refusal, so records sent to a new topic
    before its leader has taken the partition on are lost (with Kafka too): for acks=0 the
    topic is created first, and produced to once its leader serves it."""
    if str(acks) != "0":
        return  # auto-created by the producer, which retries until the leader serves
    admin = AdminClient({"bootstrap.servers": bootstrap(brokers)})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    wait_until(lambda: any(b.services.partitions.leader_log(topic, 0) is not None
                           for b in brokers),
               message=f"the leader of {topic} serves it")


def confluent_consume(broker, topic: str, count: int, timeout_s: float = 30) -> list:
    consumer = Consumer({
        "bootstrap.servers": bootstrap(broker), "group.id": f"g-{uuid.uuid4().hex}",
        "enable.auto.commit": False, "check.crcs": True, "log_level": 3,
    })
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        messages, deadline = [], time.monotonic() + timeout_s
        while len(messages) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            messages.append(message)
        return messages
    finally:
        consumer.close()


@pytest.mark.parametrize("acks", ["0", "1", "all"])
@pytest.mark.parametrize("codec", CODECS)
def test_confluent_kafka_produces_and_consumes_byte_for_byte(deployment, codec, acks):
    broker = deployment
    topic = f"cf-{codec}-{acks}"
    records = sample(300, codec)
    created_for_acks_0(broker, topic, acks)
    producer = Producer({"bootstrap.servers": bootstrap(broker), "compression.type": codec,
                         "acks": acks, "linger.ms": 5, "log_level": 3})
    delivered = []
    for key, value, headers, ts in records:
        producer.produce(topic, partition=0, key=key, value=value, headers=headers, timestamp=ts,
                         on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0
    assert delivered == [None] * len(records)
    messages = confluent_consume(broker, topic, len(records))
    assert [(m.offset(), m.key(), m.value(), m.headers() or [], m.timestamp()[1])
            for m in messages] == [
        (i, key, value, headers, ts) for i, (key, value, headers, ts) in enumerate(records)]


def test_confluent_kafka_offsets_for_times(deployment):
    broker = deployment
    topic = "times"
    producer = Producer({"bootstrap.servers": bootstrap(broker), "linger.ms": 0, "log_level": 3})
    for i in range(50):
        producer.produce(topic, partition=0, value=b"v%d" % i, timestamp=10_000 + 100 * i)
        producer.flush(10)  # one batch each, so lookups land inside the log's index
    consumer = Consumer({"bootstrap.servers": bootstrap(broker), "group.id": "times",
                         "log_level": 3})
    try:
        found = consumer.offsets_for_times([TopicPartition(topic, 0, 10_000 + 100 * 17 - 50)],
                                           timeout=10)
        assert found[0].offset == 17
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        assert (low, high) == (0, 50)
        beyond = consumer.offsets_for_times([TopicPartition(topic, 0, 10**13)], timeout=10)
        assert beyond[0].offset == -1  # no record that late: the end (-1, "latest")
    finally:
        consumer.close()


@pytest.mark.parametrize("acks", [0, 1, "all"])
@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_kafka_python_produces_and_consumes_byte_for_byte(deployment, codec, acks):
    broker = deployment
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KTopicPartition

    topic = f"kp-{codec}-{acks}"
    records = sample(200, str(codec))
    created_for_acks_0(broker, topic, acks)
    # kafka-python 3's defaults: acks=all makes the producer idempotent (InitProducerId).
    producer = KafkaProducer(bootstrap_servers=bootstrap(broker), compression_type=codec,
                             acks=acks, linger_ms=5)
    futures = [producer.send(topic, key=key, value=value, headers=headers, timestamp_ms=ts,
                             partition=0)
               for key, value, headers, ts in records]
    producer.flush(30)
    for future in futures:
        future.get(timeout=30)
    producer.close()

    consumer = KafkaConsumer(bootstrap_servers=bootstrap(broker), group_id=None,
                             enable_auto_commit=False, consumer_timeout_ms=10_000)
    partition = KTopicPartition(topic, 0)
    consumer.assign([partition])
    consumer.seek(partition, 0)
    got = []
    for message in consumer:
        got.append(message)
        if len(got) == len(records):
            break
    consumer.close()
    assert [(m.offset, m.key, m.value, list(m.headers), m.timestamp) for m in got] == [
        (i, key, value, headers, ts) for i, (key, value, headers, ts) in enumerate(records)]


@pytest.mark.parametrize("version", [12, 13, 17])
def test_fetch_by_name_and_by_topic_id(broker, kafka_call, version):
    """Fetch 13+ names topics by the id Metadata 10+ reports; unknown ids are answered as such."""
    from broker_lite.protocol import ApiKey, ErrorCode
    from broker_lite.records import iter_records

    topic = f"ids-{version}"
    producer = Producer({"bootstrap.servers": bootstrap(broker), "log_level": 3})
    producer.produce(topic, partition=0, value=b"hello")
    assert producer.flush(20) == 0
    metadata = kafka_call(broker.port, ApiKey.METADATA, 12, {"topics": [{"name": topic}]})
    topic_id = metadata["topics"][0]["topic_id"]
    assert topic_id.int != 0

    def fetch(name, identifier):
        return kafka_call(broker.port, ApiKey.FETCH, version, {
            "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "topics": [{"topic": name, "topic_id": identifier, "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})

    response = fetch(topic if version < 13 else "", topic_id)["responses"][0]["partitions"][0]
    assert response["error_code"] == 0
    assert [r.value for r in iter_records(bytes(response["records"]))] == [b"hello"]
    if version >= 13:
        unknown = fetch("", uuid.uuid4())["responses"][0]["partitions"][0]
        assert unknown["error_code"] == ErrorCode.UNKNOWN_TOPIC_ID
