"""One local SparkSession for every kspark test that needs Spark (starting one takes seconds):
the kpy pytest plugin's (kspark.testing.spark: local[2, 4], so a failed task is retried as on a
cluster; two shuffle partitions; UTC; a warehouse in the session's temporary directory)."""

import threading

import pytest

from broker_lite.protocol.enums import AclOperation, AclPermissionType, ResourceType
from broker_lite.security.acl import AccessControlEntry, AclBinding, ResourcePattern
from broker_lite.server.network.authenticator import ANONYMOUS
from broker_lite.server.testing import start_brokers, stop_brokers
from kspark.testing.tiers import needs


@pytest.fixture(scope="session")
def spark(kpy_spark):
    return kpy_spark


@pytest.fixture
def process_all_available():
    """``process_all_available(query, timeout_s=180)``: ``query.processAllAvailable()``, which
    itself waits as long as the query has data left or stalls, bounded: past ``timeout_s`` it
    fails with the query's status and last progress. The query's own error is raised as is."""

    def run(query, timeout_s: float = 180) -> None:
        failure: list[BaseException] = []

        def process() -> None:
            try:
                query.processAllAvailable()
            except BaseException as exc:  # raised in the test's thread below
                failure.append(exc)

        thread = threading.Thread(target=process, name="processAllAvailable", daemon=True)
        thread.start()
        thread.join(timeout_s)
        if thread.is_alive():
            raise AssertionError(
                f"processAllAvailable() still waiting after {timeout_s} s; status: "
                f"{query.status}; last progress: {query.lastProgress}")
        if failure:
            raise failure[0]

    return run


def grant_acl(broker, operation, resource_type, name="kafka-cluster"):
    """An ACL for the query's principal (PLAINTEXT: ``User:ANONYMOUS``), written through the
    broker's authorizer."""
    assert broker.authorizer.create_acls([AclBinding(
        ResourcePattern(resource_type, name),
        AccessControlEntry(ANONYMOUS, "*", operation, AclPermissionType.ALLOW))]) == [None]


@pytest.fixture
@needs("broker", "zookeeper")
def acl_broker(zookeeper_connect, tmp_path):
    """A broker with the ACL authorizer; the principal may create, write and read every topic,
    and nothing more."""
    [broker] = start_brokers(zookeeper_connect, tmp_path, 1, {
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    grant_acl(broker, AclOperation.CREATE, ResourceType.CLUSTER)
    grant_acl(broker, AclOperation.WRITE, ResourceType.TOPIC, "*")
    grant_acl(broker, AclOperation.READ, ResourceType.TOPIC, "*")
    yield broker
    stop_brokers([broker])


@pytest.fixture
def grant():
    """``grant(broker, operation, resource_type, name)``: an ACL for the plaintext principal."""
    return grant_acl
