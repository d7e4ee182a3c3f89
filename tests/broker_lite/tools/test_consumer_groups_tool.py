"""``broker-lite consumer-groups`` as a user runs it: child processes against a live broker,
with a real group formed and committed to by confluent-kafka (librdkafka); results are checked
with OffsetFetch and with consumers of the group."""

import time
import uuid
from datetime import UTC, datetime

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as ConfluentPartition

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.common.tiers import needs
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.tools.consumer_groups import (
    assignment_text,
    parse_datetime,
    parse_duration,
    parse_states,
    parse_topic_arg,
)
from broker_lite.tools.testing import closed_port, run_tool
from broker_lite.zk.testing import wait_until

PROPERTIES = {"offsets.topic.num.partitions": "3", "group.initial.rebalance.delay.ms": "0"}
BASE_TS = 1_700_000_000_000
PARTITION_SIZES = (10, 20, 30)  # records per partition of the test topic
COMMITTED = (5, 10, 15)  # what the group commits


@pytest.fixture
@needs("broker", "zookeeper")
def group_broker(zookeeper_connect, tmp_path):
    """A broker whose group coordinator loads a few partitions and rebalances at once."""
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    yield brokers[0]
    stop_brokers(brokers)


@pytest.fixture
def servers(group_broker) -> str:
    return bootstrap(group_broker)


@pytest.fixture
def topic(servers) -> str:
    """A topic with 10, 20 and 30 records in partitions 0, 1, 2; record i of a partition has
    timestamp BASE_TS + 1000 * i."""
    name = f"events-{uuid.uuid4().hex[:6]}"
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([(name, len(PARTITION_SIZES), 1)])
    producer = Producer({"bootstrap.servers": servers, "log_level": 3, "linger.ms": 0})
    for partition, size in enumerate(PARTITION_SIZES):
        for i in range(size):
            producer.produce(name, partition=partition, value=b"v%d" % i,
                             timestamp=BASE_TS + 1000 * i)
    assert producer.flush(30) == 0
    return name


def joined_consumer(servers: str, group: str, topic: str, client_id: str = "cg-test"
                    ) -> Consumer:
    """A confluent-kafka consumer that joined ``group`` and was given every partition."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group, "client.id": client_id,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "log_level": 3})
    consumer.subscribe([topic])

    def assigned() -> bool:
        consumer.poll(0.2)
        return len(consumer.assignment()) == len(PARTITION_SIZES)

    wait_until(assigned, 30, f"the consumer to join {group}")
    return consumer


def commit(consumer: Consumer, topic: str, offsets) -> None:
    consumer.commit(offsets=[ConfluentPartition(topic, p, o) for p, o in enumerate(offsets)],
                    asynchronous=False)


def groups(servers: str, *args: str):
    return run_tool("consumer-groups", "--bootstrap-server", servers, *args)


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def failed(result, *fragments: str) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "broker-lite consumer-groups: error: " in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr
    return result.stderr


def rows(text: str) -> list[list[str]]:
    """A table's data rows, split into cells."""
    return [line.split() for line in text.splitlines()[1:] if line]


def committed(servers: str, group: str, topic: str) -> list[int | None]:
    """The group's committed offsets, read with OffsetFetch."""
    tps = [TopicPartition(topic, p) for p in range(len(PARTITION_SIZES))]
    with KafkaClient({"bootstrap.servers": servers}) as client:
        found = client.committed(group, tps)
    return [found[tp] for tp in tps]


def first_offsets_read(servers: str, group: str, topic: str) -> dict[int, int]:
    """Where a new member of ``group`` starts reading each partition."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group,
                         "enable.auto.commit": False, "auto.offset.reset": "latest",
                         "log_level": 3})
    consumer.subscribe([topic])
    first: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 30
        while len(first) < len(PARTITION_SIZES) and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                first.setdefault(message.partition(), message.offset())
    finally:
        consumer.close()
    return first


# -- describe, list -------------------------------------------------------------------------------


def test_describe_shows_each_partitions_lag_members_and_state(servers, topic, group_broker):
    group = f"g-{uuid.uuid4().hex[:6]}"
    consumer = joined_consumer(servers, group, topic)
    try:
        commit(consumer, topic, COMMITTED)
        member_id = consumer.memberid()
        described = ok(groups(servers, "--describe", "--group", group))
        lines = described.splitlines()
        assert lines[0].split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                    "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
        assert rows(described) == [
            [group, topic, str(p), str(c), str(size), str(size - c), member_id, "/127.0.0.1",
             "cg-test"]
            for p, (c, size) in enumerate(zip(COMMITTED, PARTITION_SIZES, strict=True))]
        assert lines[0].index("TOPIC") == 16  # GROUP is padded to 15
        assert ok(groups(servers, "--describe", "--group", group, "--offsets")) == described

        members = ok(groups(servers, "--describe", "--group", group, "--members"))
        assert members.splitlines()[0].split() == [
            "GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
        assert rows(members) == [[group, member_id, "/127.0.0.1", "cg-test", "3"]]
        verbose = ok(groups(servers, "--describe", "--group", group, "--members", "--verbose"))
        assert rows(verbose)[0][-1] == f"{topic}(0,1,2)"

        state = ok(groups(servers, "--describe", "--group", group, "--state"))
        assert state.splitlines()[0].split() == [
            "GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
        assert f"127.0.0.1:{group_broker.port}  ({group_broker.broker_id})" in state
        assert rows(state)[0][-3:] == ["range", "Stable", "1"]

        assert ok(groups(servers, "--list")).splitlines() == [group]
        listed = ok(groups(servers, "--list", "--state"))
        assert listed.splitlines()[0].split() == ["GROUP", "STATE"]
        assert rows(listed) == [[group, "Stable"]]
        none_empty = ok(groups(servers, "--list", "--state", "empty"))
        assert [line.split() for line in none_empty.splitlines()] == [["GROUP", "STATE"]]
    finally:
        consumer.close()

    # the member left: the offsets stay, without a consumer
    result = groups(servers, "--describe", "--group", group)
    assert result.returncode == 0
    assert f"Consumer group '{group}' has no active members." in result.stderr
    assert rows(result.stdout) == [
        [group, topic, str(p), str(c), str(size), str(size - c), "-", "-", "-"]
        for p, (c, size) in enumerate(zip(COMMITTED, PARTITION_SIZES, strict=True))]
    members = groups(servers, "--describe", "--group", group, "--members")
    assert (members.returncode, members.stdout) == (0, "")
    assert "has no active members" in members.stderr
    assert rows(ok(groups(servers, "--describe", "--group", group, "--state")))[0][-2:] == [
        "Empty", "0"]
    assert rows(ok(groups(servers, "--list", "--state", "Empty,Stable"))) == [[group, "Empty"]]


def test_several_groups_and_all_groups(servers, topic):
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.commit("b-group", {TopicPartition(topic, 0): 3})
        client.commit("a-group", {TopicPartition(topic, 1): 4, TopicPartition(topic, 2): 30})
    assert ok(groups(servers, "--list")).splitlines() == ["a-group", "b-group"]
    described = ok(groups(servers, "--describe", "--all-groups"))
    first, second = described.split("\n\n")
    assert rows(first) == [["a-group", topic, "1", "4", "20", "16", "-", "-", "-"],
                           ["a-group", topic, "2", "30", "30", "0", "-", "-", "-"]]
    assert rows(second) == [["b-group", topic, "0", "3", "10", "7", "-", "-", "-"]]
    assert ok(groups(servers, "--describe", "--group", "b-group", "--group", "a-group")) == \
        described


def test_offsets_of_a_deleted_topic_show_no_log_end(servers, topic):
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([("gone", 1, 1)])
        client.commit("g", {TopicPartition(topic, 0): 2, TopicPartition("gone", 0): 0})
        client.admin.delete_topics(["gone"])
    assert rows(ok(groups(servers, "--describe", "--group", "g"))) == [
        ["g", topic, "0", "2", "10", "8", "-", "-", "-"],
        ["g", "gone", "0", "0", "-", "-", "-", "-", "-"]]


def test_an_unknown_group_does_not_exist(servers):
    failed(groups(servers, "--describe", "--group", "nobody"),
           "Consumer group 'nobody' does not exist.")
    failed(groups(servers, "--describe", "--group", "nobody", "--members"), "does not exist")
    failed(groups(servers, "--delete", "--group", "nobody"),
           "* Group 'nobody' could not be deleted due to: GROUP_ID_NOT_FOUND")


# -- reset offsets --------------------------------------------------------------------------------


def test_offsets_are_reset_only_once_the_group_is_inactive(servers, topic):
    group = f"g-{uuid.uuid4().hex[:6]}"
    consumer = joined_consumer(servers, group, topic)
    try:
        commit(consumer, topic, COMMITTED)
        failed(groups(servers, "--reset-offsets", "--group", group, "--topic", topic,
                      "--to-earliest", "--execute"),
               f"Assignments can only be reset if the group '{group}' is inactive, but the "
               f"current state is Stable.")
        assert committed(servers, group, topic) == list(COMMITTED)
    finally:
        consumer.close()

    plan = groups(servers, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest")
    assert plan.returncode == 0
    assert "--execute option is missing" in plan.stderr
    assert plan.stdout.splitlines()[0].split() == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
    assert rows(plan.stdout) == [[group, topic, str(p), "0"] for p in range(3)]
    assert committed(servers, group, topic) == list(COMMITTED)  # a plan changes nothing
    dry = groups(servers, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
                 "--dry-run")
    assert (dry.returncode, dry.stdout, dry.stderr) == (0, plan.stdout, "")

    ok(groups(servers, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
              "--execute"))
    assert committed(servers, group, topic) == [0, 0, 0]
    assert first_offsets_read(servers, group, topic) == {0: 0, 1: 0, 2: 0}


@pytest.mark.parametrize("scenario, expected", [
    (["--to-latest"], [10, 20, 30]),
    (["--to-current"], list(COMMITTED)),
    (["--to-offset", "12"], [10, 12, 12]),  # beyond partition 0's end: its end
    (["--shift-by", "-7"], [0, 3, 8]),  # before partition 0's start: its start
    (["--shift-by", "8"], [10, 18, 23]),
    (["--to-datetime", datetime.fromtimestamp((BASE_TS + 12_000) / 1000, UTC)
      .strftime("%Y-%m-%dT%H:%M:%S.000Z")], [10, 12, 12]),  # partition 0 has none so late
    (["--by-duration", "P1D"], [10, 20, 30]),  # the records are from 2023: none that recent
])
def test_reset_scenarios(servers, topic, scenario, expected):
    group = f"g-{uuid.uuid4().hex[:6]}"
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.commit(group, {TopicPartition(topic, p): o for p, o in enumerate(COMMITTED)})
    result = groups(servers, "--reset-offsets", "--group", group, "--topic", topic, *scenario,
                    "--execute")
    assert result.returncode == 0, result.stderr
    assert rows(result.stdout) == [[group, topic, str(p), str(o)] for p, o in enumerate(expected)]
    assert committed(servers, group, topic) == expected


def test_reset_scopes_and_their_errors(servers, topic):
    group = f"g-{uuid.uuid4().hex[:6]}"
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.commit(group, {TopicPartition(topic, 1): 5})
    only = ok(groups(servers, "--reset-offsets", "--group", group, "--topic", f"{topic}:0,2",
                     "--to-offset", "4", "--execute"))
    assert rows(only) == [[group, topic, "0", "4"], [group, topic, "2", "4"]]
    assert committed(servers, group, topic) == [4, 5, 4]
    every = ok(groups(servers, "--reset-offsets", "--group", group, "--all-topics",
                      "--to-latest", "--execute"))
    assert rows(every) == [[group, topic, str(p), str(s)] for p, s in enumerate(PARTITION_SIZES)]

    failed(groups(servers, "--reset-offsets", "--group", group, "--topic", f"{topic}:7",
                  "--to-earliest"), f'The partitions "{topic}-7" do not exist')
    failed(groups(servers, "--reset-offsets", "--group", group, "--topic", "missing",
                  "--to-earliest"), "topic missing")
    failed(groups(servers, "--reset-offsets", "--group", "fresh", "--topic", topic,
                  "--shift-by", "1"), f"Cannot shift offset for partition {topic}-0")
    # a group that does not exist yet gets offsets (as Kafka's tool allows)
    ok(groups(servers, "--reset-offsets", "--group", "fresh", "--topic", topic,
              "--to-latest", "--execute"))
    assert committed(servers, "fresh", topic) == list(PARTITION_SIZES)


# -- delete ---------------------------------------------------------------------------------------


def test_delete_refuses_an_active_group_then_deletes_it(servers, topic):
    group = f"g-{uuid.uuid4().hex[:6]}"
    consumer = joined_consumer(servers, group, topic)
    try:
        commit(consumer, topic, COMMITTED)
        failed(groups(servers, "--delete", "--group", group),
               "Deletion of some consumer groups failed:",
               f"* Group '{group}' could not be deleted due to: NON_EMPTY_GROUP")
    finally:
        consumer.close()
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.commit("other", {TopicPartition(topic, 0): 1})
    assert ok(groups(servers, "--delete", "--group", group, "--group", "other")) == (
        f"Deletion of requested consumer groups ('{group}', 'other') was successful.\n")
    assert committed(servers, group, topic) == [None, None, None]
    assert ok(groups(servers, "--list")) == ""
    failed(groups(servers, "--describe", "--group", group), "does not exist")


def test_delete_reports_each_group(servers, topic):
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.commit("present", {TopicPartition(topic, 0): 1})
    result = groups(servers, "--delete", "--group", "present", "--group", "absent")
    failed(result, "* Group 'absent' could not be deleted due to: GROUP_ID_NOT_FOUND")
    assert result.stdout == "These consumer groups were deleted successfully: 'present'\n"


# -- failures and usage ---------------------------------------------------------------------------


def test_a_broker_that_is_down_fails_within_the_timeout():
    started = time.monotonic()
    result = run_tool("consumer-groups", "--bootstrap-server", f"127.0.0.1:{closed_port()}",
                      "--timeout-ms", "1500", "--list", timeout_s=60)
    failed(result, "did not complete within 1500 ms", "127.0.0.1")
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("args, message", [
    ([], "one of the arguments"),
    (["--describe"], "--describe needs --group or --all-groups"),
    (["--delete"], "--delete needs --group or --all-groups"),
    (["--list", "--group", "g"], "--list takes no --group"),
    (["--describe", "--group", "g", "--all-groups"], "do not go together"),
    (["--describe", "--group", "g", "--members", "--state"], "at most one of"),
    (["--describe", "--group", "g", "--state", "Stable"], "takes no state list"),
    (["--list", "--verbose"], "go only with --describe"),
    (["--list", "--state", "Sleeping"], "Invalid state list 'Sleeping'"),
    (["--reset-offsets", "--group", "g", "--topic", "t"], "needs one of --to-earliest"),
    (["--reset-offsets", "--group", "g", "--to-earliest"], "needs one scope"),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--all-topics", "--to-latest"],
     "needs one scope"),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--to-latest"],
     "not allowed with"),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--dry-run",
      "--execute"], "not allowed with"),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--to-datetime", "yesterday"],
     "Error parsing timestamp 'yesterday'"),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--by-duration", "1 day"],
     "Error parsing duration"),
    (["--describe", "--group", "g", "--to-earliest"], "go only with --reset-offsets"),
    (["--delete", "--group", "g", "--topic", "t"], "go only with --reset-offsets"),
])
def test_bad_usage_exits_2(args, message):
    result = groups(f"127.0.0.1:{closed_port()}", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "broker-lite consumer-groups: error:" in result.stderr


def test_a_malformed_topic_partition_list_is_a_usage_error(servers, topic):
    result = groups(servers, "--reset-offsets", "--group", "g", "--topic", f"{topic}:x",
                    "--to-earliest")
    assert result.returncode == 2
    assert f"Invalid partition 'x' specified in topic arg '{topic}:x'" in result.stderr


# -- parsing --------------------------------------------------------------------------------------


def test_option_values_parse_as_kafkas_tool_reads_them():
    assert parse_states("Stable,preparingrebalance") == ["Stable", "PreparingRebalance"]
    with pytest.raises(ValueError, match="Valid states are"):
        parse_states("Stable,Asleep")
    assert parse_topic_arg("t") == ("t", None)
    assert parse_topic_arg("t:3") == ("t", [3])
    for bad in ("t:", "t:1:2", ":1", "t:1,-2"):
        with pytest.raises(ValueError):
            parse_topic_arg(bad)
    assert parse_datetime("2023-11-14T22:13:20.000Z") == BASE_TS
    assert parse_datetime("2023-11-14T23:13:20.000+01:00") == BASE_TS
    assert parse_datetime("2023-11-14T22:13:20") == round(
        datetime(2023, 11, 14, 22, 13, 20).astimezone().timestamp() * 1000)
    assert parse_duration("PT30M") == 1_800_000
    assert parse_duration("-PT1S") == -1000
    assert parse_duration("pt0.25s") == 250
    for bad in ("P", "PT", "1D", "P1H"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    assert assignment_text(None) == "-"
    assert assignment_text(()) == "-"
