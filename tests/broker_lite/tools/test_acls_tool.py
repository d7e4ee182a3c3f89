"""``broker-lite acls`` as a user runs it: child processes against a live broker with Kafka's
ZooKeeper-mode authorizer, Kafka's output checked line by line, and the ACLs checked against
what the broker's authorizer then decides."""

import pytest

from broker_lite.common.tiers import needs
from broker_lite.protocol.enums import AclOperation, AclPermissionType, ResourceType
from broker_lite.security.acl import AccessControlEntry, AclBinding, ResourcePattern
from broker_lite.server.network.authenticator import ANONYMOUS
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.tools.testing import closed_port, run_tool

Op, R = AclOperation, ResourceType
HOST = "10.0.0.1"


@pytest.fixture
@needs("broker", "zookeeper")
def acl_broker(zookeeper_connect, tmp_path):
    """A broker with the ACL authorizer, where the tool's connections (``User:ANONYMOUS``) may
    change ACLs (Alter on the cluster)."""
    [broker] = start_brokers(zookeeper_connect, tmp_path, 1, {
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    broker.authorizer.create_acls([AclBinding(
        ResourcePattern(R.CLUSTER, "kafka-cluster"),
        AccessControlEntry(ANONYMOUS, "*", Op.ALTER, AclPermissionType.ALLOW))])
    yield broker
    stop_brokers([broker])


def acls(broker, *args: str, stdin: str | None = None):
    return run_tool("acls", "--bootstrap-server", bootstrap(broker), *args, stdin=stdin)


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def usage(result, message: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in result.stderr


def allowed(broker, principal, operation, resource_type, name) -> bool:
    return broker.authorizer.authorize(principal, HOST, operation, resource_type, name)


def test_add_list_remove(acl_broker):
    added = ok(acls(acl_broker, "--add", "--allow-principal", "User:alice", "--operation", "Read",
                    "--operation", "Describe", "--topic", "events"))
    assert added == (
        "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=events, "
        "patternType=LITERAL)`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n")
    assert allowed(acl_broker, "User:alice", Op.READ, R.TOPIC, "events")
    assert not allowed(acl_broker, "User:alice", Op.WRITE, R.TOPIC, "events")
    listed = ok(acls(acl_broker, "--list", "--topic", "events"))
    assert listed == added.replace("Adding ACLs", "Current ACLs")
    ok(acls(acl_broker, "--add", "--deny-principal", "User:bob", "--deny-host", HOST,
            "--topic", "events"))
    assert not allowed(acl_broker, "User:bob", Op.READ, R.TOPIC, "events")
    bob = ok(acls(acl_broker, "--list", "--principal", "User:bob"))
    assert bob.splitlines() == [
        "ACLs for principal `User:bob`",
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=events, "
        "patternType=LITERAL)`: ",
        f" \t(principal=User:bob, host={HOST}, operation=ALL, permissionType=DENY) ", ""]
    removed = ok(acls(acl_broker, "--remove", "--allow-principal", "User:alice", "--operation",
                      "Read", "--topic", "events", "--force"))
    assert removed == ""
    assert not allowed(acl_broker, "User:alice", Op.READ, R.TOPIC, "events")
    assert allowed(acl_broker, "User:alice", Op.DESCRIBE, R.TOPIC, "events")
    ok(acls(acl_broker, "--remove", "--topic", "events", "--force"))  # every ACL of it
    assert ok(acls(acl_broker, "--list", "--topic", "events")) == ""


def test_remove_asks_first(acl_broker):
    ok(acls(acl_broker, "--add", "--allow-principal", "User:alice", "--group", "g"))
    declined = ok(acls(acl_broker, "--remove", "--group", "g", stdin="n\n"))
    assert declined == ("Are you sure you want to delete all ACLs for resource filter "
                        "`ResourcePattern(resourceType=GROUP, name=g, patternType=LITERAL)`? "
                        "(y/n)\n")
    assert allowed(acl_broker, "User:alice", Op.READ, R.GROUP, "g")
    ok(acls(acl_broker, "--remove", "--group", "g", stdin="y\n"))
    assert not allowed(acl_broker, "User:alice", Op.READ, R.GROUP, "g")


def test_producer_and_consumer_roles_with_prefixed_patterns(acl_broker):
    ok(acls(acl_broker, "--add", "--allow-principal", "User:etl", "--producer", "--topic",
            "etl-", "--transactional-id", "etl-", "--idempotent", "--resource-pattern-type",
            "prefixed"))
    for operation in (Op.WRITE, Op.DESCRIBE, Op.CREATE):
        assert allowed(acl_broker, "User:etl", operation, R.TOPIC, "etl-orders")
    assert allowed(acl_broker, "User:etl", Op.WRITE, R.TRANSACTIONAL_ID, "etl-tx-1")
    # --idempotent grants on the cluster (LITERAL kafka-cluster) whatever the pattern type
    assert allowed(acl_broker, "User:etl", Op.IDEMPOTENT_WRITE, R.CLUSTER, "kafka-cluster")
    ok(acls(acl_broker, "--add", "--allow-principal", "User:bi", "--consumer", "--topic",
            "orders", "--group", "dashboards"))
    assert allowed(acl_broker, "User:bi", Op.READ, R.TOPIC, "orders")
    assert allowed(acl_broker, "User:bi", Op.READ, R.GROUP, "dashboards")
    assert not allowed(acl_broker, "User:bi", Op.WRITE, R.TOPIC, "orders")
    matching = ok(acls(acl_broker, "--list", "--topic", "etl-orders", "--resource-pattern-type",
                       "match"))
    assert matching.startswith("Current ACLs for resource `ResourcePattern(resourceType=TOPIC, "
                               "name=etl-, patternType=PREFIXED)`: \n")
    assert "operation=CREATE" in matching and "orders`" not in matching


def test_the_cluster_is_named_with_literal_patterns_only(acl_broker):
    ok(acls(acl_broker, "--add", "--allow-principal", "User:ops", "--operation", "Describe",
            "--operation", "AlterConfigs", "--cluster"))
    assert allowed(acl_broker, "User:ops", Op.DESCRIBE_CONFIGS, R.CLUSTER, "kafka-cluster")
    usage(acls(acl_broker, "--add", "--allow-principal", "User:ops", "--cluster",
               "--resource-pattern-type", "prefixed"), "You must provide at least one resource")
    listed = ok(acls(acl_broker, "--list", "--cluster"))
    assert "ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)" \
        in listed


@pytest.mark.parametrize("args,message", [
    ((), "Command must include exactly one action: --list, --add, --remove."),
    (("--add", "--list"), "Command must include exactly one action"),
    (("--add", "--topic", "t"), "You must specify one of: --allow-principal, --deny-principal "
                                "when trying to add ACLs."),
    (("--add", "--allow-principal", "User:a"), "You must provide at least one resource"),
    (("--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type",
      "match"), "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."),
    (("--add", "--allow-principal", "User:a", "--group", "g", "--operation", "Write"),
     "ResourceType GROUP only supports operations All, Read, Delete, Describe"),
    (("--add", "--allow-principal", "alice", "--topic", "t"),
     "expected a string in format principalType:principalName but got alice"),
    (("--list", "--producer"), 'Option "[list]" can\'t be used with option "[producer]"'),
    (("--add", "--allow-principal", "User:a", "--producer"),
     "With --producer you must specify a --topic"),
    (("--add", "--allow-principal", "User:a", "--consumer", "--topic", "t"),
     "With --consumer you must specify a --topic and a --group"),
    (("--add", "--allow-principal", "User:a", "--idempotent", "--topic", "t"),
     "The --idempotent option is only available if --producer is set"),
    (("--remove", "--principal", "User:a", "--topic", "t"),
     "The --principal option is only available if --list is set"),
    (("--list", "--resource-pattern-type", "suffixed"), "Unknown resource-pattern-type"),
])
def test_usage_errors_are_kafkas(args, message):
    usage(run_tool("acls", "--bootstrap-server", f"127.0.0.1:{closed_port()}", *args), message)


def test_broker_refusals_are_errors(broker):
    refused = run_tool("acls", "--bootstrap-server", bootstrap(broker), "--list")
    assert refused.returncode == 1
    assert refused.stderr.startswith("broker-lite acls: error: SECURITY_DISABLED (54)")


def test_command_config_gives_client_settings(acl_broker, tmp_path):
    config = tmp_path / "client.properties"
    config.write_text("client.id=acl-admin\nsecurity.protocol=PLAINTEXT\n")
    ok(acls(acl_broker, "--command-config", str(config), "--list"))
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n")
    failed = acls(acl_broker, "--command-config", str(config), "--list")
    assert failed.returncode == 1 and "sasl.jaas.config" in failed.stderr
