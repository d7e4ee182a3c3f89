"""Producing test data with a real client (confluent-kafka) and describing what was produced,
so reads can be compared with it."""

import uuid
from dataclasses import dataclass

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.server.testing import bootstrap


@dataclass(frozen=True)
class Produced:
    key: bytes | None
    value: bytes | None
    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    headers: tuple = ()
    timestamp_type: int = 0  # CreateTime; -1 for v0 messages, which have no timestamp


def create_topic(servers: str, topic: str, partitions: int, **configs: str) -> str:
    admin = AdminClient({"bootstrap.servers": servers})
    futures = admin.create_topics([NewTopic(topic, partitions, 1, config=configs)])
    futures[topic].result(30)
    return topic


def produce(servers: str, topic: str, rows, *, compression: str = "none",
            partition: int | None = None, **settings) -> list[Produced]:
    """Produce ``rows`` of (key, value, headers, timestamp ms); return them with the partition and
    offset each got, in delivery order."""
    producer = Producer({"bootstrap.servers": servers, "compression.type": compression,
                         "linger.ms": 20, "log_level": 3, **settings})
    delivered, failed = [], []

    def reporter(headers):
        # Delivery reports do not carry the headers back, so each report keeps its own.
        def report(error, message):
            if error is not None:
                failed.append(error)
                return
            delivered.append(Produced(
                message.key(), message.value(), message.topic(), message.partition(),
                message.offset(), message.timestamp()[1], tuple(headers)))
        return report

    for key, value, headers, timestamp in rows:
        extra = {} if partition is None else {"partition": partition}
        producer.produce(topic, value=value, key=key, headers=list(headers) or None,
                         timestamp=timestamp, on_delivery=reporter(headers), **extra)
        producer.poll(0)
    remaining = producer.flush(60)
    assert remaining == 0 and not failed, (remaining, failed)
    return delivered


def sample_rows(n: int, tag: str = "r", base_ms: int = 1_700_000_000_000):
    """(key, value, headers, timestamp) with null keys, empty values and some headers."""
    return [
        (None if i % 5 == 0 else f"{tag}-key-{i % 37}".encode(),
         b"" if i % 7 == 0 else f"{tag}-value-{i}-".encode() + b"x" * (i % 50),
         [("trace", str(i).encode()), ("tag", tag.encode())] if i % 3 == 0 else [],
         base_ms + i)
        for i in range(n)
    ]


@pytest.fixture
def servers(broker) -> str:
    return bootstrap(broker)


@pytest.fixture
def topic_name() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"
