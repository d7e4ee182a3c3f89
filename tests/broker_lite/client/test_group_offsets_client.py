"""commit / committed against broker_lite's group coordinator (one broker and a three-broker
cluster), interoperating with librdkafka's commits through confluent-kafka."""

import uuid

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as CTopicPartition

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.common.tiers import needs
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers

OFFSETS_TOPIC_SETTINGS = {"offsets.topic.replication.factor": "1",
                          "offsets.topic.num.partitions": "3"}


@pytest.fixture(params=[1, 3], ids=["one-broker", "three-brokers"])
@needs("broker", "zookeeper")
def cluster(request, zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, request.param, OFFSETS_TOPIC_SETTINGS)
    yield brokers
    stop_brokers(brokers)


@pytest.fixture
def client(cluster):
    with KafkaClient({"bootstrap.servers": bootstrap(cluster)}) as client:
        yield client


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_commit_then_committed(client):
    topic, group = unique("offsets"), unique("group")
    client.admin.create_topics([(topic, 3, 1)])
    tps = [TopicPartition(topic, p) for p in range(3)]
    assert client.committed(group, tps) == dict.fromkeys(tps)  # nothing committed yet
    client.commit(group, {tps[0]: 17, tps[2]: 5}, metadata="batch 1")
    assert client.committed(group, tps) == {tps[0]: 17, tps[1]: None, tps[2]: 5}
    client.commit(group, {tps[0]: 20})
    assert client.committed(group, [tps[0]]) == {tps[0]: 20}
    assert client.committed(group, None) == {tps[0]: 20, tps[2]: 5}
    assert client.committed(unique("other"), tps) == dict.fromkeys(tps)  # groups are separate


def test_commits_are_shared_with_librdkafka(client, cluster):
    topic, group = unique("interop"), unique("group")
    client.admin.create_topics([(topic, 2, 1)])
    client.commit(group, {TopicPartition(topic, 0): 11})
    consumer = Consumer({"bootstrap.servers": bootstrap(cluster), "group.id": group,
                         "enable.auto.commit": False, "log_level": 3})
    try:
        found = consumer.committed([CTopicPartition(topic, 0), CTopicPartition(topic, 1)],
                                   timeout=20)
        assert [(tp.partition, tp.offset) for tp in found] == [(0, 11), (1, -1001)]
        consumer.assign([CTopicPartition(topic, 1, 0)])
        consumer.commit(offsets=[CTopicPartition(topic, 1, 9)], asynchronous=False)
    finally:
        consumer.close()
    assert client.committed(group, [TopicPartition(topic, 1)]) == {TopicPartition(topic, 1): 9}
