"""Topic administration: Kafka's name rules and the znodes each operation writes."""

import json
import re

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.parsers import ConfigError
from broker_lite.config.resolution import UnknownTopicConfigError
from broker_lite.zk import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    UnknownTopicError,
    add_partitions,
    create_topic,
    delete_topic,
    get_broker_config,
    get_topic_assignment,
    get_topic_config,
    list_topics,
    set_broker_config,
    set_topic_config,
    validate_topic_name,
)
from broker_lite.zk.admin import TopicSpec, check_new_partitions, plan_topic
from broker_lite.zk.cluster import ensure_persistent_paths
from broker_lite.zk.errors import (
    ConflictingTopicSettingsError,
    ReassignmentInProgressError,
)
from broker_lite.zk.layout import TopicAssignment, TopicZNode
from broker_lite.zk.registration import broker_registration, register_broker


@pytest.mark.parametrize("name", ["a", "events", "Events.v1", "with_underscore-dash",
                                  "__consumer_offsets", "x" * 249, "..."])
def test_legal_names(name):
    validate_topic_name(name)


@pytest.mark.parametrize("name,message", [
    ("", "can't be empty"),
    (".", "cannot be '.' or '..'"),
    ("..", "cannot be '.' or '..'"),
    ("x" * 250, "can't be longer than 249 characters"),
    ("a b", "character other than ASCII alphanumerics"),
    ("a/b", "character other than ASCII alphanumerics"),
    ("caf\u00e9", "character other than ASCII alphanumerics"),
    ("a:b", "character other than ASCII alphanumerics"),
])
def test_illegal_names(name, message):
    with pytest.raises(InvalidTopicError, match=message):
        validate_topic_name(name)


@pytest.fixture
def brokers(zookeeper_client):
    """Brokers 1, 2 and 3 registered (on the test's own session), no controller."""
    ensure_persistent_paths(zookeeper_client)
    for broker_id in (1, 2, 3):
        register_broker(zookeeper_client, broker_registration(BrokerConfig(), broker_id))
    return zookeeper_client


def test_create_writes_config_then_assignment(brokers):
    client = brokers
    assignment = create_topic(client, "t", 3, 2, {"retention.ms": "60000"}, start_index=0)
    assert assignment == {0: (1, 2), 1: (2, 3), 2: (3, 1)}
    written = json.loads(client.get("/brokers/topics/t")[0])
    assert list(written) == ["version", "topic_id", "partitions", "adding_replicas",
                             "removing_replicas"]
    assert written["version"] == 3 and re.fullmatch(r"[A-Za-z0-9_-]{22}", written["topic_id"])
    assert {k: v for k, v in written.items() if k not in ("version", "topic_id")} == {
        "partitions": {"0": [1, 2], "1": [2, 3], "2": [3, 1]},
        "adding_replicas": {}, "removing_replicas": {}}
    assert get_topic_config(client, "t") == {"retention.ms": "60000"}
    assert list_topics(client) == ["t"]
    # creating a topic writes no change notification: there is nothing to reload yet
    assert client.get_children("/config/changes") == []


def test_create_refusals(brokers):
    client = brokers
    create_topic(client, "a.b", 1, 1)
    with pytest.raises(TopicExistsError, match=r'Topic "a\.b" already exists\.'):
        create_topic(client, "a.b", 1, 1)
    with pytest.raises(InvalidTopicError, match=r"Topic 'a_b' collides with existing topic: a\.b"):
        create_topic(client, "a_b", 1, 1)
    with pytest.raises(InvalidReplicationFactorError,
                       match="replication factor 4 is larger than the 3 live"):
        create_topic(client, "big", 1, 4)
    with pytest.raises(InvalidPartitionsError):
        create_topic(client, "none", 0, 1)
    with pytest.raises(ConfigError, match=r"Unknown topic config name: retention\.hours"):
        create_topic(client, "bad-config", 1, 1, {"retention.hours": "1"})
    with pytest.raises(ConfigError, match=r"cleanup\.policy"):
        create_topic(client, "bad-value", 1, 1, {"cleanup.policy": "forever"})
    with pytest.raises(InvalidReplicaAssignmentError, match="consecutive 0-based integer sequence"):
        create_topic(client, "gap", 2, 1, replica_assignment={0: [1], 2: [2]})
    with pytest.raises(InvalidReplicaAssignmentError, match="Duplicate replica assignment found"):
        create_topic(client, "twice", 1, 2, replica_assignment={0: [1, 1]})
    assert list_topics(client) == ["a.b"]
    assert client.get_children("/config/topics") == ["a.b"]


def test_explicit_assignment(brokers):
    create_topic(brokers, "manual", 2, 2, replica_assignment={0: [3, 1], 1: [1, 3]})
    assert get_topic_assignment(brokers, "manual").partitions == {0: (3, 1), 1: (1, 3)}


def test_delete_marks_the_topic(brokers):
    client = brokers
    create_topic(client, "gone", 1, 1)
    delete_topic(client, "gone")
    assert client.get("/admin/delete_topics/gone")[0] == b""
    with pytest.raises(TopicAlreadyMarkedForDeletionError):
        delete_topic(client, "gone")
    with pytest.raises(TopicExistsError, match="queued for deletion"):
        create_topic(client, "gone", 1, 1)
    with pytest.raises(TopicAlreadyMarkedForDeletionError):
        add_partitions(client, "gone", 2)
    with pytest.raises(UnknownTopicError):
        delete_topic(client, "never")


def test_add_partitions_continues_the_round_robin(brokers):
    client = brokers
    create_topic(client, "grow", 2, 2, start_index=1)
    assert get_topic_assignment(client, "grow").partitions == {0: (2, 1), 1: (3, 2)}
    added = add_partitions(client, "grow", 5)
    assert list(added) == [2, 3, 4] and all(len(r) == 2 for r in added.values())
    assert [added[p][0] for p in added] == [1, 2, 3]  # leaders continue 2, 3, 1, 2, 3
    assert get_topic_assignment(client, "grow").partitions == {0: (2, 1), 1: (3, 2), **added}
    with pytest.raises(InvalidPartitionsError, match="has 5 partitions"):
        add_partitions(client, "grow", 5)
    with pytest.raises(InvalidReplicaAssignmentError):
        add_partitions(client, "grow", 6, replica_assignment={5: [1]})
    assert add_partitions(client, "grow", 6, replica_assignment={5: [1, 2]}) == {5: (1, 2)}
    with pytest.raises(UnknownTopicError):
        add_partitions(client, "never", 2)


def test_set_topic_config_notifies(brokers):
    client = brokers
    create_topic(client, "conf", 1, 1)
    set_topic_config(client, "conf", {"cleanup.policy": "compact", "segment.bytes": "1048576"})
    set_topic_config(client, "conf", {"cleanup.policy": "delete"})
    assert client.get("/config/topics/conf")[0] \
        == b'{"version":1,"config":{"cleanup.policy":"delete"}}'
    changes = sorted(client.get_children("/config/changes"))
    assert changes == ["config_change_0000000000", "config_change_0000000001"]
    assert client.get("/config/changes/" + changes[0])[0] \
        == b'{"version":2,"entity_path":"topics/conf"}'
    with pytest.raises(UnknownTopicError):
        set_topic_config(client, "never", {})


def test_broker_configs_are_written_as_kafka_writes_them_and_notified(zookeeper_client):
    client = zookeeper_client
    assert get_broker_config(client, "<default>") == {}
    set_broker_config(client, "<default>", {"log.retention.ms": "60000"})
    set_broker_config(client, "1", {"log.cleaner.backoff.ms": "100"})
    assert client.get("/config/brokers/<default>")[0] \
        == b'{"version":1,"config":{"log.retention.ms":"60000"}}'
    assert get_broker_config(client, "1") == {"log.cleaner.backoff.ms": "100"}
    changes = sorted(client.get_children("/config/changes"))
    assert [client.get("/config/changes/" + c)[0] for c in changes] == [
        b'{"version":2,"entity_path":"brokers/<default>"}',
        b'{"version":2,"entity_path":"brokers/1"}']


# -- the checks of CreateTopics and CreatePartitions requests (Kafka's order and messages) ---------


def plan(client, name, partitions=-1, replication_factor=-1, assignment=(), configs=None):
    return plan_topic(client, TopicSpec(name, partitions, replication_factor, assignment,
                                        configs or {}),
                      default_partitions=2, default_replication_factor=1)


def test_plan_topic_with_defaults_and_explicit_assignments(brokers):
    planned = plan(brokers, "fresh", configs={"cleanup.policy": "compact"})
    assert (planned.partitions, planned.replication_factor) == (2, 1)
    assert planned.overrides == {"cleanup.policy": "compact"}
    assert set(planned.assignment) == {0, 1} and all(
        len(replicas) == 1 and replicas[0] in (1, 2, 3) for replicas in planned.assignment.values())
    manual = plan(brokers, "manual", assignment=[(0, [3, 1]), (1, [1, 2])])
    assert manual.assignment == {0: (3, 1), 1: (1, 2)}
    assert list_topics(brokers) == []  # planning writes nothing


@pytest.mark.parametrize("name,kwargs,error,message", [
    # the request's own checks, in Kafka's order: null configs first, then an existing name ...
    ("taken", {"configs": {"retention.ms": None}}, ConfigError,
     "Null value not supported for topic configs: retention.ms"),
    ("taken", {}, TopicExistsError, "Topic 'taken' already exists."),
    ("both", {"partitions": 1, "assignment": [(0, [1])]}, ConflictingTopicSettingsError,
     "Both numPartitions or replicationFactor and replicasAssignments were set"),
    ("twice", {"assignment": [(0, [1]), (0, [2])]}, InvalidReplicaAssignmentError,
     "consecutive 0-based integer sequence"),
    ("none", {"partitions": 0}, InvalidPartitionsError,
     "Number of partitions must be larger than 0."),
    ("none", {"replication_factor": 0}, InvalidReplicationFactorError,
     "Replication factor must be larger than 0."),
    ("big", {"replication_factor": 4}, InvalidReplicationFactorError,
     "Replication factor: 4 larger than available brokers: 3."),
    # ... then Kafka's validateTopicCreate: the name, deletion, collisions, the assignment
    ("a/b", {}, InvalidTopicError, "character other than ASCII alphanumerics"),
    ("deleting", {}, TopicExistsError, 'Topic "deleting" is queued for deletion.'),
    ("tak.en", {}, InvalidTopicError, "Topic 'tak.en' collides with existing topic: tak_en"),
    ("uneven", {"assignment": [(0, [1]), (1, [1, 2])]}, InvalidReplicaAssignmentError,
     "All partitions should have the same number of replicas"),
    ("dup", {"assignment": [(0, [1, 1])]}, InvalidReplicaAssignmentError,
     "Duplicate replica assignment found"),
    ("gap", {"assignment": [(0, [1]), (2, [1])]}, InvalidReplicaAssignmentError,
     "consecutive 0-based integer sequence"),
    ("bad-config", {"configs": {"retention.hours": "1"}}, UnknownTopicConfigError,
     "Unknown topic config name: retention.hours"),
    ("bad-value", {"configs": {"cleanup.policy": "forever"}}, ConfigError, "cleanup.policy"),
])
def test_plan_topic_refusals(brokers, name, kwargs, error, message):
    for existing in ("taken", "tak_en", "deleting"):
        create_topic(brokers, existing, 1, 1)
    delete_topic(brokers, "deleting")
    brokers.delete("/brokers/topics/deleting", recursive=True)  # as the controller would
    with pytest.raises(error, match=re.escape(message)):
        plan(brokers, name, **kwargs)


def test_check_new_partitions(brokers):
    client = brokers
    create_topic(client, "grow", 2, 2, start_index=0)
    assert check_new_partitions(client, "grow", 4) is None  # the round robin's
    assert check_new_partitions(client, "grow", 3, [[2, 3]]) == {2: (2, 3)}
    refusals = [
        ("never", 3, None, UnknownTopicError, "The topic 'never' does not exist."),
        ("grow", 1, None, InvalidPartitionsError,
         "Topic currently has 2 partitions, which is higher than the requested 1."),
        ("grow", 2, None, InvalidPartitionsError, "Topic already has 2 partitions."),
        ("grow", 3, [[1, 7]], InvalidReplicaAssignmentError,
         "Unknown broker(s) in replica assignment: 7."),
        ("grow", 4, [[1, 2]], InvalidReplicaAssignmentError,
         "Increasing the number of partitions by 2 but 1 assignments provided."),
        ("grow", 3, [[1]], InvalidReplicaAssignmentError,
         "Inconsistent replication factor between partitions, partition 0 has 2"),
        ("grow", 3, [[1, 1]], InvalidReplicaAssignmentError,
         "Duplicate brokers not allowed in replica assignment: 1, 1 for partition id 2."),
    ]
    for name, count, assignment, error, message in refusals:
        with pytest.raises(error, match=re.escape(message)):
            check_new_partitions(client, name, count, assignment)
    create_topic(client, "wide", 1, 3)
    brokers.delete("/brokers/ids/3")
    with pytest.raises(InvalidReplicationFactorError,
                       match=re.escape("Replication factor: 3 larger than available brokers: 2.")):
        check_new_partitions(client, "wide", 2)
    delete_topic(client, "wide")
    with pytest.raises(TopicAlreadyMarkedForDeletionError, match="queued for deletion"):
        check_new_partitions(client, "wide", 2)


def test_check_new_partitions_refuses_a_topic_being_reassigned(brokers):
    client = brokers
    create_topic(client, "moving", 1, 1, replica_assignment={0: [1]})
    moving = TopicAssignment({0: (1, 2)}, adding_replicas={0: (2,)},
                             topic_id=get_topic_assignment(client, "moving").topic_id)
    client.set("/brokers/topics/moving", TopicZNode.encode(moving))
    with pytest.raises(ReassignmentInProgressError, match="reassignment is in progress"):
        check_new_partitions(client, "moving", 2)
