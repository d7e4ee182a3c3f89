"""The controller's decisions, as tables of (state, replicas, live brokers) -> new state: the
offline, controlled-shutdown and unclean elections, preferred and unclean elections asked for,
and the steps of a reassignment (KIP-455)."""

import pytest

from broker_lite.controller.elections import desired_state, preferred_election, unclean_election
from broker_lite.controller.reassignment import (
    Assignment,
    check_target,
    complete,
    is_complete,
    with_assignments,
)
from broker_lite.protocol import ErrorCode
from broker_lite.zk.layout import PartitionState, TopicAssignment

S = PartitionState


@pytest.mark.parametrize("state,replicas,live,shutting_down,unclean,expected", [
    # a shutting-down leader hands over to the next live replica in the ISR, leaving it
    (S(1, 3, (1, 2, 3), 1), (1, 2, 3), {1, 2, 3}, {1}, False, S(2, 4, (2, 3), 5)),
    # ... and keeps leading while no other replica is in sync
    (S(1, 3, (1,), 1), (1, 2), {1, 2}, {1}, False, S(1, 3, (1,), 1)),
    # a shutting-down follower leaves the ISR
    (S(1, 3, (1, 2, 3), 1), (1, 2, 3), {1, 2, 3}, {3}, False, S(1, 4, (1, 2), 5)),
    # nobody shutting down leads anything new
    (None, (1, 2, 3), {1, 2, 3}, {1}, False, S(2, 0, (2, 3), 5)),
    # unclean: the first live replica leads, alone in the ISR
    (S(1, 3, (1,), 1), (1, 2, 3), {3, 2}, set(), True, S(2, 4, (2,), 5)),
    (S(-1, 4, (1,), 1), (1, 2, 3), {3}, set(), True, S(3, 5, (3,), 5)),
    # ... but an in-sync replica still comes first
    (S(1, 3, (1, 3), 1), (1, 2, 3), {2, 3}, set(), True, S(3, 4, (3,), 5)),
    # ... and nobody live: offline all the same
    (S(1, 3, (1,), 1), (1, 2), set(), set(), True, S(-1, 4, (1,), 5)),
    # a replica no longer assigned (a cancelled reassignment) leaves the ISR
    (S(1, 3, (1, 2, 4), 1), (1, 2), {1, 2, 4}, set(), False, S(1, 4, (1, 2), 5)),
])
def test_desired_state(state, replicas, live, shutting_down, unclean, expected):
    assert desired_state(state, replicas, live, 5, shutting_down=shutting_down,
                         unclean=unclean) == expected


@pytest.mark.parametrize("state,live,expected", [
    (S(2, 3, (1, 2), 1), {1, 2}, (S(1, 4, (1, 2), 5), ErrorCode.NONE)),
    (S(1, 3, (1, 2), 1), {1, 2}, (None, ErrorCode.ELECTION_NOT_NEEDED)),
    (S(2, 3, (2,), 1), {1, 2}, (None, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE)),  # not in sync
    (S(2, 3, (1, 2), 1), {2}, (None, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE)),  # not live
])
def test_preferred_election(state, live, expected):
    assert preferred_election(state, (1, 2), live, 5) == expected


@pytest.mark.parametrize("state,live,expected", [
    (S(-1, 3, (1,), 1), {2}, (S(2, 4, (2,), 5), ErrorCode.NONE)),
    (S(2, 3, (2,), 1), {2}, (None, ErrorCode.ELECTION_NOT_NEEDED)),
    (S(-1, 3, (1,), 1), set(), (None, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE)),
])
def test_unclean_election(state, live, expected):
    assert unclean_election(state, (1, 2), live, 5) == expected


@pytest.mark.parametrize("current,target,expected", [
    # Kafka's ReplicaAssignment.reassignTo: RS = TRS + (ORS - TRS)
    (Assignment((1, 2, 3)), (3, 4, 2), Assignment((3, 4, 2, 1), (4,), (1,))),
    (Assignment((1, 2)), (1, 2), Assignment((1, 2))),
    # a new target for a partition being reassigned keeps the original replicas original
    (Assignment((4, 5, 1, 2), (4, 5), (1, 2)), (6,), Assignment((6, 1, 2), (6,), (1, 2))),
    # back to the original replicas: cancelled
    (Assignment((4, 5, 1, 2), (4, 5), (1, 2)), (1, 2), Assignment((1, 2))),
])
def test_reassign_to(current, target, expected):
    assert current.reassign_to(target) == expected


@pytest.mark.parametrize("target,error", [
    ((), ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    ((1, 1), ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    ((-1,), ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    ((1, 7), ErrorCode.INVALID_REPLICA_ASSIGNMENT),  # 7 is not alive
    ((2, 3), ErrorCode.NONE),
])
def test_check_target(target, error):
    assert check_target(target, Assignment((1, 2)), {1, 2, 3})[0] == error


def test_completion_moves_the_leader_into_the_target_and_shrinks_the_isr():
    ongoing = Assignment((1, 2, 3)).reassign_to((3, 4))
    assert not is_complete(S(1, 2, (1, 2, 3), 1), ongoing)
    state = S(1, 2, (1, 2, 3, 4), 1)
    assert is_complete(state, ongoing)
    assert complete(state, ongoing, {1, 2, 3, 4}, 9) == S(3, 3, (3, 4), 9)
    # a leader that stays a target keeps leading
    assert complete(S(3, 2, (1, 2, 3, 4), 1), ongoing, {1, 2, 3, 4}, 9) == S(3, 3, (3, 4), 9)
    # no live target in the ISR to lead: not yet
    assert complete(state, ongoing, {1, 2}, 9) is None


def test_with_assignments_records_and_clears_the_ongoing_fields():
    topic = TopicAssignment({0: (1, 2), 1: (2, 3)})
    ongoing = with_assignments(topic, {1: Assignment((2, 3)).reassign_to((1, 3))})
    assert ongoing.partitions == {0: (1, 2), 1: (1, 3, 2)}
    assert (ongoing.adding_replicas, ongoing.removing_replicas) == ({1: (1,)}, {1: (2,)})
    done = with_assignments(ongoing, {1: Assignment((1, 3))})
    assert done == TopicAssignment({0: (1, 2), 1: (1, 3)})
