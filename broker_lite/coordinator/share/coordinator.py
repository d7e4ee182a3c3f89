"""The share coordinator (KIP-932; Kafka's ``ShareCoordinatorService`` and
``ShareCoordinatorShard``): the persisted state of share-partitions in ``__share_group_state``.

A share-partition's state lives in the partition of ``__share_group_state`` that its key
``group:topicId:partition`` hashes to (:func:`..common.partitioner.partition_for`), and the
leader of that partition is its share coordinator (FindCoordinator key type 2). The
share-partition leaders read and write the state through the state APIs (Read/Write/
Initialize/DeleteShareGroupState, ReadShareGroupStateSummary), which land here: each change is
written to the log first (a ShareUpdate, or a ShareSnapshot every
``share.coordinator.snapshot.update.records.per.snapshot`` updates and whenever the state is
created or initialized again), then applied (:mod:`.state`). Partitions load and unload with
this broker's leadership (:mod:`..common.metadata_manager`), so the state follows the leader
of its partition of ``__share_group_state``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from broker_lite.protocol import ErrorCode

from ..common.append import COORDINATOR_APPEND_ERRORS, AppendFailed
from ..common.internal_topic import LeaderLog
from ..common.metadata_manager import MetadataManager, Replayed
from .config import ShareStateTopicConfig
from .records import (
    Snapshot,
    StateKey,
    Update,
    snapshot_key,
    snapshot_value,
    update_key,
    update_value,
)
from .share_partition import StateBatch
from .state import UNINITIALIZED, ShareState
from .state_topic import SHARE_GROUP_STATE_TOPIC, load_states

logger = logging.getLogger(__name__)



class ShareCoordinator(MetadataManager):
    """The share-partition states of the owned partitions of ``__share_group_state``.

    Parameters
    ----------
    config : ShareStateTopicConfig
    leader_log, partition_count, clock_ms, on_appended
        As :class:`..common.metadata_manager.MetadataManager` takes them.
    create_topic : callable
        Creates ``__share_group_state`` (FindCoordinator's first lookup).
    """

    topic = SHARE_GROUP_STATE_TOPIC
    loader_thread = "share-state-loader"
    keys_name = "share-partition states"
    reload_on_new_epoch = True

    def __init__(self, config: ShareStateTopicConfig, leader_log: LeaderLog, *,
                 create_topic: Callable[[], object] = lambda: None, **options):
        super().__init__(config, leader_log, **options)
        self._create_topic = create_topic
        self._states: dict[int, dict[StateKey, ShareState]] = {}

    def create_topic(self) -> None:
        self._create_topic()

    def shutdown(self) -> None:
        super().shutdown()
        self.unload_all()

    # leadership of __share_group_state (PartitionManager's listener)

    def on_elected(self, partition: int, leader_epoch: int) -> None:
        self.schedule_load(partition, leader_epoch)

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        self.schedule_unload(partition, leader_epoch)

    # -- the state APIs ----------------------------------------------------------------------

    def _states_of(self, key: StateKey) -> tuple[ErrorCode, int, dict[StateKey, ShareState]]:
        """(error, partition, the partition's states); the caller holds the partition lock."""
        partition = self.partition_for(key.coordinator_key)
        if partition in self._loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, partition, {}
        if partition not in self._owned:
            return ErrorCode.NOT_COORDINATOR, partition, {}
        return ErrorCode.NONE, partition, self._states.setdefault(partition, {})

    def read(self, key: StateKey, leader_epoch: int) -> tuple[ErrorCode, ShareState | None]:
        """ReadShareGroupState: the state (None: never initialized; its start offset is then
        -1 to the reader). A newer leader epoch is recorded, fencing older leaders' writes."""
        with self._partition_lock:
            error, partition, states = self._states_of(key)
            if error:
                return error, None
            state = states.get(key)
            if state is None:
                return ErrorCode.NONE, None
            error = state.check_write(state.state_epoch, leader_epoch)
            if error:
                return error, None
            if leader_epoch > state.leader_epoch:
                error = self._append_update(partition, key, state, state.state_epoch,
                                            leader_epoch, -1, ())
            return error, state

    def summary(self, key: StateKey) -> tuple[ErrorCode, ShareState | None]:
        """ReadShareGroupStateSummary: the state, read without changing it."""
        with self._partition_lock:
            error, _, states = self._states_of(key)
            return error, states.get(key) if not error else None

    def write(self, key: StateKey, state_epoch: int, leader_epoch: int, start_offset: int,
              batches: Iterable[StateBatch]) -> ErrorCode:
        """WriteShareGroupState: a share-partition leader's changes."""
        batches = tuple(batches)
        with self._partition_lock:
            error, partition, states = self._states_of(key)
            if error:
                return error
            state = states.get(key)
            if state is None:  # written before any initialization: a new state
                now = self.clock_ms()
                state = ShareState(state_epoch, leader_epoch, max(start_offset, 0), (), 0,
                                   now, now)
                state.batches = tuple(batches)
                return self._append_snapshot(partition, key, state)
            error = state.check_write(state_epoch, leader_epoch)
            if error:
                return error
            return self._append_update(partition, key, state, state_epoch, leader_epoch,
                                       start_offset, batches)

    def initialize(self, key: StateKey, state_epoch: int, start_offset: int) -> ErrorCode:
        """InitializeShareGroupState: start (again) at ``start_offset`` in ``state_epoch``,
        nothing in flight; an older state epoch than the state's is FENCED_STATE_EPOCH."""
        with self._partition_lock:
            error, partition, states = self._states_of(key)
            if error:
                return error
            current = states.get(key)
            if current is not None and state_epoch < current.state_epoch:
                return ErrorCode.FENCED_STATE_EPOCH
            state = ShareState.initialized(state_epoch, start_offset, self.clock_ms())
            if current is not None:
                state.leader_epoch = current.leader_epoch
                state.snapshot_epoch = current.snapshot_epoch + 1
            return self._append_snapshot(partition, key, state)

    def delete(self, key: StateKey) -> ErrorCode:
        """DeleteShareGroupState: tombstones for the share-partition's records."""
        with self._partition_lock:
            error, partition, states = self._states_of(key)
            if error:
                return error
            if key not in states:
                return ErrorCode.NONE
            error = self._append(partition, [(snapshot_key(key), None), (update_key(key), None)])
            if not error:
                del states[key]
            return error

    # -- appends -----------------------------------------------------------------------------

    def _append(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        try:
            self._append_to_leader(partition, records)
        except AppendFailed as exc:
            logger.warning("writing share state to %s-%d failed: %s", self.topic, partition, exc)
            return COORDINATOR_APPEND_ERRORS.get(exc.code, ErrorCode.UNKNOWN_SERVER_ERROR)
        return ErrorCode.NONE

    def _append_snapshot(self, partition: int, key: StateKey, state: ShareState) -> ErrorCode:
        state.write_timestamp = self.clock_ms()
        error = self._append(partition, [(snapshot_key(key), snapshot_value(Snapshot(
            state.snapshot_epoch, state.state_epoch, state.leader_epoch, state.start_offset,
            state.create_timestamp, state.write_timestamp, state.batches)))])
        if not error:
            state.updates_since_snapshot = 0
            self._states[partition][key] = state
        return error

    def _append_update(self, partition: int, key: StateKey, state: ShareState,
                       state_epoch: int, leader_epoch: int, start_offset: int,
                       batches: tuple[StateBatch, ...]) -> ErrorCode:
        if state.updates_since_snapshot + 1 >= max(self.config.updates_per_snapshot, 1):
            updated = ShareState(state_epoch, state.leader_epoch, state.start_offset,
                                 state.batches, state.snapshot_epoch + 1,
                                 state.create_timestamp)
            updated.apply_update(leader_epoch, start_offset, batches)
            return self._append_snapshot(partition, key, updated)
        error = self._append(partition, [(update_key(key), update_value(Update(
            state.snapshot_epoch, leader_epoch, start_offset, batches)))])
        if not error:
            state.state_epoch = max(state.state_epoch, state_epoch)
            state.apply_update(leader_epoch, start_offset, batches)
            state.write_timestamp = self.clock_ms()
        return error

    # -- loading and unloading ---------------------------------------------------------------

    def _replay(self, log, on_loaded) -> Replayed:
        loaded = load_states(log, buffer_size=self.config.load_buffer_size,
                             stopping=lambda: self.shutting_down)
        return Replayed(loaded.states, f"{len(loaded.states)} share-partition states",
                        loaded.skipped_records)

    def _install(self, partition: int, states: dict[StateKey, ShareState] | None) -> None:
        self._states[partition] = states or {}

    def _drop(self, partition: int | None, on_unloaded) -> int:
        if partition is None:
            dropped = sum(len(states) for states in self._states.values())
            self._states.clear()
            return dropped
        return len(self._states.pop(partition, {}))

    def states_of_group(self, group_id: str) -> dict[StateKey, ShareState]:
        """The states of ``group_id`` this broker coordinates (for tests and tools)."""
        with self._partition_lock:
            return {key: state for states in self._states.values()
                    for key, state in states.items() if key.group_id == group_id}


__all__ = ["UNINITIALIZED", "ShareCoordinator"]
