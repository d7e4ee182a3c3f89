"""A transaction's state machine, as a table, and the metadata of one transactional id.

States (ids as stored in ``__transaction_state``, names as ListTransactions shows them)::

    Empty(0) --AddPartitions--> Ongoing(1)
    Ongoing --EndTxn commit--> PrepareCommit(2) --markers written--> CompleteCommit(4)
    Ongoing --EndTxn abort--> PrepareAbort(3) --markers written--> CompleteAbort(5)
    Ongoing --a new instance's InitProducerId, or the timeout--> PrepareEpochFence(7)
        --> PrepareAbort, with the bumped epoch (which fences the instance that opened it)
    Empty, CompleteCommit, CompleteAbort --AddPartitions--> Ongoing (the next transaction)
    Empty, CompleteCommit, CompleteAbort --expiration--> Dead(6)

Every change follows Kafka's two steps: ``prepare_*`` computes the next metadata as a
:class:`TxnTransit` and records the target as the *pending state* (so a concurrent request sees
CONCURRENT_TRANSACTIONS); the transit is written to the log; :meth:`complete_transition` then
applies it. A failed write clears the pending state and leaves the metadata as it was.
PrepareEpochFence is never written: it is only ever pending, until the abort it leads to.

>>> meta = TransactionMetadata("tx", producer_id=7, producer_epoch=-1, timeout_ms=60000)
>>> transit = meta.prepare_increment_producer_epoch(60000, None, now_ms=1)
>>> meta.pending_state, transit.state, transit.producer_epoch
(<TxnState.EMPTY: 0>, <TxnState.EMPTY: 0>, 0)
>>> meta.complete_transition(transit); meta.producer_epoch, meta.pending_state
(0, None)
"""

import enum
import threading
from dataclasses import dataclass, field

from broker_lite.common.vocabulary import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TopicPartition

MAX_PRODUCER_EPOCH = 32767  # Short.MaxValue


class TxnState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        return KAFKA_NAMES[self]

    @classmethod
    def from_kafka_name(cls, name: str) -> "TxnState | None":
        return _BY_NAME.get(name)


KAFKA_NAMES = {
    TxnState.EMPTY: "Empty", TxnState.ONGOING: "Ongoing",
    TxnState.PREPARE_COMMIT: "PrepareCommit", TxnState.PREPARE_ABORT: "PrepareAbort",
    TxnState.COMPLETE_COMMIT: "CompleteCommit", TxnState.COMPLETE_ABORT: "CompleteAbort",
    TxnState.DEAD: "Dead", TxnState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_NAME = {name: state for state, name in KAFKA_NAMES.items()}

# The states a state may be entered from (Kafka's TransactionState.validPreviousStates).
VALID_PREVIOUS_STATES: dict[TxnState, frozenset[TxnState]] = {
    TxnState.EMPTY: frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT,
                               TxnState.COMPLETE_ABORT}),
    TxnState.ONGOING: frozenset({TxnState.ONGOING, TxnState.EMPTY, TxnState.COMPLETE_COMMIT,
                                 TxnState.COMPLETE_ABORT}),
    TxnState.PREPARE_COMMIT: frozenset({TxnState.ONGOING}),
    TxnState.PREPARE_ABORT: frozenset({TxnState.ONGOING, TxnState.PREPARE_EPOCH_FENCE}),
    TxnState.COMPLETE_COMMIT: frozenset({TxnState.PREPARE_COMMIT}),
    TxnState.COMPLETE_ABORT: frozenset({TxnState.PREPARE_ABORT}),
    TxnState.DEAD: frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT,
                              TxnState.COMPLETE_ABORT}),
    TxnState.PREPARE_EPOCH_FENCE: frozenset({TxnState.ONGOING}),
}

# States with partitions awaiting a marker, and the marker they get.
PREPARED = {TxnState.PREPARE_COMMIT: TxnState.COMPLETE_COMMIT,
            TxnState.PREPARE_ABORT: TxnState.COMPLETE_ABORT}


class IllegalTxnTransitionError(Exception):
    """A transition the table does not allow (a bug, or a corrupt log)."""


def is_epoch_exhausted(epoch: int) -> bool:
    """No epoch may follow: the next bump would reach Short.MaxValue, which fencing needs."""
    return epoch >= MAX_PRODUCER_EPOCH - 1


@dataclass(frozen=True)
class TxnTransit:
    """The metadata a transition leads to, as it is written to the log."""

    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int


@dataclass(eq=False)
class TransactionMetadata:
    """One transactional id: its producer id and epoch, and its current transaction. Read and
    change it holding ``lock``."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    last_producer_id: int = NO_PRODUCER_ID
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = field(default_factory=set)
    txn_start_timestamp: int = -1
    txn_last_update_timestamp: int = -1
    pending_state: TxnState | None = None
    has_failed_epoch_fence: bool = False
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    # -- questions --------------------------------------------------------------------------

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    # -- prepared transitions ---------------------------------------------------------------

    def prepare_increment_producer_epoch(self, timeout_ms: int, expected_epoch: int | None,
                                         now_ms: int) -> "TxnTransit | None":
        """InitProducerId on a completed transaction: the next epoch; None when
        ``expected_epoch`` (a resuming producer's) is neither the current nor the last one
        (the producer is fenced)."""
        if self.is_producer_epoch_exhausted:
            raise IllegalTxnTransitionError(
                f"no epoch left for producer id {self.producer_id}")
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epochs = (bumped, NO_PRODUCER_EPOCH)
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epochs = (bumped, self.producer_epoch)
        elif expected_epoch == self.last_producer_epoch:
            # a retry of a bump whose answer was lost: the same epoch again
            epochs = (self.producer_epoch, self.last_producer_epoch)
        else:
            return None
        return self._prepare(TxnState.EMPTY, self.producer_id, epochs[0], epochs[1], timeout_ms,
                             frozenset(), -1, now_ms)

    def prepare_producer_id_rotation(self, new_producer_id: int, timeout_ms: int, now_ms: int,
                                     record_last_epoch: bool) -> TxnTransit:
        """A new producer id with epoch 0, when the epochs of the current one are used up
        (KIP-360)."""
        if self.state not in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT,
                              TxnState.COMPLETE_ABORT):
            raise IllegalTxnTransitionError("cannot rotate the producer id of an open transaction")
        return self._prepare(TxnState.EMPTY, new_producer_id, 0,
                             self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                             timeout_ms, frozenset(), -1, now_ms)

    def prepare_fence_producer_epoch(self) -> TxnTransit:
        """Bump the epoch of an open transaction before aborting it, so the instance that
        opened it is fenced (only pending, never written)."""
        if self.producer_epoch >= MAX_PRODUCER_EPOCH:
            raise IllegalTxnTransitionError(
                f"cannot fence producer id {self.producer_id} at epoch {self.producer_epoch}")
        # an earlier fence whose write failed already bumped it (and never told anyone)
        bumped = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare(TxnState.PREPARE_EPOCH_FENCE, self.producer_id, bumped,
                             NO_PRODUCER_EPOCH, self.timeout_ms, frozenset(self.partitions),
                             self.txn_start_timestamp, self.txn_last_update_timestamp)

    def prepare_add_partitions(self, added: set[TopicPartition], now_ms: int) -> TxnTransit:
        start = now_ms if self.state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT,
                                         TxnState.COMPLETE_ABORT) else self.txn_start_timestamp
        return self._prepare(TxnState.ONGOING, self.producer_id, self.producer_epoch,
                             self.last_producer_epoch, self.timeout_ms,
                             frozenset(self.partitions | added), start, now_ms)

    def prepare_abort_or_commit(self, state: TxnState, now_ms: int) -> TxnTransit:
        return self._prepare(state, self.producer_id, self.producer_epoch,
                             self.last_producer_epoch, self.timeout_ms,
                             frozenset(self.partitions), self.txn_start_timestamp, now_ms)

    def prepare_complete(self, now_ms: int) -> TxnTransit:
        if self.state not in PREPARED:
            raise IllegalTxnTransitionError(f"{self.transactional_id} is {self.state.name}, "
                                            "not preparing to commit or abort")
        self.has_failed_epoch_fence = False  # the prepare state was written
        return self._prepare(PREPARED[self.state], self.producer_id, self.producer_epoch,
                             self.last_producer_epoch, self.timeout_ms, frozenset(),
                             self.txn_start_timestamp, now_ms)

    def _prepare(self, state: TxnState, producer_id: int, epoch: int, last_epoch: int,
                 timeout_ms: int, partitions: frozenset[TopicPartition], start: int,
                 now_ms: int) -> TxnTransit:
        if self.pending_state is not None:
            raise IllegalTxnTransitionError(
                f"{self.transactional_id}: a transition to {self.pending_state.name} is in "
                f"progress; cannot prepare {state.name}")
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise IllegalTxnTransitionError(
                f"{self.transactional_id}: {self.state.name} cannot move to {state.name}")
        self.pending_state = state
        last_producer_id = self.producer_id if producer_id != self.producer_id \
            else self.last_producer_id
        return TxnTransit(producer_id, last_producer_id, epoch, last_epoch, timeout_ms, state,
                          partitions, start, now_ms)

    # -- applying ---------------------------------------------------------------------------

    def complete_transition(self, transit: TxnTransit) -> None:
        """Apply ``transit``, now in the log."""
        if self.pending_state is not transit.state:
            raise IllegalTxnTransitionError(
                f"{self.transactional_id}: completing {transit.state.name} but "
                f"{self.pending_state.name if self.pending_state else 'nothing'} is pending")
        if self.state not in VALID_PREVIOUS_STATES[transit.state]:
            raise IllegalTxnTransitionError(
                f"{self.transactional_id}: {self.state.name} cannot move to "
                f"{transit.state.name}")
        self.producer_id = transit.producer_id
        self.last_producer_id = transit.last_producer_id
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.timeout_ms = transit.timeout_ms
        self.state = transit.state
        self.partitions = set(transit.partitions)
        self.txn_start_timestamp = transit.txn_start_timestamp
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.pending_state = None

    def abandon_transition(self) -> None:
        """The transit was not written: nothing changes."""
        self.pending_state = None
