"""``__transaction_state``: how it is created, with Kafka's settings for it.

Created on first use (FindCoordinator for a transactional id, or InitProducerId with one), as the
offsets topic is, with ``transaction.state.log.num.partitions`` partitions and these topic
configs:

- ``cleanup.policy=compact``: only the latest state of each transactional id matters;
- ``segment.bytes=transaction.state.log.segment.bytes`` (100 MiB);
- ``min.insync.replicas=transaction.state.log.min.isr`` (2), at most its replica count.

Replicas: as many live brokers as there are, up to ``transaction.state.log.replication.factor``
(see :mod:`..common.internal_topic`).
"""

from kazoo.client import KazooClient

from ..common.internal_topic import (
    TRANSACTION_STATE_TOPIC,
    create_internal_topic,
    internal_topic_partition_count,
)
from .config import TransactionConfig

__all__ = ["TRANSACTION_STATE_TOPIC", "create_transaction_topic",
           "transaction_topic_partition_count"]


def transaction_topic_configs(config: TransactionConfig) -> dict[str, str]:
    return {"cleanup.policy": "compact", "segment.bytes": str(config.segment_bytes)}


def create_transaction_topic(client: KazooClient, config: TransactionConfig) -> bool:
    """Create ``__transaction_state`` unless it exists; whether this call created it."""
    return create_internal_topic(
        client, TRANSACTION_STATE_TOPIC, num_partitions=config.num_partitions,
        replication_factor=config.replication_factor,
        replication_setting="transaction.state.log.replication.factor",
        configs=transaction_topic_configs(config), min_insync_replicas=config.min_isr)


def transaction_topic_partition_count(client: KazooClient) -> int | None:
    """The partition count of ``__transaction_state``, or None while it does not exist."""
    return internal_topic_partition_count(client, TRANSACTION_STATE_TOPIC)
