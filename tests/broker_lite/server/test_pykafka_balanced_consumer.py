"""pykafka 2.8's ZooKeeper-managed ``BalancedConsumer`` against broker_lite: three consumers of
one group split six partitions two each, as the owners znodes in ZooKeeper show, and commit
their offsets.

Such a consumer balances through ZooKeeper (the consumer rebalancing algorithm of Kafka's
implementation chapter, 5.5: ids and owners znodes under ``/consumers/<group>``) and commits
to Kafka with OffsetCommit generation -1 and its ZooKeeper consumer id as member id. Kafka 2.x
accepted that for a group without members (``doCommitOffsets``: ``generationId < 0 &&
group.is(Empty)``); Kafka 3.0-3.2 validated the member first and answered UNKNOWN_MEMBER_ID, on
which pykafka retries its commit and keeps all partitions; Kafka 3.3 went back to accepting it
(KAFKA-14201, ``validateOffsetCommit``). Kafka 3.9, which broker_lite serves as, accepts it.

pykafka 2.8.0 is installed here without its dependencies when the environment lacks it: its
metadata pins ``kazoo==2.5.0``, which no resolver installs beside kpy's ``kazoo>=2.10``, so it
cannot sit in the ``test`` extra; its code runs on this kazoo and Python 3.11 as pure Python
(its optional C extension, ``pykafka.rdkafka``, needs librdkafka's headers and is left out by
its own setup when they are missing), with ``six`` and ``tabulate`` from the ``test`` extra.
"""

import importlib
import subprocess
import sys
import time
import uuid

import pyarrow as pa
import pytest
from kazoo.client import KazooClient

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.server.testing import bootstrap
from broker_lite.zk.testing import wait_until

PYKAFKA = "pykafka==2.8.0"


@pytest.fixture(scope="session")
def pykafka(tmp_path_factory):
    try:
        return importlib.import_module("pykafka")
    except ImportError:
        target = tmp_path_factory.mktemp("pykafka")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--target", str(target), PYKAFKA], check=True, timeout=300)
        sys.path.insert(0, str(target))
        return importlib.import_module("pykafka")


def owners(zookeeper_connect: str, group: str) -> dict[int, str]:
    """Partition -> owning consumer id, from the owners znodes pykafka writes: Kafka's
    ``/consumers/<group>/owners/<topic>`` with pykafka's own names, ``<leader>-<partition>``
    (and, on Python 3, the topic written as its bytes' repr)."""
    zk = KazooClient(zookeeper_connect)
    zk.start(timeout=30)
    try:
        found = {}
        base = f"/consumers/{group}/owners"
        for topic in zk.get_children(base) if zk.exists(base) else []:
            for node in zk.get_children(f"{base}/{topic}"):
                found[int(node.rpartition("-")[2])] = zk.get(f"{base}/{topic}/{node}")[0].decode()
        return found
    finally:
        zk.stop()
        zk.close()


def test_three_balanced_consumers_split_six_partitions(pykafka, broker, zookeeper_connect):
    assert pykafka.__version__ == "2.8.0"
    servers, topic, group = bootstrap(broker), f"six-{uuid.uuid4().hex[:6]}", "zk-balanced"
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([(topic, 6, 1)])
        with client.producer() as producer:  # ten records in each partition
            produced = producer.send_arrow(topic, pa.table({
                "value": [b"v%d" % i for i in range(60)],
                "partition": pa.array([i % 6 for i in range(60)], pa.int32())}))
    clients, consumers = [], []
    try:
        for _ in range(3):
            clients.append(pykafka.KafkaClient(hosts=servers))
            consumers.append(clients[-1].topics[topic].get_balanced_consumer(
                consumer_group=group, zookeeper_connect=zookeeper_connect,
                auto_commit_enable=True, auto_commit_interval_ms=200,
                consumer_timeout_ms=200, use_rdkafka=False))

        def settled() -> bool:
            """Six partitions owned in ZooKeeper, two by each consumer, and each consumer holding
            what ZooKeeper says it owns (a consumer that gives up a partition deletes its owner
            node first, and drops the partition from its own set a moment later)."""
            owned = owners(zookeeper_connect, group)
            by_owner: dict[str, set[int]] = {}
            for partition, owner in owned.items():
                by_owner.setdefault(owner, set()).add(partition)
            return (sorted(owned) == list(range(6)) and sorted(_counts(owned)) == [2, 2, 2] and
                    sorted(map(sorted, by_owner.values())) ==
                    sorted(sorted(consumer.partitions) for consumer in consumers))

        wait_until(settled, timeout=60,
                   message="six partitions owned two by each of three consumers, as each holds")
        read: list[tuple[int, int]] = []
        deadline = time.monotonic() + 60
        while len(read) < 60 and time.monotonic() < deadline:
            for consumer in consumers:
                message = consumer.consume(block=False)
                if message is not None:
                    read.append((message.partition_id, message.offset))
        assert sorted(read) == sorted((tp.partition, first + i)
                                      for tp, (first, count) in produced.items()
                                      for i in range(count))
        for consumer in consumers:  # as a member of no generation, with its ZooKeeper id
            consumer.commit_offsets()
        with KafkaClient({"bootstrap.servers": servers}) as client:
            committed = client.committed(group, [TopicPartition(topic, p) for p in range(6)])
        assert committed == {tp: first + count for tp, (first, count) in produced.items()}
    finally:
        for consumer in consumers:
            consumer.stop()


def _counts(owned: dict[int, str]) -> list[int]:
    counts: dict[str, int] = {}
    for consumer in owned.values():
        counts[consumer] = counts.get(consumer, 0) + 1
    return list(counts.values())
