"""The errors of ZooKeeper-based consumer groups; each names the group, consumer or znode
involved."""

from __future__ import annotations

from broker_lite.zk.errors import MalformedZnodeError

from ..errors import KafkaClientError


class ZooKeeperConsumerError(KafkaClientError):
    """Base class of the errors of :mod:`broker_lite.client.zkgroup`."""


class NotSubscribedError(ZooKeeperConsumerError):
    """``poll`` or ``commit`` before ``subscribe``."""


class ConsumerIdInUseError(ZooKeeperConsumerError):
    """Another live ZooKeeper session holds ``/consumers/[group]/ids/[consumer_id]``: two consumers
    run with the same ``consumer.id`` in one group."""


class ConsumerRebalanceFailedError(ZooKeeperConsumerError):
    """A rebalance did not succeed within ``rebalance.max.retries`` attempts (Kafka's
    ``ConsumerRebalanceFailedException``); the message says why the last attempt failed."""


class InvalidOffsetZNodeError(ZooKeeperConsumerError, MalformedZnodeError):
    """``/consumers/[group]/offsets/[topic]/[p]`` holds something other than a non-negative
    decimal offset; ``path`` is the znode."""

    def __init__(self, path: str, reason: str):
        MalformedZnodeError.__init__(self, path, reason)
