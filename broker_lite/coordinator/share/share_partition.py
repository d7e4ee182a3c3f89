"""A share-partition: the records of one topic partition as one share group consumes them
(KIP-932, "Share-partitions"; Kafka's ``SharePartition``), as pure logic: no log, no clock, no
lock. Its owner (:mod:`.partition_manager`) reads the log, tells the time and serializes calls.

The share-partition start offset (SPSO) is the first offset not yet done with; every record
before it is acknowledged or archived. The end offset (SPEO) is one past the last record ever
acquired. Between them each offset is *in flight*, in one of four states:

==============  ========================================================================
state           meaning
==============  ========================================================================
AVAILABLE (0)   may be acquired by any member (again, once released)
ACQUIRED (1)    delivered to one member, locked until its acquisition lock expires
ACKNOWLEDGED    accepted: processed, never delivered again
(2)
ARCHIVED (4)    rejected, past the delivery count limit, or not a record to deliver
                (a gap: a control record, an aborted transaction's record)
==============  ========================================================================

Transitions, as a table (:data:`ACKNOWLEDGE_TRANSITIONS` for the acknowledgements):

====================  =============  ==============================================================
from                  event          to
====================  =============  ==============================================================
AVAILABLE / new       acquire        ACQUIRED (delivery count + 1, lock = now + lock duration)
ACQUIRED (by member)  ACCEPT         ACKNOWLEDGED
ACQUIRED (by member)  RELEASE        AVAILABLE (ARCHIVED once the delivery count is at the limit)
ACQUIRED (by member)  REJECT, GAP    ARCHIVED
ACQUIRED (by member)  RENEW          ACQUIRED, its lock renewed (KIP-1222)
ACQUIRED              lock expires   as RELEASE
ACQUIRED              member leaves  as RELEASE
====================  =============  ==============================================================

An acknowledgement of a record that is not acquired by the member acknowledging it changes
nothing and is INVALID_RECORD_STATE. Whenever the records at the start offset are done with
(acknowledged or archived), the start offset moves past them and they leave the in-flight
set. What is persisted (:meth:`SharePartition.state_batches`) is the start offset and the
in-flight records as runs of (state, delivery count); an acquired record is written as
available, since a lock does not outlive the leader that granted it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from broker_lite.protocol import ErrorCode


class RecordState(enum.IntEnum):
    """A record's delivery state; the values persisted are Kafka's (0, 2, 4)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(enum.IntEnum):
    """What a member says of a record it acquired (ShareAcknowledge, ShareFetch)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


#: The state an acknowledgement leaves an acquired record in (RELEASE: AVAILABLE unless the
#: delivery count reached the limit; RENEW: still ACQUIRED, with a new lock).
ACKNOWLEDGE_TRANSITIONS = {
    AcknowledgeType.GAP: RecordState.ARCHIVED,
    AcknowledgeType.ACCEPT: RecordState.ACKNOWLEDGED,
    AcknowledgeType.RELEASE: RecordState.AVAILABLE,
    AcknowledgeType.REJECT: RecordState.ARCHIVED,
    AcknowledgeType.RENEW: RecordState.ACQUIRED,
}

DONE = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


@dataclass(frozen=True)
class StateBatch:
    """A run of offsets in one persisted state (WriteShareGroupState's and the records')."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass(frozen=True)
class AcquiredRange:
    """Offsets acquired together, with their delivery count (ShareFetch's AcquiredRecords)."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass
class InFlightRecord:
    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None  # who holds it, while ACQUIRED
    lock_deadline_ms: int = 0


class ShareAcknowledgeError(Exception):
    """An acknowledgement that cannot be applied; ``code`` is the answer
    (INVALID_RECORD_STATE, INVALID_REQUEST)."""

    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code


@dataclass
class SharePartitionLimits:
    """How long a record is locked, how often it is delivered, how many are in flight."""

    lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    max_in_flight: int = 2_000


@dataclass
class SharePartition:
    """The in-flight records of one share-partition (see the module docstring).

    >>> sp = SharePartition(start_offset=0, limits=SharePartitionLimits(1000, 2))
    >>> sp.acquire("m1", [(0, 2)], max_records=10, now_ms=0)
    [AcquiredRange(first_offset=0, last_offset=2, delivery_count=1)]
    >>> sp.acknowledge("m1", 0, 1, [AcknowledgeType.ACCEPT]); sp.start_offset
    2
    >>> sp.expire_locks(now_ms=1000), sp.state_of(2)
    (True, <RecordState.AVAILABLE: 0>)
    """

    start_offset: int
    limits: SharePartitionLimits = field(default_factory=SharePartitionLimits)
    end_offset: int = -1
    in_flight: dict[int, InFlightRecord] = field(default_factory=dict)
    state_epoch: int = 0

    def __post_init__(self) -> None:
        self.end_offset = max(self.end_offset, self.start_offset)

    # -- persisted state -------------------------------------------------------------------

    @classmethod
    def from_state(cls, start_offset: int, batches: Iterable[StateBatch],
                   limits: SharePartitionLimits, state_epoch: int = 0) -> SharePartition:
        """The share-partition that persisted ``start_offset`` and ``batches``."""
        partition = cls(start_offset, limits, state_epoch=state_epoch)
        for batch in batches:
            for offset in range(max(batch.first_offset, start_offset), batch.last_offset + 1):
                state = RecordState(batch.delivery_state)
                if state is RecordState.ACQUIRED:
                    state = RecordState.AVAILABLE
                partition.in_flight[offset] = InFlightRecord(state, batch.delivery_count)
                partition.end_offset = max(partition.end_offset, offset + 1)
        partition._advance_start()
        return partition

    def state_batches(self) -> list[StateBatch]:
        """The in-flight records as runs of (state, delivery count), acquired ones as
        available (what WriteShareGroupState carries)."""
        batches: list[StateBatch] = []
        for offset in sorted(self.in_flight):
            record = self.in_flight[offset]
            state = RecordState.AVAILABLE if record.state is RecordState.ACQUIRED \
                else record.state
            last = batches[-1] if batches else None
            if last is not None and last.last_offset == offset - 1 and \
                    last.delivery_state == state and last.delivery_count == record.delivery_count:
                batches[-1] = StateBatch(last.first_offset, offset, state, record.delivery_count)
            else:
                batches.append(StateBatch(offset, offset, int(state), record.delivery_count))
        return batches

    # -- reading ---------------------------------------------------------------------------

    def state_of(self, offset: int) -> RecordState | None:
        """The state of ``offset``: None past the end offset, ACKNOWLEDGED-or-ARCHIVED
        records before the start offset are reported ARCHIVED."""
        if offset < self.start_offset:
            return RecordState.ARCHIVED
        record = self.in_flight.get(offset)
        return record.state if record is not None else None

    def fetch_offset(self) -> int:
        """Where the next read of the log starts: the first available in-flight record (a
        redelivery), else the end offset."""
        available = [o for o, r in self.in_flight.items() if r.state is RecordState.AVAILABLE]
        return min(available) if available else self.end_offset

    def has_available(self) -> bool:
        return any(r.state is RecordState.AVAILABLE for r in self.in_flight.values())

    def acquired_by(self, member_id: str) -> list[int]:
        return sorted(o for o, r in self.in_flight.items()
                      if r.state is RecordState.ACQUIRED and r.member_id == member_id)

    def next_lock_deadline(self) -> int | None:
        deadlines = [r.lock_deadline_ms for r in self.in_flight.values()
                     if r.state is RecordState.ACQUIRED]
        return min(deadlines) if deadlines else None

    # -- transitions -----------------------------------------------------------------------

    def acquire(self, member_id: str, batches: Sequence[tuple[int, int]], *, max_records: int,
                now_ms: int, not_deliverable: Iterable[int] = (),
                record_limit: bool = False) -> list[AcquiredRange]:
        """Acquire for ``member_id`` the records of the log batches ``(first, last)`` just
        read that are available or new, ``max_records`` at most (whole batches of new records
        are taken, as Kafka aligns acquisition with batch boundaries, unless ``record_limit``:
        ShareFetch v2's record-limit acquire mode, KIP-1206), and no new record beyond
        ``max_in_flight`` records in flight. Offsets in ``not_deliverable`` (control records,
        aborted transactions) are archived instead."""
        skip = set(not_deliverable)
        lock_deadline = now_ms + self.limits.lock_duration_ms
        acquired: list[int] = []
        for first, last in batches:
            if len(acquired) >= max_records:
                break
            for offset in range(max(first, self.start_offset), last + 1):
                record = self.in_flight.get(offset)
                if record is None:
                    if offset < self.end_offset:
                        continue  # not a record any more (compacted away)
                    if (offset - self.start_offset >= self.limits.max_in_flight or
                            (record_limit and len(acquired) >= max_records)) and acquired:
                        break
                    record = self.in_flight[offset] = InFlightRecord(RecordState.AVAILABLE)
                    self.end_offset = offset + 1
                elif record.state is not RecordState.AVAILABLE or len(acquired) >= max_records:
                    continue
                if offset in skip:
                    record.state = RecordState.ARCHIVED
                    continue
                record.state = RecordState.ACQUIRED
                record.delivery_count += 1
                record.member_id = member_id
                record.lock_deadline_ms = lock_deadline
                acquired.append(offset)
        self._advance_start()
        return self._ranges(acquired)

    def acknowledge(self, member_id: str, first_offset: int, last_offset: int,
                    types: Sequence[int], *, now_ms: int = 0) -> None:
        """Apply one acknowledgement batch: ``types`` holds one type per offset, or one for
        them all. Raises :class:`ShareAcknowledgeError` (nothing changed) unless every offset
        is acquired by ``member_id``."""
        count = last_offset - first_offset + 1
        if count <= 0 or len(types) not in (1, count) or \
                any(t not in set(AcknowledgeType) for t in types):
            raise ShareAcknowledgeError(ErrorCode.INVALID_REQUEST,
                                        f"invalid acknowledgement batch {first_offset}-"
                                        f"{last_offset} with {len(types)} types")
        for offset in range(first_offset, last_offset + 1):
            record = self.in_flight.get(offset)
            if record is None or record.state is not RecordState.ACQUIRED or \
                    record.member_id != member_id:
                state = self.state_of(offset)
                holder = "" if record is None or record.member_id in (None, member_id) \
                    else " by another member"
                raise ShareAcknowledgeError(
                    ErrorCode.INVALID_RECORD_STATE,
                    f"offset {offset} is {state.name if state is not None else 'not fetched'}"
                    f"{holder}, not acquired by this member")
        for i, offset in enumerate(range(first_offset, last_offset + 1)):
            kind = AcknowledgeType(types[i] if len(types) > 1 else types[0])
            record = self.in_flight[offset]
            if kind is AcknowledgeType.RENEW:
                record.lock_deadline_ms = now_ms + self.limits.lock_duration_ms
            elif kind is AcknowledgeType.RELEASE:
                self._release(record)
            else:
                record.state = ACKNOWLEDGE_TRANSITIONS[kind]
                record.member_id = None
        self._advance_start()

    def expire_locks(self, now_ms: int) -> bool:
        """Release the records whose acquisition lock expired; whether any was."""
        expired = [r for r in self.in_flight.values()
                   if r.state is RecordState.ACQUIRED and r.lock_deadline_ms <= now_ms]
        for record in expired:
            self._release(record)
        self._advance_start()
        return bool(expired)

    def release_member(self, member_id: str) -> bool:
        """Release every record ``member_id`` holds (it left, or closed its session)."""
        held = [r for r in self.in_flight.values()
                if r.state is RecordState.ACQUIRED and r.member_id == member_id]
        for record in held:
            self._release(record)
        self._advance_start()
        return bool(held)

    def move_start_offset(self, offset: int) -> None:
        """Start at ``offset`` (the log start moved past the start offset, or the offsets were
        altered): in-flight records before it are dropped, records after it kept."""
        if offset > self.start_offset:
            for dropped in [o for o in self.in_flight if o < offset]:
                del self.in_flight[dropped]
            self.start_offset = offset
            self.end_offset = max(self.end_offset, offset)
        self._advance_start()

    def reset(self, offset: int) -> None:
        """Start again at ``offset``, with nothing in flight (AlterShareGroupOffsets)."""
        self.in_flight.clear()
        self.start_offset = self.end_offset = offset

    # -- internals -------------------------------------------------------------------------

    def _release(self, record: InFlightRecord) -> None:
        record.member_id = None
        record.state = RecordState.ARCHIVED \
            if record.delivery_count >= self.limits.delivery_count_limit \
            else RecordState.AVAILABLE

    def _advance_start(self) -> None:
        while self.start_offset < self.end_offset:
            record = self.in_flight.get(self.start_offset)
            if record is not None and record.state not in DONE:
                break
            self.in_flight.pop(self.start_offset, None)
            self.start_offset += 1

    def _ranges(self, offsets: list[int]) -> list[AcquiredRange]:
        ranges: list[AcquiredRange] = []
        for offset in offsets:
            count = self.in_flight[offset].delivery_count
            last = ranges[-1] if ranges else None
            if last is not None and last.last_offset == offset - 1 and \
                    last.delivery_count == count:
                ranges[-1] = AcquiredRange(last.first_offset, offset, count)
            else:
                ranges.append(AcquiredRange(offset, offset, count))
        return ranges
