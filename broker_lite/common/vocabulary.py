"""The words every layer of the Kafka core shares: a topic partition, the sentinels Kafka writes
for "none", the bounds of its integer types, and the clock.

One definition each, below everything else (records, log, protocol, coordinators, client and
tools all import from here, and this module imports nothing of the project), so a sentinel
cannot drift between the broker and the client that must agree on it.

>>> partitions = {TopicPartition("b", 0), TopicPartition("a", 1), TopicPartition("a", 0)}
>>> sorted(partitions)  # doctest: +NORMALIZE_WHITESPACE
[TopicPartition(topic='a', partition=0), TopicPartition(topic='a', partition=1),
 TopicPartition(topic='b', partition=0)]
>>> str(TopicPartition("events", 3)), tuple(TopicPartition("events", 3))
('events-3', ('events', 3))
"""

from __future__ import annotations

import time
from typing import NamedTuple

# -- Kafka's integer types (the protocol's INT32 / INT64, the configs' INT / LONG) ----------------
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# -- "none" as Kafka writes it, in record batches, on the wire and in its state -------------------
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1  # also the "unknown leader epoch" of requests
NO_TIMESTAMP = -1
NO_OFFSET = -1

#: Sequence numbers of an idempotent producer wrap from this to 0 (KIP-98).
MAX_SEQUENCE = INT32_MAX


class TopicPartition(NamedTuple):
    """One partition of one topic; hashable, sorted by topic then partition, and a plain
    ``(topic, partition)`` pair wherever one is expected."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def now_ms() -> int:
    """Milliseconds since the epoch, as Kafka's timestamps count them."""
    return time.time_ns() // 1_000_000
