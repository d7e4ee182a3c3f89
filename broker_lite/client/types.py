"""The values the client hands out: topic partitions, offset specs, fetched partition data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from broker_lite.common.vocabulary import (
    TopicPartition as TopicPartition,  # one of the client's values
)
from broker_lite.protocol.enums import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, IsolationLevel

if TYPE_CHECKING:
    from .errors import KafkaClientError

#: ListOffsets specs, the client's names for the wire's ``EARLIEST_TIMESTAMP`` and
#: ``LATEST_TIMESTAMP``: the log start offset, and the high watermark (the offset the next record
#: will get).
EARLIEST = EARLIEST_TIMESTAMP
LATEST = LATEST_TIMESTAMP

#: A partition end meaning "up to the end of the log, as the fetches find it" (for
#: :mod:`.consumer.partition_reader`): the high watermark, or under read_committed the last
#: stable offset. It is LATEST, as Spark's ``endingOffsets`` writes "latest" as -1: an end the
#: reader resolves as it reads, rather than one looked up first.
LOG_END = LATEST

#: The ``isolation.level`` settings (their wire values are :class:`IsolationLevel`'s).
READ_UNCOMMITTED = IsolationLevel.READ_UNCOMMITTED.setting
READ_COMMITTED = IsolationLevel.READ_COMMITTED.setting
ISOLATION_LEVELS = {level.setting: level.value for level in IsolationLevel}  # name -> wire value


@dataclass(frozen=True, slots=True)
class OffsetAndTimestamp:
    """A ListOffsets answer: the offset, and the timestamp of its record (-1 when the broker
    reports none, as for EARLIEST and LATEST)."""

    offset: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A committed offset with the metadata string committed with it."""

    offset: int
    metadata: str


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    """What one Fetch returned for one partition.

    ``records`` holds raw entries (v2 record batches, or v0/v1 message sets on old topics) as the
    broker sent them, a read-only view into the received response (``bytes(records)`` copies
    them out): the first may start before the fetch offset (a compressed batch is sent whole)
    and the last may be cut short by the byte limits; decode with
    :func:`broker_lite.records.iter_batches` or
    :func:`broker_lite.records.arrow.batches_to_arrow` and trim.
    ``aborted_transactions`` lists ``(producer_id, first_offset)`` for read_committed fetches.
    ``error`` is set instead of raising for partition-level failures (OffsetOutOfRangeError, ...),
    and the other fields are then -1 / empty unless the broker said more.
    """

    records: memoryview
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted_transactions: list[tuple[int, int]] = field(default_factory=list)
    error: KafkaClientError | None = None

    @classmethod
    def failed(cls, error: KafkaClientError) -> FetchedPartition:
        return cls(memoryview(b""), -1, -1, -1, [], error)


def isolation_level_code(level: str | int) -> int:
    """The wire value of an isolation level name (0 read_uncommitted, 1 read_committed)."""
    from .errors import InvalidArgumentError

    if isinstance(level, int) and level in (0, 1):
        return level
    code = ISOLATION_LEVELS.get(level) if isinstance(level, str) else None
    if code is None:
        raise InvalidArgumentError(
            f"isolation level must be one of {sorted(ISOLATION_LEVELS)}, got {level!r}")
    return code
