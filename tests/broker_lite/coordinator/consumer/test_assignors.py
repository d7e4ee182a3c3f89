"""The server-side assignors as tables: members' subscriptions and partition counts in, each
member's partitions out; and the choice of the group's assignor."""

import uuid

import pytest

from broker_lite.coordinator.consumer.assignors import (
    MemberSubscription,
    range_assign,
    select_assignor,
    uniform_assign,
)

A, B = uuid.UUID(int=1), uuid.UUID(int=2)


def sub(*topics, target=None, instance=None):
    return MemberSubscription(frozenset(topics), target or {}, instance)


def flat(assignment):
    return {m: {(t.int, p) for t, ps in topics.items() for p in ps}
            for m, topics in assignment.items()}


@pytest.mark.parametrize("members, partitions, expected", [
    ({"m1": sub(A), "m2": sub(A)}, {A: 4}, {"m1": {(1, 0), (1, 1)}, "m2": {(1, 2), (1, 3)}}),
    ({"m1": sub(A), "m2": sub(A)}, {A: 3}, {"m1": {(1, 0), (1, 1)}, "m2": {(1, 2)}}),
    # co-partitioned: the same partition numbers of both topics
    ({"m1": sub(A, B), "m2": sub(A, B)}, {A: 2, B: 2},
     {"m1": {(1, 0), (2, 0)}, "m2": {(1, 1), (2, 1)}}),
    # a member subscribed to one topic only shares that one
    ({"m1": sub(A, B), "m2": sub(B)}, {A: 2, B: 2},
     {"m1": {(1, 0), (1, 1), (2, 0)}, "m2": {(2, 1)}}),
    # instance ids order the members, before member ids
    ({"m1": sub(A, instance="z"), "m2": sub(A, instance="a")}, {A: 2},
     {"m1": {(1, 1)}, "m2": {(1, 0)}}),
    ({"m1": sub(A), "m2": sub(A), "m3": sub(A)}, {A: 1}, {"m1": {(1, 0)}, "m2": set(),
                                                          "m3": set()}),
])
def test_range(members, partitions, expected):
    assert flat(range_assign(members, partitions)) == expected


def counts(assignment):
    return sorted(len(v) for v in flat(assignment).values())


@pytest.mark.parametrize("members, partitions, expected_counts", [
    ({"m1": sub(A), "m2": sub(A), "m3": sub(A)}, {A: 6}, [2, 2, 2]),
    ({"m1": sub(A), "m2": sub(A), "m3": sub(A)}, {A: 7}, [2, 2, 3]),
    ({"m1": sub(A, B), "m2": sub(A, B)}, {A: 3, B: 3}, [3, 3]),
    # heterogeneous: m2 can only take B's partitions
    ({"m1": sub(A, B), "m2": sub(B)}, {A: 4, B: 2}, [2, 4]),
    ({"m1": sub(A)}, {A: 0}, [0]),
])
def test_uniform_balances(members, partitions, expected_counts):
    assignment = uniform_assign(members, partitions)
    assert counts(assignment) == expected_counts
    owned = [tp for v in flat(assignment).values() for tp in v]
    assert len(owned) == len(set(owned)) == sum(partitions.values())  # each partition once


def test_uniform_is_sticky_when_a_member_joins():
    before = uniform_assign({"m1": sub(A), "m2": sub(A)}, {A: 6})
    after = uniform_assign({"m1": sub(A, target=before["m1"]), "m2": sub(A, target=before["m2"]),
                            "m3": sub(A)}, {A: 6})
    assert counts(after) == [2, 2, 2]
    # m1 and m2 keep four of their six partitions between them: only two move, to m3
    kept = (flat(after)["m1"] & flat(before)["m1"]) | (flat(after)["m2"] & flat(before)["m2"])
    assert len(kept) == 4 and flat(after)["m3"] <= flat(before)["m1"] | flat(before)["m2"]


def test_uniform_gives_up_the_highest_partitions_as_members_join():
    """The layouts of Kafka's uniform assignor, which librdkafka's 0113 checks."""
    one = uniform_assign({"c0": sub(A)}, {A: 6})
    two = uniform_assign({"c0": sub(A, target=one["c0"]), "c1": sub(A)}, {A: 6})
    three = uniform_assign({"c0": sub(A, target=two["c0"]), "c1": sub(A, target=two["c1"]),
                            "c2": sub(A)}, {A: 6})
    assert flat(one) == {"c0": {(1, p) for p in range(6)}}
    assert flat(two) == {"c0": {(1, 0), (1, 1), (1, 2)}, "c1": {(1, 3), (1, 4), (1, 5)}}
    assert flat(three) == {"c0": {(1, 0), (1, 1)}, "c1": {(1, 3), (1, 4)},
                           "c2": {(1, 2), (1, 5)}}


def test_uniform_is_sticky_when_a_member_leaves():
    before = uniform_assign({"m1": sub(A), "m2": sub(A), "m3": sub(A)}, {A: 6})
    after = uniform_assign({"m1": sub(A, target=before["m1"]),
                            "m2": sub(A, target=before["m2"])}, {A: 6})
    assert flat(before)["m1"] <= flat(after)["m1"] and flat(before)["m2"] <= flat(after)["m2"]
    assert counts(after) == [3, 3]


def test_uniform_drops_what_a_member_no_longer_subscribes_to():
    after = uniform_assign({"m1": sub(B, target={A: frozenset({0, 1})})}, {A: 2, B: 1})
    assert flat(after) == {"m1": {(2, 0)}}


@pytest.mark.parametrize("requested, expected", [
    ([], "uniform"),
    ([None, None], "uniform"),
    (["range", None], "range"),
    (["range", "uniform", "uniform"], "uniform"),
    (["range", "uniform"], "uniform"),  # a tie: the first configured
])
def test_select_assignor(requested, expected):
    assert select_assignor(requested, ("uniform", "range")) == expected
