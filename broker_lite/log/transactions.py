"""The transactions of a partition log: which are open, where the last stable offset is, and what
an append starts and ends (KIP-98, the read side).

A transactional producer's first data batch in a partition opens its transaction there, at that
batch's base offset; the COMMIT or ABORT marker (a control batch written by the transaction
coordinator) closes it. Between the two, nothing from the transaction's first offset on is
stable: a read_committed consumer may not read it, because it cannot yet know whether the
transaction commits. Hence::

    last stable offset (LSO) = first offset of the earliest open transaction,
                               else the high watermark (never above it, never below the log start)

When a marker closes a transaction, the LSO right after it is the first offset of the earliest
transaction still open (of another producer), else the marker's offset + 1; an ABORT is recorded
with that LSO in the segment's transaction index (:mod:`.txn_index`).

A marker of a producer without an open transaction (its data was removed, or there was none)
closes an empty transaction at the marker itself, as in Kafka. Transactions only ever change on
appends, so the open ones are also what the producer state holds (each producer's
``current_txn_first_offset``): the log rebuilds this tracker from it after loading or
truncation. (Kafka also keeps transactions that completed above the high watermark as unstable
until it passes them; here the high watermark moves with every append, so there are none.)
"""

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

from broker_lite.records import ControlRecordType

from .producer_state import ProducerBatch, ProducerStateEntry


@dataclass(frozen=True, slots=True)
class StartedTxn:
    """A transaction opened by an append."""

    producer_id: int
    first_offset: int


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction closed by a marker at ``last_offset``."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


TxnEvent = StartedTxn | CompletedTxn


class OngoingTransactions:
    """The open transactions of one partition, by producer id and ordered by first offset.

    >>> txns = OngoingTransactions()
    >>> from broker_lite.records import EndTransactionMarker
    >>> data = ProducerBatch(7, 0, 0, first_offset=5, last_offset_delta=1, max_timestamp=0,
    ...                      is_transactional=True)
    >>> txns.apply(txns.prepare([data]))
    []
    >>> txns.first_unstable_offset
    5
    >>> abort = ProducerBatch(7, 0, -1, 7, 0, 0, True, True,
    ...                       EndTransactionMarker(ControlRecordType.ABORT, 0))
    >>> txns.apply(txns.prepare([abort]))
    [(CompletedTxn(producer_id=7, first_offset=5, last_offset=7, is_aborted=True), 8)]
    >>> txns.first_unstable_offset is None
    True
    """

    def __init__(self):
        self._first_offset_of: dict[int, int] = {}  # producer id -> first offset
        self._ordered: list[tuple[int, int]] = []  # (first offset, producer id), ascending

    @classmethod
    def of_producers(cls, producers: Iterable[ProducerStateEntry]) -> "OngoingTransactions":
        """The transactions open in a producer state (after loading or truncating a log)."""
        txns = cls()
        for entry in producers:
            if entry.current_txn_first_offset is not None:
                txns._open(entry.producer_id, entry.current_txn_first_offset)
        return txns

    # -- queries ------------------------------------------------------------------------------
    @property
    def first_unstable_offset(self) -> int | None:
        """First offset of the earliest open transaction; None when none is open."""
        return self._ordered[0][0] if self._ordered else None

    def first_offset_of(self, producer_id: int) -> int | None:
        return self._first_offset_of.get(producer_id)

    def as_dict(self) -> dict[int, int]:
        """Producer id -> first offset of its open transaction, earliest first."""
        return {producer_id: first for first, producer_id in self._ordered}

    def __len__(self) -> int:
        return len(self._ordered)

    def last_stable_offset_after(self, completed: CompletedTxn) -> int:
        """The LSO once ``completed`` is closed: the earliest other open transaction, else
        just past its marker (Kafka's ``lastStableOffset(completedTxn)``)."""
        for first, producer_id in self._ordered:
            if producer_id != completed.producer_id:
                return first
        return completed.last_offset + 1

    # -- appends ------------------------------------------------------------------------------
    def prepare(self, batches: Iterable[ProducerBatch]) -> list[TxnEvent]:
        """What the producer batches of one append (offsets assigned, in order) open and
        close, changing nothing yet."""
        events: list[TxnEvent] = []
        pending: dict[int, int | None] = {}  # open transactions as this append leaves them
        for batch in batches:
            producer_id = batch.producer_id
            current = pending[producer_id] if producer_id in pending else \
                self._first_offset_of.get(producer_id)
            if batch.is_control:
                if batch.marker is None:  # an empty control batch: a marker already cleaned
                    continue
                first = current if current is not None else batch.first_offset
                events.append(CompletedTxn(producer_id, first, batch.first_offset,
                                           batch.marker.type == ControlRecordType.ABORT))
                pending[producer_id] = None
            elif batch.is_transactional and current is None:
                events.append(StartedTxn(producer_id, batch.first_offset))
                pending[producer_id] = batch.first_offset
        return events

    def apply(self, events: Iterable[TxnEvent]) -> list[tuple[CompletedTxn, int]]:
        """Record the events of a written append; return each closed transaction with the
        LSO right after it (what an abort's transaction index entry records)."""
        completed = []
        for event in events:
            if isinstance(event, StartedTxn):
                self._open(event.producer_id, event.first_offset)
            else:
                completed.append((event, self.last_stable_offset_after(event)))
                self._close(event.producer_id)
        return completed

    def _open(self, producer_id: int, first_offset: int) -> None:
        self._close(producer_id)
        self._first_offset_of[producer_id] = first_offset
        bisect.insort(self._ordered, (first_offset, producer_id))

    def _close(self, producer_id: int) -> None:
        first = self._first_offset_of.pop(producer_id, None)
        if first is not None:
            self._ordered.remove((first, producer_id))

    def __repr__(self) -> str:
        return f"OngoingTransactions({self.as_dict()})"
