"""The group coordinator of a broker, wired to its partitions, ZooKeeper and settings."""

from kazoo.client import KazooClient

from broker_lite.config.broker import BrokerConfig
from broker_lite.replication.partition_manager import PartitionManager

from ..common.internal_topic import leader_log_of
from .config import GroupConfig, OffsetConfig
from .coordinator import GroupCoordinator
from .offsets_topic import (
    OFFSETS_TOPIC,
    create_offsets_topic,
    offsets_topic_partition_count,
)


def start_group_coordinator(config: BrokerConfig, partitions: PartitionManager,
                            client: KazooClient, on_appended=lambda: None, *,
                            coordinator_type: type[GroupCoordinator] = GroupCoordinator,
                            **options) -> GroupCoordinator:
    """A started coordinator (of ``coordinator_type``, given ``options`` besides) that loads
    the ``__consumer_offsets`` partitions this broker leads (told by ``partitions``) and
    appends to their logs."""
    offset_config = OffsetConfig.from_broker_config(config)

    leader_log = leader_log_of(partitions, OFFSETS_TOPIC)
    coordinator = coordinator_type(
        GroupConfig.from_broker_config(config), offset_config, leader_log,
        partition_count=lambda: offsets_topic_partition_count(client),
        create_topic=lambda: create_offsets_topic(client, offset_config),
        on_appended=on_appended, **options,
    ).start()
    partitions.add_leadership_listener(OFFSETS_TOPIC, coordinator)
    return coordinator
