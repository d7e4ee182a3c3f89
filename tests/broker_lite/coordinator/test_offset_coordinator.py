"""The offset coordinator through the group coordinator's facade, with a manual timer and real
partition logs: standalone and member commits and who may make them, fetches, metadata kept,
commits refused per partition, offsets deleted, and a member's commit counting as its
heartbeat."""

import pytest
from coordinator_harness import BASE_MS, SESSION_MS, T0, T1, Harness

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator.group.offsets import OffsetAndMetadata
from broker_lite.protocol import ErrorCode


@pytest.fixture
def harness(tmp_path):
    harness = Harness(tmp_path).start()
    yield harness
    harness.close()


# -- commits and fetches ------------------------------------------------------------------


def test_standalone_commits_and_fetches(harness):
    assert harness.commit("solo", {T0: 10, T1: 20}) == {T0: 0, T1: 0}
    assert harness.fetch("solo") == {T0: 10, T1: 20}
    assert harness.fetch("solo", [T0, TopicPartition("other", 3)]) == \
        {T0: 10, TopicPartition("other", 3): -1}
    assert harness.fetch("never-committed", [T0]) == {T0: -1}
    assert harness.state("solo") == "Empty"
    committed = harness.records("solo").offsets[("solo", T0)]
    assert committed.value == OffsetAndMetadata(10, -1, "", BASE_MS)


def test_commit_metadata_and_leader_epoch_are_kept(harness):
    value = OffsetAndMetadata(7, 3, "checkpoint-1", BASE_MS)
    harness.commit("solo", {T0: value})
    _error, offsets = harness.coordinator.handle_fetch_offsets("solo", [T0])
    assert offsets[T0] == value


@pytest.mark.parametrize("case,setup,request_args,error", [
    ("a generation for an unknown group", None, {"generation": 3, "member_id": "m"},
     ErrorCode.ILLEGAL_GENERATION),
    ("an anonymous commit while the group has members", "stable", {},
     ErrorCode.UNKNOWN_MEMBER_ID),
    # Kafka 3.3+ (KAFKA-14201), as 2.x: generation -1 to an empty group, whatever member it
    # names (pykafka's ZooKeeper-managed consumers commit with their ZooKeeper consumer id)
    ("generation -1 with a member id, no members", None, {"member_id": "zk-consumer-1"},
     ErrorCode.NONE),
    ("generation -1 with an instance id, no members", None,
     {"member_id": "m", "instance": "i"}, ErrorCode.NONE),
    ("generation -1 with a member id while the group has members", "stable",
     {"member_id": "zk-consumer-1"}, ErrorCode.UNKNOWN_MEMBER_ID),
    ("a wrong generation", "stable", {"generation": 9, "member_id": "<a>"},
     ErrorCode.ILLEGAL_GENERATION),
    ("an unknown member", "stable", {"generation": 1, "member_id": "ghost"},
     ErrorCode.UNKNOWN_MEMBER_ID),
    ("a member awaiting its assignment", "completing", {"generation": 2, "member_id": "<a>"},
     ErrorCode.REBALANCE_IN_PROGRESS),
    ("a member of the last generation while the group prepares", "preparing",
     {"generation": 1, "member_id": "<a>"}, ErrorCode.NONE),
    ("a member of the current generation", "stable", {"generation": 1, "member_id": "<a>"},
     ErrorCode.NONE),
])
def test_commit_validation(harness, case, setup, request_args, error):
    ids = {}
    if setup is not None:
        ids = harness.stable_group("g", "a")
    if setup == "preparing":
        harness.new_member("g", client_id="b")
    if setup == "completing":
        harness.join("g", ids["a"], client_id="a")
        harness.advance(0)
    args = {k: ids["a"] if v == "<a>" else v for k, v in request_args.items()}
    assert harness.commit("g", {T0: 1}, **args) == {T0: error}, case


def test_commit_metadata_too_large_is_refused_per_partition(harness):
    big = OffsetAndMetadata(1, -1, "x" * 4097, BASE_MS)
    assert harness.commit("solo", {T0: big, T1: 2}) == \
        {T0: ErrorCode.OFFSET_METADATA_TOO_LARGE, T1: ErrorCode.NONE}
    assert harness.fetch("solo") == {T1: 2}


def test_delete_offsets(harness):
    ids = harness.stable_group("g", "a")
    other = TopicPartition("other", 0)
    harness.commit("g", {T0: 1, other: 2}, ids["a"], 1)
    error, errors = harness.coordinator.handle_delete_offsets("g", [T0, other])
    assert (error, errors) == (ErrorCode.NONE, {T0: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
                                                other: ErrorCode.NONE})
    assert harness.fetch("g") == {T0: 1}
    assert harness.coordinator.handle_delete_offsets("none", [T0]) == \
        (ErrorCode.GROUP_ID_NOT_FOUND, {})
    harness.commit("solo", {T0: 1})
    assert harness.coordinator.handle_delete_offsets("solo", [T0]) == \
        (ErrorCode.NONE, {T0: ErrorCode.NONE})
    assert harness.fetch("solo") == {}


def test_delete_offsets_of_a_non_consumer_group_with_members(harness):
    joined = harness.new_member("connect", protocol_type="connect")
    harness.advance(0)
    assert joined.result.error == 0
    assert harness.coordinator.handle_delete_offsets("connect", [T0]) == \
        (ErrorCode.NON_EMPTY_GROUP, {})




# -- commits and sessions -------------------------------------------------------------------


def test_a_members_commit_counts_as_its_heartbeat(harness):
    """The offset coordinator restarts the committing member's session in the membership
    protocol: a member that only commits stays in the group."""
    ids = harness.stable_group("g", "a")
    for offset in range(4):
        harness.advance(SESSION_MS * 3 // 4)
        assert harness.commit("g", {T0: offset}, ids["a"], 1) == {T0: ErrorCode.NONE}
    assert harness.state("g") == "Stable"
    harness.advance(SESSION_MS)  # no commit, no heartbeat: the session ends
    assert harness.state("g") == "Empty"
    assert harness.fetch("g") == {T0: 3}
