"""The share groups of a broker, wired to its partitions, ZooKeeper and settings: the share
coordinator (``__share_group_state``), the share-partition leader's persister and
share-partitions, the share group membership, and the group configs they read."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable, Mapping

from kazoo.client import KazooClient

from broker_lite.common.vocabulary import TopicPartition, now_ms
from broker_lite.replication.partition_manager import PartitionManager
from broker_lite.zk.group_configs import get_group_config

from ..common.internal_topic import leader_log_of
from ..common.timer import Timer
from ..group.coordinator import GroupCoordinator
from .config import ShareConfig, ShareStateTopicConfig
from .coordinator import ShareCoordinator
from .group_configs import ShareGroupSettings, settings_of
from .group_coordinator import ShareGroupCoordinator
from .partition_manager import SharePartitionManager
from .persister import StatePersister
from .state_topic import (
    SHARE_GROUP_STATE_TOPIC,
    create_share_state_topic,
    share_state_topic_partition_count,
)


class GroupConfigCache:
    """The stored configs of each group, read from ZooKeeper once and again when a
    ``groups/[group]`` change notification says they changed (:meth:`invalidate`)."""

    def __init__(self, read: Callable[[str], dict[str, str]], config: ShareConfig):
        self.read = read
        self.config = config
        self._cache: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def overrides(self, group_id: str) -> dict[str, str]:
        with self._lock:
            cached = self._cache.get(group_id)
        if cached is None:
            cached = self.read(group_id)
            with self._lock:
                self._cache[group_id] = cached
        return cached

    def settings(self, group_id: str) -> ShareGroupSettings:
        return settings_of(self.overrides(group_id), self.config)

    def invalidate(self, group_id: str) -> None:
        with self._lock:
            self._cache.pop(group_id, None)


class ShareService:
    """A broker's share groups: what the handlers use, and what stops with the broker."""

    def __init__(self, config: ShareConfig, coordinator: ShareCoordinator,
                 persister: StatePersister, partitions: SharePartitionManager,
                 groups: ShareGroupCoordinator, group_configs: GroupConfigCache, timer: Timer):
        self.config = config
        self.coordinator = coordinator
        self.persister = persister
        self.partitions = partitions
        self.groups = groups
        self.group_configs = group_configs
        self.timer = timer

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def shutdown(self) -> None:
        self.timer.stop()  # (a timer handed in is stopped with the rest)
        self.coordinator.shutdown()
        self.persister.close()


def start_share_service(config, partitions: PartitionManager, groups: GroupCoordinator, *,
                        broker_id: Callable[[], int],
                        leader_of: Callable[[str, int], int | None],
                        address_of: Callable[[int], tuple[str, int] | None],
                        topics: Callable[[Iterable[str]], Mapping[str, tuple[uuid.UUID, int]]],
                        group_config: Callable[[str], dict[str, str]],
                        state_partition_count: Callable[[], int | None],
                        create_state_topic: Callable[[ShareStateTopicConfig], object],
                        on_available: Callable[[TopicPartition], None] = lambda tp: None,
                        on_appended: Callable[[], None] = lambda: None,
                        inter_broker_security: Mapping[str, str] | None = None,
                        timer: Timer | None = None, clock_ms: Callable[[], int] = now_ms
                        ) -> ShareService:
    """A started share service. ``leader_of(topic, partition)``: a partition's leader (-1:
    none; None: no such topic); ``address_of(broker)``: a broker's inter-broker endpoint;
    ``topics(names)``: the topic id and partition count of those of ``names`` that exist;
    ``group_config(group)``: a group's stored configs; ``state_partition_count()`` and
    ``create_state_topic(config)``: ``__share_group_state``'s partition count (None while it
    does not exist) and its creation. ZooKeeper gives them in a broker
    (:func:`start_zk_share_service`)."""
    share_config = ShareConfig.from_broker_config(config)
    state_config = ShareStateTopicConfig.from_broker_config(config)
    timer = timer if timer is not None else Timer("share-timer").start()
    coordinator = ShareCoordinator(
        state_config, leader_log_of(partitions, SHARE_GROUP_STATE_TOPIC),
        partition_count=state_partition_count,
        create_topic=lambda: create_state_topic(state_config),
        on_appended=on_appended, clock_ms=clock_ms)
    coordinator.start()
    partitions.add_leadership_listener(SHARE_GROUP_STATE_TOPIC, coordinator)
    persister = StatePersister(
        coordinator, broker_id, lambda p: leader_of(SHARE_GROUP_STATE_TOPIC, p), address_of,
        security=inter_broker_security, timeout_ms=config["request.timeout.ms"])
    group_configs = GroupConfigCache(group_config, share_config)
    share_partitions = SharePartitionManager(share_config, partitions, persister,
                                             group_configs.settings, timer,
                                             on_available=on_available, clock_ms=clock_ms)
    share_groups = ShareGroupCoordinator(share_config, groups, topics, group_configs.settings,
                                         timer, on_member_left=share_partitions.release_member)
    return ShareService(share_config, coordinator, persister, share_partitions, share_groups,
                        group_configs, timer)


def start_zk_share_service(config, partitions: PartitionManager, client: KazooClient,
                           groups: GroupCoordinator, **options) -> ShareService:
    """:func:`start_share_service` with group configs and ``__share_group_state`` in
    ZooKeeper."""
    return start_share_service(
        config, partitions, groups, group_config=lambda group: get_group_config(client, group),
        state_partition_count=lambda: share_state_topic_partition_count(client),
        create_state_topic=lambda state_config: create_share_state_topic(client, state_config),
        **options)
