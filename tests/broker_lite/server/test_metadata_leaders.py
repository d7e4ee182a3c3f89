"""Metadata names a broker as a partition's leader only once that broker serves the partition:
ZooKeeper shows the controller's election before the leader's own watch has taken the
partition on, and a client sent there in between would be refused (or, producing with acks=0,
would lose its records without a word)."""

import threading
import uuid

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.zk.admin import create_topic
from broker_lite.zk.testing import wait_until


def partition_metadata(kafka_call, broker, topic: str) -> dict:
    response = kafka_call(broker.port, ApiKey.METADATA, 12,
                          {"topics": [{"name": topic}], "allow_auto_topic_creation": False})
    return response["topics"][0]["partitions"][0]


def test_a_partition_elected_here_but_not_yet_served_has_no_leader_in_metadata(broker,
                                                                                 kafka_call):
    topic = f"handover-{uuid.uuid4().hex[:6]}"
    entered, release = threading.Event(), threading.Event()
    # Hold up the loop that takes partitions on; the controller elects on a loop of its own.
    broker.zk_broker._loop.put(lambda: (entered.set(), release.wait(30)))
    assert entered.wait(10)
    try:
        create_topic(broker.zookeeper.client, topic, 1, 1)
        wait_until(lambda: (broker.services.cluster.partitions(topic) or [None])[0] is not None
                   and broker.services.cluster.partitions(topic)[0].state is not None,
                   message="the controller elected a leader")
        waiting = partition_metadata(kafka_call, broker, topic)
        assert (waiting["error_code"], waiting["leader_id"]) == (
            ErrorCode.LEADER_NOT_AVAILABLE, -1)
    finally:
        release.set()
    wait_until(lambda: partition_metadata(kafka_call, broker, topic)["leader_id"]
               == broker.broker_id, message="the leader once it serves the partition")
    assert broker.logs.get(topic, 0) is not None


def test_a_new_topics_partitions_are_served_all_together(broker, kafka_call, monkeypatch):
    topic = f"together-{uuid.uuid4().hex[:6]}"
    creating_third, release = threading.Event(), threading.Event()
    get_or_create = broker.logs.get_or_create

    def slow_third_log(name, partition, *args, **kwargs):
        if (name, partition) == (topic, 2):  # the first two are taken on already
            creating_third.set()
            release.wait(30)
        return get_or_create(name, partition, *args, **kwargs)

    monkeypatch.setattr(broker.logs, "get_or_create", slow_third_log)
    create_topic(broker.zookeeper.client, topic, 4, 1)
    assert creating_third.wait(10)
    try:
        assert broker.logs.get(topic, 0) is not None and broker.logs.get(topic, 1) is not None
        waiting = topic_metadata(kafka_call, broker, topic)
        assert [(p["error_code"], p["leader_id"]) for p in waiting] == [
            (ErrorCode.LEADER_NOT_AVAILABLE, -1)] * 4
    finally:
        release.set()
    wait_until(lambda: [p["leader_id"] for p in topic_metadata(kafka_call, broker, topic)]
               == [broker.broker_id] * 4, message="every partition led once all are served")


def topic_metadata(kafka_call, broker, topic: str) -> list[dict]:
    response = kafka_call(broker.port, ApiKey.METADATA, 12,
                          {"topics": [{"name": topic}], "allow_auto_topic_creation": False})
    return sorted(response["topics"][0]["partitions"], key=lambda p: p["partition_index"])
