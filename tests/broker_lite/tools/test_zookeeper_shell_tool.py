"""``broker-lite zookeeper-shell`` as a user runs it: a child process reading the ZooKeeper tree
of a live broker (the test's own chroot on the session's real ZooKeeper)."""

import json
import time

import pytest

from broker_lite.client import KafkaClient
from broker_lite.server.testing import bootstrap
from broker_lite.tools.testing import closed_port, run_tool
from broker_lite.tools.zookeeper_shell import summary
from broker_lite.zk.layout import encode_uuid


def shell(connect: str, *args: str):
    return run_tool("zookeeper-shell", connect, *args)


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def topic(broker) -> str:
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        client.admin.create_topics([("events", 2, 1, {"retention.ms": "60000"})])
    return "events"


def test_ls_get_and_stat_read_kafkas_layout(zookeeper_connect, broker, topic, zookeeper_client):
    assert ok(shell(zookeeper_connect, "ls", "/brokers/ids")) == f"[{broker.broker_id}]\n"
    assert ok(shell(zookeeper_connect, "ls", "/brokers/topics/events/partitions")) == "[0, 1]\n"
    children = ok(shell(zookeeper_connect, "ls", "/")).strip()
    assert children == "[" + ", ".join(sorted(zookeeper_client.get_children("/"))) + "]"
    assert "brokers" in children and "controller" in children

    assignment = json.loads(ok(shell(zookeeper_connect, "get", "/brokers/topics/events")))
    assert assignment["partitions"] == {"0": [broker.broker_id], "1": [broker.broker_id]}
    config = json.loads(ok(shell(zookeeper_connect, "get", "/config/topics/events")))
    assert config["config"] == {"retention.ms": "60000"}

    lines = ok(shell(zookeeper_connect, "stat", "/brokers/ids/1")).splitlines()
    assert [line.split(" = ")[0] for line in lines] == [
        "cZxid", "ctime", "mZxid", "mtime", "pZxid", "cversion", "dataVersion", "aclVersion",
        "ephemeralOwner", "dataLength", "numChildren"]
    _, node = zookeeper_client.get("/brokers/ids/1")
    stat = dict(line.split(" = ") for line in lines)
    assert stat["cZxid"] == hex(node.czxid)
    assert stat["ephemeralOwner"] == hex(node.ephemeralOwner) != "0x0"
    assert stat["dataLength"] == str(node.dataLength)
    assert stat["numChildren"] == "0"


def test_tree_shows_the_layout_indented_with_data(zookeeper_connect, broker, topic):
    lines = ok(shell(zookeeper_connect, "tree", "/brokers")).splitlines()
    assert lines[0] == "/brokers"
    assert lines[1] == "  ids"
    assert lines[2].startswith("    1 (ephemeral) = {\"listener_security_protocol_map\":")
    assert lines[2].endswith("...")  # cut to 100 characters
    assert len(lines[2]) == len("    1 (ephemeral) = ") + 100
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        topic_id = encode_uuid(client.admin.describe_topics(["events"])["events"].topic_id)
    assignment = ('{"version":3,"topic_id":"' + topic_id + '","partitions":{"0":[1],"1":[1]},'
                  '"adding_replicas":{},"removing_replicas":{}}')
    events = lines.index("    events = " + summary(assignment.encode()))
    state = '{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}'
    assert lines[events + 1:events + 6] == [
        "      partitions", "        0", "          state = " + state,
        "        1", "          state = " + state]

    whole = ok(shell(zookeeper_connect, "tree")).splitlines()
    assert whole[0] == "/"
    assert "  brokers" in whole and "  cluster" in whole
    assert any(line.startswith("  controller (ephemeral) = {\"version\":1,\"brokerid\":1,")
               for line in whole)


def test_numbers_sort_numerically_and_binary_data_shows_its_size(zookeeper_connect, broker,
                                                                   zookeeper_client):
    for name in ("10", "9", "alpha"):
        zookeeper_client.create(f"/scratch/{name}", makepath=True)
    zookeeper_client.set("/scratch/9", bytes(range(250, 256)))
    zookeeper_client.set("/scratch/alpha", b"line one\nline two")
    assert ok(shell(zookeeper_connect, "tree", "/scratch")).splitlines() == [
        "/scratch", "  9 = <6 bytes>", "  10", "  alpha = line one line two"]
    assert ok(shell(zookeeper_connect, "ls", "/scratch")) == "[10, 9, alpha]\n"  # as ZooKeeper
    assert ok(shell(zookeeper_connect, "get", "/scratch/9")) == "\\xfa\\xfb\\xfc\\xfd\\xfe\\xff\n"


def test_a_missing_path_is_an_error_naming_it(zookeeper_connect, broker):
    result = shell(zookeeper_connect, "get", "/brokers/topics/missing")
    assert result.returncode == 1
    chroot = "/" + zookeeper_connect.split("/", 1)[1]
    assert result.stderr == ("broker-lite zookeeper-shell: error: Node does not exist: "
                             f"/brokers/topics/missing (in chroot {chroot})\n")
    for command in ("ls", "stat", "tree"):
        result = shell(zookeeper_connect, command, "/nope")
        assert result.returncode == 1
        assert "Node does not exist: /nope" in result.stderr
    result = shell(zookeeper_connect + "/no/such/chroot", "ls", "/")
    assert result.returncode == 1
    assert "Node does not exist: / (in chroot" in result.stderr


def test_a_zookeeper_that_is_down_fails_within_the_timeout():
    started = time.monotonic()
    result = run_tool("zookeeper-shell", f"127.0.0.1:{closed_port()}", "--timeout-ms", "1000",
                      "ls", "/", timeout_s=60)
    assert result.returncode == 1
    assert "could not connect to ZooKeeper at 127.0.0.1:" in result.stderr
    assert "within 1000 ms" in result.stderr
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("args, message", [
    (["127.0.0.1:2181"], "the following arguments are required"),
    (["127.0.0.1:2181", "rm", "/x"], "invalid choice: 'rm'"),
    (["127.0.0.1:2181", "ls"], "the following arguments are required: path"),
    (["127.0.0.1:2181", "ls", "brokers"], "Path must start with / character"),
    (["127.0.0.1:2181", "get", "/brokers/"], "Invalid path string"),
    (["127.0.0.1:notaport", "ls", "/"], "is not host[:port]"),
    (["127.0.0.1:2181/", "tree", "/a//b"], "Invalid path string"),
])
def test_bad_usage_exits_2(args, message):
    result = run_tool("zookeeper-shell", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr


def test_data_summaries():
    assert summary(b'{"a":1}') == '{"a":1}'
    assert summary(b"") == ""
    assert summary("é".encode() * 60) == "é" * 60
    assert summary(b"x" * 101) == "x" * 97 + "..."
    assert summary(b"x" * 100) == "x" * 100
    assert summary(b"\x00\x01") == "<2 bytes>"
    assert summary(b"\xff\xfe") == "<2 bytes>"
