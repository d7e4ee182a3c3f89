"""The producer state of a partition: what idempotent producers have written to it (KIP-98).

An idempotent producer numbers its batches per partition: each v2 batch carries the producer's
id, its epoch and the sequence number of its first record, and the sequence advances by one per
record (wrapping from 2**31 - 1 to 0). A retry after a lost response carries the same numbers
again. The log keeps, per producer id, the current epoch and the metadata of its last five
batches, and checks each new batch against them before anything is written, as Kafka's
ProducerStateManager and ProducerAppendInfo do:

================================================  =============================================
the batch                                         the answer
================================================  =============================================
same epoch, first and last sequence as one of     a duplicate: the original offsets, nothing
the five remembered batches                       written
same epoch, first sequence = last sequence + 1    appended
same epoch, any other first sequence              OUT_OF_ORDER_SEQUENCE_NUMBER (a gap, or a retry
                                                  older than the five remembered)
newer epoch, first sequence 0                     appended; the older epoch's batches forgotten
newer epoch, other first sequence                 OUT_OF_ORDER_SEQUENCE_NUMBER
older epoch                                       INVALID_PRODUCER_EPOCH (a fenced zombie)
producer unknown to the partition                 appended, whatever the sequence (Kafka 2.5+:
                                                  its state may have gone with retention)
a producer id with a negative sequence            INVALID_RECORD
================================================  =============================================

Sequences are checked for client appends only (``AppendOrigin.CLIENT``); the broker's own writes
check epochs, and rebuilding the state from the log checks nothing. Each entry also carries the
coordinator epoch of the producer's last transaction marker and the first offset of its open
transaction, which transactional batches and markers maintain.

The state is kept on disk as snapshots (:mod:`.producer_snapshot`), one per offset it was taken
at; loading a log reads the newest usable one and the log past it (see :mod:`.loader`).
"""

import bisect
import enum
import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from broker_lite.common.vocabulary import (
    MAX_SEQUENCE,
    NO_OFFSET,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
)
from broker_lite.records import EndTransactionMarker, RecordBatch

from .errors import (
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)
from .producer_snapshot import (
    CorruptSnapshotError,
    SnapshotEntry,
    list_snapshots,
    read_snapshot,
    snapshot_path,
    write_snapshot,
)
from .validator import InvalidRecordError

logger = logging.getLogger(__name__)

NUM_BATCHES_TO_RETAIN = 5
NO_COORDINATOR_EPOCH = -1
#: Kafka's ``producer.id.expiration.ms`` default: a producer silent this long is forgotten.
PRODUCER_ID_EXPIRATION_MS = 86_400_000


def increment_sequence(sequence: int, increment: int) -> int:
    """``sequence + increment``, wrapping past 2**31 - 1 to 0."""
    return (sequence + increment) & MAX_SEQUENCE


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``sequence - decrement``, wrapping below 0 to 2**31 - 1."""
    return (sequence - decrement) & MAX_SEQUENCE


def in_sequence(last_sequence: int, next_sequence: int) -> bool:
    return next_sequence == last_sequence + 1 or (next_sequence == 0
                                                  and last_sequence == MAX_SEQUENCE)


class AppendOrigin(enum.Enum):
    """Who appends, which decides what is checked (Kafka's AppendOrigin)."""

    CLIENT = "client"  # a Produce request: sequences and epochs checked, duplicates answered
    COORDINATOR = "coordinator"  # the broker's own writes (markers, offsets): epochs checked
    REPLICATION = "replication"  # data already checked once (rebuilding from the log): none


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """What is remembered of one appended batch of a producer."""

    last_seq: int
    last_offset: int
    offset_delta: int  # last offset - first offset
    timestamp: int  # the batch's max timestamp

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(frozen=True, slots=True)
class DuplicateBatch:
    """The answer to a retried batch: where the original was written."""

    first_offset: int
    last_offset: int
    timestamp: int


@dataclass
class ProducerStateEntry:
    """One producer of the partition: its epoch and its last batches, oldest first."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = NO_COORDINATOR_EPOCH
    last_timestamp: int = NO_TIMESTAMP
    current_txn_first_offset: int | None = None
    batches: deque = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else NO_OFFSET

    def without_batches(self) -> "ProducerStateEntry":
        return ProducerStateEntry(self.producer_id, self.producer_epoch, self.coordinator_epoch,
                                  self.last_timestamp, self.current_txn_first_offset)

    def maybe_update_epoch(self, epoch: int) -> None:
        """A new epoch starts a new sequence: the older epoch's batches no longer count."""
        if epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = epoch

    def add_batch(self, epoch: int, last_seq: int, last_offset: int, offset_delta: int,
                  timestamp: int) -> None:
        self.maybe_update_epoch(epoch)
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def update(self, newer: "ProducerStateEntry") -> None:
        """Take over what an append changed (``newer`` holds only that append's batches)."""
        self.maybe_update_epoch(newer.producer_epoch)
        self.batches.extend(newer.batches)
        self.coordinator_epoch = newer.coordinator_epoch
        self.current_txn_first_offset = newer.current_txn_first_offset
        self.last_timestamp = newer.last_timestamp

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        if epoch != self.producer_epoch:
            return None
        return next((b for b in self.batches
                     if b.first_seq == first_seq and b.last_seq == last_seq), None)

    # -- snapshot form ------------------------------------------------------------------------
    def to_snapshot(self) -> SnapshotEntry:
        last = self.batches[-1] if self.batches else None
        return SnapshotEntry(
            self.producer_id, self.producer_epoch,
            last.last_seq if last else NO_SEQUENCE, last.last_offset if last else NO_OFFSET,
            last.offset_delta if last else 0, self.last_timestamp, self.coordinator_epoch,
            NO_OFFSET if self.current_txn_first_offset is None else self.current_txn_first_offset,
        )

    @classmethod
    def from_snapshot(cls, e: SnapshotEntry) -> "ProducerStateEntry":
        entry = cls(e.producer_id, e.epoch, e.coordinator_epoch, e.timestamp,
                    e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None)
        if e.last_offset >= 0:
            entry.batches.append(BatchMetadata(e.last_sequence, e.last_offset, e.offset_delta,
                                               e.timestamp))
        return entry


@dataclass(frozen=True, slots=True)
class ProducerBatch:
    """What the producer state needs of one v2 batch being appended (offsets assigned)."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    first_offset: int
    last_offset_delta: int
    max_timestamp: int
    is_transactional: bool = False
    is_control: bool = False
    marker: EndTransactionMarker | None = None  # of a control batch

    @property
    def last_offset(self) -> int:
        return self.first_offset + self.last_offset_delta

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @classmethod
    def of(cls, batch: RecordBatch, first_offset: int | None = None,
           max_timestamp: int | None = None) -> "ProducerBatch":
        """From a batch view; ``first_offset`` and ``max_timestamp`` as assigned on append
        (default: the batch's own). A control batch's marker is decoded here."""
        marker = None
        if batch.is_control_batch and batch.record_count > 0:
            marker = batch.end_transaction_marker()
        return cls(batch.producer_id, batch.producer_epoch, batch.base_sequence,
                   batch.base_offset if first_offset is None else first_offset,
                   batch.last_offset_delta,
                   batch.max_timestamp if max_timestamp is None else max_timestamp,
                   batch.is_transactional, batch.is_control_batch, marker)


class ProducerAppendInfo:
    """The checks and the changes one append makes to one producer, applied only once the
    append is written (:meth:`ProducerStateManager.apply`)."""

    def __init__(self, producer_id: int, current: ProducerStateEntry | None,
                 origin: AppendOrigin):
        self.producer_id = producer_id
        self.current = current if current is not None else ProducerStateEntry(producer_id)
        self.origin = origin
        self.updated = self.current.without_batches()

    def append(self, batch: ProducerBatch) -> None:
        if batch.is_control:
            if batch.marker is not None:  # an empty control batch: its transaction was cleaned
                self._append_marker(batch)
        else:
            self._append_data(batch)

    def _append_data(self, batch: ProducerBatch) -> None:
        self._check_epoch(batch.producer_epoch, batch.first_offset)
        if self.origin is AppendOrigin.CLIENT:
            self._check_sequence(batch.producer_epoch, batch.base_sequence, batch.first_offset)
        self.updated.add_batch(batch.producer_epoch, batch.last_sequence, batch.last_offset,
                               batch.last_offset_delta, batch.max_timestamp)
        if batch.is_transactional and self.updated.current_txn_first_offset is None:
            self.updated.current_txn_first_offset = batch.first_offset

    def _append_marker(self, batch: ProducerBatch) -> None:
        marker = batch.marker
        self._check_epoch(batch.producer_epoch, batch.first_offset)
        if self.updated.coordinator_epoch > marker.coordinator_epoch:
            message = (f"producer {self.producer_id}: marker at offset {batch.first_offset} "
                       f"from coordinator epoch {marker.coordinator_epoch}, older than "
                       f"{self.updated.coordinator_epoch}")
            if self.origin is not AppendOrigin.REPLICATION:
                raise TransactionCoordinatorFencedError(message)
            logger.info("%s", message)
        self.updated.maybe_update_epoch(batch.producer_epoch)
        self.updated.coordinator_epoch = marker.coordinator_epoch
        self.updated.current_txn_first_offset = None
        self.updated.last_timestamp = batch.max_timestamp

    def _check_epoch(self, epoch: int, offset: int) -> None:
        current = self.updated.producer_epoch
        if epoch < current:
            message = (f"producer {self.producer_id}: epoch {epoch} at offset {offset} is older "
                       f"than its current epoch {current}")
            if self.origin is not AppendOrigin.REPLICATION:
                raise InvalidProducerEpochError(message)
            logger.warning("%s", message)

    def _check_sequence(self, epoch: int, first_seq: int, offset: int) -> None:
        if epoch != self.updated.producer_epoch:
            # A new epoch restarts the sequence at 0, unless the producer was unknown.
            if first_seq != 0 and self.updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceError(
                    f"producer {self.producer_id}: sequence {first_seq} at offset {offset} "
                    f"starts its new epoch {epoch} (was {self.updated.producer_epoch}); "
                    "a new epoch starts at 0")
            return
        if self.updated.batches:
            last_seq = self.updated.last_seq
        elif epoch == self.current.producer_epoch:
            last_seq = self.current.last_seq
        else:
            last_seq = NO_SEQUENCE
        # A producer without an epoch here (never seen, or its batches removed by retention)
        # may continue with any sequence.
        if self.current.producer_epoch != NO_PRODUCER_EPOCH and \
                not in_sequence(last_seq, first_seq):
            raise OutOfOrderSequenceError(
                f"producer {self.producer_id}: sequence {first_seq} at offset {offset} does not "
                f"follow its last sequence {last_seq}")


@dataclass
class ProducerStateUpdate:
    """The checked changes of one append, per producer id."""

    producers: dict[int, ProducerAppendInfo] = field(default_factory=dict)


class ProducerStateManager:
    """The producers of one partition log, kept in step with its appends.

    ``map_end_offset`` is the offset up to which the state reflects the log (the log end offset
    once loaded). Snapshot files live in ``directory`` beside the segments.

    >>> import tempfile; from broker_lite.records import build_batch
    >>> state = ProducerStateManager(Path(tempfile.mkdtemp()))
    >>> batch = RecordBatch(build_batch([(None, b"v")], timestamp=5, producer_id=7,
    ...                                 producer_epoch=0, base_sequence=0))
    >>> state.check_and_update(ProducerBatch.of(batch, first_offset=0)) is None
    True
    >>> state.check_and_update(ProducerBatch.of(batch, first_offset=1))
    DuplicateBatch(first_offset=0, last_offset=0, timestamp=5)
    """

    def __init__(self, directory: Path, *, expiration_ms: int = PRODUCER_ID_EXPIRATION_MS):
        self.directory = Path(directory)
        self.expiration_ms = expiration_ms
        self.producers: dict[int, ProducerStateEntry] = {}
        self.map_end_offset = 0
        self._snapshots: list[int] = list_snapshots(self.directory)

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    # -- appends ------------------------------------------------------------------------------
    def prepare(self, batches: Iterable[ProducerBatch],
                origin: AppendOrigin = AppendOrigin.CLIENT
                ) -> DuplicateBatch | ProducerStateUpdate:
        """Check the batches of one append against the state, changing nothing yet. A client's
        retry of a batch already written answers :class:`DuplicateBatch` (the whole append is
        then skipped, as Kafka does); a rule broken raises."""
        update = ProducerStateUpdate()
        for batch in batches:
            if batch.producer_id == NO_PRODUCER_ID:
                continue
            if origin is AppendOrigin.CLIENT and not batch.is_control:
                if batch.base_sequence < 0:
                    raise InvalidRecordError(
                        f"invalid sequence number {batch.base_sequence} in a batch of "
                        f"producer {batch.producer_id}")
                entry = self.producers.get(batch.producer_id)
                duplicate = entry.find_duplicate(batch.producer_epoch, batch.base_sequence,
                                                 batch.last_sequence) if entry else None
                if duplicate is not None:
                    return DuplicateBatch(duplicate.first_offset, duplicate.last_offset,
                                          duplicate.timestamp)
            info = update.producers.get(batch.producer_id)
            if info is None:
                info = update.producers[batch.producer_id] = ProducerAppendInfo(
                    batch.producer_id, self.producers.get(batch.producer_id), origin)
            info.append(batch)
        return update

    def apply(self, update: ProducerStateUpdate) -> None:
        """Record a checked append, once it is written."""
        for producer_id, info in update.producers.items():
            entry = self.producers.get(producer_id)
            if entry is None:
                self.producers[producer_id] = info.updated
            else:
                entry.update(info.updated)

    def check_and_update(self, batch: ProducerBatch,
                         origin: AppendOrigin = AppendOrigin.CLIENT) -> DuplicateBatch | None:
        """:meth:`prepare` and :meth:`apply` for one batch: None when it was taken in."""
        outcome = self.prepare([batch], origin)
        if isinstance(outcome, DuplicateBatch):
            return outcome
        self.apply(outcome)
        self.map_end_offset = max(self.map_end_offset, batch.last_offset + 1)
        return None

    def update_map_end_offset(self, offset: int) -> None:
        self.map_end_offset = offset

    def remove_expired_producers(self, now_ms: int) -> None:
        """Forget producers silent for ``expiration_ms`` (by their last batch's timestamp) that
        have no open transaction, as Kafka does."""
        expired = [pid for pid, entry in self.producers.items()
                   if entry.current_txn_first_offset is None
                   and now_ms - entry.last_timestamp >= self.expiration_ms]
        for producer_id in expired:
            del self.producers[producer_id]

    def reset(self, offset: int) -> None:
        """Forget every producer; the state now stands at ``offset``."""
        self.producers.clear()
        self.map_end_offset = offset

    # -- snapshots ----------------------------------------------------------------------------
    @property
    def snapshot_offsets(self) -> list[int]:
        return list(self._snapshots)

    def take_snapshot(self) -> Path | None:
        """Write the state at ``map_end_offset``, unless there is no producer (loading takes a
        missing snapshot after a clean shutdown for an empty state) or it is written already."""
        offset = self.map_end_offset
        if not self.producers or offset in self._snapshots:
            return None
        path = snapshot_path(self.directory, offset)
        write_snapshot(path, (entry.to_snapshot() for entry in self.producers.values()))
        bisect.insort(self._snapshots, offset)
        return path

    def load_latest_snapshot(self, at_most: int) -> int | None:
        """Load the newest readable snapshot at or below ``at_most``; return its offset, or None
        (no producer, state at offset 0) when there is none. A corrupt one is logged, deleted,
        and the next older tried."""
        while True:
            i = bisect.bisect_right(self._snapshots, at_most)
            if i == 0:
                self.reset(0)
                return None
            offset = self._snapshots[i - 1]
            path = snapshot_path(self.directory, offset)
            try:
                entries = read_snapshot(path)
            except (CorruptSnapshotError, OSError) as exc:
                logger.warning("%s: ignoring producer state snapshot %s: %s",
                               self.directory.name, path.name, exc)
                self._delete_snapshot(offset)
                continue
            self.reset(offset)
            for snapshot_entry in entries:
                entry = ProducerStateEntry.from_snapshot(snapshot_entry)
                self.producers[entry.producer_id] = entry
            return offset

    def delete_snapshots_before(self, offset: int) -> None:
        """Delete the snapshots below ``offset`` (the log start: their segments are gone)."""
        for snapshot in [s for s in self._snapshots if s < offset]:
            self._delete_snapshot(snapshot)

    def delete_snapshots_after(self, offset: int) -> None:
        """Delete the snapshots above ``offset`` (the log end: their data is gone)."""
        for snapshot in [s for s in self._snapshots if s > offset]:
            self._delete_snapshot(snapshot)

    def _delete_snapshot(self, offset: int) -> None:
        self._snapshots.remove(offset)
        snapshot_path(self.directory, offset).unlink(missing_ok=True)

    def __repr__(self) -> str:
        return (f"ProducerStateManager({self.directory.name}, producers={len(self.producers)}, "
                f"end={self.map_end_offset}, snapshots={self._snapshots})")
