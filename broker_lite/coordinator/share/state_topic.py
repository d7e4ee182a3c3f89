"""``__share_group_state``: creating it, and rebuilding the share-partitions' states from one of
its partitions.

Created on first use (FindCoordinator for a share-partition key, or the first state read), as
the offsets topic is, with ``share.coordinator.state.topic.num.partitions`` partitions and these
topic configs (Kafka's ``ShareCoordinatorService``): ``cleanup.policy=compact`` (only the
latest snapshot of a share-partition and the updates after it matter),
``segment.bytes=share.coordinator.state.topic.segment.bytes``,
``min.insync.replicas=share.coordinator.state.topic.min.isr`` (at most its replica count).

Loading replays the partition from its log start (:mod:`..common.partition_replay`): a snapshot
replaces its share-partition's state, an update applies on the snapshot of its snapshot epoch
(:meth:`.state.ShareState.apply_update`), a tombstone deletes the state. A record that cannot be
read is skipped with a warning naming its offset.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from kazoo.client import KazooClient

from broker_lite.log import Log

from ..common.internal_topic import create_internal_topic, internal_topic_partition_count
from ..common.partition_replay import replay_records
from .config import ShareStateTopicConfig
from .records import (
    SNAPSHOT,
    ShareStateRecordError,
    StateKey,
    parse_key,
    parse_snapshot_value,
    parse_update_value,
)
from .state import ShareState

SHARE_GROUP_STATE_TOPIC = "__share_group_state"


def create_share_state_topic(client: KazooClient, config: ShareStateTopicConfig) -> bool:
    """Create ``__share_group_state`` unless it exists; whether this call created it."""
    return create_internal_topic(
        client, SHARE_GROUP_STATE_TOPIC, num_partitions=config.num_partitions,
        replication_factor=config.replication_factor,
        replication_setting="share.coordinator.state.topic.replication.factor",
        configs={"cleanup.policy": "compact", "segment.bytes": str(config.segment_bytes)},
        min_insync_replicas=config.min_isr)


def share_state_topic_partition_count(client: KazooClient) -> int | None:
    return internal_topic_partition_count(client, SHARE_GROUP_STATE_TOPIC)


@dataclass
class LoadedStates:
    states: dict[StateKey, ShareState] = field(default_factory=dict)
    skipped_records: int = 0


def load_states(log: Log, *, buffer_size: int,
                stopping: Callable[[], bool] = lambda: False) -> LoadedStates:
    """Replay ``log`` from its start to the end it had when called."""
    loaded = LoadedStates()

    def apply(record) -> None:
        record_type, key = parse_key(record.key)
        if record_type == SNAPSHOT:
            snapshot = parse_snapshot_value(record.value)
            if snapshot is None:
                loaded.states.pop(key, None)
            else:
                loaded.states[key] = ShareState(
                    snapshot.state_epoch, snapshot.leader_epoch, snapshot.start_offset,
                    snapshot.batches, snapshot.snapshot_epoch, snapshot.create_timestamp,
                    snapshot.write_timestamp)
            return
        update = parse_update_value(record.value)
        state = loaded.states.get(key)
        if update is None or state is None or update.snapshot_epoch != state.snapshot_epoch:
            return  # an update without its snapshot: superseded
        state.apply_update(update.leader_epoch, update.start_offset, update.batches)

    loaded.skipped_records = replay_records(log, apply, buffer_size=buffer_size,
                                            stopping=stopping, unreadable=ShareStateRecordError)
    return loaded
