"""``broker-lite leader-election``, ``broker-lite reassign-partitions`` and the replica fields of
``broker-lite topics --describe``, run as a user runs them (child processes) against a cluster
of broker processes (``kpy_cluster``), checked against ZooKeeper's partition states."""

import json
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.tools.testing import run_tool

NO_REBALANCE = {"properties": {"auto.leader.rebalance.enable": "false"}}


def ok(result) -> str:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result.stdout


def create(cluster, name: str, assignment: list[list[int]]) -> str:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 3})
    admin.create_topics([NewTopic(name, num_partitions=len(assignment),
                                  replica_assignment=assignment)])[name].result(30)
    for partition in range(len(assignment)):
        cluster.wait_for_isr(name, partition)
    return name


def produce(cluster, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "log_level": 3})
    for i in range(count):
        producer.produce(topic, value=b"%d" % i, partition=0)
    assert producer.flush(60) == 0


def read(bootstrap: str, topic: str, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"c-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "log_level": 3})
    consumer.assign([KafkaPartition(topic, 0, 0)])
    values, deadline = [], time.monotonic() + 60
    while len(values) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
    consumer.close()
    return values


@pytest.mark.parametrize("kpy_cluster", [NO_REBALANCE], indirect=True)
def test_leader_election_moves_leaders_back_to_the_preferred_replicas(kpy_cluster, tmp_path):
    topic = create(kpy_cluster, f"elect-{uuid.uuid4().hex[:6]}", [[1, 2, 3], [2, 3, 1]])
    servers = kpy_cluster.bootstrap_servers
    kpy_cluster.stop_broker(1)
    kpy_cluster.start_broker(1)
    kpy_cluster.wait_for_isr(topic, 0, {1, 2, 3})
    assert kpy_cluster.leader(topic, 0) != 1  # auto rebalance is off: it stays moved
    out = ok(run_tool("leader-election", "--bootstrap-server", servers, "--election-type",
                      "preferred", "--all-topic-partitions"))
    assert out == f"Successfully completed leader election (PREFERRED) for partitions {topic}-0\n"
    assert kpy_cluster.leader(topic, 0) == 1
    plan = tmp_path / "partitions.json"
    plan.write_text(json.dumps({"partitions": [{"topic": topic, "partition": 0},
                                               {"topic": topic, "partition": 1}]}))
    out = ok(run_tool("leader-election", "--bootstrap-server", servers, "--election-type",
                      "PREFERRED", "--path-to-json-file", plan))
    assert out == f"Valid replica already elected for partitions {topic}-0, {topic}-1\n"
    missing = run_tool("leader-election", "--bootstrap-server", servers, "--election-type",
                       "PREFERRED", "--topic", "no-such-topic", "--partition", "0")
    assert missing.returncode == 1
    assert missing.stdout.startswith("Error completing leader election (PREFERRED) for "
                                     "partition: no-such-topic-0: UNKNOWN_TOPIC_OR_PARTITION")
    assert "1 replica(s) could not be elected" in missing.stderr
    usage = run_tool("leader-election", "--bootstrap-server", servers, "--election-type",
                     "PREFERRED", "--all-topic-partitions", "--topic", topic, "--partition", "0")
    assert usage.returncode == 2


@pytest.mark.parametrize("kpy_cluster", [NO_REBALANCE], indirect=True)
def test_an_unclean_election_asked_for_brings_an_offline_partition_back(kpy_cluster):
    topic = create(kpy_cluster, f"unclean-tool-{uuid.uuid4().hex[:6]}", [[1, 2]])
    kpy_cluster.kill(2)
    kpy_cluster.wait_until(lambda: kpy_cluster.partition_state(topic, 0).isr == (1,))
    kpy_cluster.kill(1)
    kpy_cluster.wait_until(lambda: kpy_cluster.leader(topic, 0) == -1)
    kpy_cluster.start_broker(2)
    servers = kpy_cluster.broker(2).address
    out = run_tool("topics", "--bootstrap-server", servers, "--describe", "--topic", topic)
    assert ok(out).splitlines()[1] == \
        f"\tTopic: {topic}\tPartition: 0\tLeader: none\tReplicas: 1,2\tIsr: 1\tOffline: 1"
    out = ok(run_tool("leader-election", "--bootstrap-server", servers, "--election-type",
                      "UNCLEAN", "--topic", topic, "--partition", "0"))
    assert out == f"Successfully completed leader election (UNCLEAN) for partitions {topic}-0\n"
    assert kpy_cluster.leader(topic, 0) == 2


def test_reassign_partitions_generate_execute_verify(kpy_cluster, tmp_path):
    topic = create(kpy_cluster, f"moved-{uuid.uuid4().hex[:6]}", [[1]])
    produce(kpy_cluster, topic, 500)
    servers = kpy_cluster.bootstrap_servers
    topics_file = tmp_path / "topics.json"
    topics_file.write_text(json.dumps({"topics": [{"topic": topic}], "version": 1}))
    out = ok(run_tool("reassign-partitions", "--bootstrap-server", servers, "--generate",
                      "--topics-to-move-json-file", topics_file, "--broker-list", "2,3"))
    lines = out.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert json.loads(lines[1]) == {"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [1], "log_dirs": ["any"]}]}
    assert lines[3] == "Proposed partition reassignment configuration"
    assert json.loads(lines[4])["partitions"][0]["replicas"] in ([2], [3])

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [2, 3]}]}))
    out = ok(run_tool("reassign-partitions", "--bootstrap-server", servers, "--execute",
                      "--reassignment-json-file", plan))
    assert out.splitlines() == [
        "Current partition replica assignment", "",
        # the JSON with its braces as they are
        '{"version":1,"partitions":[{"topic":"%s","partition":0,"replicas":[1],'  # noqa: UP031
        '"log_dirs":["any"]}]}' % topic, "",
        "Save this to use as the --reassignment-json-file option during rollback",
        f"Successfully started partition reassignment for {topic}-0"]
    kpy_cluster.wait_until(lambda: kpy_cluster.partition_state(topic, 0).isr == (2, 3) or
                           set(kpy_cluster.partition_state(topic, 0).isr) == {2, 3},
                           what="the partition moved to 2 and 3")
    out = ok(run_tool("reassign-partitions", "--bootstrap-server", servers, "--verify",
                      "--reassignment-json-file", plan))
    assert out == f"Status of partition reassignment:\nReassignment of partition {topic}-0 " \
                  "is completed.\n"
    assert kpy_cluster.leader(topic, 0) == 2
    assert read(kpy_cluster.broker(2).address, topic, 500) == [b"%d" % i for i in range(500)]
    # the removed replica's copy is gone from broker 1's disk
    kpy_cluster.wait_until(lambda: not (kpy_cluster.broker(1).directory / "logs"
                                        / f"{topic}-0").exists(), what="broker 1 deleted it")
    assert ok(run_tool("reassign-partitions", "--bootstrap-server", servers, "--list")) == \
        "No partition reassignments found.\n"


def test_a_reassignment_in_progress_is_listed_described_and_cancelled(kpy_cluster, tmp_path):
    """The new replica's broker is paused (SIGSTOP, alive to ZooKeeper for its session), so the
    reassignment cannot complete while the tools look at it."""
    topic = create(kpy_cluster, f"ongoing-{uuid.uuid4().hex[:6]}", [[1, 2]])
    servers = f"{kpy_cluster.broker(1).address},{kpy_cluster.broker(2).address}"
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [3, 2]}]}))
    kpy_cluster.broker(3).pause()
    try:
        ok(run_tool("reassign-partitions", "--bootstrap-server", servers, "--execute",
                    "--reassignment-json-file", plan))
        listed = ok(run_tool("reassign-partitions", "--bootstrap-server", servers, "--list"))
        assert listed == f"Current partition reassignments:\n{topic}-0: replicas: 3,2,1. " \
                         "adding: 3. removing: 1.\n"
        verified = ok(run_tool("reassign-partitions", "--bootstrap-server", servers, "--verify",
                               "--reassignment-json-file", plan))
        assert verified.splitlines()[1] == \
            f"Reassignment of partition {topic}-0 is still in progress."
        described = ok(run_tool("topics", "--bootstrap-server", servers, "--describe",
                                "--topic", topic)).splitlines()[1]
        assert described.endswith("\tAdding Replicas: 3\tRemoving Replicas: 1")
        again = run_tool("reassign-partitions", "--bootstrap-server", servers, "--execute",
                         "--reassignment-json-file", plan)
        assert again.returncode == 1 and "Use --additional" in again.stderr
        cancelled = ok(run_tool("reassign-partitions", "--bootstrap-server", servers,
                                "--cancel", "--reassignment-json-file", plan))
        assert cancelled == f"Successfully cancelled partition reassignment for: {topic}-0\n"
    finally:
        kpy_cluster.broker(3).resume()
    kpy_cluster.wait_until(lambda: set(kpy_cluster.partition_state(topic, 0).isr) <= {1, 2})
    assert ok(run_tool("reassign-partitions", "--bootstrap-server", servers, "--list")) == \
        "No partition reassignments found.\n"


def test_reassign_partitions_refuses_bad_plans(kpy_cluster, tmp_path):
    servers = kpy_cluster.bootstrap_servers
    topic = create(kpy_cluster, f"refused-{uuid.uuid4().hex[:6]}", [[1]])
    cases = [
        ({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 1]}]},
         f"{topic}-0 contains multiple entries for 1"),
        ({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [9]}]},
         "Unknown broker id 9"),
        ({"version": 2, "partitions": []}, "Not supported version field value 2"),
        ({"version": 1, "partitions": []}, "Partition reassignment list cannot be empty"),
    ]
    for document, message in cases:
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps(document))
        result = run_tool("reassign-partitions", "--bootstrap-server", servers, "--execute",
                          "--reassignment-json-file", plan)
        assert result.returncode == 1 and message in result.stderr, (document, result.stderr)
