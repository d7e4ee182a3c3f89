"""The ZooKeeper-mode AclAuthorizer on a real ZooKeeper: ACLs written where and as Kafka writes
them, read back at start (also those Kafka itself wrote), changes announced and followed by
another authorizer (another broker), conditional updates that lose no concurrent change,
deletion by filters, and what it refuses to store."""

import threading

import pytest
from kazoo.client import KazooClient

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
    ResourcePatternFilter,
)
from broker_lite.server.authorizer import AclAuthorizer
from broker_lite.zk.client import connect
from broker_lite.zk.testing import join_all, wait_until

T, G = ResourceType.TOPIC, ResourceType.GROUP
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
Op, ALLOW, DENY = AclOperation, AclPermissionType.ALLOW, AclPermissionType.DENY
HOST = "10.0.0.1"


def binding(kind, name, pattern_type, principal, operation, permission=ALLOW, host="*"):
    return AclBinding(ResourcePattern(kind, name, pattern_type),
                      AccessControlEntry(principal, host, operation, permission))


@pytest.fixture
def authorizers(zookeeper_connect):
    """``start()`` -> a started AclAuthorizer on a session of its own (a broker of its own);
    all stopped at the end."""
    started: list[tuple[AclAuthorizer, KazooClient]] = []

    def start(**settings) -> AclAuthorizer:
        client = connect(zookeeper_connect)
        authorizer = AclAuthorizer(client, **settings).start()
        started.append((authorizer, client))
        return authorizer

    yield start
    for authorizer, client in started:
        authorizer.stop()
        client.stop()
        client.close()


def test_acls_are_stored_as_kafka_stores_them(authorizers, zookeeper_client):
    authorizer = authorizers()
    results = authorizer.create_acls([
        binding(T, "events", LIT, "User:alice", Op.READ),
        binding(G, "etl-", PRE, "User:*", Op.READ, DENY, HOST)])
    assert results == [None, None]
    data, _ = zookeeper_client.get("/kafka-acl/Topic/events")
    assert data == (b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",'
                    b'"operation":"Read","host":"*"}]}')
    data, _ = zookeeper_client.get("/kafka-acl-extended/prefixed/Group/etl-")
    assert data == (b'{"version":1,"acls":[{"principal":"User:*","permissionType":"Deny",'
                    b'"operation":"Read","host":"10.0.0.1"}]}')
    literal = zookeeper_client.get_children("/kafka-acl-changes")
    extended = zookeeper_client.get_children("/kafka-acl-extended-changes")
    assert [zookeeper_client.get(f"/kafka-acl-changes/{c}")[0] for c in literal] == \
        [b"TOPIC:events"]
    assert [zookeeper_client.get(f"/kafka-acl-extended-changes/{c}")[0] for c in extended] == \
        [b'{"version":1,"resourceType":"GROUP","name":"etl-","patternType":"PREFIXED"}']
    assert literal[0].startswith("acl_changes_") and len(literal[0]) == len("acl_changes_") + 10
    # adding an ACL that is there already changes nothing and announces nothing
    assert authorizer.create_acls([binding(T, "events", LIT, "User:alice", Op.READ)]) == [None]
    assert len(zookeeper_client.get_children("/kafka-acl-changes")) == 1


def test_acls_written_by_kafka_are_loaded_at_start(authorizers, zookeeper_client):
    zookeeper_client.create(  # as Kafka 3.x writes them: its HashMap's key order
        "/kafka-acl/Topic/legacy", b'{"acls":[{"principal":"User:carol","permissionType":"Allow",'
        b'"host":"*","operation":"Write"}],"version":1}', makepath=True)
    zookeeper_client.create("/kafka-acl-extended/prefixed/TransactionalId/tx-", b'{"version":1,'
                            b'"acls":[{"principal":"User:carol","permissionType":"Allow",'
                            b'"operation":"Write","host":"*"}]}', makepath=True)
    zookeeper_client.create("/kafka-acl/Broker/1", b"{}", makepath=True)  # an unknown type
    authorizer = authorizers()
    assert authorizer.authorize("User:carol", HOST, Op.WRITE, T, "legacy")
    assert authorizer.authorize("User:carol", HOST, Op.DESCRIBE, T, "legacy")
    assert authorizer.authorize("User:carol", HOST, Op.WRITE, ResourceType.TRANSACTIONAL_ID,
                                "tx-42")
    assert not authorizer.authorize("User:dave", HOST, Op.WRITE, T, "legacy")


def test_changes_reach_every_broker(authorizers):
    first, second = authorizers(), authorizers()
    first.create_acls([binding(T, "events", LIT, "User:alice", Op.WRITE),
                       binding(T, "ev", PRE, "User:bob", Op.WRITE)])
    wait_until(lambda: second.authorize("User:alice", HOST, Op.WRITE, T, "events")
               and second.authorize("User:bob", HOST, Op.WRITE, T, "events"),
               message="the second authorizer sees the new ACLs")
    second.delete_acls([AclBindingFilter(ResourcePatternFilter(T, "ev", PRE))])
    wait_until(lambda: not first.authorize("User:bob", HOST, Op.WRITE, T, "events"),
               message="the first authorizer sees the deletion")
    assert first.authorize("User:alice", HOST, Op.WRITE, T, "events")


def test_concurrent_changes_are_all_kept(authorizers, zookeeper_client):
    first, second = authorizers(), authorizers()
    first.create_acls([binding(T, "shared", LIT, "User:a", Op.READ)])
    wait_until(lambda: second.cache.get(ResourcePattern(T, "shared", LIT)) is not None)
    # the second's cached version is stale once the first writes again: its conditional
    # update fails, and it retries on what ZooKeeper holds
    first.create_acls([binding(T, "shared", LIT, "User:b", Op.READ)])
    threads = [threading.Thread(target=lambda who=who, a=a: a.create_acls(
        [binding(T, "shared", LIT, f"User:{who}", Op.READ)]), daemon=True)
        for who, a in (("c", second), ("d", first), ("e", second))]
    for thread in threads:
        thread.start()
    join_all(threads, 60, "create_acls still running after 60 s")
    data, _ = zookeeper_client.get("/kafka-acl/Topic/shared")
    for who in "abcde":
        assert f'"User:{who}"'.encode() in data
    wait_until(lambda: all(a.authorize(f"User:{w}", HOST, Op.READ, T, "shared")
                           for a in (first, second) for w in "abcde"))


def test_delete_by_filters(authorizers, zookeeper_client):
    authorizer = authorizers()
    authorizer.create_acls([
        binding(T, "events", LIT, "User:alice", Op.READ),
        binding(T, "events", LIT, "User:bob", Op.READ),
        binding(T, "ev", PRE, "User:alice", Op.WRITE),
        binding(G, "etl", LIT, "User:alice", Op.READ)])
    alice = AclBindingFilter(ResourcePatternFilter(T, "events", PatternType.MATCH),
                             AccessControlEntryFilter(principal="User:alice"))
    every_topic = AclBindingFilter(ResourcePatternFilter(T, None, PatternType.ANY))
    first, second = authorizer.delete_acls([alice, every_topic])
    assert sorted(str(b.entry) for b, error in first.deleted if error is None) == [
        "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)",
        "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)"]
    # a binding two filters match is reported under the first
    assert [(b.pattern.name, b.entry.principal) for b, _ in second.deleted] == \
        [("events", "User:bob")]
    assert zookeeper_client.exists("/kafka-acl/Topic/events") is None
    assert zookeeper_client.exists("/kafka-acl-extended/prefixed/Topic/ev") is None
    assert [str(b.pattern) for b in authorizer.acls(AclBindingFilter(ResourcePatternFilter(
        ResourceType.ANY, None, PatternType.ANY)))] == [
        "ResourcePattern(resourceType=GROUP, name=etl, patternType=LITERAL)"]


def test_deletes_acls_this_broker_has_not_heard_of_yet(authorizers, zookeeper_client):
    authorizer = authorizers()
    zookeeper_client.create("/kafka-acl/Topic/fresh", b'{"version":1,"acls":[{"principal":'
                            b'"User:x","permissionType":"Allow","operation":"Read","host":"*"}]}')
    result, = authorizer.delete_acls([AclBindingFilter(ResourcePatternFilter(T, "fresh", LIT))])
    assert [b.entry.principal for b, _ in result.deleted] == ["User:x"]
    assert zookeeper_client.exists("/kafka-acl/Topic/fresh") is None


def test_refused_bindings(authorizers, zookeeper_client):
    authorizer = authorizers()
    results = authorizer.create_acls([
        binding(T, "a/b", LIT, "User:alice", Op.READ),
        binding(T, "ok", LIT, "alice", Op.READ),
        binding(T, "ok", LIT, "User:alice", Op.UNKNOWN),
        binding(T, "ok", LIT, "User:alice", Op.READ)])
    assert [r and r.code for r in results] == [ErrorCode.INVALID_REQUEST] * 3 + [None]
    assert "invalid resource name: a/b" in results[0].message
    assert "principalType:principalName" in results[1].message
    assert "unknown elements" in results[2].message
    assert zookeeper_client.get_children("/kafka-acl/Topic") == ["ok"]
