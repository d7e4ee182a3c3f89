"""DescribeAcls, CreateAcls and DeleteAcls as Kafka's AclApis answers them, over the
ZooKeeper-mode authorizer on a real ZooKeeper: Describe or Alter on the cluster needed,
SECURITY_DISABLED without an authorizer, Kafka's validation of each creation, the connection
closed for values no Kafka knows."""

import pytest

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.server.authorizer import AclAuthorizer
from broker_lite.server.network import CloseConnection

ADMIN, BOB = "User:admin", "User:bob"
TOPIC, GROUP, CLUSTER = 2, 3, 4
LITERAL, PREFIXED, ANY, MATCH = 3, 4, 1, 2
READ, WRITE, ALLOW, DENY = 3, 4, 3, 2


@pytest.fixture
def acl_broker(harness, zookeeper_client):
    """The harness with the ZooKeeper-mode authorizer; ``User:admin`` is a super user."""
    harness.services.authorizer = authorizer = AclAuthorizer(zookeeper_client, {ADMIN}).start()
    yield harness
    authorizer.stop()


def creation(name="events", kind=TOPIC, pattern=LITERAL, principal="User:alice", host="*",
             operation=READ, permission=ALLOW):
    return {"resource_type": kind, "resource_name": name, "resource_pattern_type": pattern,
            "principal": principal, "host": host, "operation": operation,
            "permission_type": permission}


def acl_filter(name=None, kind=ANY, pattern=ANY, principal=None, operation=1, permission=1):
    return {"resource_type_filter": kind, "resource_name_filter": name,
            "pattern_type_filter": pattern, "principal_filter": principal, "host_filter": None,
            "operation": operation, "permission_type": permission}


def create(harness, creations, principal=ADMIN, version=3):
    response = harness.call(ApiKey.CREATE_ACLS, version, {"creations": creations},
                            principal=principal)
    return [(r["error_code"], r["error_message"]) for r in response["results"]]


def describe(harness, principal=ADMIN, version=3, **fields):
    return harness.call(ApiKey.DESCRIBE_ACLS, version, acl_filter(**fields), principal=principal)


def test_without_an_authorizer_security_is_disabled(harness):
    assert create(harness, [creation()]) == [(ErrorCode.SECURITY_DISABLED,
                                              "No Authorizer is configured.")]
    described = describe(harness)
    assert (described["error_code"], described["error_message"]) == \
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured on the broker")
    deleted = harness.call(ApiKey.DELETE_ACLS, 2, {"filters": [acl_filter()]})
    assert deleted["filter_results"][0]["error_code"] == ErrorCode.SECURITY_DISABLED


def test_create_describe_delete(acl_broker):
    assert create(acl_broker, [creation(), creation("etl-", GROUP, PREFIXED, "User:*"),
                               creation("kafka-cluster", CLUSTER, operation=7)]) == \
        [(0, None)] * 3
    described = describe(acl_broker)
    assert described["error_code"] == 0
    assert [(r["resource_type"], r["resource_name"], r["pattern_type"],
             [(a["principal"], a["operation"]) for a in r["acls"]])
            for r in described["resources"]] == [
        (TOPIC, "events", LITERAL, [("User:alice", READ)]),
        (GROUP, "etl-", PREFIXED, [("User:*", READ)]),
        (CLUSTER, "kafka-cluster", LITERAL, [("User:alice", 7)])]
    matching = describe(acl_broker, name="etl-42", kind=GROUP, pattern=MATCH)["resources"]
    assert [r["resource_name"] for r in matching] == ["etl-"]
    deleted = acl_broker.call(ApiKey.DELETE_ACLS, 3, {"filters": [
        acl_filter(kind=TOPIC), acl_filter(principal="User:nobody")]}, principal=ADMIN)
    first, second = deleted["filter_results"]
    assert [(m["resource_name"], m["principal"], m["error_code"])
            for m in first["matching_acls"]] == [("events", "User:alice", 0)]
    assert second == {"error_code": 0, "error_message": None, "matching_acls": []}
    assert [r["resource_name"] for r in describe(acl_broker)["resources"]] == \
        ["etl-", "kafka-cluster"]


def test_the_cluster_must_allow_it(acl_broker):
    assert create(acl_broker, [creation(), creation()], principal=BOB) == \
        [(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")] * 2
    assert describe(acl_broker, principal=BOB)["error_code"] == \
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert create(acl_broker, [creation("kafka-cluster", CLUSTER, principal=BOB, operation=8)]
                  ) == [(0, None)]  # Describe on the cluster: DescribeAcls, not CreateAcls
    assert describe(acl_broker, principal=BOB)["error_code"] == 0
    deleted = acl_broker.call(ApiKey.DELETE_ACLS, 1, {"filters": [acl_filter()]}, principal=BOB)
    assert deleted["filter_results"][0]["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert len(describe(acl_broker)["resources"]) == 1


def test_each_creation_is_checked_on_its_own(acl_broker):
    results = create(acl_broker, [
        creation("my-cluster", CLUSTER),
        creation(""),
        creation("a/b"),
        creation(principal="alice"),
        creation(pattern=MATCH),
        creation(operation=1),   # ANY
        creation(permission=1),  # ANY
        creation("fine"),
    ])
    assert [code for code, _ in results] == [ErrorCode.INVALID_REQUEST] * 7 + [0]
    assert results[0][1] == "The only valid name for the CLUSTER resource is kafka-cluster"
    assert results[1][1] == "Invalid empty resource name"
    assert "invalid resource name: a/b" in results[2][1]
    assert "principalType:principalName" in results[3][1]
    assert "patternType must not be MATCH" in results[4][1]
    assert [r["resource_name"] for r in describe(acl_broker)["resources"]] == ["fine"]


@pytest.mark.parametrize("api,body", [
    (ApiKey.CREATE_ACLS, {"creations": [creation(operation=99)]}),
    (ApiKey.CREATE_ACLS, {"creations": [creation(kind=0)]}),
    (ApiKey.DESCRIBE_ACLS, acl_filter(pattern=0)),
    (ApiKey.DELETE_ACLS, {"filters": [acl_filter(permission=7)]}),
])
def test_unknown_values_close_the_connection(acl_broker, api, body):
    with pytest.raises(CloseConnection, match="unknown elements"):
        acl_broker.call(api, 2, body, principal=ADMIN)


def test_version_0_knows_literal_patterns_only(acl_broker):
    create(acl_broker, [creation("ev", pattern=PREFIXED), creation("events")])
    assert create(acl_broker, [creation("logs")], version=0) == [(0, None)]
    described = describe(acl_broker, version=0, kind=TOPIC)  # v0 filters: LITERAL
    assert [r["resource_name"] for r in described["resources"]] == ["events", "logs"]
