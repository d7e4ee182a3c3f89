"""The group coordinator: consumer groups and their committed offsets in ``__consumer_offsets``.

=======================  =====================================================================
module                   concept
=======================  =====================================================================
``partitioner``          which partition of an internal topic holds a key
``record_codec``         versioned coordinator records: an int16 version, then the body
``records``              the key and value schemas of ``__consumer_offsets`` records
``offsets``              committed offsets and their expiry
``consumer_protocol``    the topics of a consumer's subscription
``group``                a group's state machine, members, generation and protocol
``timer``                deadlines (sessions, rebalances, expiry)
``internal_topic``       creating an internal compacted topic, its partition count
``append``               writing coordinator records to the log
``partition_replay``     reading an internal topic's partition from its log start
``partition_loading``    loading / unloading partitions as leadership changes
``metadata_manager``     the partitions a coordinator owns or loads (both managers' base)
``loader``               rebuilding groups and offsets from the log
``manager``              the groups of the owned partitions, and the offsets cache
``offsets_topic``        creating ``__consumer_offsets``
``offset_coordinator``   OffsetCommit, OffsetFetch, OffsetDelete, transactional commits
``coordinator``          the classic group protocol, and the facade (Kafka's GroupCoordinator)
``transactions``         the transaction coordinator and ``__transaction_state``
=======================  =====================================================================
"""

from .config import GroupConfig, OffsetConfig
from .coordinator import GroupCoordinator
from .offsets_topic import OFFSETS_TOPIC
from .partitioner import partition_for

TRANSACTION_STATE_TOPIC = "__transaction_state"
# Kafka's internal topics: clients may read them but never produce to them.
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC})

__all__ = ["INTERNAL_TOPICS", "OFFSETS_TOPIC", "TRANSACTION_STATE_TOPIC", "GroupConfig",
           "GroupCoordinator", "OffsetConfig", "partition_for"]
