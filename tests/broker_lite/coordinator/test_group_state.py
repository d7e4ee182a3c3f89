"""The group state machine as tables of cases: transitions, protocol choice, membership counts,
who counts as a member of the current generation, subscriptions, the expiry policy, and the
GroupMetadataValue round trip."""

import struct

import pytest

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator.group.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    Group,
    GroupState,
    IllegalStateTransition,
    Member,
)
from broker_lite.coordinator.group.offsets import CommittedOffset, OffsetAndMetadata
from broker_lite.protocol import ErrorCode

ALLOWED = {
    (EMPTY, PREPARING_REBALANCE), (STABLE, PREPARING_REBALANCE),
    (COMPLETING_REBALANCE, PREPARING_REBALANCE), (PREPARING_REBALANCE, COMPLETING_REBALANCE),
    (PREPARING_REBALANCE, EMPTY), (COMPLETING_REBALANCE, STABLE),
    *((state, DEAD) for state in GroupState),
}


def subscription(*topics: str, version: int = 0) -> bytes:
    """A ConsumerProtocolSubscription: version, topics, then (v0) null user data."""
    data = struct.pack(">hi", version, len(topics))
    for topic in topics:
        data += struct.pack(">h", len(topic)) + topic.encode()
    return data + struct.pack(">i", -1)


def member(member_id: str, protocols=(("range", b""),), *, instance: str | None = None,
           protocol_type: str = "consumer", rebalance_timeout_ms: int = 1000) -> Member:
    return Member(member_id, instance, "client", "/127.0.0.1", rebalance_timeout_ms, 500,
                  protocol_type, [(name, bytes(meta)) for name, meta in protocols])


@pytest.mark.parametrize("start", list(GroupState))
@pytest.mark.parametrize("target", list(GroupState))
def test_transitions(start, target):
    group = Group("g", 0, start)
    if (start, target) in ALLOWED:
        group.transition_to(target, 123)
        assert group.state is target and group.current_state_timestamp == 123
    else:
        with pytest.raises(IllegalStateTransition):
            group.transition_to(target, 123)
        assert group.state is start


@pytest.mark.parametrize("state,can", [(EMPTY, True), (STABLE, True), (COMPLETING_REBALANCE, True),
                                       (PREPARING_REBALANCE, False), (DEAD, False)])
def test_can_rebalance(state, can):
    assert Group("g", 0, state).can_rebalance() is can


@pytest.mark.parametrize("members,expected", [
    # every member supports both; most put roundrobin first
    ([["roundrobin", "range"], ["roundrobin", "range"], ["range", "roundrobin"]], "roundrobin"),
    # only range is common: each member votes for its first common protocol
    ([["sticky", "range"], ["range"], ["cooperative", "range"]], "range"),
    ([["a", "b"], ["b", "a"]], "a"),  # a tie: the protocol first voted for
    ([["only"]], "only"),
])
def test_protocol_selection(members, expected):
    group = Group("g", 0)
    for i, names in enumerate(members):
        group.add(member(f"m{i}", [(n, b"") for n in names]))
    assert group.select_protocol() == expected


@pytest.mark.parametrize("state,group_protocols,protocol_type,offered,supported", [
    (EMPTY, None, "consumer", ["range"], True),
    (EMPTY, None, "", ["range"], False),  # a first member needs a protocol type...
    (EMPTY, None, "consumer", [], False),  # ...and protocols
    (STABLE, [["range", "roundrobin"], ["range"]], "consumer", ["range"], True),
    (STABLE, [["range", "roundrobin"], ["range"]], "consumer", ["roundrobin"], False),
    (STABLE, [["range"]], "connect", ["range"], False),  # another protocol type
])
def test_supports_protocols(state, group_protocols, protocol_type, offered, supported):
    group = Group("g", 0)
    for i, names in enumerate(group_protocols or []):
        group.add(member(f"m{i}", [(n, b"") for n in names]))
    group.state = state
    assert group.supports_protocols(protocol_type, offered) is supported


def test_membership_counts_and_leader():
    group = Group("g", 0)
    joined = []
    group.add(member("a"), joined.append)
    group.add(member("b", instance="i-b"))
    assert group.leader_id == "a" and group.static_members == {"i-b": "b"}
    assert group.num_awaiting_join == 1 and not group.has_all_members_joined()
    group.update_member(group.get("b"), [("range", b"x")], joined.append)
    assert group.has_all_members_joined()
    group.add_pending_member("c")
    assert not group.has_all_members_joined()  # a member that asked for an id may still join
    group.remove("c")
    group.remove("a")
    assert group.leader_id == "b" and group.num_awaiting_join == 1
    assert group.supported_protocols == {"range": 1}
    group.remove("b")
    assert group.leader_id is None and group.static_members == {} and group.num_awaiting_join == 0


def test_a_new_leader_is_elected_among_the_members_that_rejoined():
    group = Group("g", 0)
    for member_id in ("a", "b", "c"):
        group.add(member(member_id))
    assert not group.maybe_elect_new_joined_leader()  # nobody rejoined
    group.update_member(group.get("c"), [("range", b"")], lambda result: None)
    assert group.maybe_elect_new_joined_leader() and group.leader_id == "c"


def test_a_replaced_static_member_is_fenced():
    group = Group("g", 0)
    answers = []
    group.add(member("old", instance="i"), answers.append)
    replaced = group.replace_static_member("i", "old", "new")
    assert answers[0].member_id == "old" and answers[0].error == 82  # FENCED_INSTANCE_ID
    assert group.leader_id == "new" and group.static_members == {"i": "new"}
    assert replaced.member_id == "new" and group.has("new") and not group.has("old")


@pytest.mark.parametrize("case,state,member_id,instance,generation,error", [
    ("a member of the generation", STABLE, "a", None, 3, None),
    ("a static member under its current id", STABLE, "s", "i-s", 3, None),
    ("a member of another generation", STABLE, "a", None, 2, ErrorCode.ILLEGAL_GENERATION),
    ("an unknown member", STABLE, "ghost", None, 3, ErrorCode.UNKNOWN_MEMBER_ID),
    ("an unknown instance", STABLE, "s", "i-x", 3, ErrorCode.UNKNOWN_MEMBER_ID),
    ("an instance's old id", STABLE, "a", "i-s", 3, ErrorCode.FENCED_INSTANCE_ID),
    ("an unknown member of another generation", STABLE, "ghost", None, 2,
     ErrorCode.UNKNOWN_MEMBER_ID),
    ("any request once the group is gone", DEAD, "a", None, 3,
     ErrorCode.COORDINATOR_NOT_AVAILABLE),
])
def test_who_is_a_member_of_the_current_generation(case, state, member_id, instance, generation,
                                                   error):
    group = Group("g", 0, state)
    group.add(member("a"))
    group.add(member("s", instance="i-s"))
    group.generation_id = 3
    assert group.generation_member_error(member_id, instance, generation) == error, case
    if state is not DEAD and error != ErrorCode.ILLEGAL_GENERATION:
        assert group.member_error(member_id, instance) == error, case


@pytest.mark.parametrize("metadata,expected", [
    ([subscription("a", "b"), subscription("b", "c", version=3)], frozenset({"a", "b", "c"})),
    ([subscription("a"), b"\x00"], None),  # malformed metadata: unknown, not an error
    ([struct.pack(">hi", 0, 1000)], None),  # more topics than bytes
    ([struct.pack(">hi", -1, 0)], None),  # a negative version
])
def test_subscribed_topics(metadata, expected):
    group = Group("g", 0)
    for i, data in enumerate(metadata):
        group.add(member(f"m{i}", [("range", data)]))
    group.transition_to(PREPARING_REBALANCE, 1)
    group.init_next_generation(2)
    assert group.subscribed_topics == expected
    assert group.is_subscribed_to_topic("zzz") is (expected is None)


def test_next_generation():
    group = Group("g", 0)
    group.add(member("a", [("range", b"ma")]), lambda result: None)
    group.transition_to(PREPARING_REBALANCE, 1)
    group.init_next_generation(2)
    assert (group.state, group.generation_id, group.protocol_name) == \
        (COMPLETING_REBALANCE, 1, "range")
    result = group.join_result(group.get("a"))
    assert result.members == (("a", None, b"ma"),) and result.leader_id == "a"
    group.remove("a")
    group.transition_to(PREPARING_REBALANCE, 3)
    group.init_next_generation(4)
    assert (group.state, group.generation_id, group.protocol_name) == (EMPTY, 2, None)


def test_summary_shows_metadata_only_when_stable():
    group = Group("g", 0)
    group.add(member("a", [("range", b"meta")]))
    group.get("a").assignment = b"assigned"
    group.transition_to(PREPARING_REBALANCE, 1)
    group.init_next_generation(2)
    summary = group.summary()
    assert (summary.state, summary.protocol, summary.members[0].metadata) == \
        ("CompletingRebalance", "", b"")
    group.transition_to(STABLE, 3)
    summary = group.summary()
    assert (summary.state, summary.protocol_type, summary.protocol) == \
        ("Stable", "consumer", "range")
    assert (summary.members[0].metadata, summary.members[0].assignment) == (b"meta", b"assigned")


def test_record_round_trip():
    group = Group("g", 0)
    group.add(member("a", [("range", subscription("t"))], instance="i-a"))
    group.add(member("b", [("range", subscription("u"))]))
    group.transition_to(PREPARING_REBALANCE, 1)
    group.init_next_generation(2)
    group.transition_to(STABLE, 3)
    record = group.to_record({"a": b"A", "b": b"B"})
    loaded = Group.from_record("g", record, 100)
    assert (loaded.state, loaded.generation_id, loaded.protocol_type, loaded.protocol_name,
            loaded.leader_id, loaded.current_state_timestamp) == (STABLE, 1, "consumer", "range",
                                                                  "a", 3)
    assert [(m.member_id, m.group_instance_id, m.assignment) for m in loaded.members.values()] \
        == [("a", "i-a", b"A"), ("b", None, b"B")]
    assert loaded.static_members == {"i-a": "a"}
    assert loaded.subscribed_topics == frozenset({"t", "u"})
    empty = Group.from_record("g", Group("g", 5).to_record({}), 100)
    assert empty.state is EMPTY and empty.protocol_type is None


DAY = 86_400_000


def committed(commit_ms: int, expire_ms: int | None = None) -> CommittedOffset:
    return CommittedOffset(0, OffsetAndMetadata(1, -1, "", commit_ms, expire_ms))


@pytest.mark.parametrize("case,protocol_type,state,empty_since,offsets,now,expired", [
    ("standalone: retention after each commit", None, EMPTY, 0,
     {"a": committed(0), "b": committed(DAY)}, DAY + 10, ["a"]),
    ("empty consumer group: retention after it became empty", "consumer", EMPTY, 2 * DAY,
     {"a": committed(0)}, 2 * DAY + 10, []),
    ("empty consumer group: retention passed since it became empty", "consumer", EMPTY, DAY,
     {"a": committed(0), "b": committed(DAY)}, 2 * DAY, ["a", "b"]),
    ("empty group without a state timestamp: each commit's time", "consumer", EMPTY, None,
     {"a": committed(0), "b": committed(DAY)}, DAY + 10, ["a"]),
    ("stable consumer group: unsubscribed topics only", "consumer", STABLE, 0,
     {"t": committed(0), "other": committed(0)}, 2 * DAY, ["other"]),
    ("rebalancing group: nothing expires", "consumer", PREPARING_REBALANCE, 0,
     {"other": committed(0)}, 9 * DAY, []),
    ("explicit expire timestamp wins", None, EMPTY, 0,
     {"a": committed(0, expire_ms=5), "b": committed(0, expire_ms=50 * DAY)}, 10, ["a"]),
])
def test_expiry_policy(case, protocol_type, state, empty_since, offsets, now, expired):
    group = Group("g", 0)
    if state is not EMPTY:
        group.add(member("m", [("range", subscription("t"))]))
        group.transition_to(PREPARING_REBALANCE, 0)
        if state is not PREPARING_REBALANCE:
            group.init_next_generation(0)
            group.transition_to(STABLE, 0)
    group.protocol_type = protocol_type
    group.current_state_timestamp = empty_since
    for topic, commit in offsets.items():
        group.offsets.on_append(TopicPartition(topic, 0), commit)
    assert sorted(tp.topic for tp in group.expired_offsets(now, DAY)) == expired, case
