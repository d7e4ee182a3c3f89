"""Records as a group consumer hands them out, decoded from fetched record batches."""

from __future__ import annotations

from dataclasses import dataclass

from broker_lite.records import BatchReader, RecordsError
from broker_lite.records.record import Header, TimestampType

from ..errors import CorruptMessageError
from ..types import TopicPartition


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


def decode_records(tp: TopicPartition, data: bytes, position: int
                   ) -> tuple[list[ConsumerRecord], int]:
    """The records of the complete batches in ``data`` (a Fetch answer for ``tp`` at
    ``position``) from ``position`` on, and the position after them.

    Batches are checked (sizes, CRC); a batch may start before ``position`` (compressed batches
    come whole) and its earlier records are skipped. Control batches (transaction markers)
    yield nothing but move the position past them, as do gaps left by compaction.
    :class:`CorruptMessageError` names the partition and position of bad data.
    """
    records: list[ConsumerRecord] = []
    next_position = position
    try:
        for batch in BatchReader(data, validate=True):
            if batch.next_offset <= position:
                continue
            if not batch.is_control_batch:
                records.extend(
                    ConsumerRecord(tp.topic, tp.partition, r.offset, r.key, r.value, r.timestamp,
                                   r.headers, r.timestamp_type)
                    for r in batch if r.offset >= position)
            next_position = max(next_position, batch.next_offset)
    except RecordsError as exc:
        raise CorruptMessageError(f"corrupt record data from {tp} at offset {position}: {exc}",
                                  where=str(tp)) from exc
    return records, next_position
