"""The group APIs (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch,
DescribeGroups) against the real group coordinator on a manual timer: a member's life from its
join to its leave, the committed offsets, and each version's way of answering."""

from concurrent.futures import Future

import pytest

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.server.network import CloseConnection
from broker_lite.zk.testing import wait_until

from .handler_support import BROKER_ID, OTHER_BROKER

INITIAL_DELAY_MS = 3000  # the harness's group.initial.rebalance.delay.ms


# A member's metadata travels as opaque bytes (a consumer's would be its subscription).
METADATA = b"range metadata"


@pytest.fixture
def groups(harness):
    """The harness with ``__consumer_offsets`` loaded; ``local`` and ``remote`` are group ids
    whose partitions this broker and the other broker lead."""
    harness.offsets_topic()
    harness.topic("events", [BROKER_ID, OTHER_BROKER])
    ids = [f"group-{i}" for i in range(20)]
    harness.local = next(g for g in ids if harness.groups.partition_for(g) == 0)
    harness.remote = next(g for g in ids if harness.groups.partition_for(g) == 1)
    return harness


def join_body(group: str, member_id: str = "", **fields) -> dict:
    return {"group_id": group, "session_timeout_ms": 10_000, "rebalance_timeout_ms": 20_000,
            "member_id": member_id, "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": METADATA}], **fields}


def rebalance(harness, group: str, joining: Future) -> dict:
    """The answer of a JoinGroup that waits out a new group's initial delay."""
    wait_until(lambda: harness.groups.handle_describe_group(group)[1].members,
               message="the member is waiting in the join phase")
    harness.timer.advance(INITIAL_DELAY_MS)
    return joining.result(timeout=10)


def join(harness, group: str, version: int = 5) -> dict:
    """A new member's join as a v4+ client makes it: ask for an id, then join with it."""
    asked = harness.call(ApiKey.JOIN_GROUP, version, join_body(group))
    assert asked["error_code"] == ErrorCode.MEMBER_ID_REQUIRED and asked["member_id"]
    return rebalance(harness, group, harness.call_later(ApiKey.JOIN_GROUP, version,
                                                        join_body(group, asked["member_id"])))


def commit_body(group: str, member_id: str, generation: int, offsets: dict) -> dict:
    by_topic: dict[str, list[dict]] = {}
    for (topic, partition), offset in offsets.items():
        by_topic.setdefault(topic, []).append(
            {"partition_index": partition, "committed_offset": offset,
             "committed_leader_epoch": 0, "committed_metadata": f"at {offset}"})
    return {"group_id": group, "generation_id_or_member_epoch": generation,
            "member_id": member_id, "group_instance_id": None,
            "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()]}


def errors_of(response) -> dict[tuple[str, int], int]:
    return {(t["name"], p["partition_index"]): p["error_code"] for t in response["topics"]
            for p in t["partitions"]}


def test_a_member_joins_syncs_heartbeats_commits_and_leaves(groups):
    group = groups.local
    joined = join(groups, group)
    member = joined["member_id"]
    assert (joined["error_code"], joined["generation_id"], joined["leader"],
            joined["protocol_type"], joined["protocol_name"]) == \
        (0, 1, member, "consumer", "range")
    assert joined["members"] == [{"member_id": member, "group_instance_id": None,
                                  "metadata": METADATA}]

    synced = groups.call(ApiKey.SYNC_GROUP, 5, {
        "group_id": group, "generation_id": 1, "member_id": member, "group_instance_id": None,
        "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": member, "assignment": b"both partitions"}]})
    assert (synced["error_code"], synced["assignment"], synced["protocol_name"]) == \
        (0, b"both partitions", "range")

    heartbeat = {"group_id": group, "generation_id": 1, "member_id": member,
                 "group_instance_id": None}
    assert groups.call(ApiKey.HEARTBEAT, 4, heartbeat)["error_code"] == ErrorCode.NONE
    assert groups.call(ApiKey.HEARTBEAT, 4, {**heartbeat, "generation_id": 0})["error_code"] \
        == ErrorCode.ILLEGAL_GENERATION

    committed = groups.call(ApiKey.OFFSET_COMMIT, 8, commit_body(
        group, member, 1, {("events", 0): 10, ("events", 1): 20, ("events", 2): 30,
                           ("missing", 0): 40}))
    assert errors_of(committed) == {
        ("events", 0): 0, ("events", 1): 0,  # led by either broker: the topic has them
        ("events", 2): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}

    described = groups.call(ApiKey.DESCRIBE_GROUPS, 5, {"groups": [group]})["groups"][0]
    assert (described["group_state"], described["protocol_data"]) == ("Stable", "range")
    assert [(m["member_id"], m["client_id"], m["client_host"], m["member_assignment"])
            for m in described["members"]] == \
        [(member, "handler-tests", "/127.0.0.1", b"both partitions")]

    left = groups.call(ApiKey.LEAVE_GROUP, 4, {
        "group_id": group, "members": [{"member_id": member, "group_instance_id": None},
                                       {"member_id": "stranger", "group_instance_id": None}]})
    assert left["error_code"] == 0
    assert [(m["member_id"], m["error_code"]) for m in left["members"]] == \
        [(member, ErrorCode.NONE), ("stranger", ErrorCode.UNKNOWN_MEMBER_ID)]
    assert groups.call(ApiKey.HEARTBEAT, 4, heartbeat)["error_code"] == \
        ErrorCode.UNKNOWN_MEMBER_ID


def test_offset_fetch_in_each_version(groups):
    group = groups.local
    groups.call(ApiKey.OFFSET_COMMIT, 2, commit_body(group, "", -1, {("events", 0): 10}))
    requested = [{"name": "events", "partition_indexes": [0, 1]}]
    expected = [{"name": "events", "partitions": [
        {"partition_index": 0, "committed_offset": 10, "committed_leader_epoch": -1,
         "metadata": "at 10", "error_code": 0},
        {"partition_index": 1, "committed_offset": -1, "committed_leader_epoch": -1,
         "metadata": "", "error_code": 0}]}]
    v7 = groups.call(ApiKey.OFFSET_FETCH, 7, {"group_id": group, "topics": requested,
                                              "require_stable": False})
    assert (v7["error_code"], v7["topics"]) == (0, expected)
    every = groups.call(ApiKey.OFFSET_FETCH, 7, {"group_id": group, "topics": None})
    assert [p["partition_index"] for p in every["topics"][0]["partitions"]] == [0]
    v8 = groups.call(ApiKey.OFFSET_FETCH, 8, {"groups": [
        {"group_id": group, "topics": requested},
        {"group_id": groups.remote, "topics": requested}], "require_stable": False})
    assert [(g["group_id"], g["error_code"]) for g in v8["groups"]] == \
        [(group, 0), (groups.remote, ErrorCode.NOT_COORDINATOR)]
    assert v8["groups"][0]["topics"] == expected


def test_group_errors_travel_per_partition_in_offset_fetch_v1(groups):
    requested = [{"name": "events", "partition_indexes": [0, 1]}]
    v1 = groups.call(ApiKey.OFFSET_FETCH, 1, {"group_id": groups.remote, "topics": requested})
    assert [(p["partition_index"], p["error_code"], p["committed_offset"])
            for p in v1["topics"][0]["partitions"]] == \
        [(0, ErrorCode.NOT_COORDINATOR, -1), (1, ErrorCode.NOT_COORDINATOR, -1)]
    v2 = groups.call(ApiKey.OFFSET_FETCH, 2, {"group_id": groups.remote, "topics": requested})
    assert (v2["error_code"], v2["topics"]) == (ErrorCode.NOT_COORDINATOR, [])


def test_a_group_another_broker_coordinates(groups):
    assert groups.call(ApiKey.JOIN_GROUP, 5, join_body(groups.remote))["error_code"] == \
        ErrorCode.NOT_COORDINATOR
    committed = groups.call(ApiKey.OFFSET_COMMIT, 8, commit_body(
        groups.remote, "", -1, {("events", 0): 1}))
    assert errors_of(committed) == {("events", 0): ErrorCode.NOT_COORDINATOR}


def test_join_group_before_version_4_needs_no_member_id_first(groups):
    joined = rebalance(groups, groups.local,
                       groups.call_later(ApiKey.JOIN_GROUP, 3, join_body(groups.local)))
    assert joined["error_code"] == 0 and joined["member_id"].startswith("handler-tests-")
    assert joined["generation_id"] == 1 and joined["leader"] == joined["member_id"]


def test_sync_group_5_must_name_the_protocol(groups):
    member = join(groups, groups.local)["member_id"]
    response = groups.call(ApiKey.SYNC_GROUP, 5, {
        "group_id": groups.local, "generation_id": 1, "member_id": member,
        "protocol_type": None, "protocol_name": "range", "assignments": []})
    assert response["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_leave_group_before_version_3_answers_its_one_member_error(groups):
    member = join(groups, groups.local)["member_id"]
    assert groups.call(ApiKey.LEAVE_GROUP, 2, {"group_id": groups.local,
                                               "member_id": "stranger"}) == \
        {"throttle_time_ms": 0, "error_code": ErrorCode.UNKNOWN_MEMBER_ID}
    assert groups.call(ApiKey.LEAVE_GROUP, 2, {"group_id": groups.local,
                                               "member_id": member})["error_code"] == 0


def test_a_waiting_join_ends_when_the_broker_stops(groups):
    asked = groups.call(ApiKey.JOIN_GROUP, 5, join_body(groups.local))
    waiting = groups.call_later(ApiKey.JOIN_GROUP, 5,
                                join_body(groups.local, asked["member_id"]))
    groups.purgatory.stop()
    with pytest.raises(CloseConnection, match="stopping"):
        waiting.result(timeout=10)
