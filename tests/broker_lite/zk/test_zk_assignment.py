"""Kafka's rack-unaware round robin, checked against the assignment in Kafka's own AdminTest."""

import random

import pytest

from broker_lite.zk import InvalidPartitionsError, InvalidReplicationFactorError, assign_replicas


def test_matches_kafka_admin_test():
    # AdminTest.testReplicaAssignment: brokers 0..4, 10 partitions, 3 replicas, start index 0
    assert assign_replicas(range(5), 10, 3, start_index=0) == {
        0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 4), 3: (3, 4, 0), 4: (4, 0, 1),
        5: (0, 2, 3), 6: (1, 3, 4), 7: (2, 4, 0), 8: (3, 0, 1), 9: (4, 1, 2)}


def test_continues_the_leader_rotation_from_a_start_partition():
    whole = assign_replicas([1, 2, 3], 7, 2, start_index=1)
    tail = assign_replicas([1, 2, 3], 3, 2, start_index=1, start_partition=4)
    assert list(tail) == [4, 5, 6]
    assert [tail[p][0] for p in tail] == [whole[p][0] for p in (4, 5, 6)] == [3, 1, 2]


def test_random_start_spreads_leaders_and_never_repeats_a_broker():
    assignment = assign_replicas([5, 1, 3], 6, 3, rng=random.Random(7))
    assert sorted(r[0] for r in assignment.values()) == [1, 1, 3, 3, 5, 5]
    assert all(sorted(r) == [1, 3, 5] for r in assignment.values())


@pytest.mark.parametrize("brokers,partitions,rf,error,message", [
    ([1], 0, 1, InvalidPartitionsError, "larger than 0"),
    ([1], 1, 0, InvalidReplicationFactorError, "larger than 0"),
    ([1, 2], 1, 3, InvalidReplicationFactorError, "larger than the 2 live broker"),
    ([], 1, 1, InvalidReplicationFactorError, "larger than the 0 live broker"),
])
def test_refusals(brokers, partitions, rf, error, message):
    with pytest.raises(error, match=message):
        assign_replicas(brokers, partitions, rf)
