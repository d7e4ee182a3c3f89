"""Committed offsets of ZooKeeper-based consumer groups, where Kafka 0.8 kept them::

    /consumers/[group]/offsets/[topic]/[p]  -> the next offset to consume, a decimal string

The consumers of Kafka 0.8 wrote them themselves; brokers write them for OffsetCommit v0 and read
them for OffsetFetch v0, as Kafka 3.9's ``KafkaZkClient.setOrCreateConsumerOffset`` and
``getConsumerOffset`` still do. The ZooKeeper-based group consumer
(:mod:`broker_lite.client.zkgroup`) uses the same class.
"""

from collections.abc import Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from broker_lite.common.vocabulary import TopicPartition

from .layout import ConsumerOffsetZNode


class ZkConsumerOffsets:
    """The committed offsets of every ZooKeeper-based group, under ``/consumers``. ZooKeeper's
    own failures (connection loss, an expired session) are kazoo's exceptions."""

    def __init__(self, client: KazooClient):
        self.client = client

    @staticmethod
    def path(group: str, tp: TopicPartition) -> str:
        return ConsumerOffsetZNode.path(group, tp.topic, tp.partition)

    def read(self, group: str, tp: TopicPartition) -> int | None:
        """The offset ``group`` committed for ``tp``, None when there is none;
        :class:`~broker_lite.zk.errors.MalformedZnodeError` when the znode holds anything but a
        decimal number."""
        path = self.path(group, tp)
        try:
            data, _ = self.client.get(path)
        except NoNodeError:
            return None
        return ConsumerOffsetZNode.decode(data, path)

    def write(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Set each partition's znode, creating it (and its parents) the first time."""
        for tp, offset in sorted(offsets.items()):
            path, data = self.path(group, tp), ConsumerOffsetZNode.encode(offset)
            while True:
                try:
                    self.client.set(path, data)
                    break
                except NoNodeError:
                    try:
                        self.client.create(path, data, makepath=True)
                        break
                    except NodeExistsError:
                        continue  # created meanwhile: set it
