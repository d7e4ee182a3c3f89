"""Share group membership (KIP-932) as tables: heartbeats and their answers, epochs, the
assignor, and a share group's configs against the broker's bounds."""

import uuid

import pytest

from broker_lite.coordinator.share.config import ShareConfig
from broker_lite.coordinator.share.group import ShareGroup, assign
from broker_lite.coordinator.share.group_configs import (
    InvalidGroupConfigError,
    parse_duration_ms,
    settings_of,
    validate,
)
from broker_lite.protocol import ErrorCode

X, Y = uuid.UUID(int=1), uuid.UUID(int=2)
TOPICS = {"x": (X, 2), "y": (Y, 1)}


def group(max_size: int = 3) -> ShareGroup:
    return ShareGroup("g", max_size, lambda names: {n: TOPICS[n] for n in names if n in TOPICS})


def test_a_joining_member_gets_an_epoch_and_its_assignment_once():
    g = group()
    joined = g.heartbeat("a", 0, ["x"])
    assert (joined.error, joined.member_id, joined.epoch) == (ErrorCode.NONE, "a", 1)
    assert joined.assignment == {X: (0, 1)}
    again = g.heartbeat("a", 1, None)
    assert (again.error, again.epoch, again.assignment) == (ErrorCode.NONE, 1, None)


def test_a_second_member_shares_the_topic_and_the_first_moves_to_the_new_epoch():
    g = group()
    g.heartbeat("a", 0, ["x"])
    b = g.heartbeat("b", 0, ["x"])
    assert (b.epoch, b.assignment) == (2, {X: (1,)})
    a = g.heartbeat("a", 1, None)
    assert (a.epoch, a.assignment) == (2, {X: (0,)})


# (the heartbeat after "a" joined at epoch 1 and "b" at 2, the error it gets)
HEARTBEATS = [
    ("a", 1, ErrorCode.NONE),  # its epoch: it moves on to 2
    ("a", 7, ErrorCode.FENCED_MEMBER_EPOCH),
    ("b", 1, ErrorCode.FENCED_MEMBER_EPOCH),  # b never had epoch 1
    ("c", 3, ErrorCode.UNKNOWN_MEMBER_ID),
    ("b", -1, ErrorCode.NONE),  # leaves
]


@pytest.mark.parametrize("member,epoch,error", HEARTBEATS)
def test_heartbeats_are_answered_as_kip_932_says(member, epoch, error):
    g = group()
    g.heartbeat("a", 0, ["x"])
    g.heartbeat("b", 0, ["x"])
    assert g.heartbeat(member, epoch, None).error == error
    assert g.heartbeat("a", 1, None).error == ErrorCode.NONE  # the others are unaffected


def test_the_previous_epoch_is_accepted_when_the_answer_was_lost():
    g = group()
    g.heartbeat("a", 0, ["x"])
    g.heartbeat("a", 1, ["x", "y"])  # epoch 2 now, answer lost
    again = g.heartbeat("a", 1, None)
    assert (again.error, again.epoch, again.assignment) == (ErrorCode.NONE, 2,
                                                            {X: (0, 1), Y: (0,)})


def test_a_full_group_refuses_a_new_member_only():
    g = group(max_size=1)
    g.heartbeat("a", 0, ["x"])
    assert g.heartbeat("b", 0, ["x"]).error == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert g.heartbeat("a", 1, None).error == ErrorCode.NONE
    assert set(g.members) == {"a"}


def test_leaving_gives_the_partitions_to_the_others():
    g = group()
    g.heartbeat("a", 0, ["x"])
    g.heartbeat("b", 0, ["x"])
    assert g.heartbeat("a", 1, None).assignment == {X: (0,)}
    g.heartbeat("b", -1, None)
    assert g.heartbeat("a", 2, None).assignment == {X: (0, 1)}
    assert g.remove("a") and not g.remove("a")
    assert g.state.value == "Empty"


# (members' subscriptions, topics' partition counts, assignment of each member)
ASSIGNMENTS = [
    ({"a": ["x"]}, {"x": 3}, {"a": {"x": (0, 1, 2)}}),
    ({"a": ["x"], "b": ["x"]}, {"x": 1}, {"a": {"x": (0,)}, "b": {"x": (0,)}}),
    ({"a": ["x"], "b": ["x"], "c": ["x"]}, {"x": 2},
     {"a": {"x": (0,)}, "b": {"x": (1,)}, "c": {"x": (0,)}}),
    ({"a": ["x"], "b": ["y"]}, {"x": 1, "y": 2}, {"a": {"x": (0,)}, "b": {"y": (0, 1)}}),
    ({"a": ["missing"]}, {}, {"a": {}}),
]


@pytest.mark.parametrize("members,counts,expected", ASSIGNMENTS)
def test_every_partition_has_a_member_and_every_member_a_partition(members, counts, expected):
    ids = {name: uuid.UUID(int=i + 10) for i, name in enumerate(sorted(counts))}
    result = assign(members, {n: (ids[n], c) for n, c in counts.items()})
    assert result == {m: {ids[t]: p for t, p in topics.items()}
                      for m, topics in expected.items()}


BROKER = ShareConfig(min_record_lock_duration_ms=1000)


@pytest.mark.parametrize("configs", [
    {"share.auto.offset.reset": "earliest"},
    {"share.auto.offset.reset": "by_duration:PT1H"},
    {"share.isolation.level": "read_committed"},
    {"share.record.lock.duration.ms": "3000"},
    {"share.delivery.count.limit": "10"},
])
def test_group_configs_within_bounds_are_accepted(configs):
    validate(configs, BROKER)


@pytest.mark.parametrize("configs,message", [
    ({"share.auto.offset.reset": "newest"}, "String must be one of"),
    ({"share.auto.offset.reset": "by_duration:soon"}, "not an ISO-8601 duration"),
    ({"share.isolation.level": "serializable"}, "String must be one of"),
    ({"share.record.lock.duration.ms": "999"}, r"Value must be in \[1000, 60000\]"),
    ({"share.delivery.count.limit": "x"}, "Not a number"),
    ({"consumer.session.timeout.ms": "45000"}, "Unknown group config name"),
])
def test_group_configs_out_of_bounds_are_refused(configs, message):
    with pytest.raises(InvalidGroupConfigError, match=message):
        validate(configs, BROKER)


def test_settings_take_the_groups_values_over_the_brokers():
    settings = settings_of({"share.record.lock.duration.ms": "3000",
                            "share.isolation.level": "read_committed"}, BROKER)
    assert settings.record_lock_duration_ms == 3000 and settings.read_committed
    assert settings.delivery_count_limit == 5 and settings.auto_offset_reset == "latest"
    assert parse_duration_ms("P1DT1M0.5S") == 86_460_500
