"""ZooKeeper-based group membership against a real ZooKeeper and broker: registration znodes,
rebalances when members join, die, lose their session, or when partitions and brokers change,
with partition ownership checked from another session all along."""

import json

import pytest
from kazoo.exceptions import NoNodeError
from zk_group_support import (
    OwnershipObserver,
    OwnersReader,
    kafka_fixture,  # noqa: F401 - the kafka fixture
    start_consumer_fixture,  # noqa: F401 - the start_consumer fixture
    thread_of,
    unique,
    wait_balanced,
)

from broker_lite.client import (
    BrokerNotAvailableError,
    ClientClosedError,
    InvalidArgumentError,
    TopicPartition,
)
from broker_lite.client.zkgroup import (
    ConsumerIdInUseError,
    ConsumerRebalanceFailedError,
    NotSubscribedError,
    ZooKeeperGroupConsumer,
)
from broker_lite.server.broker import Broker
from broker_lite.server.testing import bootstrap, broker_config
from broker_lite.zk.testing import ensemble_hosts, expire_session, wait_until


@pytest.fixture
def observe(zookeeper_connect):
    observers = []

    def start(group: str, topic: str) -> OwnershipObserver:
        observer = OwnershipObserver(zookeeper_connect, group, topic).start()
        observers.append(observer)
        return observer

    yield start
    for observer in observers:
        observer.stop()


@pytest.fixture
def owners_of(zookeeper_connect):
    """``owners_of(group, topic)``: an OwnersReader, closed after the test."""
    readers = []

    def start(group: str, topic: str) -> OwnersReader:
        readers.append(OwnersReader(zookeeper_connect, group, topic))
        return readers[-1]

    yield start
    for reader in readers:
        reader.close()


def finish(observer: OwnershipObserver, at_least: int = 20) -> None:
    observer.stop()
    assert observer.violations == []
    assert observer.conclusive >= at_least, (observer.samples, observer.conclusive)


def test_registration_and_ownership_znodes_are_kafkas(start_consumer, kafka, zookeeper_client):
    topic, group = unique("reg"), unique("group")
    kafka.admin.create_topics([(topic, 2, 1)])
    consumer = start_consumer(group, [topic], **{"consumer.id": "worker-1"})
    assert consumer.consumer_id == f"{group}_worker-1"
    session = consumer.zookeeper.client_id[0]

    data, stat = zookeeper_client.get(f"/consumers/{group}/ids/{group}_worker-1")
    registration = json.loads(data)
    assert list(registration) == ["version", "subscription", "pattern", "timestamp"]
    assert registration["version"] == 1 and registration["subscription"] == {topic: 1}
    assert registration["pattern"] == "static" and registration["timestamp"].isdigit()
    assert stat.ephemeralOwner == session

    assert consumer.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    for p in (0, 1):
        data, stat = zookeeper_client.get(f"/consumers/{group}/owners/{topic}/{p}")
        assert data == f"{group}_worker-1-0".encode() and stat.ephemeralOwner == session

    consumer.close()
    assert zookeeper_client.get_children(f"/consumers/{group}/ids") == []
    assert zookeeper_client.get_children(f"/consumers/{group}/owners/{topic}") == []
    with pytest.raises(ClientClosedError):
        consumer.poll(0)


def test_three_members_share_six_partitions_and_two_take_over_from_a_dead_one(
        start_consumer, kafka, owners_of, observe):
    topic, group = unique("six"), unique("group")
    kafka.admin.create_topics([(topic, 6, 1)])
    observer = observe(group, topic)
    reader = owners_of(group, topic)
    consumers = []
    for _ in range(3):
        consumer = start_consumer(group)
        observer.watch(consumer)
        consumer.subscribe([topic])
        consumers.append(consumer)
    wait_balanced(consumers, reader, [2, 2, 2])
    # the range assignment: sorted member ids take contiguous ranges in order
    ordered = sorted(consumers, key=thread_of)
    assert [sorted(tp.partition for tp in c.assignment()) for c in ordered] == \
        [[0, 1], [2, 3], [4, 5]]

    victim, survivors = consumers[1], [consumers[0], consumers[2]]
    observer.forget(victim)
    victim.zookeeper.stop()  # dies: its session ends without releasing anything
    wait_balanced(survivors, reader, [3, 3])
    ordered = sorted(survivors, key=thread_of)
    assert [sorted(tp.partition for tp in c.assignment()) for c in ordered] == \
        [[0, 1, 2], [3, 4, 5]]
    assert victim.assignment() == set()
    finish(observer)


def test_a_member_whose_session_expires_registers_again(start_consumer, kafka, zookeeper_connect,
                                                        zookeeper_client, observe, owners_of):
    topic, group = unique("expiry"), unique("group")
    kafka.admin.create_topics([(topic, 6, 1)])
    observer = observe(group, topic)
    reader = owners_of(group, topic)
    consumers = [start_consumer(group) for _ in range(3)]
    for consumer in consumers:
        observer.watch(consumer)
        consumer.subscribe([topic])
    wait_balanced(consumers, reader, [2, 2, 2])
    expiring = consumers[2]
    before = expiring.assignment()
    old_session = expiring.zookeeper.client_id[0]

    expire_session(expiring.zookeeper, ensemble_hosts(zookeeper_connect))

    new_session = expiring.zookeeper.client_id[0]
    assert new_session != old_session

    def registered_again():
        try:
            _, stat = zookeeper_client.get(f"/consumers/{group}/ids/{expiring.consumer_id}")
        except NoNodeError:
            return False
        return stat.ephemeralOwner == new_session

    wait_until(registered_again, 30, "the member registered with its new session")
    wait_balanced(consumers, reader, [2, 2, 2])
    assert expiring.assignment() == before  # the same plan as before the expiry
    for tp in expiring.assignment():
        _, stat = zookeeper_client.get(f"/consumers/{group}/owners/{topic}/{tp.partition}")
        assert stat.ephemeralOwner == new_session
    finish(observer)


def test_added_partitions_are_assigned(start_consumer, kafka, owners_of):
    topic, group = unique("grow"), unique("group")
    kafka.admin.create_topics([(topic, 4, 1)])
    reader = owners_of(group, topic)
    consumers = [start_consumer(group, [topic]) for _ in range(2)]
    wait_balanced(consumers, reader, [2, 2])
    kafka.admin.create_partitions({topic: 6})
    wait_balanced(consumers, reader, [3, 3])


def test_a_topic_created_after_subscribing_is_assigned(start_consumer, kafka):
    topic, group = unique("later"), unique("group")
    consumer = start_consumer(group, [topic])
    assert consumer.assignment() == set()
    kafka.admin.create_topics([(topic, 3, 1)])
    wait_until(lambda: consumer.assignment() == {TopicPartition(topic, p) for p in range(3)},
               30, "the new topic's partitions")


@pytest.mark.broker
@pytest.mark.zookeeper
def test_brokers_joining_and_leaving_trigger_rebalances(start_consumer, kafka, zookeeper_connect,
                                                        tmp_path):
    topic, group = unique("brokers"), unique("group")
    kafka.admin.create_topics([(topic, 2, 1)])
    consumer = start_consumer(group, [topic])
    assignment, count = consumer.assignment(), consumer.rebalances
    second = Broker(broker_config(zookeeper_connect, tmp_path / "b2", 2)).start()
    try:
        wait_until(lambda: consumer.rebalances > count, 30, "a rebalance after broker 2 joined")
        count = consumer.rebalances
    finally:
        second.stop()
    wait_until(lambda: consumer.rebalances > count, 30, "a rebalance after broker 2 left")
    assert consumer.assignment() == assignment


def test_members_with_other_topics_do_not_take_part_in_a_topics_ranges(start_consumer, kafka):
    group, shared, own = unique("group"), unique("shared"), unique("own")
    kafka.admin.create_topics([(shared, 4, 1), (own, 2, 1)])
    both = start_consumer(group, [shared, own])
    only_shared = start_consumer(group, [shared])

    def split():
        mine, theirs = both.assignment(), only_shared.assignment()
        return ({tp for tp in mine if tp.topic == own} == {TopicPartition(own, 0),
                                                            TopicPartition(own, 1)}
                and sum(tp.topic == shared for tp in mine) == 2 and len(theirs) == 2
                and {tp.topic for tp in theirs} == {shared} and not mine & theirs)

    wait_until(split, 30, "the shared topic split in two, the other all one member's")


def test_resubscribing_rebalances_the_group(start_consumer, kafka):
    group, first, second = unique("group"), unique("first"), unique("second")
    kafka.admin.create_topics([(first, 2, 1), (second, 2, 1)])
    a = start_consumer(group, [first, second])
    b = start_consumer(group, [first])
    wait_until(lambda: len(a.assignment()) == 3 and len(b.assignment()) == 1, 30,
               "b shares the first topic")
    b.subscribe([second])

    def split():
        mine, theirs = a.assignment(), b.assignment()
        return (len(mine) == 3 and len(theirs) == 1 and not mine & theirs
                and {tp.topic for tp in theirs} == {second}
                and {TopicPartition(first, 0), TopicPartition(first, 1)} <= mine)

    wait_until(split, 30, "the second topic split, the first all a's")


def test_a_consumer_id_in_use_is_refused(start_consumer, kafka):
    topic, group = unique("dup"), unique("group")
    kafka.admin.create_topics([(topic, 1, 1)])
    start_consumer(group, [topic], **{"consumer.id": "same"})
    twin = start_consumer(group, **{"consumer.id": "same"})
    with pytest.raises(ConsumerIdInUseError, match=f"/consumers/{group}/ids/{group}_same"):
        twin.subscribe([topic])


def test_a_rebalance_that_cannot_claim_its_partitions_fails_after_its_retries(
        start_consumer, kafka, zookeeper_client):
    topic, group = unique("stuck"), unique("group")
    kafka.admin.create_topics([(topic, 1, 1)])
    # an owner that never lets go: a znode of another session
    zookeeper_client.create(f"/consumers/{group}/owners/{topic}/0", b"someone-else-0",
                            ephemeral=True, makepath=True)
    consumer = start_consumer(group, **{"rebalance.max.retries": "3",
                                        "rebalance.backoff.ms": "50"})
    with pytest.raises(ConsumerRebalanceFailedError, match=f"{topic}-0 is still owned by "
                                                           "someone-else-0"):
        consumer.subscribe([topic])
    assert consumer.assignment() == set()
    zookeeper_client.delete(f"/consumers/{group}/owners/{topic}/0")
    # it keeps trying, and gets it once released
    wait_until(lambda: consumer.assignment() == {TopicPartition(topic, 0)}, 30,
               "the partition once released")


def test_poll_before_subscribe_is_refused(start_consumer):
    consumer = start_consumer(unique("group"))
    with pytest.raises(NotSubscribedError):
        consumer.poll(0)
    with pytest.raises(NotSubscribedError):
        consumer.commit()
    for topics in ([], ["a/b"], [""], [None]):
        with pytest.raises(InvalidArgumentError):
            consumer.subscribe(topics)


def test_brokers_are_given_or_discovered(zookeeper_connect, broker):
    group = unique("group")
    given = ZooKeeperGroupConsumer({"zookeeper.connect": zookeeper_connect, "group.id": group,
                                    "bootstrap.servers": bootstrap(broker)})
    discovered = ZooKeeperGroupConsumer({"zookeeper.connect": zookeeper_connect,
                                         "group.id": group})
    try:
        assert given.client.config.bootstrap_text == bootstrap(broker)
        assert discovered.client.config.bootstrap_text == bootstrap(broker)
    finally:
        given.close()
        discovered.close()


def test_without_brokers_to_discover_the_consumer_says_so(zookeeper_connect):
    with pytest.raises(BrokerNotAvailableError, match=r"no live broker .* under /brokers/ids"):
        ZooKeeperGroupConsumer({"zookeeper.connect": zookeeper_connect, "group.id": "g"})
