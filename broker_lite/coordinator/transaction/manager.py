"""The transactional ids this broker coordinates, and ``__transaction_state`` (Kafka's
``TransactionStateManager``).

A broker coordinates the transactional ids of the ``__transaction_state`` partitions it leads;
the partition's leader epoch is the *coordinator epoch*, which the markers carry so a partition
leader can refuse those of a coordinator that has been replaced. A partition is *loading*
(requests for its ids answer COORDINATOR_LOAD_IN_PROGRESS) until its log is replayed, then
*owned* (:mod:`..metadata_manager`); re-elected in a newer leader epoch, it is loaded again, in
the new coordinator epoch.

Every change of a transactional id's metadata is written to the log before it is applied
(:meth:`append_transit`); the append is local and synchronous, so it is done holding the
metadata's lock, and applied at once.
"""

import logging
from collections.abc import Callable

from broker_lite.common.vocabulary import NO_PRODUCER_EPOCH
from broker_lite.protocol import ErrorCode

from ..common.append import COORDINATOR_APPEND_ERRORS, AppendFailed
from ..common.internal_topic import TRANSACTION_STATE_TOPIC, LeaderLog
from ..common.metadata_manager import MetadataManager, Replayed
from .config import TransactionConfig
from .loader import load_transactions
from .records import TxnRecord, transaction_log_key, transaction_log_value
from .state import TransactionMetadata, TxnState, TxnTransit

logger = logging.getLogger(__name__)

# How a failed append to __transaction_state is answered (Kafka's appendTransactionToLog).
APPEND_ERRORS = COORDINATOR_APPEND_ERRORS


def metadata_of(transactional_id: str, record: TxnRecord) -> TransactionMetadata:
    return TransactionMetadata(
        transactional_id, record.producer_id, record.producer_epoch, record.timeout_ms,
        last_producer_id=record.previous_producer_id, last_producer_epoch=NO_PRODUCER_EPOCH,
        state=TxnState(record.state_id), partitions=set(record.partitions),
        txn_start_timestamp=record.start_timestamp_ms,
        txn_last_update_timestamp=record.last_update_timestamp_ms)


def record_of(transit: TxnTransit) -> TxnRecord:
    return TxnRecord(transit.producer_id, transit.producer_epoch, transit.timeout_ms,
                     int(transit.state), transit.partitions, transit.txn_last_update_timestamp,
                     transit.txn_start_timestamp, transit.last_producer_id)


class TransactionStateManager(MetadataManager):
    """Transaction metadata of the owned partitions of ``__transaction_state``.

    Parameters
    ----------
    config : TransactionConfig
    leader_log, partition_count, clock_ms, on_appended
        As :class:`..metadata_manager.MetadataManager` takes them.
    """

    topic = TRANSACTION_STATE_TOPIC
    loader_thread = "txn-state-loader"
    keys_name = "transactional ids"
    reload_on_new_epoch = True

    def __init__(self, config: TransactionConfig, leader_log: LeaderLog, **options):
        super().__init__(config, leader_log, **options)
        self._transactions: dict[int, dict[str, TransactionMetadata]] = {}

    def shutdown(self) -> None:
        super().shutdown()
        self.unload_all()

    # -- metadata ---------------------------------------------------------------------------

    def get_state(self, transactional_id: str
                  ) -> tuple[ErrorCode, int, TransactionMetadata | None]:
        """(error, coordinator epoch, metadata or None). The error is NOT_COORDINATOR when
        this broker does not own the id's partition, COORDINATOR_LOAD_IN_PROGRESS while it
        loads it."""
        partition = self.partition_for(transactional_id)
        with self._partition_lock:
            if partition in self._loading:
                return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1, None
            epoch = self._owned.get(partition)
            if epoch is None:
                return ErrorCode.NOT_COORDINATOR, -1, None
            return ErrorCode.NONE, epoch, self._transactions[partition].get(transactional_id)

    def put_if_absent(self, metadata: TransactionMetadata) -> TransactionMetadata:
        """Cache ``metadata`` unless its id is cached; the cached one (the partition is owned:
        :meth:`get_state` said so just before)."""
        partition = self.partition_for(metadata.transactional_id)
        with self._partition_lock:
            cache = self._transactions.setdefault(partition, {})
            return cache.setdefault(metadata.transactional_id, metadata)

    def is_current(self, metadata: TransactionMetadata, coordinator_epoch: int) -> bool:
        """``metadata`` is still the cached one, in the same coordinator epoch."""
        partition = self.partition_for(metadata.transactional_id)
        with self._partition_lock:
            return self._owned.get(partition) == coordinator_epoch and \
                self._transactions[partition].get(metadata.transactional_id) is metadata

    def all_transactions(self) -> list[TransactionMetadata]:
        with self._partition_lock:
            return [m for partition in self._owned
                    for m in self._transactions.get(partition, {}).values()]

    def timed_out_transactions(self, now_ms: int) -> list[TransactionMetadata]:
        """Ongoing transactions open longer than their timeout, with no transition pending."""
        timed_out = []
        for metadata in self.all_transactions():
            with metadata.lock:
                if metadata.pending_state is None and metadata.state is TxnState.ONGOING and \
                        metadata.txn_start_timestamp + metadata.timeout_ms < now_ms:
                    timed_out.append(metadata)
        return timed_out

    # -- appends ----------------------------------------------------------------------------

    def append_transit(self, metadata: TransactionMetadata, coordinator_epoch: int,
                       transit: TxnTransit) -> ErrorCode:
        """Write ``transit`` of ``metadata`` (the caller holds its lock) and apply it; NONE, or
        the error to answer with (the metadata is then unchanged)."""
        if not self.is_current(metadata, coordinator_epoch):
            metadata.abandon_transition()  # another coordinator epoch: not ours to write
            return ErrorCode.NOT_COORDINATOR
        try:
            self._append_to_leader(self.partition_for(metadata.transactional_id), [
                (transaction_log_key(metadata.transactional_id),
                 transaction_log_value(record_of(transit)))])
        except AppendFailed as exc:
            metadata.abandon_transition()
            logger.warning("writing %s of %s failed: %s", transit.state.name,
                           metadata.transactional_id, exc)
            return APPEND_ERRORS.get(exc.code, exc.code)
        if not self.is_current(metadata, coordinator_epoch):
            metadata.abandon_transition()  # the partition moved on while appending
            return ErrorCode.NOT_COORDINATOR
        metadata.complete_transition(transit)
        return ErrorCode.NONE

    # -- loading and unloading --------------------------------------------------------------
    # ``on_loaded(partition, coordinator_epoch, transactions)`` is told once a partition is owned

    def _replay(self, log, on_loaded) -> Replayed:
        loaded = load_transactions(log, buffer_size=self.config.load_buffer_size,
                                   stopping=lambda: self.shutting_down)
        transactions = {txn_id: metadata_of(txn_id, record)
                        for txn_id, record in loaded.records.items()}
        return Replayed(transactions, f"{len(transactions)} transactional ids",
                        loaded.skipped_records)

    def _install(self, partition: int,
                 transactions: dict[str, TransactionMetadata] | None) -> None:
        self._transactions[partition] = transactions or {}

    def _on_owned(self, partition: int, epoch: int,
                  transactions: dict[str, TransactionMetadata] | None,
                  on_loaded: Callable[[int, int, list[TransactionMetadata]], None]) -> None:
        on_loaded(partition, epoch, list((transactions or {}).values()))

    def _drop(self, partition: int | None, on_unloaded) -> int:
        if partition is None:
            dropped = sum(len(cache) for cache in self._transactions.values())
            self._transactions.clear()
            return dropped
        return len(self._transactions.pop(partition, {}))
