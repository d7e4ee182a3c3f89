"""Interoperability with librdkafka, the C client behind confluent-kafka and most non-Java clients.

librdkafka's built-in mock cluster (``test.mock.num.brokers``) is a broker on a real TCP port that
keeps produced batches byte for byte. Batches written by librdkafka's producer are fetched raw over
a socket (requests encoded with kafka-python's protocol classes) and decoded here; batches built
here are produced raw into it and read back by librdkafka's consumer, which checks their CRCs.
"""

import socket
import struct
import time

import pytest
import xxhash
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse

from broker_lite.records import (
    CompressionType,
    RecordBatch,
    build_batch,
    iter_batches,
    iter_records,
)
from broker_lite.records.arrow import batches_to_arrow
from broker_lite.server.testing import recv_exactly

CODECS = list(CompressionType)
XERIAL_MAGIC = b"\x82SNAPPY\x00"
LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
TOPIC = "interop"


def sample_records(n: int) -> list[tuple]:
    """(key, value, headers, timestamp ms) with null keys and values, headers, varied sizes."""
    return [
        (None if i % 7 == 0 else b"key-%d" % i,
         None if i % 11 == 0 else b"value-%d-" % i + b"x" * (i % 300),
         [("trace", b"%d" % i), ("empty", b"")] if i % 3 == 0 else [],
         1_700_000_000_000 + i)
        for i in range(n)
    ]


def mock_cluster(**config) -> tuple[Producer, tuple[str, int]]:
    producer = Producer({"test.mock.num.brokers": 1, "log_level": 4, **config})
    broker = next(iter(producer.list_topics(timeout=10).brokers.values()))
    return producer, (broker.host, broker.port)


def round_trip(address: tuple[str, int], request, response_class, version: int):
    request.with_header(correlation_id=1, client_id="kpy-tests")
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(request.encode(version=version, header=True, framed=True))
        (size,) = struct.unpack(">i", recv_exactly(sock, 4))
        return response_class.decode(recv_exactly(sock, size), version=version, header=True)



def fetch_raw(address, topic: str, partition: int = 0) -> bytes:
    """Every batch of the partition, raw, following offsets up to the high watermark (the mock
    broker answers each Fetch with one batch)."""
    raw = b""
    offset = 0
    while True:
        request = FetchRequest(
            replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=64 << 20, isolation_level=0,
            topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
                FetchRequest.FetchTopic.FetchPartition(partition=partition, fetch_offset=offset,
                                                       partition_max_bytes=64 << 20)])],
        )
        result = round_trip(address, request, FetchResponse, 4).responses[0].partitions[0]
        assert result.error_code == 0
        chunk = bytes(result.records or b"")
        batches = list(iter_batches(chunk))
        if not batches:
            assert offset == result.high_watermark
            return raw
        raw += chunk[:sum(b.size_in_bytes for b in batches)]
        assert batches[-1].next_offset > offset, f"a Fetch at {offset} read nothing new"
        offset = batches[-1].next_offset


def produce_raw(address, topic: str, records: bytes, partition: int = 0) -> None:
    request = ProduceRequest(
        transactional_id=None, acks=1, timeout_ms=5000,
        topic_data=[ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=partition,
                                                                 records=records)])],
    )
    response = round_trip(address, request, ProduceResponse, 3)
    assert response.responses[0].partition_responses[0].error_code == 0


@pytest.fixture(scope="module", params=CODECS, ids=[c.kafka_name for c in CODECS])
def produced_by_librdkafka(request):
    """Records produced by librdkafka with one codec, and the raw bytes its broker holds."""
    codec = request.param
    producer, address = mock_cluster(**{"compression.type": codec.kafka_name, "linger.ms": 50})
    records = sample_records(500)
    for key, value, headers, timestamp in records:
        producer.produce(TOPIC, partition=0, key=key, value=value, headers=headers,
                         timestamp=timestamp)
    assert producer.flush(10) == 0
    raw = fetch_raw(address, TOPIC)
    yield codec, records, raw
    del producer


def as_expected(records):
    return [(i, key, value, tuple(headers), timestamp)
            for i, (key, value, headers, timestamp) in enumerate(records)]


def test_librdkafka_batches_decode_here(produced_by_librdkafka):
    codec, records, raw = produced_by_librdkafka
    batches = list(iter_batches(raw, validate=True))
    # librdkafka sends a batch uncompressed when compressing would not make it smaller
    assert all(b.magic == 2 and b.compression in (codec, CompressionType.NONE) for b in batches)
    assert sum(b.record_count for b in batches if b.compression is codec) > len(records) // 2
    decoded = [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in iter_records(raw)]
    assert decoded == as_expected(records)


def test_librdkafka_batches_decode_into_arrow(produced_by_librdkafka):
    _codec, records, raw = produced_by_librdkafka
    table = batches_to_arrow(iter_batches(raw, validate=True), topic=TOPIC, partition=0,
                             include_headers=True)
    assert table.column("offset").to_pylist() == list(range(len(records)))
    assert table.column("key").to_pylist() == [r[0] for r in records]
    assert table.column("value").to_pylist() == [r[1] for r in records]
    assert table.column("headers").to_pylist() == [
        [{"key": k, "value": v} for k, v in r[2]] or None for r in records]  # none: null


def test_librdkafka_framing_is_what_the_reader_expects(produced_by_librdkafka):
    """librdkafka writes snappy as plain raw blocks (no xerial stream header) and lz4 as standard
    frames with a correct header checksum; both must be read, and are."""
    codec, _records, raw = produced_by_librdkafka
    compressed = [b for b in iter_batches(raw) if b.compression is codec]
    assert compressed
    for batch in compressed:
        section = bytes(batch.raw()[61:])
        if codec is CompressionType.SNAPPY:
            assert not section.startswith(XERIAL_MAGIC)
        if codec is CompressionType.LZ4:
            assert section.startswith(LZ4_FRAME_MAGIC)
            flags = section[4]  # the frame descriptor's FLG byte
            descriptor_length = 2 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)
            descriptor = section[4:4 + descriptor_length]
            header_checksum = (xxhash.xxh32_intdigest(descriptor) >> 8) & 0xFF
            assert section[4 + descriptor_length] == header_checksum


@pytest.mark.parametrize("codec", CODECS, ids=[c.kafka_name for c in CODECS])
def test_batches_built_here_are_read_by_librdkafka(codec):
    producer, address = mock_cluster()
    producer.produce(TOPIC, partition=0, value=b"creates the topic")
    assert producer.flush(10) == 0
    records = sample_records(300)
    first, second = records[:150], records[150:]
    for part in (first, second):
        builder_input = [(key, value, headers) for key, value, headers, _ in part]
        batch = build_batch(builder_input, compression=codec, timestamp=part[0][3])
        assert RecordBatch(batch).compression is codec
        produce_raw(address, TOPIC, batch)

    consumer = Consumer({
        "bootstrap.servers": "{}:{}".format(*address), "group.id": "kpy-interop",
        "enable.auto.commit": False, "check.crcs": True, "log_level": 4,
    })
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 1)])  # after the topic-creating message
        received = []
        deadline = time.monotonic() + 20
        while len(received) < len(records) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            received.append(message)
    finally:
        consumer.close()
    assert [(m.offset(), m.key(), m.value(), m.headers() or []) for m in received] == [
        (1 + i, key, value, list(headers)) for i, (key, value, headers, _) in enumerate(records)]
    assert [m.timestamp()[1] for m in received[:150]] == [first[0][3]] * 150
