"""``__transaction_state``: how it is created, with Kafka's settings for it.

Created on first use (FindCoordinator for a transactional id, or InitProducerId with one), as the
offsets topic is, with ``transaction.state.log.num.partitions`` partitions and these topic
configs:

- ``cleanup.policy=compact``: only the latest state of each transactional id matters;
- ``segment.bytes=transaction.state.log.segment.bytes`` (100 MiB).

Kafka refuses to create it while fewer brokers are alive than
``transaction.state.log.replication.factor`` (3); here it gets as many replicas as there are
live brokers, up to that factor, with a warning, as ``__consumer_offsets`` does.
"""

import logging

from kazoo.client import KazooClient

from broker_lite.zk.admin import create_topic, get_topic_assignment
from broker_lite.zk.errors import TopicExistsError, UnknownTopicError
from broker_lite.zk.registration import live_broker_ids

from .. import TRANSACTION_STATE_TOPIC
from .config import TransactionConfig

logger = logging.getLogger(__name__)

__all__ = ["TRANSACTION_STATE_TOPIC", "create_transaction_topic",
           "transaction_topic_partition_count"]


class TransactionTopicUnavailableError(RuntimeError):
    """The topic cannot be created now (no live broker): COORDINATOR_NOT_AVAILABLE."""


def transaction_topic_configs(config: TransactionConfig) -> dict[str, str]:
    return {"cleanup.policy": "compact", "segment.bytes": str(config.segment_bytes)}


def create_transaction_topic(client: KazooClient, config: TransactionConfig) -> bool:
    """Create ``__transaction_state`` unless it exists; whether this call created it."""
    brokers = live_broker_ids(client)
    if not brokers:
        raise TransactionTopicUnavailableError("no live broker to host __transaction_state")
    replication_factor = min(config.replication_factor, len(brokers))
    if replication_factor < config.replication_factor:
        logger.warning("creating __transaction_state with replication factor %d: only %d "
                       "brokers are alive (transaction.state.log.replication.factor is %d)",
                       replication_factor, len(brokers), config.replication_factor)
    try:
        create_topic(client, TRANSACTION_STATE_TOPIC, config.num_partitions, replication_factor,
                     transaction_topic_configs(config))
    except TopicExistsError:
        return False
    logger.info("created __transaction_state with %d partitions", config.num_partitions)
    return True


def transaction_topic_partition_count(client: KazooClient) -> int | None:
    """The partition count of ``__transaction_state``, or None while it does not exist."""
    try:
        return len(get_topic_assignment(client, TRANSACTION_STATE_TOPIC).partitions)
    except UnknownTopicError:
        return None
