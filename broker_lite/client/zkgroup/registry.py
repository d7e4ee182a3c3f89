"""A group's znodes as one member sees them: its registration, partition ownership, and the
state a rebalance reads (members, partitions, brokers), each read optionally leaving a watch.

The znodes (their encoding is :mod:`broker_lite.zk.layout`'s; ``E``: ephemeral)::

    /consumers/[group]/ids/[consumer_id]    E  -> {"version":1,"subscription":{"topic":1},
                                                   "pattern":"static","timestamp":"<ms>"}
    /consumers/[group]/owners/[topic]/[p]   E  -> <owner thread id: [consumer_id]-[n]>

Ephemeral znodes belong to the session that created them and vanish when it ends, which is what
makes a member that dies release its registration and partitions. A znode counts as this
member's only when its ``ephemeralOwner`` is this client's current session: after a session
expiry the old session's znodes may linger for a moment with the same data.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker_lite.common.vocabulary import TopicPartition, now_ms
from broker_lite.zk.errors import MalformedZnodeError
from broker_lite.zk.layout import (
    BROKER_IDS_PATH,
    TOPICS_PATH,
    ConsumerIdZNode,
    ConsumerOwnerZNode,
    ConsumerRegistration,
    TopicZNode,
    consumer_ids_path,
)

from .assignment import STATIC
from .errors import ConsumerIdInUseError

log = logging.getLogger(__name__)

Watch = Callable[[object], None]


class GroupRegistry:
    """The znodes of member ``consumer_id`` of ``group`` on the (chrooted) client ``zk``."""

    def __init__(self, zk: KazooClient, group: str, consumer_id: str):
        self.zk = zk
        self.group = group
        self.consumer_id = consumer_id
        self.registration_path = ConsumerIdZNode.path(group, consumer_id)

    @property
    def session_id(self) -> int | None:
        client_id = self.zk.client_id
        return client_id[0] if client_id else None

    def _ours(self, stat) -> bool:
        return stat is not None and stat.ephemeralOwner == self.session_id

    # -- registration ---------------------------------------------------------------------------

    def register(self, subscription: Mapping[str, int], pattern: str = STATIC) -> None:
        """Create (or, in this session, update) ``/consumers/[group]/ids/[consumer_id]``;
        :class:`ConsumerIdInUseError` when another session holds it."""
        data = ConsumerIdZNode.encode(ConsumerRegistration(
            dict(subscription), pattern, now_ms()))
        path = self.registration_path
        while True:
            try:
                self.zk.create(path, data, ephemeral=True, makepath=True)
                return
            except NodeExistsError:
                stat = self.zk.exists(path)
                if stat is None:
                    continue  # its session ended meanwhile
                if not self._ours(stat):
                    raise ConsumerIdInUseError(
                        f"{path} belongs to ZooKeeper session 0x{stat.ephemeralOwner:x}, not to "
                        f"this one: another consumer of group {self.group} runs with this "
                        f"consumer.id, or this consumer's expired session has not ended yet"
                    ) from None
                try:
                    self.zk.set(path, data, version=stat.version)
                    return
                except (NoNodeError, BadVersionError):
                    continue

    def is_registered(self) -> bool:
        return self._ours(self.zk.exists(self.registration_path))

    def unregister(self) -> None:
        self._delete_if_ours(self.registration_path)

    # -- what a rebalance reads -----------------------------------------------------------------

    def members(self, watch: Watch | None = None) -> dict[str, ConsumerRegistration]:
        """The registered members; one whose znode does not decode is left out with a
        warning (it cannot be assigned anything sensibly)."""
        path = consumer_ids_path(self.group)
        try:
            children = self.zk.get_children(path, watch=watch)
        except NoNodeError:
            self.zk.exists(path, watch=watch)
            return {}
        members = {}
        for consumer_id in sorted(children):
            child = f"{path}/{consumer_id}"
            try:
                data, _ = self.zk.get(child)
                members[consumer_id] = ConsumerIdZNode.decode(data, child)
            except NoNodeError:
                continue  # it left meanwhile; its watch fires again
            except MalformedZnodeError as exc:
                log.warning("ignoring a member of group %s: %s", self.group, exc)
        return members

    def partitions(self, topic: str, watch: Watch | None = None) -> list[int]:
        """The partitions of ``topic`` from ``/brokers/topics/[topic]`` (none while it does not
        exist); the watch fires when the topic is created, changes, or goes."""
        path = TopicZNode.path(topic)
        while True:
            try:
                data, _ = self.zk.get(path, watch=watch)
            except NoNodeError:
                if self.zk.exists(path, watch=watch) is None:
                    return []
                continue  # created meanwhile
            return sorted(TopicZNode.decode(data, path).partitions)

    def topics(self, watch: Watch | None = None) -> list[str]:
        """Every topic under ``/brokers/topics``."""
        try:
            return sorted(self.zk.get_children(TOPICS_PATH, watch=watch))
        except NoNodeError:
            self.zk.exists(TOPICS_PATH, watch=watch)
            return []

    def brokers(self, watch: Watch | None = None) -> list[str]:
        """The live broker ids under ``/brokers/ids``."""
        try:
            return sorted(self.zk.get_children(BROKER_IDS_PATH, watch=watch))
        except NoNodeError:
            self.zk.exists(BROKER_IDS_PATH, watch=watch)
            return []

    # -- partition ownership --------------------------------------------------------------------

    def claim(self, tp: TopicPartition, thread_id: str) -> str | None:
        """Create the owner znode of ``tp`` naming ``thread_id``: None when it is this
        session's now, else the owner that holds it (it has not released it yet)."""
        path = ConsumerOwnerZNode.path(self.group, tp.topic, tp.partition)
        while True:
            try:
                self.zk.create(path, ConsumerOwnerZNode.encode(thread_id), ephemeral=True,
                               makepath=True)
                return None
            except NodeExistsError:
                try:
                    data, stat = self.zk.get(path)
                except NoNodeError:
                    continue  # released meanwhile
                owner = data.decode("utf-8", "replace")
                if self._ours(stat) and owner == thread_id:
                    return None
                return owner

    def release(self, tp: TopicPartition) -> None:
        """Delete the owner znode of ``tp`` if this session holds it."""
        self._delete_if_ours(ConsumerOwnerZNode.path(self.group, tp.topic, tp.partition))

    def owner(self, tp: TopicPartition) -> str | None:
        path = ConsumerOwnerZNode.path(self.group, tp.topic, tp.partition)
        try:
            data, _ = self.zk.get(path)
        except NoNodeError:
            return None
        return ConsumerOwnerZNode.decode(data, path)

    def _delete_if_ours(self, path: str) -> None:
        stat = self.zk.exists(path)
        if self._ours(stat):
            try:
                self.zk.delete(path, version=stat.version)
            except (NoNodeError, BadVersionError):
                pass
