"""The client's ACL administration (``admin.acls``) against live brokers with and without an
authorizer, and the requests it builds for each version (v0 knows LITERAL patterns only)."""

import pytest

from broker_lite.client import KafkaClient
from broker_lite.client.admin.acls import create_acls_request, filter_request
from broker_lite.client.errors import (
    ClusterAuthorizationFailedError,
    InvalidArgumentError,
    InvalidRequestError,
    SecurityDisabledError,
    UnsupportedVersionError,
)
from broker_lite.common.tiers import needs
from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import (
    ANY_BINDING,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
    ResourcePatternFilter,
)
from broker_lite.server.network.authenticator import ANONYMOUS
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers

READ = AclOperation.READ
ALLOW = AclPermissionType.ALLOW


def binding(name="events", pattern_type=PatternType.LITERAL, principal="User:alice",
            kind=ResourceType.TOPIC, operation=READ):
    return AclBinding(ResourcePattern(kind, name, pattern_type),
                      AccessControlEntry(principal, "*", operation, ALLOW))


@pytest.fixture
@needs("broker", "zookeeper")
def acl_broker(zookeeper_connect, tmp_path):
    [broker] = start_brokers(zookeeper_connect, tmp_path, 1, {
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    yield broker
    stop_brokers([broker])


def test_create_describe_delete(acl_broker):
    acl_broker.authorizer.create_acls([binding("kafka-cluster", kind=ResourceType.CLUSTER,
                                               principal=ANONYMOUS, operation=AclOperation.ALTER)])
    with KafkaClient({"bootstrap.servers": bootstrap(acl_broker)}) as client:
        admin = client.admin
        admin.create_acls([binding(), binding("ev", PatternType.PREFIXED, "User:*")])
        topics = AclBindingFilter(ResourcePatternFilter(ResourceType.TOPIC, None,
                                                        PatternType.ANY))
        assert admin.describe_acls(topics) == [binding("ev", PatternType.PREFIXED, "User:*"),
                                               binding()]
        applying = AclBindingFilter(ResourcePatternFilter(ResourceType.TOPIC, "events",
                                                          PatternType.MATCH),
                                    AccessControlEntryFilter(principal="User:*"))
        assert admin.acls.delete_acls([applying]) == [[binding("ev", PatternType.PREFIXED,
                                                               "User:*")]]
        assert len(admin.describe_acls()) == 2  # events' and the cluster's
        with pytest.raises(InvalidRequestError, match="Invalid empty resource name"):
            admin.create_acls([binding("")])
        with pytest.raises(InvalidArgumentError):
            admin.create_acls(["not a binding"])


def test_refused_without_alter_on_the_cluster(acl_broker):
    with KafkaClient({"bootstrap.servers": bootstrap(acl_broker)}) as client:
        with pytest.raises(ClusterAuthorizationFailedError):
            client.admin.create_acls([binding()])
        with pytest.raises(ClusterAuthorizationFailedError):
            client.admin.describe_acls()


def test_refused_without_an_authorizer(broker):
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        with pytest.raises(SecurityDisabledError, match="No Authorizer is configured"):
            client.admin.delete_acls([ANY_BINDING])


def test_version_0_requests_carry_literal_patterns_only():
    assert create_acls_request([binding()], 0)["creations"][0]["resource_pattern_type"] == 3
    with pytest.raises(UnsupportedVersionError, match="knows only LITERAL"):
        create_acls_request([binding("ev", PatternType.PREFIXED)], 0)
    assert filter_request(ANY_BINDING, 0, "DescribeAcls")["pattern_type_filter"] == \
        PatternType.LITERAL  # ANY stands for LITERAL there
    assert filter_request(ANY_BINDING, 1, "DescribeAcls")["pattern_type_filter"] == \
        PatternType.ANY
    with pytest.raises(UnsupportedVersionError):
        filter_request(AclBindingFilter(ResourcePatternFilter(ResourceType.TOPIC, "t",
                                                              PatternType.MATCH)), 0,
                       "DeleteAcls")
