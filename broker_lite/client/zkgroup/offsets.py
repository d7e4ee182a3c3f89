"""Committed offsets of a ZooKeeper-based group, in ZooKeeper, at the group coordinator, or both.

A committed offset is the next offset the group consumes from a partition. In ZooKeeper it is a
persistent znode holding the offset as a decimal string::

    /consumers/[group]/offsets/[topic]/[p]  -> 42

At the group coordinator it is an OffsetCommit of the same group id (read back with
OffsetFetch), as any Kafka consumer group's. Where commits go and where a member starts from,
as Kafka 0.8.2 decided it:

=================  ======================  ==========================  =========================
offsets.storage    dual.commit.enabled     commit() writes             a member starts from
=================  ======================  ==========================  =========================
zookeeper          (ignored)               ZooKeeper                   ZooKeeper
kafka              false                   the coordinator             the coordinator
kafka              true                    the coordinator, then       the larger of the two
                                           ZooKeeper
=================  ======================  ==========================  =========================

The larger of the two is what makes the migration from ZooKeeper to Kafka safe: members that
switch to ``kafka`` storage with dual commit start where ZooKeeper says (nothing is committed at
the coordinator yet), keep both stores current, and once all do, dual commit can be turned off.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from kazoo.client import KazooClient

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.zk.consumer_offsets import ZkConsumerOffsets
from broker_lite.zk.errors import MalformedZnodeError

from ..client import KafkaClient
from ..errors import InvalidArgumentError
from .config import KAFKA_STORAGE, ZOOKEEPER_STORAGE
from .errors import InvalidOffsetZNodeError

log = logging.getLogger(__name__)


class ZooKeeperOffsets:
    """The offsets of ``group`` under ``/consumers/[group]/offsets``
    (:class:`~broker_lite.zk.consumer_offsets.ZkConsumerOffsets`, as brokers serve them to
    OffsetCommit and OffsetFetch v0)."""

    def __init__(self, zk: KazooClient, group: str):
        self.zk = zk
        self.group = group
        self._offsets = ZkConsumerOffsets(zk)

    def path(self, tp: TopicPartition) -> str:
        return self._offsets.path(self.group, tp)

    def read(self, tp: TopicPartition) -> int | None:
        """The committed offset of ``tp``, None when there is none;
        :class:`InvalidOffsetZNodeError` when the znode holds anything but a non-negative
        decimal number."""
        try:
            offset = self._offsets.read(self.group, tp)
        except MalformedZnodeError as exc:
            raise InvalidOffsetZNodeError(exc.path, exc.reason) from None
        if offset is not None and offset < 0:
            raise InvalidOffsetZNodeError(self.path(tp), f"a negative offset: {offset}")
        return offset

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Set each partition's znode, creating it (and its parents) the first time."""
        self._offsets.write(self.group, offsets)


class OffsetStorage:
    """Reads and writes a group's committed offsets per ``offsets.storage`` and
    ``dual.commit.enabled`` (the table above)."""

    def __init__(self, storage: str, dual_commit: bool, zookeeper: ZooKeeperOffsets,
                 kafka: KafkaClient, group: str):
        if storage not in (ZOOKEEPER_STORAGE, KAFKA_STORAGE):
            raise ValueError(f"offsets.storage must be zookeeper or kafka, got {storage!r}")
        self.storage = storage
        self.dual_commit = dual_commit and storage == KAFKA_STORAGE
        self.zookeeper = zookeeper
        self.kafka = kafka
        self.group = group

    @property
    def uses_zookeeper(self) -> bool:
        return self.storage == ZOOKEEPER_STORAGE or self.dual_commit

    def committed(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int | None]:
        """Where the group resumes each partition (None: nothing committed). A ZooKeeper offset
        that does not decode counts as none, with a warning naming its znode."""
        tps = sorted(set(tps))
        if not tps:
            return {}
        found: dict[TopicPartition, int | None] = dict.fromkeys(tps)
        if self.storage == KAFKA_STORAGE:
            found.update(self.kafka.committed(self.group, tps))
        if self.uses_zookeeper:
            for tp in tps:
                stored = self._read_zookeeper(tp)
                current = found[tp]
                if stored is not None and (current is None or stored > current):
                    found[tp] = stored
        return found

    def _read_zookeeper(self, tp: TopicPartition) -> int | None:
        try:
            return self.zookeeper.read(tp)
        except InvalidOffsetZNodeError as exc:
            log.warning("group %s: ignoring the committed offset of %s: %s", self.group, tp, exc)
            return None

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit ``offsets`` to the coordinator and/or ZooKeeper (coordinator first: a failed
        commit there leaves ZooKeeper untouched, as in Kafka)."""
        for tp, offset in offsets.items():
            if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
                raise InvalidArgumentError(f"offset to commit for {tp} must be an integer >= 0, "
                                           f"got {offset!r}")
        if not offsets:
            return
        if self.storage == KAFKA_STORAGE:
            self.kafka.commit(self.group, dict(offsets))
        if self.uses_zookeeper:
            self.zookeeper.write(offsets)
