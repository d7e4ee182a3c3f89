"""A consumer group (KIP-848): its members, epochs, target assignment and who owns which
partition, rebuilt by replaying its records (:mod:`.records`).

Every change is first written as records to ``__consumer_offsets`` and then replayed into the
group (:meth:`ConsumerGroup.replay`), the same way a loading coordinator rebuilds it, so what
is in memory is always what the log holds:

- the *group epoch* counts changes of the group's subscriptions and membership;
- the *assignment epoch* is the group epoch the target assignment was computed for: while it
  is behind, the group is Assigning;
- each member has a *member epoch*, the assignment epoch it has reconciled to, and its current
  assignment (:class:`.reconciliation.MemberAssignment`); while some member lags, the group is
  Reconciling; then Stable. A group without members is Empty.

The group's state names are Kafka's (``ConsumerGroupState``): Empty, Assigning, Reconciling,
Stable, and Dead once it is deleted or unloaded.

Nothing here blocks or keeps time: the coordinator holds :attr:`ConsumerGroup.lock`.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from broker_lite.common.vocabulary import TopicPartition

from ..group.offsets import GroupOffsets
from .reconciliation import MemberAssignment
from .records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    PARTITION_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    Assignment,
    ConsumerGroupKey,
    CurrentAssignment,
    MemberMetadata,
    TopicMetadata,
)

EMPTY, ASSIGNING, RECONCILING, STABLE, DEAD = "Empty", "Assigning", "Reconciling", "Stable", \
    "Dead"
CONSUMER_GROUP_TYPE = "consumer"
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


@dataclass(frozen=True)
class ConsumerMember:
    """One member: what it subscribes with (:class:`.records.MemberMetadata`) and where it is in
    reconciliation."""

    member_id: str
    metadata: MemberMetadata
    assignment: MemberAssignment = field(default_factory=MemberAssignment)

    @property
    def epoch(self) -> int:
        return self.assignment.epoch

    @property
    def instance_id(self) -> str | None:
        return self.metadata.instance_id

    @property
    def uses_classic_protocol(self) -> bool:
        return self.metadata.classic is not None

    def with_assignment(self, assignment: MemberAssignment) -> ConsumerMember:
        return replace(self, assignment=assignment)


def new_member_metadata(client_id: str = "", client_host: str = "") -> MemberMetadata:
    return MemberMetadata(None, None, client_id, client_host, (), None, -1, None)


class ConsumerGroup:
    """One consumer group's state and committed offsets; callers hold :attr:`lock`."""

    group_type = CONSUMER_GROUP_TYPE

    def __init__(self, group_id: str, offsets: GroupOffsets | None = None):
        self.group_id = group_id
        self.lock = threading.RLock()
        self.offsets = offsets if offsets is not None else GroupOffsets()
        self.epoch = 0
        self.assignment_epoch = 0
        self.subscription_metadata: dict[str, TopicMetadata] = {}
        self.members: dict[str, ConsumerMember] = {}
        self.target: dict[str, Assignment] = {}
        self.partition_epochs: dict[tuple[uuid.UUID, int], tuple[str, int]] = {}
        self.dead = False
        self.exists = False  # a record of the group was written (or replayed)
        self.timers: dict[tuple[str, str], Any] = {}  # (kind, member id) -> timer task

    def __repr__(self) -> str:
        return (f"ConsumerGroup({self.group_id!r}, {self.state}, epoch={self.epoch}, "
                f"members={list(self.members)})")

    # -- queries ---------------------------------------------------------------------------

    @property
    def state(self) -> str:
        if self.dead:
            return DEAD
        if not self.members:
            return EMPTY
        if self.epoch > self.assignment_epoch:
            return ASSIGNING
        if any(not m.assignment.is_reconciled_to(self.assignment_epoch)
               for m in self.members.values()):
            return RECONCILING
        return STABLE

    @property
    def is_dead(self) -> bool:
        return self.dead

    @property
    def size(self) -> int:
        return len(self.members)

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        for member in self.members.values():
            if member.instance_id == instance_id:
                return member
        return None

    def partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        """The epoch of the member owning the partition (assigned or pending revocation), -1
        when no member owns it."""
        owner = self.partition_epochs.get((topic_id, partition))
        return -1 if owner is None else owner[1]

    def partition_epoch_except(self, member_id: str) -> Callable[[uuid.UUID, int], int]:
        """:meth:`partition_epoch` with ``member_id``'s own partitions counted as free."""
        def epoch(topic_id: uuid.UUID, partition: int) -> int:
            owner = self.partition_epochs.get((topic_id, partition))
            return -1 if owner is None or owner[0] == member_id else owner[1]
        return epoch

    def subscribed_topic_names(self) -> set[str]:
        return {n for m in self.members.values() for n in m.metadata.subscribed_topic_names}

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscription_metadata

    def expired_offsets(self, now_ms: int, retention_ms: int) -> list[TopicPartition]:
        """The commits past ``offsets.retention.minutes``, of an empty group only (Kafka keeps
        a consumer group's offsets while it has members)."""
        if self.members:
            return []
        return self.offsets.expired(now_ms, retention_ms, lambda v: v.commit_timestamp)

    def member_partitions(self) -> Iterator[tuple[str, uuid.UUID, int]]:
        for (topic_id, p), (member_id, _) in self.partition_epochs.items():
            yield member_id, topic_id, p

    # -- replaying records -----------------------------------------------------------------

    def replay(self, key: ConsumerGroupKey, value: object) -> None:
        """Apply one record (a tombstone's ``value`` is None)."""
        self.exists = True
        record_type, member_id = key.record_type, key.member_id
        if record_type == GROUP_METADATA:
            if value is None:
                self.dead = True
            else:
                assert isinstance(value, int)
                self.epoch, self.dead = value, False
        elif record_type == PARTITION_METADATA:
            self.subscription_metadata = dict(value) if isinstance(value, dict) else {}
        elif record_type == TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = value if isinstance(value, int) else 0
        elif member_id is None:
            return
        elif record_type == MEMBER_METADATA:
            if value is None:
                self._remove_member(member_id)
            else:
                assert isinstance(value, MemberMetadata)
                member = self.members.get(member_id)
                self.members[member_id] = ConsumerMember(member_id, value) if member is None \
                    else replace(member, metadata=value)
        elif record_type == TARGET_ASSIGNMENT_MEMBER:
            if value is None:
                self.target.pop(member_id, None)
            else:
                assert isinstance(value, dict)
                self.target[member_id] = value
        elif record_type == CURRENT_MEMBER_ASSIGNMENT:
            self._set_current(member_id, value if isinstance(value, CurrentAssignment) else None)

    def _set_current(self, member_id: str, current: CurrentAssignment | None) -> None:
        self._release(member_id)
        member = self.members.get(member_id)
        if member is None:
            if current is None:
                return
            member = ConsumerMember(member_id, new_member_metadata())
        assignment = MemberAssignment() if current is None else MemberAssignment(
            current.member_epoch, current.previous_member_epoch, current.state,
            dict(current.assigned), dict(current.pending_revocation))
        self.members[member_id] = member.with_assignment(assignment)
        for owned in (assignment.assigned, assignment.pending_revocation):
            for topic_id, partitions in owned.items():
                for p in partitions:
                    self.partition_epochs[(topic_id, p)] = (member_id, assignment.epoch)

    def _release(self, member_id: str) -> None:
        for tp in [tp for tp, (owner, _) in self.partition_epochs.items() if owner == member_id]:
            del self.partition_epochs[tp]

    def _remove_member(self, member_id: str) -> None:
        self._release(member_id)
        self.members.pop(member_id, None)
