"""The groups this broker coordinates, their offsets cache, and ``__consumer_offsets`` (Kafka's
``GroupMetadataManager``).

A broker coordinates the groups of the ``__consumer_offsets`` partitions it leads: a partition
is *loading* until the groups and offsets of its log are rebuilt, then *owned*; when the broker
stops leading it, its groups are unloaded (:mod:`.metadata_manager`). A partition already owned
is not loaded again when re-elected in a newer leader epoch: its groups are cached already.

Everything that changes a group's durable state goes through the log first: the group metadata
of a completed rebalance (:meth:`store_group`), offset commits (:meth:`store_offsets`), and the
tombstones of expired or deleted offsets and groups (:meth:`cleanup_group_metadata`). The cache
is updated after the append, so what OffsetFetch answers is always in the log.

Lock order: the partition lock before a group's lock, never the reverse; the groups map's lock
is held only for map operations.
"""

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode

from ..common.append import AppendFailed
from ..common.internal_topic import LeaderLog
from ..common.metadata_manager import MetadataManager, Replayed
from . import loader
from .config import OffsetConfig
from .group import DEAD, EMPTY, Group
from .offsets import CommittedOffset, GroupOffsets, OffsetAndMetadata
from .offsets_topic import OFFSETS_TOPIC
from .records import (
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
)

logger = logging.getLogger(__name__)

__all__ = ["GroupMetadataManager", "LeaderLog", "OffsetsHolder"]


class OffsetsHolder(Protocol):
    """What offsets are stored for: a classic :class:`.group.Group`, or another kind of group
    with the same attributes (a consumer group)."""

    group_id: str
    offsets: GroupOffsets

    @property
    def is_dead(self) -> bool: ...

# How a failed append of a commit is answered (Kafka's translation of produce errors).
COMMIT_APPEND_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
}

# ... and a failed append of group metadata.
GROUP_APPEND_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.REBALANCE_IN_PROGRESS,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.UNKNOWN_SERVER_ERROR,
}


class GroupMetadataManager(MetadataManager):
    """Groups and offsets of the owned partitions of ``__consumer_offsets``.

    Parameters
    ----------
    config : OffsetConfig
    leader_log, partition_count, clock_ms, on_appended
        As :class:`.metadata_manager.MetadataManager` takes them; ``clock_ms`` also stamps
        commits and group states, and decides expiry.
    """

    topic = OFFSETS_TOPIC
    loader_thread = "group-metadata-loader"
    keys_name = "groups"

    def __init__(self, config: OffsetConfig, leader_log: LeaderLog, **options):
        super().__init__(config, leader_log, **options)
        self._groups: dict[str, Group] = {}
        self._groups_lock = threading.Lock()

    # -- where groups are -------------------------------------------------------------------

    def is_group_local(self, group_id: str) -> bool:
        return self.is_partition_owned(self.partition_for(group_id))

    def is_group_loading(self, group_id: str) -> bool:
        return self.is_partition_loading(self.partition_for(group_id))

    # -- the groups map ---------------------------------------------------------------------

    def get_group(self, group_id: str) -> Group | None:
        with self._groups_lock:
            return self._groups.get(group_id)

    def get_or_create_group(self, group_id: str) -> Group:
        with self._groups_lock:
            group = self._groups.get(group_id)
            if group is None:
                group = self._groups[group_id] = Group(group_id, self.clock_ms())
            return group

    def add_group(self, group: Group) -> Group:
        """Add ``group`` unless one with its id is cached; the cached one."""
        with self._groups_lock:
            return self._groups.setdefault(group.group_id, group)

    def remove_group(self, group: Group) -> bool:
        """Drop ``group`` from the cache if it is the one cached under its id."""
        with self._groups_lock:
            if self._groups.get(group.group_id) is group:
                del self._groups[group.group_id]
                return True
            return False

    def current_groups(self) -> list[Group]:
        with self._groups_lock:
            return list(self._groups.values())

    def group_not_exists(self, group_id: str) -> bool:
        """This broker owns the group's partition and knows no live group of that id."""
        with self._partition_lock:
            if not self.is_group_local(group_id):
                return False
            group = self.get_group(group_id)
            if group is None:
                return True
            with group.lock:
                return group.is_(DEAD)

    # -- appends ----------------------------------------------------------------------------

    def append(self, partition: int, records: list[tuple[bytes, bytes | None]],
               **batch_options) -> int:
        """Append records to ``partition`` of ``__consumer_offsets``, with the codec of
        ``offsets.topic.compression.codec``; the offset of the first. Raises
        :class:`AppendFailed`."""
        return self._append_to_leader(partition, records, compression=self.config.compression,
                                      **batch_options)

    def store_group(self, group: Group, assignment: Mapping[str, bytes]) -> ErrorCode:
        """Write the group's current generation with ``assignment`` (the caller holds the
        group's lock); NONE or the error to answer with."""
        record = group.to_record(dict(assignment))
        try:
            self.append(self.partition_for(group.group_id),
                        [(group_metadata_key(group.group_id), group_metadata_value(record))])
        except AppendFailed as exc:
            logger.warning("storing group %s generation %d failed: %s", group.group_id,
                           group.generation_id, exc)
            return GROUP_APPEND_ERRORS.get(exc.code, exc.code)
        return ErrorCode.NONE

    def store_offsets(self, group: "Group | OffsetsHolder",
                      offsets: Mapping[TopicPartition, OffsetAndMetadata], *, producer_id: int = -1,
                      producer_epoch: int = -1) -> dict[TopicPartition, ErrorCode]:
        """Write commits, then cache them (the caller holds the group's lock); the error of
        each partition. Commits with metadata longer than ``offset.metadata.max.bytes`` are
        refused (OFFSET_METADATA_TOO_LARGE) and the others written."""
        valid = {tp: v for tp, v in offsets.items()
                 if v.metadata is None or len(v.metadata) <= self.config.max_metadata_size}
        result = {tp: ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in offsets if tp not in valid}
        if not valid:
            return result
        transactional = producer_id >= 0
        try:
            base_offset = self.append(
                self.partition_for(group.group_id),
                [(offset_commit_key(group.group_id, tp.topic, tp.partition),
                  offset_commit_value(value)) for tp, value in valid.items()],
                producer_id=producer_id, producer_epoch=producer_epoch,
                transactional=transactional)
        except AppendFailed as exc:
            error = COMMIT_APPEND_ERRORS.get(exc.code, exc.code)
            logger.debug("offset commit of group %s failed: %s", group.group_id, exc)
            return {**result, **{tp: error for tp in valid}}
        if not group.is_dead:
            for tp, value in valid.items():
                if transactional:
                    group.offsets.on_txn_append(producer_id, tp,
                                                CommittedOffset(base_offset, value))
                else:
                    group.offsets.on_append(tp, CommittedOffset(base_offset, value))
        return {**result, **{tp: ErrorCode.NONE for tp in valid}}

    def complete_transaction(self, producer_id: int, partitions: set[int],
                             committed: bool) -> int:
        """A transaction marker of ``producer_id`` reached ``partitions``: the offsets it
        committed in them count (``committed``) or are dropped; how many groups had some."""
        completed = 0
        for group in self.current_groups():
            if self.partition_for(group.group_id) not in partitions:
                continue
            with group.lock:
                if group.offsets.complete_txn(producer_id, committed):
                    completed += 1
        return completed

    def get_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None
                    ) -> tuple[dict[TopicPartition, OffsetAndMetadata | None], set[TopicPartition]]:
        """The committed offsets of ``partitions`` (None: every partition with one), None for
        a partition without; and which of them have a transactional commit still pending."""
        group = self.get_group(group_id)
        if group is None:
            return dict.fromkeys(partitions or ()), set()
        with group.lock:
            if group.is_(DEAD):
                return dict.fromkeys(partitions or ()), set()
            offsets = group.offsets.all() if partitions is None else {
                tp: group.offsets.get(tp) for tp in partitions}
            return offsets, group.offsets.pending_partitions() & offsets.keys()

    # -- expiry and deletion ----------------------------------------------------------------

    def cleanup_expired(self) -> int:
        """Remove the offsets expired under ``offsets.retention.minutes``, and the groups left
        empty without offsets; the count of offsets removed."""
        now = self.clock_ms()
        removed = self.cleanup_group_metadata(
            self.current_groups(),
            lambda group: group.offsets.remove(
                group.expired_offsets(now, self.config.retention_ms)))
        if removed:
            logger.info("removed %d expired offsets", removed)
        return removed

    def cleanup_group_metadata(self, groups: Iterable[Group],
                               selector: Callable[[Group], dict]) -> int:
        """Remove what ``selector(group)`` removes from each group's offsets (it runs under the
        group's lock), mark empty groups without offsets Dead, and write the tombstones; the
        count of offsets removed."""
        total = 0
        for group in groups:
            with group.lock:
                removed = selector(group)
                if group.is_(EMPTY) and not len(group.offsets) and \
                        not group.offsets.has_pending_txn():
                    logger.info("group %s is now dead (generation %d)", group.group_id,
                                group.generation_id)
                    group.transition_to(DEAD, self.clock_ms())
                dead, generation = group.is_(DEAD), group.generation_id
            group_id = group.group_id
            tombstones = [(offset_commit_key(group_id, tp.topic, tp.partition), None)
                          for tp in removed]
            # a group of generation 0 only ever stored offsets: it has no metadata record
            if dead and self.remove_group(group) and generation > 0:
                tombstones.append((group_metadata_key(group_id), None))
            if tombstones:
                try:
                    self.append(self.partition_for(group_id), tombstones)
                except AppendFailed as exc:  # written again by the next cleanup
                    logger.warning("could not write %d tombstones for group %s: %s",
                                   len(tombstones), group_id, exc)
            total += len(removed)
        return total

    # -- loading and unloading --------------------------------------------------------------

    def _replay(self, log, on_group_loaded: Callable[[Group], None]) -> Replayed:
        """Rebuild the partition's groups and offsets and cache them at once, while the
        partition is loading: a request arriving once it is owned must find its group, not
        create an empty one in its place. ``on_group_loaded`` is told of each."""
        loaded = loader.load_partition(log, buffer_size=self.config.load_buffer_size,
                                       stopping=lambda: self.shutting_down)
        self._install_groups(loaded, on_group_loaded)
        return Replayed(None, f"{len(loaded.groups)} groups, {len(loaded.offsets)} offsets",
                        loaded.skipped_records)

    def _install_groups(self, loaded: "loader.LoadedPartition",
                        on_group_loaded: Callable[[Group], None]) -> None:
        now = self.clock_ms()
        offsets = loaded.offsets_by_group()
        groups = {group_id: Group.from_record(group_id, record, now)
                  for group_id, record in loaded.groups.items()}
        pending = loaded.pending_transactional
        with_offsets = offsets.keys() | {g for commits in pending.values() for g, _ in commits}
        for group_id in with_offsets - groups.keys():  # offsets only: a standalone group
            groups[group_id] = Group(group_id, now)
        for producer_id, commits in pending.items():  # transactions still open
            for (group_id, tp), committed in commits.items():
                groups[group_id].offsets.on_txn_append(producer_id, tp, committed)
        for group_id, group in groups.items():
            for tp, committed in offsets.get(group_id, {}).items():
                group.offsets.on_append(tp, committed)
            if self.add_group(group) is not group:
                logger.debug("group %s was already cached; the loaded copy is dropped",
                             group_id)
                continue
            on_group_loaded(group)

    def _drop(self, partition: int | None,
              on_group_unloaded: Callable[[Group], None]) -> int:
        """Unload the groups of ``partition`` (None: all): ``on_group_unloaded`` answers what
        they have waiting."""
        groups = [g for g in self.current_groups()
                  if partition is None or self.partition_for(g.group_id) == partition]
        for group in groups:
            on_group_unloaded(group)
            self.remove_group(group)
        return len(groups)
