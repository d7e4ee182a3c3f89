"""Offset ranges as Spark's Kafka source plans them: splits for minPartitions and
maxRecordsPerPartition, and the proportional rate limit of maxOffsetsPerTrigger."""

from itertools import pairwise

import pytest

from broker_lite.client import TopicPartition
from kspark.source.planning import OffsetRange, available, plan_ranges, rate_limit

A, B, C = (TopicPartition("t", p) for p in range(3))


def spans(ranges):
    return [(r.topic, r.partition, r.start, r.end) for r in ranges]


def test_one_range_per_partition_with_something_to_read():
    ranges = plan_ranges({A: 0, B: 5, C: 7}, {A: 10, B: 5, C: 9})
    assert spans(ranges) == [("t", 0, 0, 10), ("t", 2, 7, 9)]
    assert all(isinstance(r, OffsetRange) for r in ranges)


def test_partitions_only_in_the_end_offsets_are_not_planned():
    assert spans(plan_ranges({A: 0}, {A: 3, B: 8})) == [("t", 0, 0, 3)]


@pytest.mark.parametrize("sizes, min_partitions, expected_parts", [
    ({A: 100, B: 100}, 2, [1, 1]),        # already enough partitions
    ({A: 100, B: 100}, 4, [2, 2]),
    ({A: 300, B: 100}, 4, [3, 1]),        # in proportion to size
    ({A: 1000, B: 1}, 10, [9, 1]),         # a tiny partition keeps one range, of the ten
    ({A: 1000, B: 10, C: 10}, 10, [8, 1, 1]),  # Spark 4 (SPARK-36576): 10 tasks, not 12
    ({A: 3}, 10, [3]),                     # never more ranges than records
])
def test_min_partitions_splits_in_proportion(sizes, min_partitions, expected_parts):
    ranges = plan_ranges({tp: 0 for tp in sizes}, sizes, min_partitions=min_partitions)
    parts = [sum(1 for r in ranges if r.topic_partition == tp) for tp in sizes]
    assert parts == expected_parts
    for tp, size in sizes.items():  # adjacent, covering, no overlap
        mine = [r for r in ranges if r.topic_partition == tp]
        assert mine[0].start == 0 and mine[-1].end == size
        assert all(x.end == y.start for x, y in pairwise(mine))


def test_min_partitions_gives_what_spark_4_gives():
    # KafkaOffsetRangeCalculator since SPARK-36576: the partitions that get one part stay whole
    # and the others share what minPartitions leaves, so the count is minPartitions here.
    D = TopicPartition("t", 3)
    sizes = {A: 10_000, B: 100, C: 100, D: 100}
    ranges = plan_ranges({tp: 0 for tp in sizes}, sizes, min_partitions=8)
    assert len(ranges) == 8
    assert spans(ranges)[:5] == [("t", 0, 0, 2000), ("t", 0, 2000, 4000), ("t", 0, 4000, 6000),
                                 ("t", 0, 6000, 8000), ("t", 0, 8000, 10_000)]
    ranges = plan_ranges({A: 0, B: 0, C: 0}, {A: 1000, B: 10, C: 10}, min_partitions=10)
    assert len(ranges) == 10


def test_each_part_takes_what_remains_over_the_parts_left():
    # Spark's getDividedPartition: remaining // parts left, the last part taking the rest
    assert spans(plan_ranges({A: 0}, {A: 10}, min_partitions=4)) == [
        ("t", 0, 0, 2), ("t", 0, 2, 4), ("t", 0, 4, 7), ("t", 0, 7, 10)]


def test_max_records_per_partition_splits_before_min_partitions():
    ranges = plan_ranges({A: 0, B: 0}, {A: 1000, B: 100}, min_partitions=6,
                         max_records_per_partition=400)
    assert spans(ranges) == [
        ("t", 0, 0, 166), ("t", 0, 166, 333), ("t", 0, 333, 499), ("t", 0, 499, 666),
        ("t", 0, 666, 833), ("t", 0, 833, 1000), ("t", 1, 0, 100)]
    # enough pieces already: minPartitions adds nothing
    assert len(plan_ranges({A: 0}, {A: 1000}, min_partitions=2,
                           max_records_per_partition=100)) == 10


def test_max_records_per_partition_caps_every_range():
    ranges = plan_ranges({A: 10, B: 0}, {A: 35, B: 5}, max_records_per_partition=10)
    assert spans(ranges) == [("t", 0, 10, 18), ("t", 0, 18, 26), ("t", 0, 26, 35),
                             ("t", 1, 0, 5)]
    assert max(r.size for r in ranges) <= 10


def test_rate_limit_shares_in_proportion_without_starving():
    assert rate_limit({A: 0, B: 0, C: 0}, {A: 1000, B: 10, C: 0}, 100) == {A: 99, B: 1, C: 0}
    assert rate_limit({A: 5}, {A: 8}, 100) == {A: 8}  # fewer waiting than allowed
    assert rate_limit({A: 5}, {A: 5}, 100) == {A: 5}
    limited = rate_limit({A: 0, B: 0}, {A: 10_000, B: 30_000}, 1000)
    assert limited == {A: 250, B: 750}
    assert available({A: 0, B: 0}, limited) == 1000


def test_available_counts_what_waits():
    assert available({A: 5, B: 0}, {A: 10, B: 3}) == 8
    assert available({A: 5}, {A: 5, B: 9}) == 0  # B has no start yet
