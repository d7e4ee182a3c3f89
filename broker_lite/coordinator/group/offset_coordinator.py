"""The offsets side of the group coordinator: OffsetCommit, the append of TxnOffsetCommit,
OffsetFetch, OffsetDelete, and transactions ending, as Kafka's ``GroupCoordinator`` serves them
(its ``handleCommitOffsets``, ``handleTxnCommitOffsets``, ``handleFetchOffsets``,
``handleDeleteOffsets`` and ``scheduleHandleTxnCompletion``).

Who may commit (checked under the group's lock):

=========================================  ==================================================
the commit                                 is accepted when
=========================================  ==================================================
generation -1                              the group has no members, whatever member id or
                                           instance id it names (a standalone commit, as
                                           Kafka's admin client and tools make, the
                                           ZooKeeper-era consumers that commit to Kafka with
                                           their ZooKeeper consumer id, pykafka's say, and a
                                           KIP-848 client's outside group management); a
                                           group the coordinator never knew is created for it
anything else                              from a member of the current generation; while
                                           the group completes a rebalance the member is told
                                           REBALANCE_IN_PROGRESS (it syncs first), and in
                                           Stable or PreparingRebalance the commit counts as
                                           a heartbeat of the member
=========================================  ==================================================

A commit is appended to ``__consumer_offsets`` and cached, and answered once appended; commits
made inside a transaction wait in the cache until the transaction's marker reaches the
partition (:meth:`OffsetCoordinator.on_transaction_completed`). OffsetFetch answers from the
cache, whatever the group's state: a group may use Kafka only to store offsets. The membership
protocol (:mod:`.coordinator`) and this module share the groups and their cache
(:class:`.manager.GroupMetadataManager`).
"""

import logging
from collections.abc import Callable, Iterable, Mapping

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode

from .group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    UNKNOWN_MEMBER_ID,
    Group,
    Member,
)
from .manager import GroupMetadataManager
from .offsets import OffsetAndMetadata

logger = logging.getLogger(__name__)

GroupStatus = Callable[..., ErrorCode | None]  # (group_id, *, allow_empty_id=False)


class OffsetCoordinator:
    """The committed offsets of the groups on this broker.

    Parameters
    ----------
    manager : GroupMetadataManager
        The groups of the owned ``__consumer_offsets`` partitions and their offsets cache.
    group_status : callable
        ``group_status(group_id, allow_empty_id=False) -> ErrorCode | None``: the error every
        group request gets before anything else (the coordinator is not active, the group's
        partition is loading or led elsewhere), or None.
    restart_session : callable
        ``restart_session(group, member)``: a member's commit counts as its heartbeat.
    """

    def __init__(self, manager: GroupMetadataManager, group_status: GroupStatus,
                 restart_session: Callable[[Group, Member], None]):
        self.manager = manager
        self._group_status = group_status
        self._restart_session = restart_session

    # -- OffsetCommit -----------------------------------------------------------------------

    def handle_commit_offsets(self, group_id: str, member_id: str,
                              group_instance_id: str | None, generation_id: int,
                              offsets: Mapping[TopicPartition, OffsetAndMetadata]
                              ) -> dict[TopicPartition, ErrorCode]:
        """Commit ``offsets``; the error of each partition, once written."""
        error = self._group_status(group_id, allow_empty_id=True)
        if error is not None:
            return dict.fromkeys(offsets, error)
        group = self.manager.get_group(group_id)
        if group is None:
            if generation_id >= 0:  # a member of a generation the coordinator never knew
                return dict.fromkeys(offsets, ErrorCode.ILLEGAL_GENERATION)
            group = self.manager.get_or_create_group(group_id)  # a standalone group
        with group.lock:
            error = commit_error(group, generation_id, member_id, group_instance_id)
            if error is not None:
                return dict.fromkeys(offsets, error)
            if group.is_(COMPLETING_REBALANCE):
                # a member of the new generation that has not synced yet: rejoin
                return dict.fromkeys(offsets, ErrorCode.REBALANCE_IN_PROGRESS)
            if group.state in (STABLE, PREPARING_REBALANCE):
                # commits still count during a join phase; heartbeats tell of the rebalance
                self._restart_session(group, group.get(member_id))
            return self.manager.store_offsets(group, offsets)

    # -- transactions -----------------------------------------------------------------------

    def append_transactional_offsets(self, group: Group,
                                     offsets: Mapping[TopicPartition, OffsetAndMetadata],
                                     producer_id: int, producer_epoch: int
                                     ) -> dict[TopicPartition, ErrorCode]:
        """The append path of commits made inside a transaction (the caller validated them and
        holds the group's lock); they count once the transaction's COMMIT marker is written."""
        return self.manager.store_offsets(group, offsets, producer_id=producer_id,
                                          producer_epoch=producer_epoch)

    def on_transaction_completed(self, producer_id: int, partitions: set[int],
                                 committed: bool) -> None:
        """A transaction marker of ``producer_id`` was written to ``partitions`` of
        ``__consumer_offsets``: the offsets it committed there count, or are dropped."""
        self.manager.complete_transaction(producer_id, partitions, committed)

    # -- OffsetFetch ------------------------------------------------------------------------

    def handle_fetch_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None,
                             *, require_stable: bool = False
                             ) -> tuple[ErrorCode,
                                        dict[TopicPartition, OffsetAndMetadata | ErrorCode | None]]:
        """The group's error and the committed offsets (None: no commit). Offsets are answered
        whatever the group's state. With ``require_stable`` (KIP-447), a partition whose offset
        a still-open transaction commits answers UNSTABLE_OFFSET_COMMIT instead: the caller
        retries once it ends."""
        error = self._group_status(group_id, allow_empty_id=True)
        if error is not None:
            return error, {}
        offsets, unstable = self.manager.get_offsets(
            group_id, list(partitions) if partitions is not None else None)
        if require_stable:
            offsets.update(dict.fromkeys(unstable, ErrorCode.UNSTABLE_OFFSET_COMMIT))
        return ErrorCode.NONE, offsets

    # -- OffsetDelete -----------------------------------------------------------------------

    def handle_delete_offsets(self, group_id: str, partitions: Iterable[TopicPartition]
                              ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """Delete the group's offsets of ``partitions``: any of an Empty group; of a consumer
        group with members, those of topics it is not subscribed to
        (GROUP_SUBSCRIBED_TO_TOPIC for the others); none of another group with members
        (NON_EMPTY_GROUP)."""
        partitions = list(partitions)
        error = self._group_status(group_id)
        if error is not None:
            return error, {}
        group = self.manager.get_group(group_id)
        not_found = ErrorCode.GROUP_ID_NOT_FOUND if self.manager.group_not_exists(group_id) \
            else ErrorCode.NOT_COORDINATOR
        if group is None:
            return not_found, {}
        errors: dict[TopicPartition, ErrorCode] = {}
        with group.lock:
            if group.is_(DEAD):
                return not_found, {}
            if group.is_(EMPTY):
                eligible = partitions
            elif group.is_consumer_group:
                eligible = [tp for tp in partitions if not group.is_subscribed_to_topic(tp.topic)]
                errors = {tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC for tp in partitions
                          if group.is_subscribed_to_topic(tp.topic)}
            else:
                return ErrorCode.NON_EMPTY_GROUP, {}
        if eligible:
            removed = self.manager.cleanup_group_metadata(
                [group], lambda g: g.offsets.remove(eligible))
            logger.info("deleted %d offsets of group %s", removed, group_id)
            errors.update(dict.fromkeys(eligible, ErrorCode.NONE))
        return ErrorCode.NONE, errors


def commit_error(group: Group, generation_id: int, member_id: str,
                 group_instance_id: str | None) -> ErrorCode | None:
    """Why ``group`` refuses an OffsetCommit (see the table above), or None.

    Kafka's ``GroupCoordinator.validateOffsetCommit`` as of Kafka 3.3 (KAFKA-14201): a
    generation -1 commit to an empty group is accepted before the member is looked at, as
    Kafka 2.x's ``doCommitOffsets`` accepted it; only Kafka 3.0-3.2 checked the member id of such
    a commit, and refused a ZooKeeper consumer id with UNKNOWN_MEMBER_ID.
    """
    if group.is_(DEAD):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if generation_id < 0 and group.is_(EMPTY):
        return None  # the group only stores its offsets here
    if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
        return group.generation_member_error(member_id, group_instance_id, generation_id)
    return ErrorCode.UNKNOWN_MEMBER_ID  # only members commit for a group that has members
