"""Offsets committed inside a transaction (TxnOffsetCommit), as Kafka's
``GroupCoordinator.handleTxnCommitOffsets`` takes them: the group's checks, then the
transactional append. The offsets become the group's committed offsets when the transaction's
COMMIT marker reaches ``__consumer_offsets``.

As in Kafka, a commit without member id and generation (before TxnOffsetCommit v3) is accepted
whatever the group's state; one naming a member is checked like OffsetCommit: a static
member fenced by a newer instance is FENCED_INSTANCE_ID, an unknown member UNKNOWN_MEMBER_ID, a
generation other than the group's ILLEGAL_GENERATION.
"""

from collections.abc import Mapping

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode

from .coordinator import UNKNOWN_MEMBER_ID, GroupCoordinator
from .group import DEAD, Group
from .offsets import OffsetAndMetadata


def handle_txn_commit_offsets(coordinator: GroupCoordinator, group_id: str, producer_id: int,
                              producer_epoch: int, member_id: str,
                              group_instance_id: str | None, generation_id: int,
                              offsets: Mapping[TopicPartition, OffsetAndMetadata]
                              ) -> dict[TopicPartition, ErrorCode]:
    """The error of each partition of ``offsets``, once appended (or refused)."""
    error = coordinator.validate_group_status(group_id)
    if error is not None:
        return dict.fromkeys(offsets, error)
    routed = coordinator.commit_transactional_offsets_elsewhere(
        group_id, producer_id, producer_epoch, member_id, generation_id, offsets)
    if routed is not None:  # another kind of group (a consumer group) took them
        return routed
    group = coordinator.manager.get_or_create_group(group_id)
    with group.lock:
        error = _member_error(group, member_id, group_instance_id, generation_id)
        if error is not None:
            return dict.fromkeys(offsets, error)
        return coordinator.append_transactional_offsets(group, offsets, producer_id,
                                                        producer_epoch)


def _member_error(group: Group, member_id: str, group_instance_id: str | None,
                  generation_id: int) -> ErrorCode | None:
    if group.is_(DEAD):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if group_instance_id is not None:
        current = group.current_static_member_id(group_instance_id)
        if current is not None and current != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
    if member_id != UNKNOWN_MEMBER_ID and not group.has(member_id):
        return ErrorCode.UNKNOWN_MEMBER_ID
    if generation_id >= 0 and generation_id != group.generation_id:
        return ErrorCode.ILLEGAL_GENERATION
    return None
