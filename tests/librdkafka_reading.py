"""Reading a topic back with librdkafka (confluent-kafka), a client nobody here wrote: the checks
of what kpy's producer and sink wrote, shared by the broker's and the connector's tests."""

import time
import uuid

from confluent_kafka import Consumer, KafkaError
from confluent_kafka import TopicPartition as ConfluentTopicPartition


def consume_all(servers: str, topic: str, partitions: int, *,
                isolation_level: str = "read_uncommitted", timeout_s: float = 60,
                check_crcs: bool = True) -> list:
    """Every message of every partition of ``topic`` up to its end (read_committed: up to the
    last stable offset), read by librdkafka with CRC checks (unless ``check_crcs`` is False)."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False, "check.crcs": check_crcs, "log_level": 3,
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
