"""The lag of the query's consumer group: what has arrived in the input topic and the group has
not committed yet, as lag monitors (``kafka-consumer-groups --describe``) compute it.

The kpy source commits each finished micro-batch's end offsets to its ``kafka.group.id``, so the
lag is what the query still has to read: the end offsets (read_committed: the last stable
offsets) minus the committed offsets, summed over the partitions; a partition with no commit
counts from its log start.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker_lite.client import (
    EARLIEST,
    LATEST,
    READ_COMMITTED,
    KafkaClient,
    TopicPartition,
)


@dataclass(frozen=True)
class GroupLag:
    """End and committed offsets per partition, and their difference in total."""

    end: dict[TopicPartition, int]
    committed: dict[TopicPartition, int]

    @property
    def total(self) -> int:
        return sum(max(0, end - self.committed.get(tp, 0)) for tp, end in self.end.items())


def group_lag(client: KafkaClient, group_id: str, topic: str, partitions: int) -> GroupLag:
    """The lag of ``group_id`` on partitions ``0 .. partitions - 1`` of ``topic``."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    end = client.list_offsets({tp: LATEST for tp in tps}, isolation_level=READ_COMMITTED)
    committed = client.committed(group_id, tps)
    missing = [tp for tp in tps if committed.get(tp) is None]
    start = client.list_offsets({tp: EARLIEST for tp in missing}) if missing else {}
    return GroupLag(
        end={tp: offset or 0 for tp, offset in end.items()},
        committed={tp: committed[tp] if committed.get(tp) is not None else start.get(tp) or 0
                   for tp in tps})
