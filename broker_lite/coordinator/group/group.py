"""A classic consumer group: its state machine, members, generation and protocol, as data.

The states and the transitions allowed into each (Kafka's ``GroupMetadata``)::

    state                 entered from                                 what it does
    Empty                 PreparingRebalance                           no members; offsets kept
    PreparingRebalance    Empty, CompletingRebalance, Stable           waits for members to join
    CompletingRebalance   PreparingRebalance                           waits for the leader's sync
    Stable                CompletingRebalance                          assignment handed out
    Dead                  any                                          being removed

A rebalance bumps the generation when the join phase completes; the protocol chosen is, among
those every member supports, the one most members rank first (each member votes for the first
of its own protocols that all support). A member is *awaiting join* while its JoinGroup waits for
the rebalance, *awaiting sync* while its SyncGroup waits for the leader's assignment; the waits
are callables, called once with the result. Static members (``group.instance.id``) map their
instance id to their current member id. Pending members got a member id from MEMBER_ID_REQUIRED
and have not joined with it yet; pending-sync members joined the current generation but have not
sent SyncGroup yet.

Nothing here blocks, locks or keeps time (the coordinator does, holding :attr:`Group.lock`), so
the rules test as tables of cases.
"""

import enum
import logging
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode

from .consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    MalformedSubscriptionError,
    subscribed_topics,
)
from .offsets import GroupOffsets, OffsetAndMetadata
from .records import GroupRecord, MemberRecord

logger = logging.getLogger(__name__)


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD = GroupState

VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    EMPTY: frozenset({PREPARING_REBALANCE}),
    PREPARING_REBALANCE: frozenset({EMPTY, COMPLETING_REBALANCE, STABLE}),
    COMPLETING_REBALANCE: frozenset({PREPARING_REBALANCE}),
    STABLE: frozenset({COMPLETING_REBALANCE}),
    DEAD: frozenset(GroupState),
}


class IllegalStateTransition(RuntimeError):
    """A transition the state machine does not allow: a bug in the caller."""


Protocols = list[tuple[str, bytes]]  # (name, metadata) in the member's order of preference
UNKNOWN_MEMBER_ID = ""  # a JoinGroup of a new member; a commit from outside the group


@dataclass(frozen=True)
class JoinResult:
    """What a JoinGroup is answered with."""

    member_id: str
    error: int = 0
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    members: tuple[tuple[str, str | None, bytes], ...] = ()  # (id, instance id, metadata)
    skip_assignment: bool = False


@dataclass(frozen=True)
class SyncResult:
    """What a SyncGroup is answered with."""

    error: int = 0
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(frozen=True)
class MemberSummary:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupSummary:
    """What DescribeGroups shows: metadata and assignments only once the group is Stable."""

    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberSummary, ...]


@dataclass(eq=False)
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = b""
    awaiting_join: Callable[[JoinResult], None] | None = None
    awaiting_sync: Callable[[SyncResult], None] | None = None
    is_new: bool = False
    heartbeat_task: object = None  # the coordinator's timer task for this member's session

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def vote(self, candidates: set[str]) -> str:
        """The first of this member's protocols among ``candidates``."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def matches(self, protocols: Protocols) -> bool:
        return [(n, bytes(m)) for n, m in protocols] == [(n, bytes(m)) for n, m in self.protocols]

    def has_satisfied_heartbeat(self) -> bool:
        """Whether the session may stay alive without a heartbeat: a member waiting in a
        rebalance is alive, unless it is new (its JoinGroup may be abandoned)."""
        return not self.is_new and (self.is_awaiting_join or self.is_awaiting_sync)

    def summary(self, protocol: str | None) -> MemberSummary:
        metadata = self.metadata(protocol) if protocol is not None else b""
        assignment = self.assignment if protocol is not None else b""
        return MemberSummary(self.member_id, self.group_instance_id, self.client_id,
                             self.client_host, metadata, assignment)


class Group:
    """One group's membership and committed offsets; callers hold :attr:`lock`."""

    def __init__(self, group_id: str, now_ms: int, state: GroupState = EMPTY):
        self.group_id = group_id
        self.lock = threading.RLock()
        self.state = state
        self.current_state_timestamp: int | None = now_ms
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        self.pending_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        self.num_awaiting_join = 0
        self.supported_protocols: Counter[str] = Counter()
        self.offsets = GroupOffsets()
        self.new_member_added = False
        self.subscribed_topics: frozenset[str] | None = None
        self.rebalance_task: object = None  # the coordinator's pending join completion
        self.rebalance_is_initial = False  # ... of a new group: it waits out its delay
        self.sync_task: object = None  # the coordinator's pending-sync expiration

    def __repr__(self) -> str:
        return (f"Group({self.group_id!r}, {self.state.value}, generation={self.generation_id}, "
                f"members={list(self.members)})")

    # -- queries ---------------------------------------------------------------------------

    def is_(self, state: GroupState) -> bool:
        return self.state is state

    @property
    def is_dead(self) -> bool:
        return self.state is DEAD

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> Member:
        return self.members[member_id]

    @property
    def size(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def current_static_member_id(self, instance_id: str) -> str | None:
        return self.static_members.get(instance_id)

    @property
    def is_consumer_group(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join and not self.pending_members

    def not_yet_rejoined_members(self) -> list[Member]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[PREPARING_REBALANCE]

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Unknown subscriptions count as subscribed, to be safe."""
        return self.subscribed_topics is None or topic in self.subscribed_topics

    def member_error(self, member_id: str, group_instance_id: str | None) -> ErrorCode | None:
        """Why a request naming ``member_id`` (of static instance ``group_instance_id``) is not
        from a current member, or None: UNKNOWN_MEMBER_ID, or FENCED_INSTANCE_ID when the
        instance has another member id now."""
        if group_instance_id is not None:
            current = self.current_static_member_id(group_instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if current != member_id:
                logger.info("member %s of static instance %s in group %s is fenced by %s",
                            member_id, group_instance_id, self.group_id, current)
                return ErrorCode.FENCED_INSTANCE_ID
        if not self.has(member_id):
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None

    def generation_member_error(self, member_id: str, group_instance_id: str | None,
                                generation_id: int) -> ErrorCode | None:
        """Why a request (SyncGroup, Heartbeat, OffsetCommit) is not from a member of the
        current generation, or None: COORDINATOR_NOT_AVAILABLE once the group is gone
        (unloaded, deleted), ILLEGAL_GENERATION, or the errors of :meth:`member_error`."""
        if self.is_(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = self.member_error(member_id, group_instance_id)
        if error is None and generation_id != self.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        return error

    @staticmethod
    def generate_member_id(client_id: str, group_instance_id: str | None) -> str:
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-{uuid.uuid4()}"

    # -- protocols -------------------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        return {name for name, count in self.supported_protocols.items()
                if count == len(self.members)}

    def supports_protocols(self, protocol_type: str, protocols: Iterable[str]) -> bool:
        names = set(protocols)
        if self.is_(EMPTY):
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and \
            any(self.supported_protocols[name] == len(self.members) for name in names)

    def select_protocol(self) -> str:
        if not self.members:
            raise IllegalStateTransition(f"cannot select a protocol for empty group "
                                         f"{self.group_id}")
        candidates = self.candidate_protocols()
        votes = Counter(m.vote(candidates) for m in self.members.values())
        # most votes wins; a tie goes to the protocol first voted for
        return max(votes, key=lambda name: votes[name])

    def _count_protocols(self, member: Member, delta: int) -> None:
        for name in {name for name, _ in member.protocols}:
            self.supported_protocols[name] += delta
            if self.supported_protocols[name] <= 0:
                del self.supported_protocols[name]

    # -- membership ------------------------------------------------------------------------

    def add(self, member: Member, on_join: Callable[[JoinResult], None] | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise IllegalStateTransition(
                    f"static member {member.group_instance_id} is already in {self.group_id}")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._count_protocols(member, +1)
        member.awaiting_join = on_join
        if member.is_awaiting_join:
            self.num_awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._count_protocols(member, -1)
            if member.is_awaiting_join:
                self.num_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync_members.discard(member_id)
        return member

    def update_member(self, member: Member, protocols: Protocols,
                      on_join: Callable[[JoinResult], None] | None) -> None:
        self._count_protocols(member, -1)
        member.protocols = protocols
        self._count_protocols(member, +1)
        if on_join is not None and not member.is_awaiting_join:
            self.num_awaiting_join += 1
        elif on_join is None and member.is_awaiting_join:
            self.num_awaiting_join -= 1
        member.awaiting_join = on_join

    def replace_static_member(self, instance_id: str, old_member_id: str,
                              new_member_id: str) -> Member:
        """A static member rejoined with a new member id: the old id is fenced at once."""
        member = self.members.pop(old_member_id)
        fenced = ErrorCode.FENCED_INSTANCE_ID
        self.maybe_invoke_join(member, JoinResult(old_member_id, error=fenced))
        self.maybe_invoke_sync(member, SyncResult(error=fenced))
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[instance_id] = new_member_id
        return member

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick a member that did; False when none did."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].is_awaiting_join:
            return True
        joined = next((m for m in self.members.values() if m.is_awaiting_join), None)
        if joined is None:
            return False
        self.leader_id = joined.member_id
        return True

    def add_pending_member(self, member_id: str) -> None:
        if self.has(member_id):
            raise IllegalStateTransition(f"{member_id} is already a member of {self.group_id}")
        self.pending_members.add(member_id)

    def maybe_invoke_join(self, member: Member, result: JoinResult) -> None:
        if member.awaiting_join is not None:
            on_join, member.awaiting_join = member.awaiting_join, None
            self.num_awaiting_join -= 1
            on_join(result)

    def maybe_invoke_sync(self, member: Member, result: SyncResult) -> bool:
        if member.awaiting_sync is None:
            return False
        on_sync, member.awaiting_sync = member.awaiting_sync, None
        on_sync(result)
        return True

    # -- state -----------------------------------------------------------------------------

    def transition_to(self, state: GroupState, now_ms: int) -> None:
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise IllegalStateTransition(
                f"group {self.group_id} cannot go from {self.state.value} to {state.value}")
        self.state = state
        self.current_state_timestamp = now_ms

    def init_next_generation(self, now_ms: int) -> None:
        """The join phase is over: a new generation, Empty or awaiting the leader's sync."""
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(EMPTY, now_ms)
        self.pending_sync_members.clear()

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        """The consumer group's topics; None when unknown (not a consumer group, no protocol
        yet, or metadata that does not parse)."""
        if not self.is_consumer_group:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for member in self.members.values():
                topics |= subscribed_topics(member.metadata(self.protocol_name))
        except (MalformedSubscriptionError, KeyError):
            return None
        return frozenset(topics)

    def current_member_metadata(self) -> tuple[tuple[str, str | None, bytes], ...]:
        """What the leader gets in its JoinGroup response."""
        if self.state in (DEAD, PREPARING_REBALANCE) or self.protocol_name is None:
            raise IllegalStateTransition(
                f"no member metadata for group {self.group_id} in {self.state.value}")
        return tuple((m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                     for m in self.members.values())

    def join_result(self, member: Member, *, leader_id: str | None = None,
                    skip_assignment: bool = False, with_members: bool | None = None) -> JoinResult:
        """The successful JoinGroup answer of ``member`` for the current generation; the leader
        gets the members' metadata unless ``with_members`` says otherwise."""
        if with_members is None:
            with_members = self.is_leader(member.member_id)
        return JoinResult(
            member.member_id, 0, self.generation_id, self.protocol_type, self.protocol_name,
            (leader_id if leader_id is not None else self.leader_id) or "",
            self.current_member_metadata() if with_members else (), skip_assignment)

    def summary(self) -> GroupSummary:
        protocol = self.protocol_name if self.is_(STABLE) else None
        return GroupSummary(self.state.value, self.protocol_type or "", protocol or "",
                            tuple(m.summary(protocol) for m in self.members.values()))

    def to_record(self, assignment: dict[str, bytes]) -> GroupRecord:
        """The GroupMetadataValue of this generation, with ``assignment``."""
        protocol = self.protocol_name
        return GroupRecord(
            self.protocol_type or "", self.generation_id, protocol, self.leader_id,
            self.current_state_timestamp if self.current_state_timestamp is not None else -1,
            tuple(MemberRecord(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                               m.rebalance_timeout_ms, m.session_timeout_ms,
                               m.metadata(protocol) if protocol is not None else b"",
                               assignment.get(m.member_id, b""))
                  for m in self.members.values()))

    @classmethod
    def from_record(cls, group_id: str, record: GroupRecord, now_ms: int) -> "Group":
        """A group as the log left it: Stable with its members, or Empty."""
        group = cls(group_id, now_ms, STABLE if record.members else EMPTY)
        group.generation_id = record.generation
        group.protocol_type = record.protocol_type or None
        group.protocol_name = record.protocol
        group.current_state_timestamp = record.current_state_timestamp \
            if record.current_state_timestamp != -1 else None
        for m in record.members:
            group.add(Member(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                             m.rebalance_timeout_ms, m.session_timeout_ms, record.protocol_type,
                             [(record.protocol or "", m.subscription)], m.assignment))
        group.leader_id = record.leader if record.leader in group.members else \
            next(iter(group.members), None)
        group.subscribed_topics = group.compute_subscribed_topics()
        return group

    # -- offsets expiry --------------------------------------------------------------------

    def expired_offsets(self, now_ms: int, retention_ms: int) -> list[TopicPartition]:
        """The commits that have expired, by Kafka 2.1+'s rules (KIP-211):

        - a group with a protocol that is Empty: ``retention`` after it became empty (or after
          each commit, when the log did not say when);
        - a stable consumer group that knows its subscription: ``retention`` after each commit,
          but never for subscribed topics;
        - a standalone group (commits only, no protocol): ``retention`` after each commit;
        - any other group keeps its offsets.
        """
        def commit_time(value: OffsetAndMetadata) -> int:
            return value.commit_timestamp

        if self.protocol_type is not None and self.is_(EMPTY):
            became_empty = self.current_state_timestamp
            return self.offsets.expired(
                now_ms, retention_ms,
                (lambda v: became_empty) if became_empty is not None else commit_time)
        if self.is_consumer_group and self.subscribed_topics is not None and self.is_(STABLE):
            return self.offsets.expired(now_ms, retention_ms, commit_time,
                                        keep_topics=self.subscribed_topics)
        if self.protocol_type is None:
            return self.offsets.expired(now_ms, retention_ms, commit_time)
        return []


__all__ = [
    "COMPLETING_REBALANCE", "DEAD", "EMPTY", "PREPARING_REBALANCE", "STABLE",
    "VALID_PREVIOUS_STATES", "Group", "GroupState", "GroupSummary", "IllegalStateTransition",
    "JoinResult", "Member", "MemberSummary", "SyncResult",
]
