"""The coordinators of a broker: consumer groups and their committed offsets in
``__consumer_offsets`` (:mod:`.group`), transactions in ``__transaction_state``
(:mod:`.transaction`), share groups and their state in ``__share_group_state`` (:mod:`.share`,
KIP-932), and what they are built on (:mod:`.common`): an internal compacted topic whose
partitions a coordinator loads as this broker comes to lead them, and whose records it appends
and replays.

Each part imports only the parts before it: common, then group, then transaction and share (side
by side: neither imports the other). A transaction that commits offsets ends in the group
coordinator through a callback the broker wires, not an import. Above them all, :mod:`.consumer`
serves the consumer groups of KIP-848 beside the classic ones: its coordinator extends the group
coordinator, and is the one a broker runs.
"""

from .common.internal_topic import INTERNAL_TOPICS, OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from .common.partitioner import partition_for
from .group.config import GroupConfig, OffsetConfig
from .group.coordinator import GroupCoordinator

__all__ = ["INTERNAL_TOPICS", "OFFSETS_TOPIC", "TRANSACTION_STATE_TOPIC", "GroupConfig",
           "GroupCoordinator", "OffsetConfig", "partition_for"]
