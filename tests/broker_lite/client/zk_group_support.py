"""Shared by the ZooKeeper-based group tests: consumers on a real ZooKeeper and broker, records
produced with confluent-kafka, and an observer that checks partition ownership from its own
ZooKeeper session while consumers come and go.

Test modules import the fixtures ``kafka_fixture`` and ``start_consumer_fixture``, which they use
as ``kafka`` and ``start_consumer``."""

import threading
import uuid
from collections import Counter

import pytest
from confluent_kafka import Producer
from kazoo.exceptions import NoNodeError

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.client.zkgroup import ZooKeeperGroupConsumer
from broker_lite.server.testing import bootstrap
from broker_lite.zk.client import connect
from broker_lite.zk.layout import consumer_owners_path
from broker_lite.zk.testing import wait_until

# Fast rebalances for tests: the defaults (4 tries, 2 s apart) are Kafka's, for real clusters.
FAST = {"rebalance.backoff.ms": "100", "rebalance.max.retries": "30",
        "auto.offset.reset": "smallest", "request.timeout.ms": "15000",
        "retry.backoff.ms": "20"}


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def produce(broker, topic: str, values: list[bytes], partitions: int, **settings) -> None:
    """Produce ``values[i]`` to partition ``i % partitions`` and wait for every ack."""
    producer = Producer({"bootstrap.servers": bootstrap(broker), "log_level": 3,
                         "linger.ms": 5, **settings})
    for i, value in enumerate(values):
        producer.produce(topic, value=value, key=b"k%d" % i, partition=i % partitions)
    assert producer.flush(30) == 0


@pytest.fixture(name="kafka")
def kafka_fixture(broker):
    """A KafkaClient on the broker, for topic administration and committed offsets."""
    with KafkaClient({"bootstrap.servers": bootstrap(broker), "request.timeout.ms": "15000",
                      "retry.backoff.ms": "20"}) as client:
        yield client


@pytest.fixture(name="start_consumer")
def start_consumer_fixture(zookeeper_connect, broker):
    """``start(group, topics, **settings)``: a consumer on the test's ZooKeeper (brokers found
    under /brokers/ids), subscribed when ``topics`` is given; all closed after the test."""
    started: list[ZooKeeperGroupConsumer] = []

    def start(group: str, topics=None, **settings) -> ZooKeeperGroupConsumer:
        consumer = ZooKeeperGroupConsumer({"zookeeper.connect": zookeeper_connect,
                                           "group.id": group, **FAST, **settings})
        started.append(consumer)
        if topics:
            consumer.subscribe(topics)
        return consumer

    yield start
    for consumer in started:
        consumer.close()


def thread_of(consumer: ZooKeeperGroupConsumer) -> str:
    return f"{consumer.consumer_id}-0"


class OwnersReader:
    """The owner znodes of one group's topic, read from a session of its own."""

    def __init__(self, zookeeper_connect: str, group: str, topic: str):
        self.zk = connect(zookeeper_connect, session_timeout_ms=6000)
        self.path = consumer_owners_path(group, topic)
        self.topic = topic

    def read(self) -> tuple[dict[int, tuple[str, int, int]], int | None]:
        """partition -> (owner thread, czxid, ephemeral owner session), and the children
        version of the topic's owners znode (None while it does not exist)."""
        try:
            children, stat = self.zk.get_children(self.path, include_data=True)
        except NoNodeError:
            return {}, None
        nodes = {}
        for child in children:
            try:
                data, node = self.zk.get(f"{self.path}/{child}")
            except NoNodeError:
                continue
            nodes[int(child)] = (data.decode(), node.czxid, node.ephemeralOwner)
        return nodes, stat.cversion

    def owners(self) -> dict[int, str]:
        return {p: owner for p, (owner, _, _) in self.read()[0].items()}

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()


class OwnershipObserver:
    """Samples, over and over, the owner znodes, then every watched consumer's
    ``assignment()``, then the owner znodes again. Where the znode of a partition is the same
    znode (same czxid) in both reads, it existed throughout, so a consumer that believed it owned
    the partition in between must be the one it names; where it is absent in both reads and no
    owner znode came or went in between, nobody may believe it owns it. Every breach is kept in
    :attr:`violations`; :attr:`conclusive` counts the checks that could decide."""

    def __init__(self, zookeeper_connect: str, group: str, topic: str):
        self.reader = OwnersReader(zookeeper_connect, group, topic)
        self.topic = topic
        self.watched: dict[str, ZooKeeperGroupConsumer] = {}
        self.violations: list[str] = []
        self.conclusive = 0
        self.samples = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def watch(self, consumer: ZooKeeperGroupConsumer) -> None:
        with self._lock:
            self.watched[thread_of(consumer)] = consumer

    def forget(self, consumer: ZooKeeperGroupConsumer) -> None:
        """Stop asking ``consumer`` (about to die: a dead process believes nothing)."""
        with self._lock:
            self.watched.pop(thread_of(consumer), None)

    def start(self) -> "OwnershipObserver":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)
        self.reader.close()
        assert not self._thread.is_alive(), "the ownership observer still sampling after 60 s"

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()

    def sample(self) -> None:
        before, version_before = self.reader.read()
        with self._lock:
            beliefs = {thread: {tp.partition for tp in c.assignment() if tp.topic == self.topic}
                       for thread, c in self.watched.items()}
        after, version_after = self.reader.read()
        self.samples += 1
        listed = Counter(p for partitions in beliefs.values() for p in partitions)
        for thread, partitions in beliefs.items():
            for p in partitions:
                b, a = before.get(p), after.get(p)
                if b is not None and a is not None and b[1] == a[1]:
                    self.conclusive += 1
                    if b[0] != thread:
                        self.violations.append(f"{thread} believes it owns {p}, whose owner "
                                               f"znode names {b[0]}")
                    if listed[p] > 1:
                        self.violations.append(f"partition {p} is listed by {listed[p]} "
                                               f"consumers: {beliefs}")
                elif b is None and a is None and version_before == version_after:
                    self.conclusive += 1
                    self.violations.append(f"{thread} believes it owns {p}, which has no owner "
                                           f"znode")


def balanced(consumers, reader: OwnersReader, shares: list[int]):
    """True when the consumers' assignments have the given sizes, cover distinct partitions,
    and the owner znodes name exactly the consumer that holds each."""
    assignments = [c.assignment() for c in consumers]
    if sorted(len(a) for a in assignments) != sorted(shares):
        return False
    expected = {tp.partition: thread_of(c)
                for c, a in zip(consumers, assignments, strict=True) for tp in a}
    return len(expected) == sum(shares) and reader.owners() == expected


def wait_balanced(consumers, reader: OwnersReader, shares: list[int], timeout: float = 30):
    wait_until(lambda: balanced(consumers, reader, shares), timeout,
               f"assignments of sizes {shares} matching the owner znodes; now "
               f"{[sorted(map(str, c.assignment())) for c in consumers]} / {reader.owners()}")


def partitions_of(topic: str, count: int) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in range(count)}
