"""Checks shared by the producer tests: what librdkafka reads back from a partition, and a
scripted Produce handler that keeps the batches it accepts."""

import time
import uuid

from confluent_kafka import Consumer, KafkaError
from confluent_kafka import TopicPartition as ConfluentTopicPartition

from broker_lite.records import RecordBatch


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


def consume_all(servers: str, topic: str, partitions: int, *,
                isolation_level: str = "read_uncommitted", timeout_s: float = 60) -> list:
    """Every message of every partition of ``topic`` up to its end (read_committed: up to the
    last stable offset), read by librdkafka with CRC checks."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": unique("reader"),
                         "enable.auto.commit": False, "check.crcs": True, "log_level": 3,
                         "isolation.level": isolation_level, "enable.partition.eof": True})
    try:
        consumer.assign([ConfluentTopicPartition(topic, p, 0) for p in range(partitions)])
        messages, at_end = [], set()
        deadline = time.monotonic() + timeout_s
        while len(at_end) < partitions and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                at_end.add(message.partition())
                continue
            at_end.discard(message.partition())
            messages.append(message)
        assert len(at_end) == partitions, f"partitions {at_end} of {partitions} read to the end"
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
