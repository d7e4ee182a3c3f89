"""Metadata: brokers, controller, cluster id and the topics' partitions with their leaders, as
the cluster view tells them; unknown topics answered or auto-created."""

import pytest

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.zk.admin import TopicSpec
from broker_lite.zk.errors import (
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicExistsError,
)
from broker_lite.zk.layout import PartitionState

from .handler_support import BROKER_ID, CLUSTER_ID, OTHER_BROKER, Harness


def metadata(harness, topics, version: int = 12, allow_auto_topic_creation: bool = True):
    body = {"topics": None if topics is None else [{"name": t} for t in topics],
            "allow_auto_topic_creation": allow_auto_topic_creation}
    return harness.call(ApiKey.METADATA, version, body)


def by_name(response) -> dict[str, dict]:
    return {t["name"]: t for t in response["topics"]}


def test_brokers_controller_cluster_id_and_leaders(harness):
    info = harness.topic("events", [BROKER_ID, OTHER_BROKER], epoch=4)
    response = metadata(harness, ["events"])
    assert response["brokers"] == [
        {"node_id": 1, "host": "127.0.0.1", "port": 9092, "rack": None},
        {"node_id": 2, "host": "127.0.0.1", "port": 9093, "rack": "rack-b"}]
    assert (response["cluster_id"], response["controller_id"]) == (CLUSTER_ID, BROKER_ID)
    [topic] = response["topics"]
    assert (topic["error_code"], topic["name"], topic["topic_id"], topic["is_internal"]) == \
        (0, "events", info.topic_id, False)
    assert [(p["partition_index"], p["error_code"], p["leader_id"], p["leader_epoch"],
             p["replica_nodes"], p["isr_nodes"]) for p in topic["partitions"]] == [
        (0, 0, BROKER_ID, 4, [BROKER_ID], [BROKER_ID]),
        (1, 0, OTHER_BROKER, 4, [OTHER_BROKER], [OTHER_BROKER])]


def test_every_topic_when_none_is_named(harness):
    harness.topic("b-topic", [BROKER_ID])
    harness.topic("a-topic", [OTHER_BROKER])
    assert list(by_name(metadata(harness, None))) == ["a-topic", "b-topic"]  # v1+: null
    assert list(by_name(metadata(harness, [], version=0))) == ["a-topic", "b-topic"]  # v0: []
    assert list(by_name(metadata(harness, [], version=1))) == []  # v1+: [] is no topic


def test_a_leader_this_broker_does_not_serve_yet_is_not_available(harness):
    """ZooKeeper shows this broker elected (epoch 1) before its own watch took the partition
    on (it still knows epoch 0), or before it holds the partition at all: clients retry."""
    harness.topic("moving", [BROKER_ID])
    harness.cluster.add("moving", [PartitionState(BROKER_ID, 1, (BROKER_ID,), 1)])
    harness.cluster.add("unelected", [None])
    harness.cluster.add("unheld", [PartitionState(BROKER_ID, 0, (BROKER_ID,), 1)])
    topics = by_name(metadata(harness, ["moving", "unelected", "unheld"]))
    for name in ("moving", "unelected", "unheld"):
        [partition] = topics[name]["partitions"]
        assert (partition["error_code"], partition["leader_id"], partition["leader_epoch"]) == \
            (ErrorCode.LEADER_NOT_AVAILABLE, -1, -1), name
    assert topics["moving"]["partitions"][0]["isr_nodes"] == [BROKER_ID]
    assert topics["unelected"]["partitions"][0]["isr_nodes"] == []


def test_internal_topics_are_marked(harness):
    harness.offsets_topic()
    [topic] = metadata(harness, ["__consumer_offsets"])["topics"]
    assert topic["is_internal"] and topic["error_code"] == 0


def test_unknown_topics_are_auto_created(harness):
    response = by_name(metadata(harness, ["fresh"]))
    assert response["fresh"]["error_code"] == ErrorCode.LEADER_NOT_AVAILABLE
    assert harness.services.admin.created == [TopicSpec("fresh")]  # the broker's defaults


@pytest.mark.parametrize("refusal,error", [
    (InvalidTopicError("topic name 'a b' is illegal"), ErrorCode.INVALID_TOPIC_EXCEPTION),
    (InvalidReplicationFactorError("Replication factor: 3 larger than available brokers: 2."),
     ErrorCode.INVALID_REPLICATION_FACTOR),
    (TopicExistsError("created meanwhile"), ErrorCode.LEADER_NOT_AVAILABLE),
])
def test_auto_creation_refused(harness, refusal, error):
    harness.services.admin.refusal = refusal
    assert by_name(metadata(harness, ["a b"]))["a b"]["error_code"] == error


def test_no_auto_creation_when_the_request_or_the_broker_says_no(tmp_path, harness):
    assert by_name(metadata(harness, ["fresh"], allow_auto_topic_creation=False))["fresh"][
        "error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    disabled = Harness(tmp_path / "disabled", {"auto.create.topics.enable": "false"})
    try:
        assert by_name(metadata(disabled, ["fresh"]))["fresh"]["error_code"] == \
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert disabled.services.admin.created == []
    finally:
        disabled.close()
    assert harness.services.admin.created == []


def test_the_offsets_topic_is_created_by_the_group_coordinator(harness):
    response = by_name(metadata(harness, ["__consumer_offsets"]))
    assert response["__consumer_offsets"]["error_code"] == ErrorCode.LEADER_NOT_AVAILABLE
    assert harness.offsets_topic_creations == 1 and harness.services.admin.created == []


TOPIC_OPERATIONS = ["READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
                    "DESCRIBE_CONFIGS", "ALTER_CONFIGS"]
CLUSTER_OPERATIONS = ["CREATE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS",
                      "ALTER_CONFIGS", "IDEMPOTENT_WRITE"]
NOT_REQUESTED = -2147483648


def operations(bits: int) -> list[str]:
    """Kafka's AclOperation names of the bits set."""
    from broker_lite.protocol.enums import AclOperation

    return [AclOperation(code).name for code in range(32) if bits >> code & 1]


@pytest.mark.parametrize("version", [8, 10, 12])
def test_authorized_operations_when_asked(harness, version):
    harness.topic("events", [BROKER_ID])
    asked = harness.call(ApiKey.METADATA, version, {
        "topics": [{"name": "events"}, {"name": "missing"}], "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": True,
        "include_topic_authorized_operations": True})
    assert [sorted(operations(t["topic_authorized_operations"])) for t in asked["topics"]] == \
        [sorted(TOPIC_OPERATIONS)] * 2
    if version <= 10:  # the cluster's operations moved to DescribeCluster in v11
        assert sorted(operations(asked["cluster_authorized_operations"])) == \
            sorted(CLUSTER_OPERATIONS)
    not_asked = metadata(harness, ["events"], version=version)
    assert not_asked["topics"][0]["topic_authorized_operations"] == NOT_REQUESTED
    assert not_asked["cluster_authorized_operations"] == NOT_REQUESTED


def test_describe_cluster_reports_the_cluster_operations_when_asked(harness):
    asked = harness.call(ApiKey.DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True,
                                                      "endpoint_type": 1})
    assert sorted(operations(asked["cluster_authorized_operations"])) == \
        sorted(CLUSTER_OPERATIONS)
    not_asked = harness.call(ApiKey.DESCRIBE_CLUSTER, 0, {})
    assert not_asked["cluster_authorized_operations"] == NOT_REQUESTED
