"""The group coordinator serving both group protocols: the classic one
(:class:`..group.coordinator.GroupCoordinator`) and KIP-848's consumer groups
(ConsumerGroupHeartbeat, ConsumerGroupDescribe), as Kafka 4's ``GroupCoordinatorService`` does.

Each heartbeat is computed by :func:`.heartbeat.heartbeat` under the group's lock, its records
appended to ``__consumer_offsets`` and, once written, replayed into the group; only then is it
answered, so a restarted or newly elected coordinator rebuilds exactly what members were told.
The coordinator keeps two timers per member: its session (``group.consumer.session.timeout.ms``,
restarted by each heartbeat: a member silent that long is fenced, its partitions given to the
others) and, while it must revoke partitions, its rebalance timeout (the client's
``max.poll.interval.ms``: a member that does not revoke in time is fenced).

Offsets of a consumer group are committed by its members with their member id and epoch
(OffsetCommit v9): an unknown member is UNKNOWN_MEMBER_ID, another epoch STALE_MEMBER_EPOCH
(ILLEGAL_GENERATION for members still speaking the classic protocol); OffsetFetch v9 checks
them likewise when given. A commit without member (epoch -1) is accepted only while the group
has no members, as Kafka's admin tools make them.

A group id is one kind of group at a time. An empty classic group (one that only stored
offsets, say) becomes a consumer group when a consumer-protocol member joins it; a classic
group with members is upgraded online as ``group.consumer.migration.policy`` allows
(:mod:`.migration`), and otherwise the member is told GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode

from ..group.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    MalformedSubscriptionError,
    assignment_bytes,
    parse_subscription,
    subscription_version,
)
from ..group.coordinator import (
    GroupCoordinator,
    GroupOverview,
    JoinCallback,
    LeavingMember,
    SyncCallback,
)
from ..group.group import DEAD as CLASSIC_DEAD
from ..group.group import EMPTY as CLASSIC_EMPTY
from ..group.group import UNKNOWN_MEMBER_ID, Group, JoinResult, Protocols, SyncResult
from ..group.offsets import OffsetAndMetadata
from ..group.records import group_metadata_key
from .config import ConsumerGroupConfig
from .group import CONSUMER_GROUP_TYPE, DEAD, ConsumerGroup, ConsumerMember
from .heartbeat import (
    HeartbeatRequest,
    HeartbeatResult,
    heartbeat,
    remove_member,
    request_error,
)
from .manager import ConsumerGroupMetadataManager
from .migration import (
    by_topic_id,
    by_topic_name,
    downgrade,
    downgrade_refusal,
    upgrade_records,
    upgrade_refusal,
)
from .reconciliation import UNREVOKED_PARTITIONS
from .records import (
    RECORD_TYPES,
    ClassicProtocols,
    Record,
    parse_key,
    parse_value,
    record_type_of,
)
from .subscriptions import TopicsImage
from .target_assignment import group_assignor

logger = logging.getLogger(__name__)

SESSION, REBALANCE = "session", "rebalance"


@dataclass(frozen=True)
class DescribedMember:
    member: ConsumerMember
    target: Mapping[Any, frozenset[int]]


@dataclass(frozen=True)
class ConsumerGroupDescription:
    """What ConsumerGroupDescribe shows of one group."""

    group_id: str
    state: str
    epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[DescribedMember, ...]


class NoTopics:
    """A topics image without topics (a coordinator not wired to the cluster)."""

    def topic_names(self) -> Iterable[str]:
        return ()

    def topic(self, name: str) -> None:
        return None

    def topic_name(self, topic_id: object) -> None:
        return None


class ConsumerGroupCoordinator(GroupCoordinator):
    """Classic groups and consumer groups on this broker.

    Parameters
    ----------
    group_config, offset_config, leader_log, **options
        As :class:`..group.coordinator.GroupCoordinator` takes them.
    consumer_config : ConsumerGroupConfig
    topics : TopicsImage
        The cluster's topics (names, ids, partition counts).
    """

    manager_type = ConsumerGroupMetadataManager
    manager: ConsumerGroupMetadataManager

    def __init__(self, *args: Any, consumer_config: ConsumerGroupConfig | None = None,
                 topics: TopicsImage | None = None, **options: Any) -> None:
        super().__init__(*args, **options)
        self.consumer_config = consumer_config or ConsumerGroupConfig()
        self.topics: TopicsImage = topics if topics is not None else NoTopics()
        self.manager.on_consumer_group_loaded = self._on_consumer_group_loaded

    # -- ConsumerGroupHeartbeat --------------------------------------------------------------

    def handle_consumer_group_heartbeat(self, request: HeartbeatRequest) -> HeartbeatResult:
        """Answer one heartbeat, once its records are written."""
        if not self.consumer_config.enabled:
            return HeartbeatResult(ErrorCode.UNSUPPORTED_VERSION,
                                   "The consumer group protocol is not enabled "
                                   "(group.coordinator.rebalance.protocols).")
        refused = request_error(request, self.consumer_config)  # first, as Kafka checks it
        if refused is not None:
            return HeartbeatResult(refused[0], refused[1], request.member_id or None,
                                   request.member_epoch)
        error = self.validate_group_status(request.group_id)
        if error is not None:
            return HeartbeatResult(error, None, request.member_id or None,
                                   request.member_epoch)
        group, refusal = self._group_for(request)
        if group is None:
            assert refusal is not None
            return HeartbeatResult(refusal[0], refusal[1], request.member_id or None,
                                   request.member_epoch)
        with group.lock:
            if group.dead:  # deleted or unloaded meanwhile: the member asks again
                return HeartbeatResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, None,
                                       request.member_id or None, request.member_epoch)
            result = heartbeat(group, request, self.consumer_config, self.topics)
            if result.error == ErrorCode.NONE and result.left and result.member_id and \
                    downgrade_refusal(group, result.member_id, self.consumer_config,
                                      self.group_config.max_size) is None:
                error = self._leave_or_downgrade(group, result.member_id)
                if error is not None:
                    result = HeartbeatResult(error, None, request.member_id or None,
                                             request.member_epoch)
                return result
            if result.error == ErrorCode.NONE:
                error = self._write(group, result.records)
                if error is not None:
                    if result.member_id in group.members:  # its records are in the log
                        self._update_timers(group, result)
                    result = HeartbeatResult(error, None, request.member_id or None,
                                             request.member_epoch)
            if result.error != ErrorCode.NONE:
                if not group.exists:
                    self.manager.remove_consumer_group(group)
                return result
            self._update_timers(group, result)
            result.records = []
            return result

    def _group_for(self, request: HeartbeatRequest
                   ) -> tuple[ConsumerGroup | None, tuple[ErrorCode, str] | None]:
        group_id = request.group_id
        group = self.manager.get_consumer_group(group_id)
        if group is not None:
            return group, None
        classic = self.manager.get_group(group_id)
        joining = request.member_epoch == 0
        if classic is not None:
            with classic.lock:
                if classic.is_(CLASSIC_DEAD):
                    classic = None
                elif not joining:
                    return None, (ErrorCode.GROUP_ID_NOT_FOUND,
                                  f"Group {group_id} is not a consumer group.")
                elif classic.is_(CLASSIC_EMPTY):
                    return self._replace_empty_classic(classic), None
                elif (why := upgrade_refusal(classic, self.consumer_config)) is None:
                    return self._upgrade(classic)
                else:
                    logger.info("not upgrading group %s: %s", group_id, why)
                    return None, (ErrorCode.GROUP_ID_NOT_FOUND,
                                  f"Group {group_id} is not a consumer group.")
        if not joining:
            return None, (ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        return self.manager.add_consumer_group(ConsumerGroup(group_id)), None

    def _replace_empty_classic(self, classic: Group) -> ConsumerGroup:
        """An empty classic group (the caller holds its lock) gives way to a consumer group,
        which keeps its offsets; its group record, if it had one, is tombstoned."""
        group = ConsumerGroup(classic.group_id)
        if classic.generation_id > 0:
            self.manager.write(classic.group_id,
                               [(group_metadata_key(classic.group_id), None)])
        classic.transition_to(CLASSIC_DEAD, self.clock_ms())
        self.manager.replace_classic_group(classic, group)
        logger.info("empty classic group %s becomes a consumer group", classic.group_id)
        return group

    def _upgrade(self, classic: Group
                 ) -> tuple[ConsumerGroup | None, tuple[ErrorCode, str] | None]:
        """A Stable classic group (the caller holds its lock) becomes a consumer group, its
        members and their partitions kept (:mod:`.migration`)."""
        group = ConsumerGroup(classic.group_id)
        error = self._write(group, upgrade_records(classic, self.topics))
        if error is not None:
            return None, (error, f"upgrading group {classic.group_id} failed")
        self._cancel_group_tasks(classic)
        classic.transition_to(CLASSIC_DEAD, self.clock_ms())
        self.manager.replace_classic_group(classic, group)
        logger.info("classic group %s (generation %d, %d members) is upgraded to a consumer "
                    "group", group.group_id, group.epoch, group.size)
        with group.lock:
            for member_id in group.members:
                self._schedule_session(group, member_id)
        return group, None

    def _downgrade(self, group: ConsumerGroup, leaving: str) -> ErrorCode | None:
        """``leaving``, the last member of the consumer protocol, leaves; the group becomes a
        classic group of the others, which rebalances (the caller holds the group's lock)."""
        records, record = downgrade(group, leaving, self.topics)
        error, in_log = self.manager.write(group.group_id, records)
        if error is not None and not in_log:
            return error
        for task in group.timers.values():
            task.cancel()
        group.timers.clear()
        group.dead = True
        classic = Group.from_record(group.group_id, record, self.clock_ms())
        with classic.lock:
            self.manager.replace_consumer_group(group, classic)
            logger.info("consumer group %s is downgraded to a classic group of %d members",
                        group.group_id, classic.size)
            for member in list(classic.members.values()):
                self._schedule_heartbeat(classic, member)
            self._prepare_rebalance(classic, f"downgraded as member {leaving} left")
        return error

    def _leave_or_downgrade(self, group: ConsumerGroup, member_id: str) -> ErrorCode | None:
        """Remove a member (it left, or was fenced), downgrading the group when the policy
        allows and only classic members remain (the caller holds the group's lock)."""
        self._cancel(group, member_id)
        if downgrade_refusal(group, member_id, self.consumer_config,
                             self.group_config.max_size) is None:
            return self._downgrade(group, member_id)
        return self._write(group, remove_member(group, member_id, self.topics))

    def _write(self, group: ConsumerGroup, records: list[Record]) -> ErrorCode | None:
        """Append ``records`` and replay them into ``group`` (the caller holds its lock); the
        error to answer with, if any. Records that reached the leader's log are replayed even
        when the wait for the ISR failed: the group follows its log, and the member, told to
        retry, comes back with the epoch it had (which the group accepts) or rejoins."""
        error, in_log = self.manager.write(group.group_id, records)
        if in_log:
            replay(group, records)
        return error

    # -- timers ------------------------------------------------------------------------------

    def _update_timers(self, group: ConsumerGroup, result: HeartbeatResult) -> None:
        member_id = result.member_id
        if member_id is None:
            return
        if result.left or member_id not in group.members:
            self._cancel(group, member_id)
            return
        self._schedule_session(group, member_id)
        member = group.members[member_id]
        if member.assignment.state == UNREVOKED_PARTITIONS and not member.uses_classic_protocol:
            if (REBALANCE, member_id) not in group.timers:
                self._schedule_rebalance_timeout(group, member)
        else:
            self._cancel(group, member_id, REBALANCE)

    def _cancel(self, group: ConsumerGroup, member_id: str, *kinds: str) -> None:
        for kind in kinds or (SESSION, REBALANCE):
            task = group.timers.pop((kind, member_id), None)
            if task is not None:
                task.cancel()

    def _schedule_session(self, group: ConsumerGroup, member_id: str) -> None:
        self._cancel(group, member_id, SESSION)
        classic = group.members[member_id].metadata.classic
        timeout = classic.session_timeout_ms if classic is not None \
            else self.consumer_config.session_timeout_ms
        group.timers[(SESSION, member_id)] = self.timer.schedule(
            timeout, lambda: self._fence(group, member_id, None,
                                         f"its session timed out ({timeout} ms)"))

    def _schedule_rebalance_timeout(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        epoch, timeout = member.epoch, max(member.metadata.rebalance_timeout_ms, 0)
        group.timers[(REBALANCE, member.member_id)] = self.timer.schedule(
            timeout, lambda: self._fence(
                group, member.member_id, epoch,
                f"it did not revoke its partitions of epoch {epoch} within {timeout} ms"))

    def _fence(self, group: ConsumerGroup, member_id: str, epoch: int | None,
               why: str) -> None:
        """Remove a member that failed (at ``epoch``, when given)."""
        with group.lock:
            member = group.members.get(member_id)
            if group.dead or member is None or (epoch is not None and member.epoch != epoch):
                return
            logger.info("member %s of consumer group %s is fenced: %s", member_id,
                        group.group_id, why)
            error = self._leave_or_downgrade(group, member_id)
            if error is not None:  # tried again at the next expiry
                logger.warning("fencing member %s of consumer group %s failed: %s",
                               member_id, group.group_id, error.name)
                self._schedule_session(group, member_id)

    def _on_consumer_group_loaded(self, group: ConsumerGroup) -> None:
        with group.lock:
            logger.info("loaded consumer group %s, epoch %d, %d members", group.group_id,
                        group.epoch, group.size)
            for member in list(group.members.values()):
                self._schedule_session(group, member.member_id)
                if member.assignment.state == UNREVOKED_PARTITIONS:
                    self._schedule_rebalance_timeout(group, member)

    # -- members speaking the classic protocol in a consumer group ---------------------------

    def handle_join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                          require_known_member_id: bool, support_skipping_assignment: bool,
                          client_id: str, client_host: str, rebalance_timeout_ms: int,
                          session_timeout_ms: int, protocol_type: str, protocols: Protocols,
                          callback: JoinCallback, reason: str | None = None) -> None:
        group = self.manager.get_consumer_group(group_id)
        if group is None or self.validate_group_status(group_id) is not None:
            super().handle_join_group(group_id, member_id, group_instance_id,
                                      require_known_member_id, support_skipping_assignment,
                                      client_id, client_host, rebalance_timeout_ms,
                                      session_timeout_ms, protocol_type, protocols, callback,
                                      reason)
            return
        callback(self._classic_join(group, member_id, group_instance_id, require_known_member_id,
                                    client_id, client_host, rebalance_timeout_ms,
                                    session_timeout_ms, protocol_type, protocols))

    def _classic_join(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                      require_known_member_id: bool, client_id: str, client_host: str,
                      rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                      protocols: Protocols) -> JoinResult:
        """A classic member's JoinGroup, moving it towards its target at once (Kafka's
        ``classicGroupJoinToConsumerGroup``): answered without a leader, the assignment comes
        with its SyncGroup."""
        if protocol_type != CONSUMER_PROTOCOL_TYPE or not protocols:
            return JoinResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if not self.group_config.min_session_timeout_ms <= session_timeout_ms \
                <= self.group_config.max_session_timeout_ms:
            return JoinResult(member_id, ErrorCode.INVALID_SESSION_TIMEOUT)
        with group.lock:
            if group.dead:
                return JoinResult(member_id, ErrorCode.COORDINATOR_NOT_AVAILABLE)
            if member_id == UNKNOWN_MEMBER_ID:
                member_id = Group.generate_member_id(client_id, instance_id)
                if require_known_member_id:
                    return JoinResult(member_id, ErrorCode.MEMBER_ID_REQUIRED)
            existing = group.members.get(member_id)
            try:
                topics, owned, rack = parse_subscription(protocols[0][1])
            except MalformedSubscriptionError:
                return JoinResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            result = heartbeat(group, HeartbeatRequest(
                group.group_id, member_id, existing.epoch if existing is not None else 0,
                instance_id, rack or None, rebalance_timeout_ms, topics, None, None,
                by_topic_id(owned, self.topics) if existing is not None else {}, client_id,
                client_host, classic=ClassicProtocols(
                    session_timeout_ms, tuple((n, bytes(m)) for n, m in protocols))),
                self.consumer_config, self.topics)
            if result.error == ErrorCode.NONE:
                error = self._write(group, result.records)
                if error is not None:
                    return JoinResult(member_id, error)
            if result.error != ErrorCode.NONE:
                return JoinResult(member_id, result.error)
            self._schedule_session(group, member_id)
            return JoinResult(member_id, ErrorCode.NONE, result.member_epoch,
                              CONSUMER_PROTOCOL_TYPE, protocols[0][0], "")

    def handle_sync_group(self, group_id: str, generation_id: int, member_id: str,
                          protocol_type: str | None, protocol_name: str | None,
                          group_instance_id: str | None, assignment: Mapping[str, bytes],
                          callback: SyncCallback) -> None:
        group = self.manager.get_consumer_group(group_id)
        if group is None or self.validate_group_status(group_id) is not None:
            super().handle_sync_group(group_id, generation_id, member_id, protocol_type,
                                      protocol_name, group_instance_id, assignment, callback)
            return
        with group.lock:
            member = group.members.get(member_id)
            error = self._classic_member_error(group, member, generation_id)
            if error is not None or member is None:
                callback(SyncResult(error or ErrorCode.UNKNOWN_MEMBER_ID))
                return
            classic = member.metadata.classic
            assert classic is not None
            name, metadata = classic.protocols[0]
            if (protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE) or \
                    (protocol_name is not None and protocol_name != name):
                callback(SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
                return
            if group.epoch > member.epoch:  # the group moved on since its join
                callback(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
                return
            self._schedule_session(group, member_id)
            callback(SyncResult(ErrorCode.NONE, assignment_bytes(
                by_topic_name(member.assignment.assigned, self.topics),
                subscription_version(metadata)), CONSUMER_PROTOCOL_TYPE, name))

    def handle_heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None,
                         generation_id: int) -> ErrorCode:
        group = self.manager.get_consumer_group(group_id)
        if group is None or self.validate_group_status(group_id) is not None:
            return super().handle_heartbeat(group_id, member_id, group_instance_id,
                                            generation_id)
        with group.lock:
            member = group.members.get(member_id)
            error = self._classic_member_error(group, member, generation_id)
            if error is not None or member is None:
                return error or ErrorCode.UNKNOWN_MEMBER_ID
            self._schedule_session(group, member_id)
            # not at its target yet: it rejoins, and its JoinGroup moves it on
            if group.epoch > group.assignment_epoch or \
                    not member.assignment.is_reconciled_to(group.assignment_epoch):
                return ErrorCode.REBALANCE_IN_PROGRESS
            return ErrorCode.NONE

    def handle_leave_group(self, group_id: str, leaving: Iterable[LeavingMember]
                           ) -> tuple[ErrorCode, list[tuple[LeavingMember, ErrorCode]]]:
        group = self.manager.get_consumer_group(group_id)
        if group is None or self.validate_group_status(group_id) is not None:
            return super().handle_leave_group(group_id, leaving)
        answers = []
        with group.lock:
            for m in leaving:
                member_id = m.member_id or next(
                    (x.member_id for x in group.members.values()
                     if m.group_instance_id is not None
                     and x.instance_id == m.group_instance_id), "")
                if group.dead or member_id not in group.members:
                    answers.append((m, ErrorCode.UNKNOWN_MEMBER_ID))
                    continue
                error = self._leave_or_downgrade(group, member_id)
                answers.append((m, error or ErrorCode.NONE))
        return ErrorCode.NONE, answers

    @staticmethod
    def _classic_member_error(group: ConsumerGroup, member: ConsumerMember | None,
                              generation_id: int) -> ErrorCode | None:
        if group.dead:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if member is None or not member.uses_classic_protocol:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation_id != member.epoch:
            return ErrorCode.ILLEGAL_GENERATION
        return None

    # -- ConsumerGroupDescribe -----------------------------------------------------------------

    def handle_consumer_group_describe(self, group_id: str
                                       ) -> tuple[ErrorCode, str | None,
                                                  ConsumerGroupDescription | None]:
        error = self.validate_group_status(group_id)
        if error is not None:
            return error, None, None
        group = self.manager.get_consumer_group(group_id)
        if group is None:
            classic = self.manager.get_group(group_id)
            message = f"Group {group_id} is not a consumer group." \
                if classic is not None and not classic.is_(CLASSIC_DEAD) \
                else f"Group {group_id} not found."
            return ErrorCode.GROUP_ID_NOT_FOUND, message, None
        with group.lock:
            if group.dead:
                return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.", None
            members = {m_id: m.metadata for m_id, m in group.members.items()}
            return ErrorCode.NONE, None, ConsumerGroupDescription(
                group_id, group.state, group.epoch, group.assignment_epoch,
                group_assignor(members, self.consumer_config.assignors),
                tuple(DescribedMember(m, group.target.get(m.member_id, {}))
                      for m in group.members.values()))

    # -- offsets -------------------------------------------------------------------------------

    def handle_commit_offsets(self, group_id: str, member_id: str,
                              group_instance_id: str | None, generation_id: int,
                              offsets: Mapping[TopicPartition, OffsetAndMetadata]
                              ) -> dict[TopicPartition, ErrorCode]:
        group = self.manager.get_consumer_group(group_id)
        if group is None:
            return super().handle_commit_offsets(group_id, member_id, group_instance_id,
                                                 generation_id, offsets)
        error = self.validate_group_status(group_id, allow_empty_id=True)
        if error is not None:
            return dict.fromkeys(offsets, error)
        with group.lock:
            error = commit_error(group, member_id, generation_id)
            if error is not None:
                return dict.fromkeys(offsets, error)
            return self.manager.store_offsets(group, offsets)

    def handle_fetch_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None,
                             *, require_stable: bool = False, member_id: str | None = None,
                             member_epoch: int = -1
                             ) -> tuple[ErrorCode,
                                        dict[TopicPartition, OffsetAndMetadata | ErrorCode | None]]:
        group = self.manager.get_consumer_group(group_id)
        if group is not None and not (member_id is None and member_epoch < 0):
            with group.lock:
                member = group.members.get(member_id or "")
                if member is None:
                    return ErrorCode.UNKNOWN_MEMBER_ID, {}
                if member.epoch != member_epoch:
                    return (ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol
                            else ErrorCode.STALE_MEMBER_EPOCH), {}
        return super().handle_fetch_offsets(group_id, partitions, require_stable=require_stable)

    def commit_transactional_offsets_elsewhere(
            self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
            generation_id: int, offsets: Mapping[TopicPartition, OffsetAndMetadata]
            ) -> dict[TopicPartition, ErrorCode] | None:
        group = self.manager.get_consumer_group(group_id)
        if group is None:
            return None
        with group.lock:
            if group.dead:
                return dict.fromkeys(offsets, ErrorCode.COORDINATOR_NOT_AVAILABLE)
            if member_id or generation_id >= 0:
                member = group.members.get(member_id)
                if member is None:
                    return dict.fromkeys(offsets, ErrorCode.UNKNOWN_MEMBER_ID)
                if generation_id >= 0 and generation_id != member.epoch:
                    return dict.fromkeys(offsets, ErrorCode.ILLEGAL_GENERATION)
            return self.manager.store_offsets(group, offsets, producer_id=producer_id,
                                              producer_epoch=producer_epoch)

    def handle_delete_offsets(self, group_id: str, partitions: Iterable[TopicPartition]
                              ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        group = self.manager.get_consumer_group(group_id)
        if group is None:
            return super().handle_delete_offsets(group_id, partitions)
        error = self.validate_group_status(group_id)
        if error is not None:
            return error, {}
        partitions = list(partitions)
        with group.lock:
            subscribed = {tp for tp in partitions if group.members
                          and group.is_subscribed_to_topic(tp.topic)}
            eligible = [tp for tp in partitions if tp not in subscribed]
            removed = group.offsets.remove(eligible)
        if removed:
            self.manager.delete_consumer_group_records(group, removed)
        errors = dict.fromkeys(subscribed, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)
        errors.update(dict.fromkeys(eligible, ErrorCode.NONE))
        return ErrorCode.NONE, errors

    # -- listing, describing, deleting -----------------------------------------------------

    def handle_list_groups(self, states: Iterable[str] = (), types: Iterable[str] = ()
                           ) -> tuple[ErrorCode, list[GroupOverview]]:
        states, types = list(states), [t.lower() for t in types]
        error, groups = super().handle_list_groups(states, types)
        if error == ErrorCode.COORDINATOR_NOT_AVAILABLE:
            return error, groups
        if not types or CONSUMER_GROUP_TYPE in types:
            wanted_states = {s.lower() for s in states}
            for group in self.manager.current_consumer_groups():
                with group.lock:
                    state = group.state
                if state == DEAD or (wanted_states and state.lower() not in wanted_states):
                    continue
                groups.append(GroupOverview(group.group_id, "consumer", state,
                                            CONSUMER_GROUP_TYPE))
        return error, sorted(groups, key=lambda g: g.group_id)

    def handle_delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        classic_ids, errors = [], {}
        for group_id in group_ids:
            group = self.manager.get_consumer_group(group_id)
            if group is None:
                classic_ids.append(group_id)
                continue
            error = self.validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                errors[group_id] = error
                continue
            with group.lock:
                if group.members:
                    errors[group_id] = ErrorCode.NON_EMPTY_GROUP
                    continue
                removed = list(group.offsets.remove_all())
            deleted = self.manager.delete_consumer_group_records(group, removed)
            errors[group_id] = ErrorCode.NONE if deleted else ErrorCode.COORDINATOR_NOT_AVAILABLE
        errors.update(super().handle_delete_groups(classic_ids))
        return errors


def commit_error(group: ConsumerGroup, member_id: str, member_epoch: int) -> ErrorCode | None:
    """Why a consumer group refuses an OffsetCommit (Kafka's
    ``ConsumerGroup.validateOffsetCommit``), or None."""
    if group.dead:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if member_epoch < 0 and not group.members:
        return None  # the admin client, or a consumer outside group management
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if member_epoch != member.epoch:
        return ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol \
            else ErrorCode.STALE_MEMBER_EPOCH
    return None


def replay(group: ConsumerGroup, records: Iterable[Record]) -> None:
    """Apply written records to the group (those of consumer groups; offsets and classic
    records are another's)."""
    for key, value in records:
        if record_type_of(key) in RECORD_TYPES:
            parsed = parse_key(key)
            group.replay(parsed, parse_value(parsed.record_type, value))

