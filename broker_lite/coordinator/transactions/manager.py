"""The transactional ids this broker coordinates, and ``__transaction_state`` (Kafka's
``TransactionStateManager``).

A broker coordinates the transactional ids of the ``__transaction_state`` partitions it leads;
the partition's leader epoch is the *coordinator epoch*, which the markers carry so a partition
leader can refuse those of a coordinator that has been replaced. When this broker becomes a
partition's leader the partition is *loading* (requests for its ids answer
COORDINATOR_LOAD_IN_PROGRESS) until its log is replayed on a background thread; then it is
*owned*. Loads and unloads run in the order asked for, and a stale one (older leader epoch) is
ignored.

Every change of a transactional id's metadata is written to the log before it is applied
(:meth:`append_transit`); the append is local and synchronous, so it is done holding the
metadata's lock, and applied at once.
"""

import logging
import threading
import time
from collections.abc import Callable

from broker_lite.log.log import wall_clock_ms
from broker_lite.protocol import ErrorCode

from .. import TRANSACTION_STATE_TOPIC
from ..append import AppendFailed, append_records
from ..internal_topic import LeaderLog, PartitionCount
from ..partition_loading import PartitionLoads
from ..partitioner import partition_for
from .config import TransactionConfig
from .loader import load_transactions
from .records import TxnRecord, transaction_log_key, transaction_log_value
from .state import NO_PRODUCER_EPOCH, TransactionMetadata, TxnState, TxnTransit

logger = logging.getLogger(__name__)

# How a failed append to __transaction_state is answered (Kafka's appendTransactionToLog).
APPEND_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
}


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


class TransactionStateManager:
    """Transaction metadata of the owned partitions of ``__transaction_state``.

    Parameters
    ----------
    config : TransactionConfig
    leader_log : callable
        ``leader_log(partition) -> (Log, leader_epoch) | None``.
    partition_count : callable
        The topic's partition count, or None while it does not exist (then the configured one).
    clock_ms : callable
        Wall-clock milliseconds.
    on_appended : callable
        Told after every append (wakes waiting fetches).
    """

    def __init__(self, config: TransactionConfig, leader_log: LeaderLog, *,
                 partition_count: Callable[[], int | None] = lambda: None,
                 clock_ms: Callable[[], int] = wall_clock_ms,
                 on_appended: Callable[[], None] = lambda: None):
        self.config = config
        self.leader_log = leader_log
        self.clock_ms = clock_ms
        self.on_appended = on_appended
        self._partition_count = PartitionCount(TRANSACTION_STATE_TOPIC, config.num_partitions,
                                               partition_count)
        self._lock = threading.RLock()
        self._loading: set[int] = set()
        self._owned: dict[int, int] = {}  # partition -> coordinator epoch
        self._transactions: dict[int, dict[str, TransactionMetadata]] = {}
        self._loads = PartitionLoads("txn-state-loader", self._lock)

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        self.resolve_partition_count()
        self._loads.start()

    def shutdown(self) -> None:
        self._loads.shutdown()
        with self._lock:
            self._owned.clear()
            self._loading.clear()
            self._transactions.clear()

    @property
    def shutting_down(self) -> bool:
        return self._loads.shutting_down

    def wait_for_tasks(self, timeout_s: float = 30) -> bool:
        """Wait until the loads and unloads asked for so far have run; False on a timeout."""
        return self._loads.wait_for_tasks(timeout_s)

    # -- partitions -------------------------------------------------------------------------

    def resolve_partition_count(self) -> int:
        return self._partition_count.resolve()

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.resolve_partition_count())

    def coordinator_epoch(self, partition: int) -> int | None:
        """The epoch this broker coordinates ``partition`` in, None when it does not (yet)."""
        with self._lock:
            return self._owned.get(partition)

    @property
    def is_loading(self) -> bool:
        with self._lock:
            return bool(self._loading)

    def owned_partitions(self) -> set[int]:
        with self._lock:
            return set(self._owned)

    # -- metadata ---------------------------------------------------------------------------

    def get_state(self, transactional_id: str
                  ) -> tuple[ErrorCode, int, TransactionMetadata | None]:
        """(error, coordinator epoch, metadata or None). The error is NOT_COORDINATOR when
        this broker does not own the id's partition, COORDINATOR_LOAD_IN_PROGRESS while it
        loads it."""
        partition = self.partition_for(transactional_id)
        with self._lock:
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
        with self._lock:
            cache = self._transactions.setdefault(partition, {})
            return cache.setdefault(metadata.transactional_id, metadata)

    def is_current(self, metadata: TransactionMetadata, coordinator_epoch: int) -> bool:
        """``metadata`` is still the cached one, in the same coordinator epoch."""
        partition = self.partition_for(metadata.transactional_id)
        with self._lock:
            return self._owned.get(partition) == coordinator_epoch and \
                self._transactions[partition].get(metadata.transactional_id) is metadata

    def all_transactions(self) -> list[TransactionMetadata]:
        with self._lock:
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
        partition = self.partition_for(metadata.transactional_id)
        found = self.leader_log(partition)
        log, leader_epoch = found if found is not None else (None, -1)
        try:
            append_records(log, leader_epoch, [
                (transaction_log_key(metadata.transactional_id),
                 transaction_log_value(record_of(transit)))], timestamp_ms=self.clock_ms())
        except AppendFailed as exc:
            metadata.abandon_transition()
            logger.warning("writing %s of %s failed: %s", transit.state.name,
                           metadata.transactional_id, exc)
            return APPEND_ERRORS.get(exc.code, exc.code)
        finally:
            self.on_appended()
        if not self.is_current(metadata, coordinator_epoch):
            metadata.abandon_transition()  # the partition moved on while appending
            return ErrorCode.NOT_COORDINATOR
        metadata.complete_transition(transit)
        return ErrorCode.NONE

    # -- loading and unloading --------------------------------------------------------------

    def schedule_load(self, partition: int, epoch: int,
                      on_loaded: Callable[[int, int, list[TransactionMetadata]], None]) -> None:
        """Load ``partition`` in the background; ``on_loaded(partition, coordinator_epoch,
        transactions)`` is told once it is owned."""
        self._loads.schedule(lambda: self._load(partition, epoch, on_loaded))

    def schedule_unload(self, partition: int, epoch: int | None) -> None:
        self._loads.schedule(lambda: self._unload(partition, epoch))

    def _load(self, partition: int, epoch: int, on_loaded) -> None:
        if not self._loads.accept_epoch(partition, epoch):
            logger.info("not loading __transaction_state-%d for stale epoch %d", partition, epoch)
            return
        with self._lock:
            if self._owned.get(partition) == epoch or partition in self._loading:
                return
            self._owned.pop(partition, None)
            self._loading.add(partition)
        started = time.monotonic()
        transactions: dict[str, TransactionMetadata] = {}
        try:
            found = self.leader_log(partition)
            if found is None:
                logger.warning("no leader log to load __transaction_state-%d from", partition)
            else:
                loaded = load_transactions(found[0], buffer_size=self.config.load_buffer_size,
                                           stopping=lambda: self.shutting_down)
                transactions = {txn_id: metadata_of(txn_id, record)
                                for txn_id, record in loaded.records.items()}
                logger.info("loaded __transaction_state-%d (coordinator epoch %d) in %d ms: %d "
                            "transactional ids%s", partition, epoch,
                            (time.monotonic() - started) * 1000, len(transactions),
                            f", {loaded.skipped_records} records skipped"
                            if loaded.skipped_records else "")
        except Exception:
            logger.exception("loading __transaction_state-%d failed", partition)
        with self._lock:
            self._loading.discard(partition)
            if self._loads.newest_epoch(partition) != epoch or self.shutting_down:
                return  # resigned (or re-elected) while loading
            self._transactions[partition] = transactions
            self._owned[partition] = epoch
        on_loaded(partition, epoch, list(transactions.values()))

    def _unload(self, partition: int, epoch: int | None) -> None:
        if not self._loads.accept_epoch(partition, epoch):
            return
        with self._lock:
            self._owned.pop(partition, None)
            self._loading.discard(partition)
            dropped = self._transactions.pop(partition, {})
        logger.info("unloaded __transaction_state-%d: %d transactional ids", partition,
                    len(dropped))
