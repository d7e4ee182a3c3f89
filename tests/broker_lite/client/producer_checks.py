"""Checks shared by the producer and sender tests: what librdkafka reads back from a partition,
the raw batches of a partition, and a scripted broker whose Produce handler keeps the batches it
accepts."""

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from scripted_broker import ScriptedBroker

from broker_lite.client import KafkaClient, Producer, TopicPartition
from broker_lite.protocol import ApiKey
from broker_lite.records import RecordBatch, iter_batches


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def consume(servers: str, topic: str, partition: int, count: int, *,
            isolation_level: str = "read_uncommitted", timeout_s: float = 60) -> list:
    """Every message of a partition from offset 0 (``count`` expected, and nothing after them),
    read by librdkafka with CRC checks."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": unique("reader"),
                         "enable.auto.commit": False, "check.crcs": True, "log_level": 3,
                         "isolation.level": isolation_level})
    try:
        consumer.assign([ConfluentTopicPartition(topic, partition, 0)])
        messages, deadline = [], time.monotonic() + timeout_s
        while len(messages) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None:
                assert message.error() is None, message.error()
                messages.append(message)
        extra = consumer.poll(1.0)
        assert extra is None or extra.error() is not None, extra.value()
        return messages
    finally:
        consumer.close()


class ScriptedPartitions:
    """A Produce handler keeping the batches it accepts per partition; ``errors`` scripts the
    answer codes of the next requests for a partition (0 accepts)."""

    def __init__(self):
        self.logs: dict[tuple[str, int], list[bytes]] = {}
        self.errors: dict[tuple[str, int], list[int]] = {}
        self.received: list[tuple[str, int, bytes]] = []

    def __call__(self, header, body):
        responses = []
        for topic in body["topic_data"]:
            answers = []
            for part in topic["partition_data"]:
                key = (topic["name"], part["index"])
                data = bytes(part["records"])
                self.received.append((*key, data))
                scripted = self.errors.get(key)
                code = scripted.pop(0) if scripted else 0
                log = self.logs.setdefault(key, [])
                offset = sum(RecordBatch(b).record_count for b in log)
                if code == 0:
                    log.append(data)
                answers.append({"index": part["index"], "error_code": code,
                                "base_offset": offset if code == 0 else -1,
                                "log_append_time_ms": -1, "log_start_offset": 0,
                                "record_errors": [], "error_message": None})
            responses.append({"name": topic["name"], "partition_responses": answers})
        return {"responses": responses, "throttle_time_ms": 0}


def batch_fields(data: bytes) -> tuple[int, int, int, int]:
    batch = RecordBatch(data)
    return batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.record_count


def raw_batches(client: KafkaClient, tp: TopicPartition) -> list[RecordBatch]:
    """Every record batch of a partition, as the broker serves them."""
    batches = []
    for chunk in client.read_range(tp, 0):
        batches.extend(iter_batches(chunk.data))
    return batches


# -- a scripted broker for producers ---------------------------------------------------------------


def init_producer_id(producer_id=4000, epoch=0, error=0):
    return {"throttle_time_ms": 0, "error_code": error, "producer_id": producer_id,
            "producer_epoch": epoch}


@contextmanager
def scripted_producer_broker(topic: str) -> Iterator[ScriptedBroker]:
    """A scripted broker leading the 3 partitions of ``topic``, which gives producer id 4000
    and keeps the batches produced to it (``broker.partitions``, a :class:`ScriptedPartitions`)."""
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({topic: 3})
        broker.handlers[ApiKey.INIT_PRODUCER_ID] = lambda h, b: init_producer_id()
        broker.partitions = ScriptedPartitions()
        broker.handlers[ApiKey.PRODUCE] = broker.partitions
        yield broker


def producer_for(broker, **settings) -> Producer:
    return Producer({"bootstrap.servers": broker.bootstrap, "retry.backoff.ms": "1",
                     "retry.backoff.max.ms": "5", "request.timeout.ms": "2000",
                     **settings.pop("config", {})}, **settings)


def rows(n: int, start: int = 0, size: int = 10) -> pa.RecordBatch:
    return pa.record_batch({"value": [b"%05d" % i + b"." * size for i in range(start, start + n)]})
