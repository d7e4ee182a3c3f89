"""The transaction coordinator of a broker, wired to its partitions, ZooKeeper and settings."""

from collections.abc import Callable, Iterable, Mapping

from kazoo.client import KazooClient

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode
from broker_lite.replication.partition_manager import PartitionManager

from ..common.internal_topic import leader_log_of
from .config import TransactionConfig
from .coordinator import TransactionCoordinator
from .manager import TransactionStateManager
from .markers import (
    OffsetsCompletion,
    TxnMarkerWriter,
    append_markers,
    settle_offsets,
    write_markers_locally,
)
from .timeouts import TransactionTimeouts
from .topic import (
    TRANSACTION_STATE_TOPIC,
    create_transaction_topic,
    transaction_topic_partition_count,
)


class LocalMarkers:
    """Appends transaction markers to the partitions this broker leads: for its own
    coordinator, and for WriteTxnMarkers requests from the coordinators of other brokers.
    Markers in ``__consumer_offsets`` settle the transaction's offsets in the group
    coordinator (``on_offsets_completed``, its ``on_transaction_completed``); every write is
    announced with ``on_appended`` (waiting fetches wake)."""

    def __init__(self, partitions: PartitionManager, on_offsets_completed: OffsetsCompletion | None,
                 clock_ms: Callable[[], int], on_appended: Callable[[], None] = lambda: None,
                 replication_timeout_ms: int | None = None):
        self.partitions = partitions
        self.on_offsets_completed = on_offsets_completed
        self.clock_ms = clock_ms
        self.on_appended = on_appended
        self.replication_timeout_ms = replication_timeout_ms

    def write(self, producer_id: int, producer_epoch: int, coordinator_epoch: int,
              committed: bool, targets: Iterable[TopicPartition]
              ) -> dict[TopicPartition, ErrorCode]:
        """Append the markers and wait (up to ``replication_timeout_ms``) for their ISRs; the
        error of each target."""
        return write_markers_locally(
            self.partitions, producer_id, producer_epoch, coordinator_epoch, committed, targets,
            timestamp_ms=self.clock_ms(), on_offsets_completed=self.on_offsets_completed,
            replication_timeout_s=None if self.replication_timeout_ms is None
            else self.replication_timeout_ms / 1000, on_appended=self.on_appended)

    def append(self, producer_id: int, producer_epoch: int, coordinator_epoch: int,
               committed: bool, targets: Iterable[TopicPartition]
               ) -> tuple[dict[TopicPartition, ErrorCode], dict[TopicPartition, int]]:
        """Append the markers without waiting: the error of each target, and the offset the
        high watermark must reach for each marker appended; :meth:`settle` once they are
        replicated (or given up)."""
        errors, ends = append_markers(self.partitions, producer_id, producer_epoch,
                                      coordinator_epoch, committed, targets,
                                      timestamp_ms=self.clock_ms())
        self.on_appended()
        return errors, ends

    def settle(self, producer_id: int, committed: bool,
               errors: Mapping[TopicPartition, ErrorCode]) -> None:
        """The markers :meth:`append` wrote are replicated where ``errors`` say NONE."""
        settle_offsets(producer_id, committed, errors, self.on_offsets_completed)


class TransactionService:
    """A started coordinator, its marker writers and its timeout checks."""

    def __init__(self, coordinator: TransactionCoordinator, markers: LocalMarkers,
                 timeouts: TransactionTimeouts):
        self.coordinator = coordinator
        self.markers = markers
        self.timeouts = timeouts

    def shutdown(self) -> None:
        self.timeouts.stop()
        self.coordinator.shutdown()


def start_transaction_coordinator(config, partitions: PartitionManager, client: KazooClient, *,
                                  broker_id: Callable[[], int], brokers: Callable[[], list],
                                  generate_producer_id: Callable[[], int],
                                  on_offsets_completed: OffsetsCompletion | None = None,
                                  on_appended: Callable[[], None] = lambda: None,
                                  inter_broker_security: Mapping[str, str] | None = None
                                  ) -> TransactionService:
    """A started coordinator that loads the ``__transaction_state`` partitions this broker
    leads (told by ``partitions``); markers for ``__consumer_offsets`` partitions are reported
    to ``on_offsets_completed`` (the group coordinator's ``on_transaction_completed``). Markers
    for other brokers' partitions go to ``brokers()``' endpoints with ``inter_broker_security``
    (client settings) when the inter-broker listener is secured."""
    txn_config = TransactionConfig.from_broker_config(config)

    leader_log = leader_log_of(partitions, TRANSACTION_STATE_TOPIC)
    manager = TransactionStateManager(
        txn_config, leader_log,
        partition_count=lambda: transaction_topic_partition_count(client),
        on_appended=on_appended)

    markers = LocalMarkers(partitions, on_offsets_completed, manager.clock_ms, on_appended,
                           txn_config.replication_timeout_ms)

    def write_locally(job, targets):
        return markers.write(job.producer_id, job.producer_epoch, job.coordinator_epoch,
                             job.committed, targets)

    writer = TxnMarkerWriter(broker_id, partitions, client, brokers, write_locally,
                             security=inter_broker_security)
    coordinator = TransactionCoordinator(
        txn_config, manager, writer, generate_producer_id,
        create_topic=lambda: create_transaction_topic(client, txn_config)).start()
    partitions.add_leadership_listener(TRANSACTION_STATE_TOPIC, coordinator)
    timeouts = TransactionTimeouts(coordinator, txn_config.abort_timed_out_interval_ms).start()
    return TransactionService(coordinator, markers, timeouts)
