"""Kafka 0.8-style consumer groups coordinated in ZooKeeper (``/consumers/[group]``), beside the
group coordinator of modern Kafka.

Modules, one concept each: :mod:`.config` (settings, under the Scala consumer's names),
:mod:`.assignment` (the range assignment, a pure function), :mod:`.registry` (registration and
partition ownership znodes), :mod:`.offsets` (committed offsets in ZooKeeper and/or at the group
coordinator, and the migration between them), :mod:`.records` (decoded records), and
:mod:`.consumer`, the :class:`ZooKeeperGroupConsumer`, whose docstring describes a rebalance.
"""

from .assignment import assign_ranges, consumer_threads, resolve_subscription, thread_id
from .config import ZooKeeperConsumerConfig
from .consumer import ZooKeeperGroupConsumer, discover_bootstrap_servers
from .errors import (
    ConsumerIdInUseError,
    ConsumerRebalanceFailedError,
    InvalidOffsetZNodeError,
    NotSubscribedError,
    ZooKeeperConsumerError,
)
from .offsets import OffsetStorage, ZooKeeperOffsets
from .records import ConsumerRecord, consumer_records
from .registry import GroupRegistry

__all__ = [
    "ConsumerIdInUseError", "ConsumerRebalanceFailedError", "ConsumerRecord", "GroupRegistry",
    "InvalidOffsetZNodeError", "NotSubscribedError", "OffsetStorage", "ZooKeeperConsumerConfig",
    "ZooKeeperConsumerError", "ZooKeeperGroupConsumer", "ZooKeeperOffsets", "assign_ranges",
    "consumer_threads", "consumer_records", "discover_bootstrap_servers", "resolve_subscription",
    "thread_id",
]
