"""Znode paths and payloads, byte for byte as a Kafka 2.x broker writes them, both ways."""

import uuid

import pytest

from broker_lite.zk import MalformedZnodeError
from broker_lite.zk.endpoints import EndPoint, parse_endpoints
from broker_lite.zk.errors import ZooKeeperConfigError
from broker_lite.zk.layout import (
    PERSISTENT_PATHS,
    BrokerIdZNode,
    BrokerRegistration,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    ConsumerIdZNode,
    ConsumerOffsetZNode,
    ConsumerOwnerZNode,
    ConsumerRegistration,
    ControllerEpochZNode,
    ControllerInfo,
    ControllerZNode,
    DeleteTopicsTopicZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PartitionState,
    PreferredReplicaElectionZNode,
    ProducerIdBlock,
    ProducerIdBlockZNode,
    ReassignPartitionsZNode,
    TopicAssignment,
    TopicPartitionStateZNode,
    TopicZNode,
)

PLAINTEXT = EndPoint("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT")

# (definition, path, value, exact bytes): encode gives the bytes, decode gives the value back.
GOLDEN = [
    (ClusterIdZNode, "/cluster/id", "qZ1SF9VaR3aXhPwdTVNbeg",
     b'{"version":"1","id":"qZ1SF9VaR3aXhPwdTVNbeg"}'),
    (ControllerZNode, "/controller", ControllerInfo(1, 1700000000000),
     b'{"version":1,"brokerid":1,"timestamp":"1700000000000"}'),
    (ControllerEpochZNode, "/controller_epoch", 1, b"1"),
    (BrokerIdZNode, "/brokers/ids/1", BrokerRegistration(1, (PLAINTEXT,), 1700000000000),
     (b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
      b'"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"host":"127.0.0.1",'
      b'"timestamp":"1700000000000","port":9092,"version":4}')),
    (BrokerIdZNode, "/brokers/ids/2",
     BrokerRegistration(2, (EndPoint("SSL", "::1", 9093, "SSL"), PLAINTEXT), 5, rack="r1"),
     (b'{"listener_security_protocol_map":{"SSL":"SSL","PLAINTEXT":"PLAINTEXT"},'
      b'"endpoints":["SSL://[::1]:9093","PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,'
      b'"host":"127.0.0.1","timestamp":"5","port":9092,"version":4,"rack":"r1"}')),
    (TopicZNode, "/brokers/topics/events", TopicAssignment({0: (1, 2), 1: (2, 1)}),
     (b'{"version":2,"partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{},'
      b'"removing_replicas":{}}')),
    # Kafka 2.8+: with the topic id, Kafka's textual UUID (URL-safe base64, no padding)
    (TopicZNode, "/brokers/topics/events",
     TopicAssignment({0: (1,)}, topic_id=uuid.UUID("0f2a3b4c-5d6e-4f70-8192-a3b4c5d6e7f8")),
     (b'{"version":3,"topic_id":"Dyo7TF1uT3CBkqO0xdbn-A","partitions":{"0":[1]},'
      b'"adding_replicas":{},"removing_replicas":{}}')),
    (TopicPartitionStateZNode, "/brokers/topics/events/partitions/0/state",
     PartitionState(leader=1, leader_epoch=0, isr=(1,), controller_epoch=1),
     b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}'),
    (ConfigEntityZNode, "/config/topics/events", {"cleanup.policy": "compact"},
     b'{"version":1,"config":{"cleanup.policy":"compact"}}'),
    (ConfigEntityChangeNotificationSequenceZNode, "/config/changes/config_change_0000000007",
     "topics/events", b'{"version":2,"entity_path":"topics/events"}'),
    (ProducerIdBlockZNode, "/latest_producer_id_block", ProducerIdBlock(1, 0, 999),
     b'{"version":1,"broker":1,"block_start":"0","block_end":"999"}'),
    (ConsumerIdZNode, "/consumers/g/ids/g_host-1-abc",
     ConsumerRegistration({"events": 1}, "static", 1700000000000),
     b'{"version":1,"subscription":{"events":1},"pattern":"static","timestamp":"1700000000000"}'),
    (ConsumerOwnerZNode, "/consumers/g/owners/events/0", "g_host-1-abc-0", b"g_host-1-abc-0"),
    (ConsumerOffsetZNode, "/consumers/g/offsets/events/0", 42, b"42"),
    (ReassignPartitionsZNode, "/admin/reassign_partitions", {("events", 0): (2, 3)},
     b'{"version":1,"partitions":[{"topic":"events","partition":0,"replicas":[2,3]}]}'),
    (PreferredReplicaElectionZNode, "/admin/preferred_replica_election", {("events", 1)},
     b'{"version":1,"partitions":[{"topic":"events","partition":1}]}'),
    (IsrChangeNotificationSequenceZNode, "/isr_change_notification/isr_change_0000000003",
     {("events", 0), ("logs", 2)},
     b'{"version":1,"partitions":[{"topic":"events","partition":0},'
     b'{"topic":"logs","partition":2}]}'),
]

PATHS = [
    (ClusterIdZNode.path(), "/cluster/id"),
    (ControllerZNode.path(), "/controller"),
    (ControllerEpochZNode.path(), "/controller_epoch"),
    (BrokerIdZNode.path(1), "/brokers/ids/1"),
    (TopicZNode.path("events"), "/brokers/topics/events"),
    (TopicPartitionStateZNode.path("events", 3), "/brokers/topics/events/partitions/3/state"),
    (ConfigEntityZNode.path("topics", "events"), "/config/topics/events"),
    (ConfigEntityChangeNotificationSequenceZNode.path(7),
     "/config/changes/config_change_0000000007"),
    (DeleteTopicsTopicZNode.path("events"), "/admin/delete_topics/events"),
    (ProducerIdBlockZNode.path(), "/latest_producer_id_block"),
    (ConsumerIdZNode.path("g", "c1"), "/consumers/g/ids/c1"),
    (ConsumerOwnerZNode.path("g", "events", 0), "/consumers/g/owners/events/0"),
    (ConsumerOffsetZNode.path("g", "events", 0), "/consumers/g/offsets/events/0"),
]


@pytest.mark.parametrize("definition,path,value,encoded", GOLDEN,
                         ids=[f"{g[0].__name__}-{i}" for i, g in enumerate(GOLDEN)])
def test_golden_bytes_both_ways(definition, path, value, encoded):
    assert definition.encode(value) == encoded
    assert definition.decode(encoded, path) == value


@pytest.mark.parametrize("actual,expected", PATHS)
def test_paths(actual, expected):
    assert actual == expected


def test_persistent_paths_are_kafkas():
    assert set(PERSISTENT_PATHS) == {
        "/consumers", "/brokers/ids", "/brokers/topics", "/brokers/seqid", "/config/changes",
        "/config/topics", "/config/clients", "/config/users", "/config/brokers",
        "/admin/delete_topics", "/isr_change_notification", "/latest_producer_id_block",
        "/log_dir_event_notification"}


def test_log_dir_event_as_kafka_writes_it():
    """Kafka's LogDirEventNotificationZNode: the broker, and event 1 (LogDirFailure)."""
    encoded = LogDirEventNotificationSequenceZNode.encode(3)
    assert encoded == b'{"version":1,"broker":3,"event":1}'
    assert LogDirEventNotificationSequenceZNode.decode(
        encoded, "/log_dir_event_notification/log_dir_event_0000000000") == (3, 1)
    assert LogDirEventNotificationSequenceZNode.PATH_PREFIX == \
        "/log_dir_event_notification/log_dir_event_"


def test_delete_marker_has_no_data_and_empty_producer_block_is_none():
    assert DeleteTopicsTopicZNode.encode() == b""
    assert ProducerIdBlockZNode.decode(b"") is None


def test_older_versions_decode():
    # version 1 topic znodes have no reassignment fields; version 1 broker znodes no endpoints
    assert TopicZNode.decode(b'{"version":1,"partitions":{"1":[2],"0":[1]}}', "/brokers/topics/t") \
        == TopicAssignment({0: (1,), 1: (2,)})
    broker = BrokerIdZNode.decode(
        b'{"jmx_port":-1,"timestamp":"1","host":"h","version":1,"port":9092}', "/brokers/ids/3")
    assert broker.broker_id == 3 \
        and broker.endpoints == (EndPoint("PLAINTEXT", "h", 9092, "PLAINTEXT"),)
    # version 3: endpoints, but no protocol map; the listener names are protocols
    broker = BrokerIdZNode.decode(
        b'{"jmx_port":-1,"timestamp":"1","endpoints":["SSL://h:9093"],"host":null,"version":3,'
        b'"port":-1}', "/brokers/ids/4")
    assert broker.endpoints == (EndPoint("SSL", "h", 9093, "SSL"),) \
        and broker.plaintext_endpoint is None


MALFORMED = [
    (TopicZNode, "/brokers/topics/t", b"{not json"),
    (TopicZNode, "/brokers/topics/t", b"[1,2]"),
    (TopicZNode, "/brokers/topics/t", b'{"version":2}'),
    (TopicZNode, "/brokers/topics/t", b'{"version":2,"partitions":{"x":[1]}}'),
    (TopicZNode, "/brokers/topics/t", b'{"version":2,"partitions":{"0":[true]}}'),
    (TopicPartitionStateZNode, "/brokers/topics/t/partitions/0/state", b""),
    (TopicPartitionStateZNode, "/brokers/topics/t/partitions/0/state",
     b'{"controller_epoch":1,"leader":"1","version":1,"leader_epoch":0,"isr":[1]}'),
    (ClusterIdZNode, "/cluster/id", b"\xff\xfe"),
    (ControllerEpochZNode, "/controller_epoch", b"one"),
    (ControllerZNode, "/controller", b'{"version":1,"brokerid":1,"timestamp":"soon"}'),
    (ConfigEntityZNode, "/config/topics/t", b'{"version":1,"config":{"retention.ms":1}}'),
    (ConsumerOffsetZNode, "/consumers/g/offsets/t/0", b""),
    (ReassignPartitionsZNode, "/admin/reassign_partitions",
     b'{"version":1,"partitions":[{"topic":"t","partition":0}]}'),
    (IsrChangeNotificationSequenceZNode, "/isr_change_notification/isr_change_1",
     b'{"version":1,"partitions":[1]}'),
    (LogDirEventNotificationSequenceZNode, "/log_dir_event_notification/log_dir_event_1",
     b'{"version":1,"broker":"1","event":1}'),
]


@pytest.mark.parametrize("definition,path,data", MALFORMED)
def test_malformed_data_names_the_path(definition, path, data):
    with pytest.raises(MalformedZnodeError) as caught:
        definition.decode(data, path)
    assert caught.value.path == path and path in str(caught.value)


def test_endpoints():
    assert parse_endpoints("plaintext://:9092") == (EndPoint("PLAINTEXT", "", 9092, "PLAINTEXT"),)
    with pytest.raises(ZooKeeperConfigError, match="INTERNAL"):
        parse_endpoints("INTERNAL://h:1")
    with pytest.raises(ZooKeeperConfigError, match="NAME://host:port"):
        parse_endpoints("127.0.0.1:9092")
    with pytest.raises(ZooKeeperConfigError, match="once"):
        parse_endpoints("PLAINTEXT://a:1,PLAINTEXT://b:2")
