"""The ACL znodes, byte for byte as Kafka's ZooKeeper-mode authorizer writes them: the paths of
LITERAL and PREFIXED patterns, the ACL JSON (read in any key order, as Kafka 3.x's HashMap
writes it), and both kinds of change notification."""

import pytest

from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import AccessControlEntry, ResourcePattern
from broker_lite.zk import MalformedZnodeError
from broker_lite.zk.layout import (
    ACL_PATHS,
    AclChangeNotificationSequenceZNode,
    ResourceZNode,
)

LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
ALICE_READ = AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
BOB_DENY = AccessControlEntry("User:bob", "10.0.0.7", AclOperation.CLUSTER_ACTION,
                              AclPermissionType.DENY)


@pytest.mark.parametrize("pattern,path", [
    (ResourcePattern(ResourceType.TOPIC, "events", LIT), "/kafka-acl/Topic/events"),
    (ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", LIT),
     "/kafka-acl/Cluster/kafka-cluster"),
    (ResourcePattern(ResourceType.TRANSACTIONAL_ID, "*", LIT), "/kafka-acl/TransactionalId/*"),
    (ResourcePattern(ResourceType.GROUP, "etl-", PRE), "/kafka-acl-extended/prefixed/Group/etl-"),
])
def test_resource_paths(pattern, path):
    assert ResourceZNode.path(pattern) == path


def test_acls_json():
    data = ResourceZNode.encode([BOB_DENY, ALICE_READ])
    assert data == (b'{"version":1,"acls":['
                    b'{"principal":"User:alice","permissionType":"Allow","operation":"Read",'
                    b'"host":"*"},'
                    b'{"principal":"User:bob","permissionType":"Deny","operation":"ClusterAction",'
                    b'"host":"10.0.0.7"}]}')
    assert ResourceZNode.decode(data, "/p") == {ALICE_READ, BOB_DENY}
    # Kafka 3.x writes the keys in its HashMap's order, and names in any case are read
    kafka_3 = (b'{"acls":[{"principal":"User:bob","permissionType":"DENY","host":"10.0.0.7",'
               b'"operation":"CLUSTERACTION"}],"version":1}')
    assert ResourceZNode.decode(kafka_3, "/p") == {BOB_DENY}
    assert ResourceZNode.decode(b"", "/p") == frozenset()


@pytest.mark.parametrize("data,problem", [
    (b'{"version":2,"acls":[]}', "unsupported ACL version 2"),
    (b'{"version":1}', "missing field 'acls'"),
    (b'{"version":1,"acls":[{"principal":"alice","permissionType":"Allow","operation":"Read",'
     b'"host":"*"}]}', "principalType:principalName"),
    (b'{"version":1,"acls":[1]}', "not a JSON object"),
    (b"not json", "not JSON"),
])
def test_malformed_acls_name_the_path(data, problem):
    with pytest.raises(MalformedZnodeError, match=problem) as raised:
        ResourceZNode.decode(data, "/kafka-acl/Topic/x")
    assert "/kafka-acl/Topic/x" in str(raised.value)


def test_change_notifications():
    literal = ResourcePattern(ResourceType.TOPIC, "events", LIT)
    prefixed = ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx-", PRE)
    assert AclChangeNotificationSequenceZNode.path_prefix(LIT) == "/kafka-acl-changes/acl_changes_"
    assert AclChangeNotificationSequenceZNode.path_prefix(PRE) == \
        "/kafka-acl-extended-changes/acl_changes_"
    assert AclChangeNotificationSequenceZNode.encode(literal) == b"TOPIC:events"
    assert AclChangeNotificationSequenceZNode.encode(prefixed) == (
        b'{"version":1,"resourceType":"TRANSACTIONAL_ID","name":"tx-","patternType":"PREFIXED"}')
    literal_path = "/kafka-acl-changes/acl_changes_0000000001"
    extended_path = "/kafka-acl-extended-changes/acl_changes_0000000001"
    assert AclChangeNotificationSequenceZNode.decode(b"TOPIC:events", literal_path) == literal
    assert AclChangeNotificationSequenceZNode.decode(b"Topic:a:b", literal_path) == \
        ResourcePattern(ResourceType.TOPIC, "a:b", LIT)  # older brokers' case; names with ':'
    assert AclChangeNotificationSequenceZNode.decode(
        AclChangeNotificationSequenceZNode.encode(prefixed), extended_path) == prefixed
    with pytest.raises(MalformedZnodeError, match="ResourceType:ResourceName"):
        AclChangeNotificationSequenceZNode.decode(b"events", literal_path)
    with pytest.raises(MalformedZnodeError, match="no such resource pattern"):
        AclChangeNotificationSequenceZNode.decode(b"Broker:1", literal_path)


def test_acl_paths_are_kafkas():
    assert set(ACL_PATHS) == {
        *(f"{root}/{kind}" for root in ("/kafka-acl", "/kafka-acl-extended/prefixed")
          for kind in ("Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User")),
        "/kafka-acl-changes", "/kafka-acl-extended-changes"}
