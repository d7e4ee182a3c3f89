"""The transaction coordinator: InitProducerId with a transactional id, AddPartitionsToTxn,
AddOffsetsToTxn and EndTxn, as Kafka 3.9's ``TransactionCoordinator`` answers them (transaction
version 1: no KIP-890 epoch bump per transaction).

A transaction goes: InitProducerId (a producer id for the transactional id, with the epoch
bumped, which fences any earlier instance) -> AddPartitionsToTxn / AddOffsetsToTxn (Ongoing,
the partitions remembered) -> produce and TxnOffsetCommit -> EndTxn: PrepareCommit or
PrepareAbort is written, EndTxn answered, the markers written to every partition of the
transaction (:mod:`.markers`), then CompleteCommit or CompleteAbort is written.

- InitProducerId while a transaction is open (an earlier instance died mid-transaction) bumps
  the epoch, aborts that transaction with the new epoch (which fences the earlier instance on
  every partition) and answers CONCURRENT_TRANSACTIONS; the retry then gets the next epoch.
  While markers are being written it answers CONCURRENT_TRANSACTIONS too. When the epochs of a
  producer id run out the transactional id gets a new producer id (KIP-360); a producer that
  resumes with its producer id and epoch (v3+) keeps its id if no other instance came since.
- Requests for an id of a partition this broker does not lead answer NOT_COORDINATOR, of one
  it is loading COORDINATOR_LOAD_IN_PROGRESS; a producer id that is not the id's current one
  INVALID_PRODUCER_ID_MAPPING, an older epoch PRODUCER_FENCED.
- A transaction open longer than its timeout is fenced and aborted by the broker
  (:mod:`.timeouts`).
- A partition leader that is also the coordinator of a transactional produce's transactional id
  refuses batches for partitions not in the transaction (INVALID_TXN_STATE), as Kafka 3.9 does
  through its verification; other leaders do not check (Kafka 3.9 asks the coordinator, a
  KIP-890 step not taken here).
"""

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from broker_lite.common.vocabulary import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TopicPartition
from broker_lite.protocol import ErrorCode
from broker_lite.records import RecordBatch, RecordsError

from .config import TransactionConfig
from .manager import TransactionStateManager
from .markers import MarkerJob, TxnMarkerWriter
from .preamble import locked_transaction, producer_error
from .state import (
    PREPARED,
    IllegalTxnTransitionError,
    TransactionMetadata,
    TxnState,
    is_epoch_exhausted,
)
from .topic import TRANSACTION_STATE_TOPIC

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class InitProducerIdResult:
    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True)
class TransactionDescription:
    """DescribeTransactions' view of a transactional id."""

    transactional_id: str
    state: TxnState
    timeout_ms: int
    start_timestamp_ms: int
    producer_id: int
    producer_epoch: int
    partitions: tuple[TopicPartition, ...]


class TransactionCoordinator:
    """The transactional ids of the ``__transaction_state`` partitions this broker leads.

    Parameters
    ----------
    config : TransactionConfig
    manager : TransactionStateManager
    marker_writer : TxnMarkerWriter
    generate_producer_id : callable
        A new producer id, unique in the cluster.
    create_topic : callable
        Creates ``__transaction_state`` (on first use).
    """

    topic = TRANSACTION_STATE_TOPIC

    def __init__(self, config: TransactionConfig, manager: TransactionStateManager,
                 marker_writer: TxnMarkerWriter, generate_producer_id: Callable[[], int], *,
                 create_topic: Callable[[], None] = lambda: None):
        self.config = config
        self.manager = manager
        self.marker_writer = marker_writer
        self.generate_producer_id = generate_producer_id
        self._create_topic = create_topic
        self.active = False

    @property
    def clock_ms(self) -> Callable[[], int]:
        return self.manager.clock_ms

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> "TransactionCoordinator":
        self.manager.start()
        self.marker_writer.start()
        self.active = True
        return self

    def shutdown(self) -> None:
        if not self.active:
            return
        self.active = False
        self.marker_writer.shutdown()
        self.manager.shutdown()

    # -- the transaction state topic --------------------------------------------------------

    def partition_for(self, transactional_id: str) -> int:
        return self.manager.partition_for(transactional_id)

    def create_topic(self) -> None:
        self._create_topic()

    def on_elected(self, partition: int, leader_epoch: int) -> None:
        """This broker now leads ``partition`` of ``__transaction_state``: load its ids."""
        self.manager.schedule_load(partition, leader_epoch, self._on_loaded)

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        """This broker no longer leads ``partition``: drop its ids."""
        self.manager.schedule_unload(partition, leader_epoch)

    def _on_loaded(self, partition: int, coordinator_epoch: int,
                   transactions: list[TransactionMetadata]) -> None:
        """Finish what the previous coordinator left half done: the markers of prepared
        transactions. Open ones stay open until they end or time out."""
        for metadata in transactions:
            with metadata.lock:
                if metadata.state in PREPARED and metadata.pending_state is None:
                    logger.info("resuming the markers of %s (%s)", metadata.transactional_id,
                                metadata.state.kafka_name)
                    self._send_markers(metadata, coordinator_epoch)

    # -- InitProducerId ---------------------------------------------------------------------

    def handle_init_producer_id(self, transactional_id: str, timeout_ms: int,
                                expected: tuple[int, int] | None = None
                                ) -> InitProducerIdResult:
        """``expected``: the (producer id, epoch) a resuming producer had (v3+), or None."""
        if not transactional_id:
            return InitProducerIdResult(ErrorCode.INVALID_REQUEST)
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            return InitProducerIdResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        error, coordinator_epoch, metadata = self.manager.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return InitProducerIdResult(error)
        if metadata is None:
            metadata = self.manager.put_if_absent(TransactionMetadata(
                transactional_id, self.generate_producer_id(), NO_PRODUCER_EPOCH, timeout_ms,
                txn_last_update_timestamp=self.clock_ms()))
        with metadata.lock:
            if not self.manager.is_current(metadata, coordinator_epoch):
                return InitProducerIdResult(ErrorCode.NOT_COORDINATOR)
            if metadata.pending_transition_in_progress:
                return InitProducerIdResult(ErrorCode.CONCURRENT_TRANSACTIONS)
            if expected is not None and not self._is_valid_producer_id(metadata, *expected):
                return InitProducerIdResult(ErrorCode.PRODUCER_FENCED)
            state = metadata.state
            if state in PREPARED:
                return InitProducerIdResult(ErrorCode.CONCURRENT_TRANSACTIONS)
            if state is TxnState.ONGOING:
                # Fence the instance that opened it and abort it; the client retries and gets
                # the next epoch once the markers are written.
                fence = metadata.prepare_fence_producer_epoch()
                error = self._end_transaction(metadata, coordinator_epoch, fence.producer_id,
                                              fence.producer_epoch, committed=False,
                                              from_client=False)
                return InitProducerIdResult(ErrorCode.CONCURRENT_TRANSACTIONS
                                            if error == ErrorCode.NONE else error)
            if state not in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
                logger.error("%s is %s: no InitProducerId possible", transactional_id,
                             state.kafka_name)
                return InitProducerIdResult(ErrorCode.UNKNOWN_SERVER_ERROR)
            now = self.clock_ms()
            if metadata.is_producer_epoch_exhausted and \
                    (expected is None or expected[1] == metadata.producer_epoch):
                transit = metadata.prepare_producer_id_rotation(
                    self.generate_producer_id(), timeout_ms, now, expected is not None)
            else:
                transit = metadata.prepare_increment_producer_epoch(
                    timeout_ms, None if expected is None else expected[1], now)
                if transit is None:
                    return InitProducerIdResult(ErrorCode.PRODUCER_FENCED)
            error = self.manager.append_transit(metadata, coordinator_epoch, transit)
            if error != ErrorCode.NONE:
                return InitProducerIdResult(error)
            logger.info("initialized %s with producer id %d epoch %d", transactional_id,
                        metadata.producer_id, metadata.producer_epoch)
            return InitProducerIdResult(ErrorCode.NONE, metadata.producer_id,
                                        metadata.producer_epoch)

    @staticmethod
    def _is_valid_producer_id(metadata: TransactionMetadata, producer_id: int,
                              epoch: int) -> bool:
        """A resuming producer may go on: the id's metadata is new, or it is the current
        producer id, or the previous one whose epochs ran out (a retried rotation)."""
        return metadata.producer_epoch == NO_PRODUCER_EPOCH or \
            producer_id == metadata.producer_id or \
            (producer_id == metadata.last_producer_id and is_epoch_exhausted(epoch))

    # -- AddPartitionsToTxn / AddOffsetsToTxn -----------------------------------------------

    def handle_add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                              partitions: Iterable[TopicPartition]) -> ErrorCode:
        partitions = set(partitions)
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        with locked_transaction(self.manager, transactional_id, (producer_id, producer_epoch)) \
                as (error, coordinator_epoch, metadata):
            if error != ErrorCode.NONE:
                return error
            if metadata.pending_transition_in_progress or metadata.state in PREPARED:
                return ErrorCode.CONCURRENT_TRANSACTIONS
            if metadata.state is TxnState.ONGOING and partitions <= metadata.partitions:
                return ErrorCode.NONE  # nothing new: no write
            transit = metadata.prepare_add_partitions(partitions, self.clock_ms())
            return self.manager.append_transit(metadata, coordinator_epoch, transit)

    def verify_partition(self, transactional_id: str, producer_id: int, producer_epoch: int,
                         partition: TopicPartition) -> ErrorCode:
        """AddPartitionsToTxn v4+ ``verify_only``: NONE when ``partition`` is in the producer's
        open transaction, else the reason it is not (INVALID_TXN_STATE: not added)."""
        with locked_transaction(self.manager, transactional_id, (producer_id, producer_epoch),
                                current=False) as (error, _, metadata):
            if error != ErrorCode.NONE:
                return error
            if metadata.state in PREPARED or metadata.pending_transition_in_progress:
                return ErrorCode.CONCURRENT_TRANSACTIONS
            return ErrorCode.NONE if partition in metadata.partitions and \
                metadata.state is TxnState.ONGOING else ErrorCode.INVALID_TXN_STATE

    # -- EndTxn -----------------------------------------------------------------------------

    def handle_end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       committed: bool) -> ErrorCode:
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        with locked_transaction(self.manager, transactional_id) \
                as (error, coordinator_epoch, metadata):
            if error != ErrorCode.NONE:
                return error
            return self._end_transaction(metadata, coordinator_epoch, producer_id,
                                         producer_epoch, committed, from_client=True)

    def _end_transaction(self, metadata: TransactionMetadata, coordinator_epoch: int,
                         producer_id: int, producer_epoch: int, committed: bool, *,
                         from_client: bool) -> ErrorCode:
        """Kafka's ``endTransaction`` (the caller holds the metadata's lock): write the prepare
        state, then have the markers written. ``from_client`` False: the broker aborts (a
        fence or a timeout), with the epoch of the pending PrepareEpochFence."""
        fencing = metadata.pending_state is TxnState.PREPARE_EPOCH_FENCE
        refused = None
        if metadata.producer_id != producer_id:
            refused = ErrorCode.INVALID_PRODUCER_ID_MAPPING
        elif (from_client and producer_epoch != metadata.producer_epoch) or \
                producer_epoch < metadata.producer_epoch:
            refused = ErrorCode.PRODUCER_FENCED
        if refused is not None:
            if fencing:
                metadata.abandon_transition()
            return refused
        if metadata.pending_transition_in_progress and not fencing:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        state = metadata.state
        target = TxnState.PREPARE_COMMIT if committed else TxnState.PREPARE_ABORT
        if state is TxnState.ONGOING:
            if fencing:
                if committed:
                    raise IllegalTxnTransitionError("a fenced transaction is only aborted")
                # The bumped epoch goes into the abort, and so into its markers.
                metadata.pending_state = None
                metadata.producer_epoch = producer_epoch
                metadata.last_producer_epoch = NO_PRODUCER_EPOCH
            transit = metadata.prepare_abort_or_commit(target, self.clock_ms())
            error = self.manager.append_transit(metadata, coordinator_epoch, transit)
            if error != ErrorCode.NONE:
                if fencing:
                    metadata.has_failed_epoch_fence = True
                return error
            logger.debug("%s: %s written", metadata.transactional_id, target.kafka_name)
            self._send_markers(metadata, coordinator_epoch)
            return ErrorCode.NONE
        if fencing:
            metadata.abandon_transition()
        completed = {TxnState.COMPLETE_COMMIT: True, TxnState.COMPLETE_ABORT: False}
        prepared = {TxnState.PREPARE_COMMIT: True, TxnState.PREPARE_ABORT: False}
        if state in completed and completed[state] == committed:
            return ErrorCode.NONE  # a retry of an EndTxn that completed
        if state in prepared and prepared[state] == committed:
            return ErrorCode.CONCURRENT_TRANSACTIONS  # its markers are being written
        logger.info("%s: cannot %s a transaction in state %s", metadata.transactional_id,
                    "commit" if committed else "abort", state.kafka_name)
        return ErrorCode.INVALID_TXN_STATE

    def _send_markers(self, metadata: TransactionMetadata, coordinator_epoch: int) -> None:
        """Hand the markers of a prepared transaction to the writer (the caller holds the
        metadata's lock); once all are written the completion is written."""
        committed = metadata.state is TxnState.PREPARE_COMMIT
        complete = metadata.prepare_complete(self.clock_ms())

        def is_current() -> bool:
            with metadata.lock:
                return self.manager.is_current(metadata, coordinator_epoch) and \
                    metadata.pending_state is complete.state and \
                    metadata.producer_epoch == complete.producer_epoch

        def on_partition_done(tp: TopicPartition) -> None:
            with metadata.lock:
                metadata.partitions.discard(tp)

        def on_complete() -> bool:
            with metadata.lock:
                if not is_current():
                    return True
                error = self.manager.append_transit(metadata, coordinator_epoch, complete)
                if error == ErrorCode.NONE:
                    logger.debug("%s: %s", metadata.transactional_id, complete.state.kafka_name)
                    return True
                if error == ErrorCode.COORDINATOR_NOT_AVAILABLE:
                    metadata.pending_state = complete.state  # written again on the next round
                    return False
                logger.warning("%s: could not write %s: %s", metadata.transactional_id,
                               complete.state.kafka_name, error.name)
                return True

        self.marker_writer.add(MarkerJob(
            metadata.transactional_id, metadata.producer_id, metadata.producer_epoch,
            coordinator_epoch, committed, set(metadata.partitions), is_current,
            on_partition_done, on_complete))

    # -- timeouts ---------------------------------------------------------------------------

    def abort_timed_out_transactions(self) -> int:
        """Fence and abort every transaction open past its timeout; how many were."""
        aborted = 0
        for metadata in self.manager.timed_out_transactions(self.clock_ms()):
            error, coordinator_epoch, current = self.manager.get_state(metadata.transactional_id)
            if error != ErrorCode.NONE or current is not metadata:
                continue
            with metadata.lock:
                if metadata.pending_transition_in_progress or \
                        metadata.state is not TxnState.ONGOING:
                    continue
                logger.info("aborting the transaction of %s (producer id %d epoch %d): open "
                            "longer than its timeout of %d ms", metadata.transactional_id,
                            metadata.producer_id, metadata.producer_epoch, metadata.timeout_ms)
                fence = metadata.prepare_fence_producer_epoch()
                error = self._end_transaction(metadata, coordinator_epoch, fence.producer_id,
                                              fence.producer_epoch, committed=False,
                                              from_client=False)
                if error == ErrorCode.NONE:
                    aborted += 1
                else:
                    logger.warning("aborting %s failed: %s", metadata.transactional_id,
                                   error.name)
        return aborted

    # -- the produce path -------------------------------------------------------------------

    def verify_produce(self, transactional_id: str, topic: str, partition: int,
                       records) -> ErrorCode:
        """Whether a Produce of ``records`` (the request's bytes for one partition) may be
        appended, as far as this coordinator knows: NONE unless the batch is transactional
        and this broker coordinates its transactional id and says it may not."""
        if not self.manager.owned_partitions():
            return ErrorCode.NONE  # coordinates nothing (maybe no topic yet): nothing to ask
        try:
            batch = RecordBatch(records)
            producer_id, epoch = batch.producer_id, batch.producer_epoch
            if not batch.is_transactional:
                return ErrorCode.NONE
        except (RecordsError, ValueError, IndexError):
            return ErrorCode.NONE  # the log's validation answers malformed batches
        error, _, metadata = self.manager.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return ErrorCode.NONE  # coordinated elsewhere (or loading): not checked here
        if metadata is None:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        with metadata.lock:
            error = producer_error(metadata, producer_id, epoch,
                                   fenced=ErrorCode.INVALID_PRODUCER_EPOCH)
            if error != ErrorCode.NONE:
                return error
            if metadata.state is TxnState.ONGOING and \
                    TopicPartition(topic, partition) in metadata.partitions:
                return ErrorCode.NONE
            if metadata.state in PREPARED or metadata.pending_transition_in_progress:
                return ErrorCode.NOT_ENOUGH_REPLICAS  # retriable: the transaction is ending
            return ErrorCode.INVALID_TXN_STATE

    # -- admin ------------------------------------------------------------------------------

    def handle_list_transactions(self, states: Iterable[str], producer_ids: Iterable[int],
                                 duration_ms: int = -1
                                 ) -> tuple[ErrorCode, list[str], list[tuple[str, int, str]]]:
        """(error, unknown state filters, matching transactions as (id, producer id, state))."""
        if self.manager.is_loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [], []
        states = list(states)
        unknown = [s for s in states if TxnState.from_kafka_name(s) is None]
        wanted = {TxnState.from_kafka_name(s) for s in states} - {None}
        producer_ids = set(producer_ids)
        now = self.clock_ms()
        found = []
        for metadata in self.manager.all_transactions():
            with metadata.lock:
                if metadata.state is TxnState.DEAD or \
                        (producer_ids and metadata.producer_id not in producer_ids) or \
                        (states and metadata.state not in wanted) or \
                        (duration_ms >= 0 and now - metadata.txn_start_timestamp <= duration_ms):
                    continue
                found.append((metadata.transactional_id, metadata.producer_id,
                              metadata.state.kafka_name))
        return ErrorCode.NONE, unknown, sorted(found)

    def handle_describe_transaction(self, transactional_id: str
                                    ) -> tuple[ErrorCode, TransactionDescription | None]:
        error, _, metadata = self.manager.get_state(transactional_id)
        if error != ErrorCode.NONE:
            return error, None
        if metadata is None:
            return ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, None
        with metadata.lock:
            return ErrorCode.NONE, TransactionDescription(
                transactional_id, metadata.state, metadata.timeout_ms,
                metadata.txn_start_timestamp, metadata.producer_id, metadata.producer_epoch,
                tuple(sorted(metadata.partitions)))
