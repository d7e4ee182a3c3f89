"""Turning offsets into Spark input partitions, and bounding what one micro-batch takes.

Each input partition is one :class:`OffsetRange`: records ``[start, end)`` of one topic
partition. A topic partition becomes one range, or several adjacent ones when ``minPartitions``
asks for more Spark partitions than there are topic partitions, or ``maxRecordsPerPartition``
caps a range's size. The arithmetic is Spark's Kafka source's (KafkaOffsetRangeCalculator and
the rate limit of KafkaMicroBatchStream), so jobs keep their partitioning when they move over.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql.datasource import InputPartition

from broker_lite.client import TopicPartition


@dataclass(frozen=True)
class OffsetRange(InputPartition):
    """Records ``start`` (inclusive) to ``end`` (exclusive) of one topic partition."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)


def plan_ranges(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int], *,
                min_partitions: int | None = None,
                max_records_per_partition: int | None = None) -> list[OffsetRange]:
    """The non-empty ranges from ``start`` to ``end`` of every partition in ``end``, split as
    Spark 4's ``KafkaOffsetRangeCalculator`` splits them:

    1. with ``maxRecordsPerPartition``, every range into ``ceil(size / max)`` pieces;
    2. then, while there are fewer pieces than ``minPartitions``, the pieces that would get one
       part of ``minPartitions`` in proportion to their size stay whole (and so does every piece
       of their topic partition), and the others share what ``minPartitions`` leaves, each
       ``max(round(size / their total * parts left), 1)`` parts;
    3. a piece of ``size`` records in ``parts`` parts: each part takes ``remaining // parts
       left``, the last one the rest; empty parts are dropped.

    >>> tp = TopicPartition("t", 0)
    >>> [(r.start, r.end) for r in plan_ranges({tp: 0}, {tp: 10}, min_partitions=3)]
    [(0, 3), (3, 6), (6, 10)]
    >>> [(r.start, r.end) for r in plan_ranges({tp: 0}, {tp: 10}, max_records_per_partition=4)]
    [(0, 3), (3, 6), (6, 10)]
    """
    ranges = [OffsetRange(tp.topic, tp.partition, start[tp], until)
              for tp, until in sorted(end.items()) if tp in start and until > start[tp]]
    if max_records_per_partition is not None:
        ranges = [piece for r in ranges
                  for piece in _split(r, -(-r.size // max_records_per_partition))]
    if min_partitions is None or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    small = [r for r in ranges if _part_count(r.size, total, min_partitions) == 1]
    whole = {r.topic_partition for r in small}
    split_total = total - sum(r.size for r in small)
    left = max(min_partitions - len(small), 1)
    return [piece for r in ranges for piece in _split(
        r, 1 if r.topic_partition in whole else _part_count(r.size, split_total, left))]


def _part_count(size: int, total: int, parts: int) -> int:
    """``size``'s share of ``parts`` (at least one), rounded as Java's ``Math.round``."""
    return max(math.floor(size / total * parts + 0.5), 1)


def _split(r: OffsetRange, parts: int) -> list[OffsetRange]:
    """``r`` in ``parts`` adjacent ranges, each ``remaining // parts left`` long, the last
    taking the rest; empty ones dropped."""
    pieces, begin, remaining = [], r.start, r.size
    for part in range(parts):
        length = remaining // (parts - part)
        remaining -= length
        pieces.append(OffsetRange(r.topic, r.partition, begin, min(begin + length, r.end)))
        begin = pieces[-1].end
    return [piece for piece in pieces if piece.size > 0]


def rate_limit(start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int],
               max_records: int) -> dict[TopicPartition, int]:
    """End offsets taking at most about ``max_records`` records in all, shared among the
    partitions in proportion to what each has available; a partition with anything available
    gets at least one record, so none starves.

    >>> a, b = TopicPartition("t", 0), TopicPartition("t", 1)
    >>> rate_limit({a: 0, b: 0}, {a: 300, b: 100}, 100)
    {TopicPartition(topic='t', partition=0): 75, TopicPartition(topic='t', partition=1): 25}
    """
    sizes = {tp: until - start[tp] for tp, until in latest.items()
             if tp in start and until - start[tp] > 0}
    total = sum(sizes.values())
    if total < 1:
        return dict(latest)
    result = {}
    for tp, until in latest.items():
        if tp not in sizes:
            result[tp] = until
            continue
        share = max_records * (sizes[tp] / total)
        taken = math.ceil(share) if share < 1 else math.floor(share)
        result[tp] = min(until, start[tp] + taken)
    return result


def available(start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int]) -> int:
    """How many offsets lie between ``start`` and ``latest``."""
    return sum(max(0, until - start.get(tp, until)) for tp, until in latest.items())
