"""Records as a group consumer hands them out, decoded from fetched record batches."""

from __future__ import annotations

from dataclasses import dataclass

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.records.record import Header, TimestampType

from ..consumer.partition_reader import scan_batches


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


def decode_records(tp: TopicPartition, data: bytes, position: int, *, check_crcs: bool = True
                   ) -> tuple[list[ConsumerRecord], int]:
    """The records of the complete batches in ``data`` (a Fetch answer for ``tp`` at
    ``position``) from ``position`` on, and the position after them.

    Batches are read by the client's partition reader
    (:func:`broker_lite.client.consumer.partition_reader.scan_batches`): checked with
    ``check_crcs``;
    one may start before ``position`` (compressed batches come whole) and its earlier records
    are skipped; control batches (transaction markers) yield nothing but move the position past
    them, as do gaps left by compaction. :class:`CorruptMessageError` names the partition and
    the offset of bad data.
    """
    batches, next_position, _ = scan_batches(tp, data, position, check_crcs=check_crcs)
    records = [ConsumerRecord(tp.topic, tp.partition, r.offset, r.key, r.value, r.timestamp,
                              r.headers, r.timestamp_type)
               for batch in batches for r in batch if r.offset >= position]
    return records, next_position
