"""Share groups (KIP-932) on three broker processes: the share-partitions' state, kept by the
share coordinator in ``__share_group_state``, survives a SIGKILL of the partition's leader and
a move of the share coordinator, so that confluent-kafka's ``ShareConsumer`` never gets an
acknowledged record again and gets every record it had not acknowledged."""

import time
import uuid

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

pytestmark = [pytest.mark.slow]

TOPIC = "durable"
SHARE_CLUSTER = {"properties": {"group.share.enable": "true",
                                "share.coordinator.state.topic.num.partitions": "1",
                                "offsets.topic.num.partitions": "1"}}


def share_consumer(servers: str, group: str) -> ShareConsumer:
    consumer = ShareConsumer({"bootstrap.servers": servers, "group.id": group,
                              "share.acknowledgement.mode": "explicit"})
    consumer.subscribe([TOPIC])
    return consumer


def poll_exactly(consumer: ShareConsumer, count: int, timeout_s: float = 90) -> list:
    got: list = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        for message in consumer.poll(0.5):
            if message.error() is None:
                got.append(message)
    return got


def accept_all(consumer: ShareConsumer, messages) -> None:
    for message in messages:
        consumer.acknowledge(message, AcknowledgeType.ACCEPT)
    consumer.commit_sync(60)


def produce(servers: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": servers, "acks": "all"})
    for value in values:
        producer.produce(TOPIC, value=value)
    assert producer.flush(60) == 0


@pytest.mark.parametrize("kpy_cluster", [SHARE_CLUSTER], indirect=True)
def test_share_state_survives_a_sigkill_and_a_leader_move(kpy_cluster):
    servers = kpy_cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(TOPIC, 1, 3)])[TOPIC].result(60)
    group = f"durable-{uuid.uuid4().hex[:6]}"
    for future in admin.incremental_alter_configs([ConfigResource(
            ConfigResource.Type.GROUP, group, incremental_configs=[ConfigEntry(
                "share.auto.offset.reset", "earliest",
                incremental_operation=AlterConfigOpType.SET)])]).values():
        future.result(60)
    produce(servers, [b"r%d" % i for i in range(10)])

    first = share_consumer(servers, group)
    held = poll_exactly(first, 10)
    assert sorted(m.offset() for m in held) == list(range(10))
    accept_all(first, [m for m in held if m.offset() < 5])  # 5..9 stay acquired, unanswered

    # SIGKILL the partition's leader: the new leader loads the state from the share
    # coordinator, where 0..4 are acknowledged and the locks of 5..9 are gone with the leader
    leader = kpy_cluster.leader(TOPIC, 0)
    kpy_cluster.kill(leader)
    kpy_cluster.wait_for_leader(TOPIC, 0, other_than=leader)
    second = share_consumer(servers, group)
    again = poll_exactly(second, 5)
    assert sorted(m.offset() for m in again) == [5, 6, 7, 8, 9]
    accept_all(second, again)
    kpy_cluster.start_broker(leader)

    # move the share coordinator: its partition of __share_group_state gets another leader
    state_topic = "__share_group_state"  # one partition: every key's share coordinator
    coordinator = kpy_cluster.leader(state_topic, 0)
    kpy_cluster.kill(coordinator)
    kpy_cluster.wait_for_leader(state_topic, 0, other_than=coordinator)
    if kpy_cluster.leader(TOPIC, 0) == coordinator:
        kpy_cluster.wait_for_leader(TOPIC, 0, other_than=coordinator)
    produce(servers, [b"s%d" % i for i in range(10, 15)])
    third = share_consumer(servers, group)
    latest = poll_exactly(third, 5)
    assert sorted(m.offset() for m in latest) == [10, 11, 12, 13, 14]
    accept_all(third, latest)
    assert poll_exactly(third, 1, timeout_s=5) == []  # nothing acknowledged comes again
    for consumer in (first, second, third):
        consumer.close()
    kpy_cluster.start_broker(coordinator)
