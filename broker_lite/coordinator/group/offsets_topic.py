"""``__consumer_offsets``: how it is created, with Kafka's settings for it.

The topic is created on first use (the first FindCoordinator, or a Metadata request naming it),
as Kafka does, with ``offsets.topic.num.partitions`` partitions and these topic configs:

- ``cleanup.policy=compact``: only the latest commit of each key matters;
- ``segment.bytes=offsets.topic.segment.bytes`` (100 MiB): small segments get compacted sooner;
- ``compression.type=producer``: batches keep the codec the coordinator wrote them with.

Replicas: as many live brokers as there are, up to ``offsets.topic.replication.factor`` (see
:mod:`..common.internal_topic`).
"""

from kazoo.client import KazooClient

from ..common.internal_topic import (
    OFFSETS_TOPIC,
    create_internal_topic,
    internal_topic_partition_count,
)
from .config import OffsetConfig

__all__ = ["OFFSETS_TOPIC", "create_offsets_topic", "offsets_topic_partition_count"]


def offsets_topic_configs(config: OffsetConfig) -> dict[str, str]:
    return {"cleanup.policy": "compact", "segment.bytes": str(config.segment_bytes),
            "compression.type": "producer"}


def create_offsets_topic(client: KazooClient, config: OffsetConfig) -> bool:
    """Create ``__consumer_offsets`` unless it exists; whether this call created it."""
    return create_internal_topic(
        client, OFFSETS_TOPIC, num_partitions=config.num_partitions,
        replication_factor=config.replication_factor,
        replication_setting="offsets.topic.replication.factor",
        configs=offsets_topic_configs(config))


def offsets_topic_partition_count(client: KazooClient) -> int | None:
    """The partition count of ``__consumer_offsets``, or None while it does not exist."""
    return internal_topic_partition_count(client, OFFSETS_TOPIC)
