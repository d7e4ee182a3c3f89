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
