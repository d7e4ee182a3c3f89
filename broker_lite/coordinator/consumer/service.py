"""A broker's group coordinator for both group protocols, wired to its partitions, ZooKeeper,
settings and view of the cluster's topics."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from kazoo.client import KazooClient

from broker_lite.config.broker import BrokerConfig
from broker_lite.replication.partition_manager import PartitionManager

from ..group.service import start_group_coordinator
from .config import ConsumerGroupConfig
from .coordinator import ConsumerGroupCoordinator


class _Topic(Protocol):
    @property
    def topic_id(self) -> uuid.UUID: ...

    @property
    def partitions(self) -> Sequence[Any]: ...


class ClusterTopics(Protocol):
    """The part of a broker's metadata cache read here."""

    def topic_names(self) -> list[str]: ...

    def topic(self, name: str) -> _Topic | None: ...

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...


class TopicsOfCluster:
    """The :class:`.subscriptions.TopicsImage` of a broker's metadata cache."""

    def __init__(self, cluster: ClusterTopics):
        self._cluster = cluster

    def topic_names(self) -> Iterable[str]:
        return self._cluster.topic_names()

    def topic(self, name: str) -> tuple[uuid.UUID, int] | None:
        info = self._cluster.topic(name)
        if info is None or info.topic_id.int == 0:
            return None
        return info.topic_id, len(info.partitions)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self._cluster.topic_name(topic_id)


def start_coordinator(config: BrokerConfig, partitions: PartitionManager, client: KazooClient,
                      cluster: ClusterTopics,
                      on_appended: Callable[[], None] = lambda: None
                      ) -> ConsumerGroupCoordinator:
    """The started coordinator of classic and consumer groups. Raises
    :class:`.config.ConsumerGroupConfigError` for settings Kafka would refuse."""
    coordinator = start_group_coordinator(
        config, partitions, client, on_appended, coordinator_type=ConsumerGroupCoordinator,
        consumer_config=ConsumerGroupConfig.from_broker_config(config),
        topics=TopicsOfCluster(cluster))
    assert isinstance(coordinator, ConsumerGroupCoordinator)
    return coordinator
