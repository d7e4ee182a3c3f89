"""ConsumerGroupHeartbeat (KIP-848) as a pure function: a group and a request in, the response
and the records to write out (Kafka's ``GroupMetadataManager.consumerGroupHeartbeat``).

A member joins with epoch 0 (its full subscription, no owned partitions), then heartbeats with
its current epoch every ``group.consumer.heartbeat.interval.ms``; fields that did not change are
sent as null. Each heartbeat:

1. checks the request (:func:`request_error`: INVALID_REQUEST, UNSUPPORTED_ASSIGNOR,
   INVALID_REGULAR_EXPRESSION) and the member's epoch: a known member sending an epoch ahead of
   the coordinator's, or behind it other than by the one bump whose answer may have been lost,
   is FENCED_MEMBER_EPOCH; an unknown member UNKNOWN_MEMBER_ID; a new member of a full group
   GROUP_MAX_SIZE_REACHED; a static member whose instance id another live member holds
   UNRELEASED_INSTANCE_ID;
2. updates the member's subscription: a new member, a changed subscription or assignor, or a
   change of the subscribed topics (the subscription metadata) bumps the group epoch;
3. computes a new target assignment when the group epoch is ahead of the assignment epoch;
4. moves the member one step towards its target (:mod:`.reconciliation`);
5. answers with the member's epoch, the heartbeat interval, and its assignment when it joined,
   sent a full request, or its assignment changed.

Epoch -1 leaves the group (the member's records are removed and the group epoch bumped); -2 is
a static member leaving for a while: it keeps its partitions, at epoch -2, until it comes back
with its instance id or its session times out.

Nothing is changed here: the coordinator writes :attr:`HeartbeatResult.records` to
``__consumer_offsets`` and replays them into the group (:meth:`.group.ConsumerGroup.replay`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

from broker_lite.protocol import ErrorCode

from .config import ConsumerGroupConfig
from .group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    new_member_metadata,
)
from .reconciliation import UNREVOKED_PARTITIONS, MemberAssignment, reconcile
from .records import (
    Assignment,
    ClassicProtocols,
    CurrentAssignment,
    MemberMetadata,
    Record,
    current_assignment_record,
    group_metadata_record,
    member_metadata_record,
    member_tombstones,
    parse_key,
    partition_metadata_record,
)
from .regex import InvalidRegularExpression, compile_subscription
from .subscriptions import TopicsImage, subscribed_names, subscription_metadata
from .target_assignment import compute_target, group_assignor

T = TypeVar("T")

#: The rebalance timeout of a member that joins without one: the consumer's default
#: ``max.poll.interval.ms``. Kafka refuses such a join (INVALID_REQUEST); librdkafka sends one
#: when it rejoins right after leaving, a race Kafka's own tests of librdkafka do not meet.
DEFAULT_REBALANCE_TIMEOUT_MS = 300_000


@dataclass(frozen=True)
class HeartbeatRequest:
    """A ConsumerGroupHeartbeat request, as decoded (None: unchanged since the last one)."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    client_id: str = ""
    client_host: str = ""
    version: int = 1
    #: a member speaking the classic protocol inside a consumer group (its JoinGroup)
    classic: ClassicProtocols | None = None


@dataclass
class HeartbeatResult:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    assignment: Assignment | None = None
    records: list[Record] = field(default_factory=list)
    #: the member whose session (re)starts, and whether it now waits on a revocation
    #: (its rebalance timeout runs) or not
    session_member: str | None = None
    revoking: bool = False
    left: bool = False  # the member left the group, or was removed


class HeartbeatError(Exception):
    def __init__(self, error: ErrorCode, message: str):
        super().__init__(message)
        self.error = error
        self.message = message


def request_error(request: HeartbeatRequest, config: ConsumerGroupConfig
                  ) -> tuple[ErrorCode, str] | None:
    """Why the request itself is refused (Kafka's
    ``throwIfConsumerGroupHeartbeatRequestIsInvalid``), or None."""
    invalid = ErrorCode.INVALID_REQUEST
    if not request.group_id:
        return invalid, "GroupId can't be empty."
    if request.instance_id == "":
        return invalid, "InstanceId can't be empty."
    if request.rack_id == "":
        return invalid, "RackId can't be empty."
    epoch = request.member_epoch
    if request.version >= 1 and not request.member_id:
        return invalid, "MemberId can't be empty."
    if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
        if not request.member_id:
            return invalid, "MemberId can't be empty."
    elif epoch == 0:
        if request.owned is not None and any(request.owned.values()):  # null: owns nothing
            return invalid, "TopicPartitions must be empty when (re-)joining."
        # an empty list of names (or an empty regex) joins without topics, as in Kafka
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            return invalid, "Either SubscribedTopicNames or SubscribedTopicRegex must be " \
                            "non-null when (re-)joining."
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if not request.member_id:
            return invalid, "MemberId can't be empty."
        if request.instance_id is None:
            return invalid, "InstanceId can't be null."
    else:
        return invalid, f"MemberEpoch is invalid: {epoch}."
    if request.server_assignor is not None and request.server_assignor not in config.assignors:
        return ErrorCode.UNSUPPORTED_ASSIGNOR, (
            f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: "
            f"{', '.join(config.assignors)}.")
    if request.subscribed_topic_regex:  # an empty one stands for none
        try:
            compile_subscription(request.subscribed_topic_regex)
        except InvalidRegularExpression as exc:
            return ErrorCode.INVALID_REGULAR_EXPRESSION, str(exc)
    return None


def _is_subset(owned: Assignment | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    return all(ps <= assigned.get(t, frozenset()) for t, ps in owned.items())


def _epoch_error(member: ConsumerMember, received: int, owned: Assignment | None) -> str | None:
    current = member.assignment
    if received > current.epoch:
        return (f"The consumer group member has a greater member epoch ({received}) than the "
                f"one known by the group coordinator ({current.epoch}). The member must "
                f"abandon all its partitions and rejoin.")
    if received < current.epoch and (received != current.previous_epoch
                                     or not _is_subset(owned, current.assigned)):
        return (f"The consumer group member has a smaller member epoch ({received}) than the "
                f"one known by the group coordinator ({current.epoch}). The member must "
                f"abandon all its partitions and rejoin.")
    return None


def heartbeat(group: ConsumerGroup, request: HeartbeatRequest, config: ConsumerGroupConfig,
              image: TopicsImage) -> HeartbeatResult:
    """The answer to ``request`` and the records to write; never raises for bad input."""
    refused = request_error(request, config)
    if refused is not None:
        return HeartbeatResult(refused[0], refused[1], request.member_id or None,
                               request.member_epoch)
    try:
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return _leave(group, request, image)
        return _heartbeat(group, request, config, image)
    except HeartbeatError as exc:
        return HeartbeatResult(exc.error, exc.message, request.member_id or None,
                               request.member_epoch)


def _member(group: ConsumerGroup, request: HeartbeatRequest, config: ConsumerGroupConfig,
            records: list[Record]) -> tuple[ConsumerMember, bool]:
    """The member the request is from (a new one for epoch 0), and whether it is new."""
    member_id = request.member_id or str(uuid.uuid4())
    existing = group.members.get(member_id)
    joining = request.member_epoch == 0
    if not joining:
        if existing is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group "
                                 f"{group.group_id}.")
        why = _epoch_error(existing, request.member_epoch, request.owned)
        if why is not None:
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH, why)
        return existing, False
    if existing is None and group.size >= config.max_size:
        raise HeartbeatError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                             f"The consumer group has reached its maximum capacity of "
                             f"{config.max_size} members.")
    metadata = existing.metadata if existing is not None else \
        new_member_metadata(request.client_id, request.client_host)
    if request.instance_id is not None:
        static = group.static_member(request.instance_id)
        if static is not None and static.member_id != member_id:
            if static.epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise HeartbeatError(ErrorCode.UNRELEASED_INSTANCE_ID,
                                     f"Static member {static.member_id} with instance id "
                                     f"{request.instance_id} is not released yet.")
            records.extend(member_tombstones(group.group_id, static.member_id))
    # a (re)joining member owns nothing: it starts over at epoch 0
    return ConsumerMember(member_id, metadata), existing is None


def _updated(metadata: MemberMetadata, request: HeartbeatRequest) -> MemberMetadata:
    def given(value: T | None, current: T) -> T:
        return current if value is None else value

    return replace(
        metadata,
        instance_id=given(request.instance_id, metadata.instance_id),
        rack_id=given(request.rack_id, metadata.rack_id),
        rebalance_timeout_ms=request.rebalance_timeout_ms
        if request.rebalance_timeout_ms != -1 else metadata.rebalance_timeout_ms
        if metadata.rebalance_timeout_ms != -1 else DEFAULT_REBALANCE_TIMEOUT_MS,
        server_assignor=given(request.server_assignor, metadata.server_assignor),
        subscribed_topic_names=given(request.subscribed_topic_names,
                                     metadata.subscribed_topic_names),
        subscribed_topic_regex=(request.subscribed_topic_regex or None)
        if request.subscribed_topic_regex is not None else metadata.subscribed_topic_regex,
        client_id=request.client_id, client_host=request.client_host, classic=request.classic)


def _subscription_changed(old: MemberMetadata, new: MemberMetadata) -> bool:
    return (set(old.subscribed_topic_names) != set(new.subscribed_topic_names)
            or old.subscribed_topic_regex != new.subscribed_topic_regex
            or old.server_assignor != new.server_assignor)


def _heartbeat(group: ConsumerGroup, request: HeartbeatRequest, config: ConsumerGroupConfig,
               image: TopicsImage) -> HeartbeatResult:
    group_id = group.group_id
    records: list[Record] = []
    member, is_new = _member(group, request, config, records)
    rejoining = not is_new and request.member_epoch == 0
    metadata = _updated(member.metadata, request)
    bump = is_new or _subscription_changed(member.metadata, metadata)
    if is_new or metadata != member.metadata:
        records.append(member_metadata_record(group_id, member.member_id, metadata))
    removed = _removed(records)
    members = {m_id: m.metadata for m_id, m in group.members.items() if m_id not in removed}
    members[member.member_id] = metadata

    # 2. the group's subscriptions, and its epoch
    # a pattern new to the group is resolved from the next heartbeat on, as Kafka resolves it
    # in the background
    resolved = {regex for m in group.members.values()
                if (regex := m.metadata.subscribed_topic_regex) is not None}
    metadata_now = subscription_metadata(
        subscribed_names(members.values(), image, resolved), image)
    epoch = group.epoch
    if metadata_now != group.subscription_metadata:
        bump = True
        records.append(partition_metadata_record(group_id, metadata_now))
    if bump or not group.exists:
        epoch += 1
        records.append(group_metadata_record(group_id, epoch))

    # 3. the target assignment
    if epoch > group.assignment_epoch:
        target, target_records = compute_target(
            group_id, epoch, members, group.target, metadata_now,
            group_assignor(members, config.assignors))
        records.extend(target_records)
        member_target = target.get(member.member_id, {})
        target_epoch = epoch
    else:
        member_target = group.target.get(member.member_id, {})
        target_epoch = group.assignment_epoch

    # 4. one step of reconciliation
    before = member.assignment
    partition_epoch = group.partition_epoch_except(member.member_id) if rejoining \
        else group.partition_epoch
    after = before if before.is_reconciled_to(target_epoch) else reconcile(
        before, target_epoch, member_target, partition_epoch, request.owned)
    if after != before or is_new or rejoining:
        records.append(current_assignment_record(group_id, member.member_id, CurrentAssignment(
            after.epoch, after.previous_epoch, after.state, after.assigned,
            after.pending_revocation)))

    full_request = request.member_epoch == 0 or (
        request.rebalance_timeout_ms != -1 and request.owned is not None
        and (request.subscribed_topic_names is not None
             or request.subscribed_topic_regex is not None))
    send_assignment = full_request or dict(after.assigned) != dict(before.assigned)
    return HeartbeatResult(
        member_id=member.member_id, member_epoch=after.epoch,
        assignment=dict(after.assigned) if send_assignment else None, records=records,
        session_member=member.member_id, revoking=after.state == UNREVOKED_PARTITIONS)


def _removed(records: list[Record]) -> set[str]:
    """The members that ``records`` remove (a static member replaced)."""
    return {k.member_id for k in (parse_key(key) for key, value in records if value is None)
            if k.member_id is not None}


def remove_member(group: ConsumerGroup, member_id: str, image: TopicsImage) -> list[Record]:
    """The records removing ``member_id`` from the group (it left, or it was fenced): its
    tombstones, the subscription metadata without it, and a new group epoch."""
    records = member_tombstones(group.group_id, member_id)
    members = [m.metadata for m_id, m in group.members.items() if m_id != member_id]
    metadata_now = subscription_metadata(subscribed_names(members, image), image)
    if metadata_now != group.subscription_metadata:
        records.append(partition_metadata_record(group.group_id, metadata_now))
    records.append(group_metadata_record(group.group_id, group.epoch + 1))
    return records


def _leave(group: ConsumerGroup, request: HeartbeatRequest, image: TopicsImage
           ) -> HeartbeatResult:
    if request.instance_id is None:
        member = group.members.get(request.member_id)
        if member is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {request.member_id} is not a member of group "
                                 f"{group.group_id}.")
    else:
        member = group.static_member(request.instance_id)
        if member is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Instance id {request.instance_id} is unknown.")
        if member.member_id != request.member_id:
            raise HeartbeatError(ErrorCode.FENCED_INSTANCE_ID,
                                 f"Static member {request.member_id} with instance id "
                                 f"{request.instance_id} was fenced by {member.member_id}.")
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            leaving = replace(member.assignment, epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                              pending_revocation={})
            return HeartbeatResult(
                member_id=member.member_id, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                records=[current_assignment_record(group.group_id, member.member_id,
                                                   _current(leaving))])
    return HeartbeatResult(member_id=member.member_id, member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                           records=remove_member(group, member.member_id, image), left=True)


def _current(assignment: MemberAssignment) -> CurrentAssignment:
    return CurrentAssignment(assignment.epoch, assignment.previous_epoch, assignment.state,
                             assignment.assigned, assignment.pending_revocation)


def assignment_by_topic(assignment: Mapping[uuid.UUID, frozenset[int]]
                        ) -> list[tuple[uuid.UUID, list[int]]]:
    return [(t, sorted(ps)) for t, ps in sorted(assignment.items()) if ps]
