"""Clients of the ZooKeeper era against broker_lite over real sockets, as a Kafka 3.9 broker
serves them.

- kafka-python speaking the request versions of Kafka 0.8.1, 0.8.2, 0.9 and 0.10.0 produces,
  consumes, commits and fetches its offsets: in ZooKeeper at Kafka's path with 0.8.1
  (OffsetCommit v0), in ``__consumer_offsets`` from 0.8.2 on; with manual assignment before
  0.9, as a group from 0.9.
- Fetch v0 and v1 of what confluent-kafka wrote (v2 batches, compressed, with headers) answer
  message sets that kafka-python's legacy reader reads to the last byte.
- A damaged Produce v0 message set is CORRUPT_MESSAGE, and nothing is appended.
"""

import struct
import uuid
from dataclasses import replace

import pytest
from confluent_kafka import Producer
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.record import MemoryRecords
from kafka.structs import OffsetAndMetadata

import broker_lite.server.broker as broker_module
from broker_lite.common.tiers import needs
from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_message_set
from broker_lite.server.apis import handlers
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.zk.layout import ConsumerOffsetZNode
from broker_lite.zk.testing import wait_until

T0 = 1_700_000_000_000
COUNT = 30

# The request versions kafka-python sends for each broker version it is told (its
# BROKER_API_VERSIONS table): (Produce, Fetch, OffsetCommit, OffsetFetch).
LEGACY_VERSIONS = {
    (0, 8, 1): (0, 0, 0, 0),
    (0, 8, 2): (0, 0, 1, 1),
    (0, 9): (1, 1, 2, 1),
    (0, 10, 0): (2, 2, 2, 1),
}


@pytest.fixture
@needs("broker", "zookeeper")
def broker(zookeeper_connect, tmp_path, monkeypatch):
    """One broker that records the (API, version) of every request it handles in
    ``broker.requests``."""
    seen: set[tuple[ApiKey, int]] = set()

    def recorded(key, handle):
        def handle_and_record(context, body):
            seen.add((key, context.version))
            return handle(context, body)
        return handle_and_record

    monkeypatch.setattr(broker_module, "handlers", lambda **options: {
        key: replace(h, handle=recorded(key, h.handle))
        for key, h in handlers(**options).items()})
    brokers = start_brokers(zookeeper_connect, tmp_path)
    brokers[0].requests = seen
    yield brokers[0]
    stop_brokers(brokers)


def produce_legacy(broker, api_version, topic: str) -> list[tuple]:
    """COUNT records from kafka-python speaking ``api_version``, half of them gzip-compressed;
    (key, value, timestamp) each."""
    sent = []
    for codec in (None, "gzip"):
        producer = KafkaProducer(bootstrap_servers=bootstrap(broker), api_version=api_version,
                                 compression_type=codec, linger_ms=5)
        try:
            for i in range(len(sent), len(sent) + COUNT // 2):
                key, value, ts = b"key-%d" % i, b"value-%d-" % i + b"x" * (i % 50), T0 + i
                producer.send(topic, key=key, value=value, partition=0, timestamp_ms=ts)
                sent.append((key, value, ts))
            producer.flush(30)
        finally:
            producer.close()
    return sent


def consume_legacy(broker, api_version, topic: str, group: str):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(broker), api_version=api_version,
                             group_id=group, enable_auto_commit=False,
                             auto_offset_reset="earliest", consumer_timeout_ms=20_000)
    tp = KafkaTopicPartition(topic, 0)
    if api_version < (0, 9):  # no group management before Kafka 0.9
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
    else:
        consumer.subscribe([topic])
    got = []
    for message in consumer:
        got.append(message)
        if len(got) == COUNT:
            break
    return consumer, tp, got


@pytest.mark.parametrize("api_version", list(LEGACY_VERSIONS), ids=lambda v: ".".join(map(str, v)))
def test_kafka_python_legacy_versions_produce_consume_and_commit(broker, zookeeper_client,
                                                                 api_version):
    topic, group = f"legacy-{uuid.uuid4().hex[:8]}", f"app-{uuid.uuid4().hex[:8]}"
    sent = produce_legacy(broker, api_version, topic)
    consumer, tp, got = consume_legacy(broker, api_version, topic, group)
    try:
        with_timestamps = api_version >= (0, 10)  # message format v1
        assert [(m.offset, m.key, m.value, m.timestamp) for m in got] == [
            (i, key, value, ts if with_timestamps else None)
            for i, (key, value, ts) in enumerate(sent)]
        consumer.commit({tp: OffsetAndMetadata(COUNT, "", -1)}, timeout_ms=30000)
        assert consumer.committed(tp, timeout_ms=30000) == COUNT
    finally:
        consumer.close()
    produce_v, fetch_v, commit_v, offset_fetch_v = LEGACY_VERSIONS[api_version]
    assert {(ApiKey.PRODUCE, produce_v), (ApiKey.FETCH, fetch_v),
            (ApiKey.OFFSET_COMMIT, commit_v), (ApiKey.OFFSET_FETCH, offset_fetch_v)} \
        <= broker.requests
    path = ConsumerOffsetZNode.path(group, topic, 0)
    _, at_coordinator = broker.services.groups.handle_fetch_offsets(
        group, [TopicPartition(topic, 0)])
    coordinated = at_coordinator.get(TopicPartition(topic, 0))
    if commit_v == 0:  # Kafka 0.8.1: ZooKeeper, where Kafka keeps it
        assert zookeeper_client.get(path)[0] == b"%d" % COUNT
        assert coordinated is None
    else:
        assert zookeeper_client.exists(path) is None
        assert coordinated.offset == COUNT


@pytest.fixture
def modern_topic(broker):
    """A topic written by confluent-kafka: v2 batches in every codec down-conversion allows,
    with headers and timestamps; (topic, [(key, value, timestamp)])."""
    topic = f"modern-{uuid.uuid4().hex[:8]}"
    sent = []
    for codec in ("none", "gzip", "snappy", "lz4"):
        producer = Producer({"bootstrap.servers": bootstrap(broker), "compression.type": codec,
                             "linger.ms": 20, "log_level": 3})
        for i in range(len(sent), len(sent) + 25):
            record = (b"k%d" % i if i % 4 else None, b"value-%d-" % i + b"y" * (i % 70),
                      T0 + 10 * i)
            producer.produce(topic, partition=0, key=record[0], value=record[1],
                             timestamp=record[2], headers=[("h", b"%d" % i)])
            sent.append(record)
        assert producer.flush(30) == 0
    return topic, sent


def fetch(kafka_call, broker, version: int, topic: str, offset: int,
          partition_max_bytes: int = 1 << 20) -> dict:
    response = kafka_call(broker.port, ApiKey.FETCH, version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "topics": [
            {"topic": topic, "partitions": [{"partition": 0, "fetch_offset": offset,
                                             "partition_max_bytes": partition_max_bytes}]}]})
    return response["responses"][0]["partitions"][0]


def kafka_python_read(data: bytes, magic: int) -> list[tuple]:
    """(offset, key, value, timestamp) as kafka-python's legacy reader reads ``data``, every CRC
    checked, to the last byte."""
    records, out, size = MemoryRecords(bytes(data)), [], 0
    while (batch := records.next_batch()) is not None:
        assert batch.magic == magic and batch.validate_crc()
        size += batch.size_in_bytes
        out.extend((r.offset, r.key, r.value, r.timestamp) for r in batch)
    assert size == len(data)
    return out


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_fetch_of_a_modern_topic_in_the_legacy_formats(broker, kafka_call, modern_topic,
                                                       version):
    topic, sent = modern_topic
    magic = 0 if version <= 1 else 1
    got, offset = [], 0
    while offset < len(sent):
        answer = fetch(kafka_call, broker, version, topic, offset, partition_max_bytes=4096)
        assert (answer["error_code"], answer["high_watermark"]) == (0, len(sent))
        read = kafka_python_read(answer["records"], magic)
        got.extend(r for r in read if r[0] >= offset)
        offset = got[-1][0] + 1
    assert got == [(i, key, value, ts if magic == 1 else None)
                   for i, (key, value, ts) in enumerate(sent)]


def test_a_fetch_v0_holds_what_fits(broker, kafka_call, modern_topic):
    topic, _sent = modern_topic
    everything = bytes(fetch(kafka_call, broker, 0, topic, 0)["records"])
    some = fetch(kafka_call, broker, 0, topic, 0, partition_max_bytes=len(everything) // 2)
    assert 0 < len(some["records"]) <= len(everything) // 2
    read = kafka_python_read(some["records"], 0)  # whole messages only
    assert [r[0] for r in read] == list(range(len(read)))
    assert everything.startswith(bytes(some["records"]))


def test_zstd_is_unsupported_compression_for_the_legacy_formats(broker, kafka_call):
    topic = f"zstd-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": bootstrap(broker), "compression.type": "zstd",
                         "log_level": 3})
    producer.produce(topic, partition=0, value=b"v" * 100)
    assert producer.flush(30) == 0
    assert fetch(kafka_call, broker, 1, topic, 0)["error_code"] == \
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


def produce_v0(kafka_call, broker, topic: str, records: bytes) -> dict:
    response = kafka_call(broker.port, ApiKey.PRODUCE, 0, {
        "acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": records}]}]})
    return response["responses"][0]["partition_responses"][0]


def latest_offset(kafka_call, broker, topic: str) -> list[int]:
    response = kafka_call(broker.port, ApiKey.LIST_OFFSETS, 0, {"replica_id": -1, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1,
                                        "max_num_offsets": 1}]}]})
    return response["topics"][0]["partitions"][0]["old_style_offsets"]


@pytest.mark.parametrize("damage", ["crc", "truncated"])
def test_a_damaged_produce_v0_message_set_is_corrupt_message(broker, kafka_call, damage):
    topic = f"bad-{uuid.uuid4().hex[:8]}"
    good = build_message_set([(b"k", b"fine")], magic=0)
    kafka_call(broker.port, ApiKey.METADATA, 0, {"topics": [{"name": topic}]})  # creates it
    wait_until(lambda: produce_v0(kafka_call, broker, topic, good)["error_code"] == 0,
               message="the auto-created topic takes appends")
    data = bytearray(build_message_set([(b"a", b"1"), (b"b", b"2")], magic=0))
    if damage == "crc":
        struct.pack_into(">I", data, 12, struct.unpack_from(">I", data, 12)[0] ^ 1)
    else:
        data = data[:-2]
    answer = produce_v0(kafka_call, broker, topic, bytes(data))
    assert (answer["error_code"], answer["base_offset"]) == (ErrorCode.CORRUPT_MESSAGE, -1)
    assert latest_offset(kafka_call, broker, topic) == [1]  # only the good message
