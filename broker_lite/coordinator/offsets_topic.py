"""``__consumer_offsets``: how it is created, with Kafka's settings for it.

The topic is created on first use (the first FindCoordinator, or a Metadata request naming it),
as Kafka does, with ``offsets.topic.num.partitions`` partitions and these topic configs:

- ``cleanup.policy=compact``: only the latest commit of each key matters;
- ``segment.bytes=offsets.topic.segment.bytes`` (100 MiB): small segments get compacted sooner;
- ``compression.type=producer``: batches keep the codec the coordinator wrote them with.

Kafka refuses to create it while fewer brokers are alive than
``offsets.topic.replication.factor`` (3 by default). Here it is created with as many replicas as
there are live brokers, up to that factor, with a warning, so one broker on a laptop needs no
configuration.
"""

import logging

from kazoo.client import KazooClient

from broker_lite.zk.admin import create_topic, get_topic_assignment
from broker_lite.zk.errors import TopicExistsError, UnknownTopicError
from broker_lite.zk.registration import live_broker_ids

from .config import OffsetConfig

logger = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"


class OffsetsTopicUnavailableError(RuntimeError):
    """The topic cannot be created now (no live broker): COORDINATOR_NOT_AVAILABLE."""


def offsets_topic_configs(config: OffsetConfig) -> dict[str, str]:
    return {"cleanup.policy": "compact", "segment.bytes": str(config.segment_bytes),
            "compression.type": "producer"}


def create_offsets_topic(client: KazooClient, config: OffsetConfig) -> bool:
    """Create ``__consumer_offsets`` unless it exists; whether this call created it."""
    brokers = live_broker_ids(client)
    if not brokers:
        raise OffsetsTopicUnavailableError("no live broker to host __consumer_offsets")
    replication_factor = min(config.replication_factor, len(brokers))
    if replication_factor < config.replication_factor:
        logger.warning("creating __consumer_offsets with replication factor %d: only %d "
                       "brokers are alive (offsets.topic.replication.factor is %d)",
                       replication_factor, len(brokers), config.replication_factor)
    try:
        create_topic(client, OFFSETS_TOPIC, config.num_partitions, replication_factor,
                     offsets_topic_configs(config))
    except TopicExistsError:
        return False  # created meanwhile by another broker or request
    logger.info("created __consumer_offsets with %d partitions", config.num_partitions)
    return True


def offsets_topic_partition_count(client: KazooClient) -> int | None:
    """The partition count of ``__consumer_offsets``, or None while it does not exist."""
    try:
        return len(get_topic_assignment(client, OFFSETS_TOPIC).partitions)
    except UnknownTopicError:
        return None
