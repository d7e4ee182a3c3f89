"""Records as a group consumer hands them out, decoded from what the client's partition reader
(:mod:`broker_lite.client.consumer.partition_reader`) fetched."""

from __future__ import annotations

from dataclasses import dataclass

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.records.record import Header, TimestampType

from ..consumer.partition_reader import FetchedChunk


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    """One consumed record; ``key`` and ``value`` are None when null, ``headers`` a tuple of
    (name, value) pairs, ``timestamp`` in ms (-1 for records without one, message format v0)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple[Header, ...] = ()
    timestamp_type: TimestampType = TimestampType.CREATE_TIME

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


def consumer_records(chunk: FetchedChunk) -> list[ConsumerRecord]:
    """The new records of what the client's partition reader fetched for one partition, in
    offset order, as the group consumer hands them out (control batches and records before the
    position already left out by the reader)."""
    topic, partition = chunk.tp
    return [ConsumerRecord(topic, partition, r.offset, r.key, r.value, r.timestamp, r.headers,
                           r.timestamp_type) for r in chunk.records()]
