"""The transaction coordinator of a broker, wired to its partitions, ZooKeeper and settings."""

from collections.abc import Callable

from kazoo.client import KazooClient

from broker_lite.partitions import PartitionManager

from ..internal_topic import leader_log_of
from .config import TransactionConfig
from .coordinator import TransactionCoordinator
from .manager import TransactionStateManager
from .markers import TxnMarkerWriter, write_markers_locally
from .timeouts import TransactionTimeouts
from .topic import (
    TRANSACTION_STATE_TOPIC,
    create_transaction_topic,
    transaction_topic_partition_count,
)


class TransactionService:
    """A started coordinator, its marker writer and its timeout checks; what the broker keeps
    as ``services.transaction_coordinator`` is :attr:`coordinator`."""

    def __init__(self, coordinator: TransactionCoordinator, timeouts: TransactionTimeouts):
        self.coordinator = coordinator
        self.timeouts = timeouts

    def shutdown(self) -> None:
        self.timeouts.stop()
        self.coordinator.shutdown()


def start_transaction_coordinator(config, partitions: PartitionManager, client: KazooClient, *,
                                  broker_id: Callable[[], int], brokers: Callable[[], list],
                                  generate_producer_id: Callable[[], int],
                                  group_coordinator=None,
                                  on_appended: Callable[[], None] = lambda: None
                                  ) -> TransactionService:
    """A started coordinator that loads the ``__transaction_state`` partitions this broker
    leads (told by ``partitions``); markers for ``__consumer_offsets`` partitions are reported
    to ``group_coordinator`` (its ``on_transaction_completed``)."""
    txn_config = TransactionConfig.from_broker_config(config)

    leader_log = leader_log_of(partitions, TRANSACTION_STATE_TOPIC)
    manager = TransactionStateManager(
        txn_config, leader_log,
        partition_count=lambda: transaction_topic_partition_count(client),
        on_appended=on_appended)

    def write_locally(job, targets):
        errors = write_markers_locally(
            partitions, job.producer_id, job.producer_epoch, job.coordinator_epoch,
            job.committed, targets, timestamp_ms=manager.clock_ms(),
            on_offsets_completed=group_coordinator.on_transaction_completed
            if group_coordinator is not None else None)
        on_appended()
        return errors

    writer = TxnMarkerWriter(broker_id, partitions, client, brokers, write_locally)
    coordinator = TransactionCoordinator(
        txn_config, manager, writer, generate_producer_id,
        create_topic=lambda: create_transaction_topic(client, txn_config)).start()
    partitions.add_leadership_listener(TRANSACTION_STATE_TOPIC, coordinator)
    timeouts = TransactionTimeouts(coordinator, txn_config.abort_timed_out_interval_ms).start()
    return TransactionService(coordinator, timeouts)
