"""ConsumerGroupHeartbeat and ConsumerGroupDescribe through their handlers, without sockets: the
answer's fields in each version, Kafka's authorization (Read on the group and Describe on the
topics named for a heartbeat; Describe on the group, and on its assigned topics, to describe
it), and describing groups of either kind."""

import pytest

from broker_lite.coordinator.common.append import AppendFailed
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.enums import AclOperation as Op
from broker_lite.protocol.enums import ResourceType as R

from .handler_support import BROKER_ID

ALICE = "User:alice"


@pytest.fixture
def groups(harness):
    harness.topic("events", [BROKER_ID, BROKER_ID])
    harness.offsets_topic()
    harness.group = harness.group_led_here()
    return harness


def heartbeat(harness, version=1, principal="User:ANONYMOUS", **fields):
    body = {"group_id": harness.group, "member_id": "m1", "member_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 5000,
            "subscribed_topic_names": ["events"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": [], **fields}
    return harness.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, version, body, principal=principal)


def describe(harness, group, version=1, principal="User:ANONYMOUS"):
    return harness.call(ApiKey.CONSUMER_GROUP_DESCRIBE, version, {
        "group_ids": [group], "include_authorized_operations": True},
        principal=principal)["groups"][0]


@pytest.mark.parametrize("version", [0, 1])
def test_a_member_joins_and_is_assigned(groups, version):
    joined = heartbeat(groups, version)
    topic_id = groups.cluster.topic("events").topic_id
    assert (joined["error_code"], joined["member_id"], joined["member_epoch"],
            joined["heartbeat_interval_ms"]) == (0, "m1", 1, 100)
    assert joined["assignment"] == {"topic_partitions": [
        {"topic_id": topic_id, "partitions": [0, 1]}]}
    again = heartbeat(groups, version, member_epoch=1, rebalance_timeout_ms=-1,
                      subscribed_topic_names=None, topic_partitions=None)
    assert (again["error_code"], again["member_epoch"], again["assignment"]) == (0, 1, None)


def test_describe_shows_members_assignments_and_types(groups):
    assert describe(groups, groups.group)["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    heartbeat(groups)
    described = describe(groups, groups.group)
    assert (described["error_code"], described["group_state"], described["group_epoch"],
            described["assignment_epoch"], described["assignor_name"]) == \
        (0, "Stable", 1, 1, "uniform")
    (member,) = described["members"]
    topic_id = groups.cluster.topic("events").topic_id
    assert (member["member_id"], member["member_epoch"], member["member_type"],
            member["subscribed_topic_names"]) == ("m1", 1, 1, ["events"])
    assert member["assignment"] == member["target_assignment"] == {"topic_partitions": [
        {"topic_id": topic_id, "topic_name": "events", "partitions": [0, 1]}]}


def test_a_heartbeat_needs_read_on_the_group_and_describe_on_its_topics(groups):
    groups.acls()
    refused = heartbeat(groups, principal=ALICE)
    assert (refused["error_code"], refused["member_epoch"]) == \
        (ErrorCode.GROUP_AUTHORIZATION_FAILED, -1)
    groups.grant(ALICE, Op.READ, R.GROUP, groups.group)
    assert heartbeat(groups, principal=ALICE)["error_code"] == \
        ErrorCode.TOPIC_AUTHORIZATION_FAILED
    groups.grant(ALICE, Op.DESCRIBE, R.TOPIC, "events")
    assert heartbeat(groups, principal=ALICE)["error_code"] == ErrorCode.NONE


def test_describing_needs_describe_on_the_group_and_its_topics(groups):
    heartbeat(groups)
    groups.acls()
    assert describe(groups, groups.group, principal=ALICE)["error_code"] == \
        ErrorCode.GROUP_AUTHORIZATION_FAILED
    groups.grant(ALICE, Op.DESCRIBE, R.GROUP, groups.group)
    assert describe(groups, groups.group, principal=ALICE)["error_code"] == \
        ErrorCode.TOPIC_AUTHORIZATION_FAILED
    groups.grant(ALICE, Op.DESCRIBE, R.TOPIC, "events")
    described = describe(groups, groups.group, principal=ALICE)
    assert described["error_code"] == ErrorCode.NONE
    assert described["authorized_operations"] & (1 << Op.DESCRIBE)


def test_a_group_over_its_max_size_refuses_the_next_member(groups):
    assert heartbeat(groups, member_id="m1")["error_code"] == ErrorCode.NONE
    assert heartbeat(groups, member_id="m2")["error_code"] == ErrorCode.NONE
    full = heartbeat(groups, member_id="m3")
    assert (full["error_code"], full["assignment"]) == (ErrorCode.GROUP_MAX_SIZE_REACHED, None)
    assert full["error_message"].endswith("maximum capacity of 2 members.")


def test_a_consumer_group_is_deleted_once_empty_with_its_records_and_offsets(groups):
    joined = heartbeat(groups)
    commit = groups.call(ApiKey.OFFSET_COMMIT, 9, {
        "group_id": groups.group, "generation_id_or_member_epoch": joined["member_epoch"],
        "member_id": "m1", "group_instance_id": None, "topics": [{"name": "events",
        "partitions": [{"partition_index": 0, "committed_offset": 3,
                        "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    assert commit["topics"][0]["partitions"][0]["error_code"] == ErrorCode.NONE

    def delete():
        return groups.call(ApiKey.DELETE_GROUPS, 2, {"groups_names": [groups.group]})[
            "results"][0]["error_code"]

    assert delete() == ErrorCode.NON_EMPTY_GROUP
    left = heartbeat(groups, member_epoch=-1, rebalance_timeout_ms=-1,
                     subscribed_topic_names=None, topic_partitions=None)
    assert (left["error_code"], left["member_epoch"]) == (ErrorCode.NONE, -1)
    assert describe(groups, groups.group)["group_state"] == "Empty"
    assert delete() == ErrorCode.NONE
    assert describe(groups, groups.group)["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    fetched = groups.call(ApiKey.OFFSET_FETCH, 8, {"groups": [{
        "group_id": groups.group, "topics": None}], "require_stable": False})
    assert fetched["groups"][0]["topics"] == []


def test_a_write_that_times_out_is_retriable_and_the_group_follows_its_log(groups,
                                                                          monkeypatch):
    """The ISR did not follow in time: the member is told COORDINATOR_NOT_AVAILABLE (Kafka's
    answer; librdkafka takes the classic REBALANCE_IN_PROGRESS as fatal here), and the group
    has what its log has, so the member's retry with the epoch it was given goes on."""
    manager = groups.groups.manager
    real_append = manager.append

    def timed_out(partition, records, **options):
        real_append(partition, records, **options)
        raise AppendFailed(ErrorCode.REQUEST_TIMED_OUT, "the ISR did not follow")

    monkeypatch.setattr(manager, "append", timed_out)
    refused = heartbeat(groups)
    assert (refused["error_code"], refused["assignment"]) == \
        (ErrorCode.COORDINATOR_NOT_AVAILABLE, None)
    monkeypatch.setattr(manager, "append", real_append)
    assert describe(groups, groups.group)["members"][0]["member_epoch"] == 1
    again = heartbeat(groups, member_epoch=1, rebalance_timeout_ms=-1,
                      subscribed_topic_names=None, topic_partitions=None)
    assert (again["error_code"], again["member_epoch"]) == (ErrorCode.NONE, 1)
