"""GroupsAdmin: ListGroups, DescribeGroups and DeleteGroups bodies and answers (sans I/O), then
against real brokers with a group formed by confluent-kafka (librdkafka)."""

import struct
import uuid

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as ConfluentPartition

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.client.admin.groups import (
    GroupListing,
    decode_consumer_assignment,
    delete_groups_request,
    describe_groups_request,
    list_groups_request,
    parse_delete_groups,
    parse_describe_groups,
    parse_list_groups,
)
from broker_lite.client.cluster.metadata import BrokerInfo
from broker_lite.client.errors import (
    CoordinatorLoadInProgressError,
    GroupAuthorizationFailedError,
    InvalidArgumentError,
    InvalidResponseError,
    UnsupportedVersionError,
)
from broker_lite.common.tiers import needs
from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_request
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.zk.testing import wait_until

PROPERTIES = {"offsets.topic.num.partitions": "3", "group.initial.rebalance.delay.ms": "0"}
COORDINATOR = BrokerInfo(1, "127.0.0.1", 9092)


def assignment_bytes(version: int, topics: dict[str, list[int]], tail: bytes = b"") -> bytes:
    """A ConsumerProtocolAssignment as Kafka's consumers write it."""
    data = struct.pack(">hi", version, len(topics))
    for topic, partitions in topics.items():
        name = topic.encode()
        data += struct.pack(">h", len(name)) + name + struct.pack(">i", len(partitions))
        data += b"".join(struct.pack(">i", p) for p in partitions)
    return data + tail


def described(group_id: str, *, state: str = "Stable", protocol_type: str = "consumer",
              members: list[dict] = (), error: int = 0) -> dict:
    return {"error_code": error, "group_id": group_id, "group_state": state,
            "protocol_type": protocol_type, "protocol_data": "range", "members": list(members),
            "authorized_operations": -2147483648}


def member(member_id: str, assignment: bytes, instance: str | None = None) -> dict:
    return {"member_id": member_id, "group_instance_id": instance, "client_id": "c1",
            "client_host": "/127.0.0.1", "member_metadata": b"", "member_assignment": assignment}


# -- consumer protocol assignments ----------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 3])
def test_assignments_of_every_version_decode_to_their_partitions(version):
    data = assignment_bytes(version, {"b": [2, 0], "a": [1]}, tail=b"\x00\x00\x00\x04user")
    assert decode_consumer_assignment(data) == (
        TopicPartition("b", 2), TopicPartition("b", 0), TopicPartition("a", 1))


def test_an_empty_assignment_has_no_partitions():
    assert decode_consumer_assignment(b"") == ()
    assert decode_consumer_assignment(assignment_bytes(0, {})) == ()


@pytest.mark.parametrize("data", [
    struct.pack(">h", -1) + struct.pack(">i", 0),  # negative version
    struct.pack(">hi", 0, 1_000_000),  # more topics than bytes
    struct.pack(">hi", 0, 1) + b"\x00\x05ab",  # a topic name cut short
    assignment_bytes(0, {"a": [1, 2]})[:-3],  # a partition cut short
    b"\x00",
], ids=["negative-version", "huge-count", "short-name", "short-partition", "one-byte"])
def test_malformed_assignments_raise_invalid_response(data):
    with pytest.raises(InvalidResponseError):
        decode_consumer_assignment(data)


# -- requests and responses -----------------------------------------------------------------------


@pytest.mark.parametrize("version", range(0, 6))
def test_list_groups_requests_encode_in_every_version(version):
    states = ["Stable"] if version >= 4 else []
    body = list_groups_request(version, states)
    _, decoded = parse_request(encode_request(ApiKey.LIST_GROUPS, version, 1, "t", body)[4:])
    assert decoded.get("states_filter", []) == states


def test_a_states_filter_needs_list_groups_v4():
    with pytest.raises(UnsupportedVersionError, match="ListGroups v4"):
        list_groups_request(3, ["Stable"])


def test_list_groups_answers_with_and_without_states():
    body = {"error_code": 0, "groups": [
        {"group_id": "g1", "protocol_type": "consumer", "group_state": "Stable"},
        {"group_id": "g2", "protocol_type": "", "group_state": "Empty"},
        {"group_id": "c", "protocol_type": "connect", "group_state": "Stable"}]}
    assert parse_list_groups(body, 4) == [GroupListing("g1", "consumer", "Stable"),
                                          GroupListing("g2", "", "Empty"),
                                          GroupListing("c", "connect", "Stable")]
    assert [g.state for g in parse_list_groups(body, 3)] == [None, None, None]
    assert [g.is_consumer_group for g in parse_list_groups(body, 4)] == [True, True, False]


def test_a_loading_coordinator_is_a_retriable_list_groups_error():
    with pytest.raises(CoordinatorLoadInProgressError) as raised:
        parse_list_groups({"error_code": ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "groups": []}, 5)
    assert raised.value.retriable


@pytest.mark.parametrize("version", range(0, 6))
def test_describe_and_delete_requests_encode(version):
    body = describe_groups_request(["a", "b"])
    _, decoded = parse_request(
        encode_request(ApiKey.DESCRIBE_GROUPS, version, 1, "t", body)[4:])
    assert decoded["groups"] == ["a", "b"]
    if version <= 2:
        body = delete_groups_request(["a"])
        _, decoded = parse_request(
            encode_request(ApiKey.DELETE_GROUPS, version, 1, "t", body)[4:])
        assert decoded["groups_names"] == ["a"]


def test_described_consumer_groups_carry_each_members_partitions():
    body = {"groups": [
        described("g", members=[member("m1", assignment_bytes(1, {"t": [0, 1]}), "static-1"),
                                member("m2", b"")]),
        described("other", protocol_type="connect",
                  members=[member("w1", b"not a consumer assignment")]),
        described("broken", members=[member("m", b"\x00\x00\xff\xff\xff\xff")]),
        described("gone", state="Dead", protocol_type=""),
        described("secret", error=ErrorCode.GROUP_AUTHORIZATION_FAILED),
    ]}
    found = parse_describe_groups(body, COORDINATOR)
    group = found["g"]
    assert (group.state, group.protocol, group.coordinator, group.exists) == (
        "Stable", "range", COORDINATOR, True)
    assert [(m.member_id, m.group_instance_id, m.assignment) for m in group.members] == [
        ("m1", "static-1", (TopicPartition("t", 0), TopicPartition("t", 1))), ("m2", None, ())]
    assert found["other"].members[0].assignment is None  # not the consumer protocol
    assert found["broken"].members[0].assignment is None
    assert found["gone"].exists is False
    assert isinstance(found["secret"], GroupAuthorizationFailedError)


def test_delete_answers_per_group():
    results = parse_delete_groups({"throttle_time_ms": 0, "results": [
        {"group_id": "a", "error_code": 0},
        {"group_id": "b", "error_code": ErrorCode.NON_EMPTY_GROUP},
        {"group_id": "c", "error_code": ErrorCode.GROUP_ID_NOT_FOUND}]})
    assert results["a"] is None
    assert results["b"].error_code == ErrorCode.NON_EMPTY_GROUP
    assert "group b" in str(results["b"])
    assert results["c"].error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_group_ids_are_checked_before_anything_is_sent():
    with KafkaClient({"bootstrap.servers": "127.0.0.1:9"}) as client:
        with pytest.raises(InvalidArgumentError):
            client.admin.groups.describe_groups([""])
        with pytest.raises(InvalidArgumentError):
            client.admin.groups.delete_groups([None])


# -- against brokers -------------------------------------------------------------------------------


@pytest.fixture
@needs("broker", "zookeeper")
def group_broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    yield brokers[0]
    stop_brokers(brokers)


def joined_consumer(servers: str, group: str, topic: str, partitions: int) -> Consumer:
    """A confluent-kafka consumer that joined ``group`` and was given every partition."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group,
                         "client.id": "admin-test", "enable.auto.commit": False,
                         "log_level": 3})
    consumer.subscribe([topic])

    def assigned() -> bool:
        consumer.poll(0.2)
        return len(consumer.assignment()) == partitions

    wait_until(assigned, 30, f"the consumer to join {group}")
    return consumer


def test_a_confluent_group_is_listed_described_and_deleted_once_empty(group_broker):
    servers = bootstrap(group_broker)
    topic, group = f"t-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([(topic, 2, 1)])
        consumer = joined_consumer(servers, group, topic, 2)
        try:
            consumer.commit(offsets=[ConfluentPartition(topic, 0, 0)], asynchronous=False)
            groups = client.admin.groups
            listed = {g.group_id: g for g in groups.list_groups()}
            assert listed[group] == GroupListing(group, "consumer", "Stable", "classic")
            assert [g.group_id for g in groups.list_groups(["Empty"])].count(group) == 0
            description = groups.describe_groups([group])[group]
            assert (description.state, description.protocol_type, description.protocol) == (
                "Stable", "consumer", "range")
            assert description.coordinator == BrokerInfo(1, "127.0.0.1", group_broker.port)
            [m] = description.members
            assert m.member_id == consumer.memberid()
            assert (m.client_id, m.client_host) == ("admin-test", "/127.0.0.1")
            assert sorted(m.assignment) == [TopicPartition(topic, 0), TopicPartition(topic, 1)]
            refused = groups.delete_groups([group])[group]
            assert refused.error_code == ErrorCode.NON_EMPTY_GROUP
        finally:
            consumer.close()
        groups = client.admin.groups
        assert groups.describe_groups([group])[group].state == "Empty"
        assert group in [g.group_id for g in groups.list_groups(["Empty"])]
        assert groups.delete_groups([group]) == {group: None}
        assert client.committed(group, [TopicPartition(topic, 0)]) == {
            TopicPartition(topic, 0): None}
        gone = groups.describe_groups([group])[group]
        assert (gone.state, gone.members, gone.exists) == ("Dead", (), False)
        again = groups.delete_groups([group])[group]
        assert again.error_code == ErrorCode.GROUP_ID_NOT_FOUND


@pytest.mark.broker
@pytest.mark.zookeeper
def test_groups_of_every_coordinator_are_listed(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 3,
                            {**PROPERTIES, "offsets.topic.replication.factor": "1"})
    try:
        servers = bootstrap(brokers[0])  # one bootstrap server: the others come from metadata
        with KafkaClient({"bootstrap.servers": servers}) as client:
            client.admin.create_topics([("t", 1, 1)])
            names = [f"group-{i}" for i in range(12)]
            for name in names:
                client.commit(name, {TopicPartition("t", 0): 0})
            coordinators = {d.coordinator.node_id
                            for d in client.admin.groups.describe_groups(names).values()}
            assert len(coordinators) > 1  # the groups are spread over the brokers
            listed = client.admin.groups.list_groups()
            assert [g.group_id for g in listed] == sorted(names)
            assert {g.state for g in listed} == {"Empty"}
    finally:
        stop_brokers(brokers)
