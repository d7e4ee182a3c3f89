"""Brokers nobody here wrote, or broker_lite playing an older Kafka, for kspark to meet.

- :class:`MockCluster`: librdkafka's mock cluster (``rdkafka_mock*.c``), a Kafka broker written
  in C that listens on real loopback sockets. A confluent-kafka client configured with
  ``test.mock.num.brokers`` starts it and keeps it running while it lives; its addresses are in
  that client's metadata. It serves only part of Kafka's protocol (:data:`MOCK_LACKS`).
- ``old_kafka``: a broker_lite broker serving only the APIs and versions of Kafka 2.1, 2.8 or
  3.9 (:mod:`broker_lite.server.releases`), one per release, shared by a module's tests.

Records are produced and read back with confluent-kafka (librdkafka), not with kpy's client.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from librdkafka_reading import consume_all

from broker_lite.server.releases import RELEASES
from kspark.testing.tiers import needs

#: What the mock cluster lacks that kspark would use, and what then cannot be covered on it.
MOCK_LACKS = {
    "OffsetFetch of all a group's partitions (topics null, KIP-88)":
        "it answers with a null topics array, which no Kafka client reads (Kafka's spec: not "
        "nullable); the exactly-once streaming sink looks its decisions up so",
    "valid CRCs on transaction markers":
        "it writes its commit and abort markers with CRC 0, which every client checking CRCs "
        "refuses (Java's CompletedFetch checks control batches too), kpy's reader included: "
        "what was written transactionally is read back with check.crcs=false",
}


class MockCluster:
    """librdkafka's mock cluster of ``brokers`` brokers, running while this object lives."""

    name = "librdkafka's mock cluster"
    marker_crcs = False  # see MOCK_LACKS

    def __init__(self, brokers: int = 3):
        self._owner: Producer | None = Producer({
            "bootstrap.servers": "", "test.mock.num.brokers": brokers, "log_level": 3})
        found = self._owner.list_topics(timeout=30).brokers.values()
        self.bootstrap_servers = ",".join(f"{b.host}:{b.port}"
                                          for b in sorted(found, key=lambda b: b.id))

    def close(self) -> None:
        self._owner = None  # the mock cluster stops with the client that started it


@dataclass
class OldKafka:
    """A broker_lite broker serving what Kafka ``release`` served."""

    release: str
    bootstrap_servers: str
    marker_crcs = True

    @property
    def name(self) -> str:
        return f"broker_lite as Kafka {self.release}"


@pytest.fixture(scope="module")
def mock_cluster() -> Iterator[MockCluster]:
    cluster = MockCluster()
    yield cluster
    cluster.close()


@pytest.fixture(scope="module", params=sorted(RELEASES))
@needs("broker", "zookeeper")
def old_kafka(request, kpy_zookeeper, tmp_path_factory) -> Iterator[OldKafka]:
    from kspark.testing.brokers import KpyBroker

    broker = KpyBroker.start(kpy_zookeeper.chroot(), tmp_path_factory.mktemp("old-kafka"),
                             release=RELEASES[request.param])
    yield OldKafka(request.param, broker.bootstrap_servers)
    broker.stop()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class Record:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def produce(servers: str, topic: str, count: int) -> list[Record]:
    """``count`` keyed records (a topic the broker creates on first use), as delivered."""
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5, "log_level": 3})
    delivered: list[Record] = []
    failed: list = []

    def report(error, message) -> None:
        if error is not None:
            failed.append(error)
        else:
            delivered.append(Record(message.partition(), message.offset(), message.key(),
                                    message.value()))

    for i in range(count):
        producer.produce(topic, key=b"k%d" % (i % 7), value=b"v%d" % i, on_delivery=report)
    assert producer.flush(60) == 0 and not failed, failed
    return sorted(delivered, key=lambda r: (r.partition, r.offset))


def consume(servers: str, topic: str, isolation_level: str, *, check_crcs: bool = True
            ) -> list[Record]:
    """Every record of every partition of ``topic``, up to its end (read_committed: its last
    stable offset)."""
    probe = Consumer({"bootstrap.servers": servers, "group.id": unique("probe"), "log_level": 3})
    partitions = len(probe.list_topics(topic, timeout=30).topics[topic].partitions)
    probe.close()
    return sorted((Record(m.partition(), m.offset(), m.key(), m.value())
                   for m in consume_all(servers, topic, partitions,
                                        isolation_level=isolation_level,
                                        check_crcs=check_crcs)),
                  key=lambda r: (r.partition, r.offset))


def committed(servers: str, group: str, topic: str, partitions: list[int]) -> dict[int, int]:
    """The group's committed offsets, as librdkafka reads them."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group, "log_level": 3})
    try:
        found = consumer.committed([ConfluentTopicPartition(topic, p) for p in partitions],
                                   timeout=30)
        return {tp.partition: tp.offset for tp in found}
    finally:
        consumer.close()
