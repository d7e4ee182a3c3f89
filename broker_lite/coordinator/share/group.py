"""A share group's membership and assignment (KIP-932, "Share group membership"; Kafka's
``ShareGroup`` and the group coordinator's share-group heartbeat), as pure logic.

Members join with a ShareGroupHeartbeat of epoch 0 and get a member id, leave with epoch -1,
and otherwise heartbeat with the epoch they were given. The coordinator decides the assignment:
there is no revocation to wait for, since a partition may be shared by several members. Every
change of membership or subscriptions bumps the *group epoch* and computes a new target
assignment at once (the *assignment epoch* catches up); each member then moves to the group
epoch with its new partitions in the next answer it gets.

==============================  ===========================================================
heartbeat                       answer
==============================  ===========================================================
epoch 0, no member id or new    a member (id generated unless given), epoch = group epoch + 1
                                GROUP_MAX_SIZE_REACHED when the group is full
epoch -1                        the member leaves; epoch -1 in the answer
epoch == member's               the member's epoch and, when changed, its assignment
epoch == member's previous      as above (the answer that bumped it was lost)
other epoch                     FENCED_MEMBER_EPOCH
unknown member id               UNKNOWN_MEMBER_ID
==============================  ===========================================================

The assignor is Kafka's ``SimpleAssignor`` idea for share groups: every subscribed partition
goes to at least one member subscribed to its topic, and when a topic has fewer partitions than
members, its partitions are shared so that every member gets one (members sorted by id, each
``i``-th member gets partition ``i % partitions``); otherwise partitions are dealt round-robin.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from broker_lite.protocol import ErrorCode

ASSIGNOR_NAME = "simple"


class ShareGroupState(enum.Enum):
    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass
class ShareMember:
    member_id: str
    epoch: int = 0
    previous_epoch: int = -1
    client_id: str = ""
    client_host: str = ""
    rack_id: str | None = None
    subscribed: tuple[str, ...] = ()
    assignment: dict[uuid.UUID, tuple[int, ...]] = field(default_factory=dict)
    sent_assignment: dict[uuid.UUID, tuple[int, ...]] | None = None  # last one answered


@dataclass(frozen=True)
class HeartbeatResult:
    error: ErrorCode
    member_id: str | None = None
    epoch: int = -1
    assignment: dict[uuid.UUID, tuple[int, ...]] | None = None  # None: not changed
    message: str | None = None


def assign(members: Mapping[str, Iterable[str]],
           partitions: Mapping[str, tuple[uuid.UUID, int]]) -> dict[str, dict[uuid.UUID,
                                                                              tuple[int, ...]]]:
    """The target assignment: member id -> topic id -> partitions, for ``members`` (member id
    -> subscribed topic names) and ``partitions`` (topic name -> (topic id, partition count))
    of the topics that exist.

    >>> t = uuid.UUID(int=7)
    >>> shared = assign({"a": ["x"], "b": ["x"]}, {"x": (t, 1)})
    >>> shared["a"][t], shared["b"][t]
    ((0,), (0,))
    >>> dealt = assign({"a": ["x"], "b": ["x"]}, {"x": (t, 3)})
    >>> dealt["a"][t], dealt["b"][t]
    ((0, 2), (1,))
    """
    result: dict[str, dict[uuid.UUID, tuple[int, ...]]] = {m: {} for m in members}
    for topic, (topic_id, count) in sorted(partitions.items()):
        subscribers = sorted(m for m, topics in members.items() if topic in set(topics))
        if not subscribers or count <= 0:
            continue
        owned: dict[str, list[int]] = {m: [] for m in subscribers}
        if count < len(subscribers):
            for i, member in enumerate(subscribers):
                owned[member].append(i % count)
        else:
            for p in range(count):
                owned[subscribers[p % len(subscribers)]].append(p)
        for member, assigned in owned.items():
            if assigned:
                result[member][topic_id] = tuple(sorted(assigned))
    return result


class ShareGroup:
    """The members of one share group, its epochs and its target assignment.

    Parameters
    ----------
    group_id : str
    max_size : int
        ``group.share.max.size``.
    topics : callable
        ``topics(names) -> {name: (topic id, partition count)}`` of those that exist.
    """

    def __init__(self, group_id: str, max_size: int,
                 topics: Callable[[Iterable[str]], Mapping[str, tuple[uuid.UUID, int]]]):
        self.group_id = group_id
        self.max_size = max_size
        self.topics = topics
        self.members: dict[str, ShareMember] = {}
        self.group_epoch = 0
        self.assignment_epoch = 0

    @property
    def state(self) -> ShareGroupState:
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed}

    def heartbeat(self, member_id: str, epoch: int, subscribed: list[str] | None, *,
                  rack_id: str | None = None, client_id: str = "",
                  client_host: str = "") -> HeartbeatResult:
        """One ShareGroupHeartbeat (see the table in the module docstring)."""
        if epoch == -1:
            if self.members.pop(member_id, None) is not None:
                self._bump()
            return HeartbeatResult(ErrorCode.NONE, member_id, -1)
        member = self.members.get(member_id) if member_id else None
        if epoch == 0:
            if member is None:
                if len(self.members) >= self.max_size:
                    return HeartbeatResult(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                           message=f"The share group has reached its maximum "
                                                   f"size of {self.max_size} members.")
                if subscribed is None:
                    return HeartbeatResult(ErrorCode.INVALID_REQUEST,
                                           message="SubscribedTopicNames must be set in the "
                                                   "first request.")
                member = ShareMember(member_id or str(uuid.uuid4()), client_id=client_id,
                                     client_host=client_host, rack_id=rack_id)
                self.members[member.member_id] = member
            member.subscribed = tuple(subscribed if subscribed is not None else
                                      member.subscribed)
            member.sent_assignment = None
            self._bump()
            return self._answer(member)
        if member is None:
            return HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID,
                                   message=f"Member {member_id} is not a member of share "
                                           f"group {self.group_id}.")
        if epoch not in (member.epoch, member.previous_epoch):
            return HeartbeatResult(ErrorCode.FENCED_MEMBER_EPOCH,
                                   message=f"The share group member has epoch {member.epoch}, "
                                           f"not {epoch}.")
        if epoch == member.previous_epoch and epoch != member.epoch:
            member.sent_assignment = None  # the answer that moved it on was lost
        if rack_id is not None:
            member.rack_id = rack_id
        if subscribed is not None and tuple(subscribed) != member.subscribed:
            member.subscribed = tuple(subscribed)
            self._bump()
        return self._answer(member)

    def remove(self, member_id: str) -> bool:
        """Remove a member whose session expired; whether it was there."""
        if self.members.pop(member_id, None) is None:
            return False
        self._bump()
        return True

    def refresh(self) -> bool:
        """Compute the assignment again (topics created, grown or deleted); whether it
        changed."""
        before = {m: dict(member.assignment) for m, member in self.members.items()}
        self._assign()
        if before != {m: member.assignment for m, member in self.members.items()}:
            self.group_epoch += 1
            self.assignment_epoch = self.group_epoch
            return True
        return False

    def _bump(self) -> None:
        self.group_epoch += 1
        self._assign()
        self.assignment_epoch = self.group_epoch

    def _assign(self) -> None:
        partitions = self.topics(self.subscribed_topics())
        target = assign({m: member.subscribed for m, member in self.members.items()},
                        partitions)
        for member_id, member in self.members.items():
            member.assignment = target.get(member_id, {})

    def _answer(self, member: ShareMember) -> HeartbeatResult:
        if member.epoch != self.assignment_epoch:
            member.previous_epoch, member.epoch = member.epoch, self.assignment_epoch
        changed = member.sent_assignment != member.assignment
        if changed:
            member.sent_assignment = dict(member.assignment)
        return HeartbeatResult(ErrorCode.NONE, member.member_id, member.epoch,
                               dict(member.assignment) if changed else None)
