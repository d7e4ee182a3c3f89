"""The migration of a group's offsets from ZooKeeper to Kafka, step by step as Kafka's
documentation describes it, with a real ZooKeeper and group coordinator: every record is
consumed exactly once across the three configurations."""

from zk_group_support import (
    kafka_fixture,  # noqa: F401 - the kafka fixture
    produce,
    start_consumer_fixture,  # noqa: F401 - the start_consumer fixture
    unique,
)

from broker_lite.client import TopicPartition
from broker_lite.client.zkgroup import ZooKeeperOffsets
from broker_lite.zk.testing import wait_until

PARTITIONS = 3


def consume_until(consumers, consumed: list, total: int) -> None:
    """Poll the members in turn, committing after each poll, until ``total`` records."""
    def step():
        for consumer in consumers:
            consumed.extend(consumer.poll(0.1))
            consumer.commit()
        return len(consumed) >= total

    wait_until(step, 60, f"{total} records consumed")


def test_migrating_offsets_from_zookeeper_to_kafka(start_consumer, kafka, broker,
                                                   zookeeper_client):
    topic, group = unique("migrate"), unique("group")
    kafka.admin.create_topics([(topic, PARTITIONS, 1)])
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    in_zookeeper = ZooKeeperOffsets(zookeeper_client, group)
    produced, consumed = [], []

    def produce_round(name: str, count: int) -> None:
        values = [b"%s-%d" % (name.encode(), i) for i in range(count)]
        produce(broker, topic, values, PARTITIONS, **{"batch.num.messages": 5})
        produced.extend(values)

    def members(count: int, **settings):
        """Members of the group, each fetching a few records per poll, once they share all
        partitions."""
        started = [start_consumer(group, [topic], **{"max.partition.fetch.bytes": "100"},
                                  **settings) for _ in range(count)]
        wait_until(lambda: sorted(len(c.assignment()) for c in started) == [1, 2], 30,
                   "the partitions shared")
        return started

    def positions_now(total_per_partition):
        return dict(zip(tps, total_per_partition, strict=True))

    # 0. the group consumes with its offsets in ZooKeeper, the old default
    produce_round("zk", 90)
    old = members(2)
    consume_until(old, consumed, 60)
    for consumer in old:
        consumer.close()  # commits its positions
    zk_offsets = {tp: in_zookeeper.read(tp) for tp in tps}
    assert sum(zk_offsets.values()) == len(consumed)
    assert kafka.committed(group, tps) == dict.fromkeys(tps)  # nothing at the coordinator

    # 1. every member restarts with offsets.storage=kafka and dual.commit.enabled=true:
    #    they resume where ZooKeeper says, and commit to both
    dual = members(2, **{"offsets.storage": "kafka", "dual.commit.enabled": "true"})
    for consumer in dual:
        for tp in consumer.assignment():
            assert consumer.position(tp) == zk_offsets[tp]
    consume_until(dual, consumed, 90)  # the rest of the first round
    produce_round("dual", 60)
    consume_until(dual, consumed, 120)
    for consumer in dual:
        consumer.close()
    zk_offsets = {tp: in_zookeeper.read(tp) for tp in tps}
    coordinator = kafka.committed(group, tps)
    assert coordinator == zk_offsets and sum(coordinator.values()) == len(consumed)

    # 2. then with dual.commit.enabled=false: the coordinator alone, ZooKeeper left behind
    produce_round("kafka", 60)
    new = members(2, **{"offsets.storage": "kafka"})
    for consumer in new:
        for tp in consumer.assignment():
            assert consumer.position(tp) == coordinator[tp]
    consume_until(new, consumed, len(produced))
    for consumer in new:
        consumer.close()
    assert {tp: in_zookeeper.read(tp) for tp in tps} == zk_offsets  # no longer written
    assert kafka.committed(group, tps) == positions_now([len(produced) // PARTITIONS] * 3)

    # the union of everything consumed is everything produced, nothing twice
    seen = [(r.partition, r.offset) for r in consumed]
    assert len(seen) == len(set(seen))
    assert sorted(r.value for r in consumed) == sorted(produced)
