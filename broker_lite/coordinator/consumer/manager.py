"""The groups of the owned ``__consumer_offsets`` partitions, consumer groups (KIP-848) among
them: :class:`ConsumerGroupMetadataManager` extends the classic groups' manager
(:class:`..group.manager.GroupMetadataManager`) with a map of consumer groups, loaded from the
same records, appended to the same partitions, holding their offsets the same way.

A group id is a classic group or a consumer group, never both: the coordinator converts one
into the other (:mod:`.migration`) under both maps' lock, moving its offsets along.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.log import Log
from broker_lite.protocol import ErrorCode

from ..common.append import COORDINATOR_APPEND_ERRORS, AppendFailed
from ..common.metadata_manager import Replayed
from ..group import loader as classic_loader
from ..group.group import EMPTY, Group
from ..group.manager import GroupMetadataManager
from ..group.offsets import OffsetAndMetadata
from ..group.records import offset_commit_key
from .group import ConsumerGroup
from .loader import ConsumerGroupReplay
from .records import Record, group_tombstones, member_tombstones

logger = logging.getLogger(__name__)

#: How a failed append of a consumer group's records is answered (Kafka 4's
#: ``GroupCoordinatorService.handleOperationException``): retriable errors that send the
#: member to look for its coordinator again, never the classic REBALANCE_IN_PROGRESS: the
#: transaction and share coordinators' answers, and one more.
CONSUMER_GROUP_APPEND_ERRORS = {
    **COORDINATOR_APPEND_ERRORS,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.UNKNOWN_SERVER_ERROR,
}
#: failures after the records reached the leader's log: only the ISR did not follow in time
APPENDED_BUT_NOT_REPLICATED = frozenset({ErrorCode.REQUEST_TIMED_OUT,
                                         ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND})


class ConsumerGroupMetadataManager(GroupMetadataManager):
    """Classic and consumer groups, and their offsets, of the owned partitions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._consumer_groups: dict[str, ConsumerGroup] = {}
        #: told of each consumer group a load installs (the coordinator starts its sessions)
        self.on_consumer_group_loaded: Callable[[ConsumerGroup], None] = lambda group: None

    # -- the consumer groups map -------------------------------------------------------------

    def get_consumer_group(self, group_id: str) -> ConsumerGroup | None:
        with self._groups_lock:
            return self._consumer_groups.get(group_id)

    def add_consumer_group(self, group: ConsumerGroup) -> ConsumerGroup:
        with self._groups_lock:
            return self._consumer_groups.setdefault(group.group_id, group)

    def remove_consumer_group(self, group: ConsumerGroup) -> bool:
        with self._groups_lock:
            if self._consumer_groups.get(group.group_id) is group:
                del self._consumer_groups[group.group_id]
                return True
            return False

    def current_consumer_groups(self) -> list[ConsumerGroup]:
        with self._groups_lock:
            return list(self._consumer_groups.values())

    def replace_classic_group(self, classic: Group, group: ConsumerGroup) -> None:
        """``group`` takes the place of ``classic`` (an upgrade), with its offsets."""
        with self._groups_lock:
            if self._groups.get(classic.group_id) is classic:
                del self._groups[classic.group_id]
            group.offsets = classic.offsets
            self._consumer_groups[group.group_id] = group

    def replace_consumer_group(self, group: ConsumerGroup, classic: Group) -> None:
        """``classic`` takes the place of ``group`` (a downgrade), with its offsets."""
        with self._groups_lock:
            if self._consumer_groups.get(group.group_id) is group:
                del self._consumer_groups[group.group_id]
            classic.offsets = group.offsets
            self._groups[classic.group_id] = classic

    def group_not_exists(self, group_id: str) -> bool:
        return super().group_not_exists(group_id) and self.get_consumer_group(group_id) is None

    # -- appends -----------------------------------------------------------------------------

    def write(self, group_id: str, records: list[Record]) -> tuple[ErrorCode | None, bool]:
        """Append a consumer group's records: the error to answer with (None once written),
        and whether they are in the leader's log (they are when only the wait for the ISR
        failed: the group must then follow them, as a reloading coordinator would)."""
        if not records:
            return None, True
        try:
            self.append(self.partition_for(group_id), records)
        except AppendFailed as exc:
            logger.warning("writing %d records of consumer group %s failed: %s", len(records),
                           group_id, exc)
            return CONSUMER_GROUP_APPEND_ERRORS.get(exc.code, exc.code), \
                exc.code in APPENDED_BUT_NOT_REPLICATED
        return None, True

    # -- offsets -----------------------------------------------------------------------------

    def get_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None
                    ) -> tuple[dict[TopicPartition, OffsetAndMetadata | None], set[TopicPartition]]:
        group = self.get_consumer_group(group_id)
        if group is None:
            return super().get_offsets(group_id, partitions)
        with group.lock:
            offsets: dict[TopicPartition, OffsetAndMetadata | None] = \
                dict(group.offsets.all()) if partitions is None else {
                    tp: group.offsets.get(tp) for tp in partitions}
            return offsets, group.offsets.pending_partitions() & offsets.keys()

    def complete_transaction(self, producer_id: int, partitions: set[int],
                             committed: bool) -> int:
        completed = super().complete_transaction(producer_id, partitions, committed)
        for group in self.current_consumer_groups():
            if self.partition_for(group.group_id) in partitions:
                with group.lock:
                    completed += group.offsets.complete_txn(producer_id, committed)
        return completed

    def cleanup_expired(self) -> int:
        removed = super().cleanup_expired()
        now = self.clock_ms()
        for group in self.current_consumer_groups():
            with group.lock:
                expired = group.offsets.remove(
                    group.expired_offsets(now, self.config.retention_ms))
            removed += len(expired)
            self.delete_consumer_group_records(group, expired, only_if_empty=True)
        return removed

    def delete_consumer_group_records(self, group: ConsumerGroup,
                                      offsets: Iterable[TopicPartition] = (), *,
                                      only_if_empty: bool = False) -> bool:
        """Tombstone ``offsets`` of the group and, when it has neither members nor offsets
        left, the group itself (it is Dead from then on); whether the group was deleted."""
        with group.lock:
            records: list[Record] = [(offset_commit_key(group.group_id, tp.topic, tp.partition),
                                      None) for tp in offsets]
            delete = not group.members and not len(group.offsets) \
                and not group.offsets.has_pending_txn()
            if only_if_empty and not delete and not records:
                return False
            if delete:
                for member_id in group.target:
                    records.extend(member_tombstones(group.group_id, member_id))
                records.extend(group_tombstones(group.group_id))
            if records:
                try:
                    self.append(self.partition_for(group.group_id), records)
                except AppendFailed as exc:
                    logger.warning("could not delete consumer group %s: %s", group.group_id,
                                   exc)
                    return False
            if delete:
                group.dead = True
                self.remove_consumer_group(group)
                logger.info("consumer group %s is deleted", group.group_id)
            return delete

    # -- loading and unloading -----------------------------------------------------------------

    def _replay(self, log: Log, on_group_loaded: Callable[[Group], None]) -> Replayed:
        consumer = ConsumerGroupReplay()
        loaded = classic_loader.load_partition(log, buffer_size=self.config.load_buffer_size,
                                               stopping=lambda: self.shutting_down,
                                               other=consumer.replay)
        groups = consumer.live_groups()
        # the offsets of a consumer group were loaded into a classic group of its id
        for group_id in groups:
            loaded.groups.pop(group_id, None)
        self._install_groups(loaded, on_group_loaded)
        for group_id, group in groups.items():
            classic = self.get_group(group_id)
            if classic is not None:
                with classic.lock:
                    if not classic.is_(EMPTY) or classic.generation_id > 0:
                        logger.warning("group %s is both a classic and a consumer group in "
                                       "the log; keeping the classic one", group_id)
                        continue
                self.replace_classic_group(classic, group)
            elif self.add_consumer_group(group) is not group:
                continue
            self.on_consumer_group_loaded(group)
        return Replayed(None, f"{len(loaded.groups)} classic groups, {len(groups)} consumer "
                              f"groups, {len(loaded.offsets)} offsets", loaded.skipped_records)

    def _drop(self, partition: int | None,
              on_group_unloaded: Callable[[Group], None]) -> int:
        dropped = super()._drop(partition, on_group_unloaded)
        for group in self.current_consumer_groups():
            if partition is None or self.partition_for(group.group_id) == partition:
                with group.lock:
                    group.dead = True
                    for task in group.timers.values():
                        task.cancel()
                    group.timers.clear()
                self.remove_consumer_group(group)
                dropped += 1
        return dropped

