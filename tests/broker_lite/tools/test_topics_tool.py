"""``broker-lite topics`` as a user runs it: child processes against a live broker, checked
against what the cluster itself reports."""

import time

import pytest

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.server.testing import bootstrap
from broker_lite.tools.testing import closed_port, run_tool
from broker_lite.zk.layout import encode_uuid


@pytest.fixture
def servers(broker) -> str:
    return bootstrap(broker)


def topics(servers: str, *args: str):
    return run_tool("topics", "--bootstrap-server", servers, *args)


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def failed(result, *fragments: str) -> str:
    """The error line of a run that failed with exit status 1."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("broker-lite "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr
    return result.stderr



def test_create_describe_alter_and_delete(servers, broker):
    created = ok(topics(servers, "--create", "--topic", "events", "--partitions", "3",
                        "--replication-factor", "1", "--config", "retention.ms=60000"))
    assert created == "Created topic events.\n"
    with KafkaClient({"bootstrap.servers": servers}) as client:
        described = client.admin.describe_topics(["events"])["events"]
        assert client.admin.describe_configs("events")["retention.ms"] == "60000"
    topic_id = encode_uuid(described.topic_id)
    assert ok(topics(servers, "--describe", "--topic", "events")).splitlines() == [
        f"Topic: events\tTopicId: {topic_id}\tPartitionCount: 3\tReplicationFactor: 1\t"
        "Configs: retention.ms=60000",
        *(f"\tTopic: events\tPartition: {p}\tLeader: {broker.broker_id}\tReplicas: "
          f"{broker.broker_id}\tIsr: {broker.broker_id}" for p in range(3))]

    assert ok(topics(servers, "--alter", "--topic", "events", "--partitions", "5")) == ""
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert client.partitions("events") == [0, 1, 2, 3, 4]
    lines = ok(topics(servers, "--describe", "--topic", "events")).splitlines()
    assert "PartitionCount: 5" in lines[0] and len(lines) == 6

    assert ok(topics(servers, "--delete", "--topic", "events")) == ""
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert "events" not in client.topics()
    assert ok(topics(servers, "--list")) == ""


def test_list_shows_internal_topics_unless_excluded(servers):
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([("b-topic", 1, 1), ("a-topic", 1, 1)])
        client.commit("some-group", {TopicPartition("a-topic", 0): 0})  # makes the offsets topic
    assert ok(topics(servers, "--list")).splitlines() == [
        "__consumer_offsets", "a-topic", "b-topic"]
    assert ok(topics(servers, "--list", "--exclude-internal")).splitlines() == [
        "a-topic", "b-topic"]
    assert ok(topics(servers, "--list", "--topic", "a.*,__.*", "--exclude-internal")) == \
        "a-topic\n"


def test_describe_selects_topics_by_regular_expression_and_report(servers):
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([("logs-1", 2, 1, {"segment.ms": "100000"}),
                                    ("logs-2", 1, 1), ("metrics", 1, 1)])
    lines = ok(topics(servers, "--describe", "--topic", "logs-.*")).splitlines()
    assert [line.split("\t")[0] for line in lines if not line.startswith("\t")] == [
        "Topic: logs-1", "Topic: logs-2"]
    assert len(lines) == 5
    overrides = ok(topics(servers, "--describe", "--topics-with-overrides")).splitlines()
    assert len(overrides) == 1
    assert overrides[0].startswith("Topic: logs-1\t")
    assert overrides[0].endswith("\tConfigs: segment.ms=100000")
    # every partition is healthy: the reports list none, and no topic lines
    for report in ("--under-replicated-partitions", "--unavailable-partitions",
                   "--under-min-isr-partitions"):
        assert ok(topics(servers, "--describe", report)) == ""
    at_min = ok(topics(servers, "--describe", "--topic", "metrics", "--at-min-isr-partitions"))
    assert at_min.splitlines() == ["\tTopic: metrics\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1"]


def test_unknown_and_existing_topics(servers):
    for action in (["--describe"], ["--delete"], ["--alter", "--partitions", "2"]):
        failed(topics(servers, *action, "--topic", "missing"),
               "Topic 'missing' does not exist as expected")
        assert ok(topics(servers, *action, "--topic", "missing", "--if-exists")) == ""
    ok(topics(servers, "--create", "--topic", "t", "--partitions", "2"))
    failed(topics(servers, "--create", "--topic", "t"), "TOPIC_ALREADY_EXISTS", "'t'")
    assert ok(topics(servers, "--create", "--topic", "t", "--if-not-exists")) == ""
    failed(topics(servers, "--alter", "--topic", "t", "--partitions", "1"),
           "INVALID_PARTITIONS", "topic t")
    failed(topics(servers, "--create", "--topic", "u", "--config", "bogus.setting=1"),
           "INVALID_CONFIG", "bogus.setting")
    failed(topics(servers, "--create", "--topic", "u", "--partitions", "0"),
           "The partitions must be greater than 0")
    failed(topics(servers, "--create", "--topic", "u", "--replication-factor", "0"),
           "The replication factor must be between 1 and 32767")
    failed(topics(servers, "--create", "--topic", "bad/name"), "INVALID_TOPIC_EXCEPTION")
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert sorted(client.topics()) == ["t"]


def test_internal_topics_are_not_deleted(servers):
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([("t", 1, 1)])
        client.commit("g", {TopicPartition("t", 0): 0})
    failed(topics(servers, "--delete", "--topic", "__consumer_offsets"),
           "__consumer_offsets is a kafka internal topic")
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert "__consumer_offsets" in client.topics(include_internal=True)


def test_a_broker_that_is_down_fails_within_the_timeout():
    started = time.monotonic()
    result = run_tool("topics", "--bootstrap-server", f"127.0.0.1:{closed_port()}",
                      "--timeout-ms", "1500", "--list", timeout_s=60)
    failed(result, "did not complete within 1500 ms", "127.0.0.1")
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("args, message", [
    ([], "one of the arguments"),
    (["--list", "--describe"], "not allowed with"),
    (["--create"], "--create needs --topic"),
    (["--alter", "--topic", "t"], "--alter needs --partitions"),
    (["--alter", "--topic", "t", "--partitions", "2", "--config", "a=b"], "broker-lite configs"),
    (["--alter", "--topic", "t", "--delete-config", "a"], "broker-lite configs"),
    (["--list", "--partitions", "3"], "--partitions goes only with"),
    (["--describe", "--replication-factor", "1"], "--replication-factor goes only with"),
    (["--create", "--topic", "t", "--if-exists"], "--if-exists goes only with"),
    (["--delete", "--topic", "t", "--if-not-exists"], "--if-not-exists goes only with"),
    (["--describe", "--topic", "("], "not a valid regular expression"),
    (["--list", "--under-replicated-partitions"], "go only with --describe"),
    (["--describe", "--topics-with-overrides", "--unavailable-partitions"], "does not go with"),
    (["--create", "--topic", "t", "--partitions", "many"], "invalid int value"),
])
def test_bad_usage_exits_2(args, message):
    result = topics(f"127.0.0.1:{closed_port()}", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "broker-lite topics: error:" in result.stderr
