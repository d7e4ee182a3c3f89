"""ConsumerGroupHeartbeat as a pure function, over a group rebuilt from the records each answer
writes (as the coordinator replays them): members join and are assigned, revoke before the
others get their partitions, are fenced for bad epochs, leave; bad input gets Kafka's error
codes and writes nothing."""

import uuid

import pytest

from broker_lite.coordinator.consumer.config import ConsumerGroupConfig
from broker_lite.coordinator.consumer.coordinator import commit_error, replay
from broker_lite.coordinator.consumer.group import STABLE, ConsumerGroup
from broker_lite.coordinator.consumer.heartbeat import (
    HeartbeatRequest,
    heartbeat,
    remove_member,
    request_error,
)
from broker_lite.coordinator.consumer.reconciliation import UNREVOKED_PARTITIONS
from broker_lite.protocol import ErrorCode

T = uuid.UUID(int=42)
CONFIG = ConsumerGroupConfig(max_size=3)


class Topics:
    def __init__(self, **counts):
        self.counts = counts
        self.ids = {name: uuid.UUID(int=42 + i) for i, name in enumerate(sorted(counts))}

    def topic_names(self):
        return list(self.counts)

    def topic(self, name):
        return (self.ids[name], self.counts[name]) if name in self.counts else None

    def topic_name(self, topic_id):
        return next((n for n, i in self.ids.items() if i == topic_id), None)


IMAGE = Topics(events=4)


def join(member_id, **fields):
    return HeartbeatRequest("g", member_id, 0, rebalance_timeout_ms=30000,
                            subscribed_topic_names=fields.pop("topics", ("events",)),
                            owned={}, **fields)


def beat(group, request, config=CONFIG, image=IMAGE):
    result = heartbeat(group, request, config, image)
    if result.error == ErrorCode.NONE:
        replay(group, result.records)
    return result


def owned(result):
    return {p for ps in (result.assignment or {}).values() for p in ps}


def test_first_member_gets_every_partition():
    group = ConsumerGroup("g")
    result = beat(group, join("a"))
    assert (result.error, result.member_id, result.member_epoch) == (ErrorCode.NONE, "a", 1)
    assert owned(result) == {0, 1, 2, 3}
    assert (group.epoch, group.assignment_epoch, group.state) == (1, 1, STABLE)


def test_a_second_member_waits_for_the_first_to_revoke():
    group = ConsumerGroup("g")
    beat(group, join("a"))
    b = beat(group, join("b"))
    assert b.member_epoch == 2 and owned(b) == set()  # its partitions are still a's
    a = beat(group, HeartbeatRequest("g", "a", 1))  # a is told to revoke two
    assert a.member_epoch == 1 and len(owned(a)) == 2
    assert group.members["a"].assignment.state == UNREVOKED_PARTITIONS and a.revoking
    # until a reports them gone, b gets nothing
    assert beat(group, HeartbeatRequest("g", "b", 2)).assignment is None
    kept = {T: frozenset(owned(a))}
    a = beat(group, HeartbeatRequest("g", "a", 1, owned=kept))
    assert a.member_epoch == 2 and not a.revoking and a.assignment is None  # unchanged
    b = beat(group, HeartbeatRequest("g", "b", 2))
    assert owned(b) == {0, 1, 2, 3} - kept[T] and len(owned(b)) == 2
    assert group.state == STABLE


def test_a_member_that_leaves_frees_its_partitions():
    group = ConsumerGroup("g")
    beat(group, join("a"))
    beat(group, join("b"))
    left = beat(group, HeartbeatRequest("g", "b", -1))
    assert (left.member_epoch, left.left) == (-1, True)
    assert set(group.members) == {"a"} and group.epoch == 3
    a = beat(group, HeartbeatRequest("g", "a", 1))
    assert a.member_epoch == 3 and a.assignment is None  # it kept all four all along
    assert group.members["a"].assignment.assigned == {T: frozenset({0, 1, 2, 3})}


def test_fenced_member_records_remove_it():
    group = ConsumerGroup("g")
    beat(group, join("a"))
    replay(group, remove_member(group, "a", IMAGE))
    assert not group.members and group.state == "Empty" and not group.partition_epochs


@pytest.mark.parametrize("epoch, error", [
    (5, ErrorCode.FENCED_MEMBER_EPOCH),  # ahead of the coordinator
    (0, ErrorCode.NONE),  # rejoining starts it over
])
def test_member_epochs(epoch, error):
    group = ConsumerGroup("g")
    beat(group, join("a"))
    request = join("a") if epoch == 0 else HeartbeatRequest("g", "a", epoch)
    assert beat(group, request).error == error


def test_the_previous_epoch_is_accepted_with_a_subset_of_the_assignment():
    group = ConsumerGroup("g")
    beat(group, join("a"))
    beat(group, join("b"))
    a = beat(group, HeartbeatRequest("g", "a", 1))
    a = beat(group, HeartbeatRequest("g", "a", 1, owned={T: frozenset(owned(a))}))
    assert a.member_epoch == 2
    # the answer with epoch 2 was lost: epoch 1 with a subset of its partitions is accepted
    again = beat(group, HeartbeatRequest("g", "a", 1, owned={T: frozenset(owned(a))}))
    assert again.error == ErrorCode.NONE and again.member_epoch == 2
    # ... but not with partitions it does not have
    stale = beat(group, HeartbeatRequest("g", "a", 1, owned={T: frozenset({0, 1, 2, 3})}))
    assert stale.error == ErrorCode.FENCED_MEMBER_EPOCH


@pytest.mark.parametrize("request_, error", [
    (HeartbeatRequest("", "a", 0), ErrorCode.INVALID_REQUEST),
    (HeartbeatRequest("g", "", 1), ErrorCode.INVALID_REQUEST),
    (HeartbeatRequest("g", "a", 0, subscribed_topic_names=("events",), owned={}),
     None),  # no rebalance timeout: the consumer default (Kafka refuses it)
    (HeartbeatRequest("g", "a", 0, rebalance_timeout_ms=1, subscribed_topic_names=("e",),
                      owned={T: frozenset({1})}), ErrorCode.INVALID_REQUEST),
    (HeartbeatRequest("g", "a", 0, rebalance_timeout_ms=1, owned={}),
     ErrorCode.INVALID_REQUEST),  # neither names nor a regex
    (HeartbeatRequest("g", "a", 0, rebalance_timeout_ms=1, owned={},
                      subscribed_topic_names=()), None),  # no topics, but in the group
    (HeartbeatRequest("g", "a", 0, rebalance_timeout_ms=1, subscribed_topic_names=("e",)),
     None),  # a rejoin may leave its (empty) partitions out, as librdkafka does
    (HeartbeatRequest("g", "a", -3), ErrorCode.INVALID_REQUEST),
    (HeartbeatRequest("g", "a", -2), ErrorCode.INVALID_REQUEST),  # static leave, no instance
    (HeartbeatRequest("g", "a", 1, instance_id=""), ErrorCode.INVALID_REQUEST),
    (join("a", server_assignor="sticky"), ErrorCode.UNSUPPORTED_ASSIGNOR),
    (join("a", topics=(), subscribed_topic_regex="(?=x)"),
     ErrorCode.INVALID_REGULAR_EXPRESSION),
    (join("a", server_assignor="range"), None),
    (join("a", topics=(), subscribed_topic_regex="ev.*"), None),
])
def test_request_errors(request_, error):
    got = request_error(request_, CONFIG)
    assert (got[0] if got else None) == error


def test_bad_input_writes_nothing_and_leaves_the_group_alone():
    group = ConsumerGroup("g")
    beat(group, join("a"))
    before = (group.epoch, dict(group.members))
    for request in (join("x", server_assignor="sticky"), HeartbeatRequest("g", "a", 9),
                    HeartbeatRequest("g", "ghost", 3)):
        result = heartbeat(group, request, CONFIG, IMAGE)
        assert result.error != ErrorCode.NONE and not result.records
    assert (group.epoch, dict(group.members)) == before
    assert heartbeat(group, HeartbeatRequest("g", "ghost", 3), CONFIG, IMAGE).error == \
        ErrorCode.UNKNOWN_MEMBER_ID


def test_a_full_group_refuses_new_members_only():
    group = ConsumerGroup("g")
    for m in "abc":
        assert beat(group, join(m)).error == ErrorCode.NONE
    assert beat(group, join("d")).error == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert beat(group, HeartbeatRequest("g", "a", group.members["a"].epoch)).error == \
        ErrorCode.NONE


def test_a_regex_subscription_follows_new_topics():
    group = ConsumerGroup("g")
    image = Topics(**{"orders-eu": 1, "other": 1})
    a = beat(group, join("a", topics=("other",), subscribed_topic_regex="orders-.*"),
             image=image)
    # as in Kafka, a pattern new to the group is matched after the heartbeat that brought it
    assert a.assignment == {image.ids["other"]: frozenset({0})}
    a = beat(group, HeartbeatRequest("g", "a", a.member_epoch), image=image)
    assert a.assignment == {image.ids["orders-eu"]: frozenset({0}),
                            image.ids["other"]: frozenset({0})}
    grown = Topics(**{"orders-eu": 1, "orders-us": 2, "other": 1})
    a = beat(group, HeartbeatRequest("g", "a", a.member_epoch), image=grown)
    assert a.assignment == {grown.ids["orders-eu"]: frozenset({0}),
                            grown.ids["orders-us"]: frozenset({0, 1}),
                            grown.ids["other"]: frozenset({0})}
    assert set(group.subscription_metadata) == {"orders-eu", "orders-us", "other"}


def test_static_member_leaves_for_a_while_and_keeps_its_partitions():
    group = ConsumerGroup("g")
    beat(group, join("a", instance_id="i1"))
    left = beat(group, HeartbeatRequest("g", "a", -2, instance_id="i1"))
    assert left.member_epoch == -2 and group.members["a"].epoch == -2
    assert len(group.partition_epochs) == 4  # still its own
    # another member with the same instance id while the first is active is refused
    beat(group, join("b"))
    replaced = beat(group, join("c", instance_id="i1"))
    assert replaced.error == ErrorCode.NONE and "a" not in group.members


@pytest.mark.parametrize("member_id, epoch, error", [
    ("a", 1, None),
    ("a", 0, ErrorCode.STALE_MEMBER_EPOCH),
    ("a", 2, ErrorCode.STALE_MEMBER_EPOCH),
    ("ghost", 1, ErrorCode.UNKNOWN_MEMBER_ID),
    ("", -1, ErrorCode.UNKNOWN_MEMBER_ID),  # an admin's commit while the group has members
])
def test_offset_commits_carry_member_epochs(member_id, epoch, error):
    group = ConsumerGroup("g")
    beat(group, join("a"))
    assert commit_error(group, member_id, epoch) == error


def test_an_admin_commit_is_accepted_by_an_empty_group():
    assert commit_error(ConsumerGroup("g"), "", -1) is None


def test_a_join_without_a_rebalance_timeout_gets_the_consumer_default():
    group = ConsumerGroup("g")
    beat(group, HeartbeatRequest("g", "a", 0, subscribed_topic_names=("events",)))
    assert group.members["a"].metadata.rebalance_timeout_ms == 300_000
    beat(group, HeartbeatRequest("g", "a", 1, rebalance_timeout_ms=5000))
    assert group.members["a"].metadata.rebalance_timeout_ms == 5000
