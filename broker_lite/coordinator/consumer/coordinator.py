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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode

from ..group.coordinator import GroupCoordinator, GroupOverview
from ..group.group import DEAD as CLASSIC_DEAD
from ..group.group import EMPTY as CLASSIC_EMPTY
from ..group.group import Group, GroupSummary
from ..group.offsets import OffsetAndMetadata
from ..group.records import group_metadata_key
from .config import ConsumerGroupConfig
from .group import CONSUMER_GROUP_TYPE, DEAD, ConsumerGroup, ConsumerMember
from .heartbeat import HeartbeatRequest, HeartbeatResult, heartbeat, remove_member
from .manager import ConsumerGroupMetadataManager
from .reconciliation import UNREVOKED_PARTITIONS
from .records import RECORD_TYPES, Record, parse_key, parse_value, record_type_of
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
        error = self.validate_group_status(request.group_id, allow_empty_id=True)
        if error is not None and error != ErrorCode.INVALID_GROUP_ID:
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
            if result.error == ErrorCode.NONE:
                error = self._write(group, result.records)
                if error is not None:
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
                else:
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
            self.manager.write(classic.group_id, [(group_metadata_key(classic.group_id), None)])
        classic.transition_to(CLASSIC_DEAD, self.clock_ms())
        self.manager.replace_classic_group(classic, group)
        logger.info("empty classic group %s becomes a consumer group", classic.group_id)
        return group

    def _write(self, group: ConsumerGroup, records: list[Record]) -> ErrorCode | None:
        """Append ``records`` and replay them into ``group`` (the caller holds its lock)."""
        error = self.manager.write(group.group_id, records)
        if error is None:
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
        if member.assignment.state == UNREVOKED_PARTITIONS:
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
        timeout = self.consumer_config.session_timeout_ms
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
            self._cancel(group, member_id)
            error = self._write(group, remove_member(group, member_id, self.topics))
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
        self.manager.delete_consumer_group_records(group, removed, only_if_empty=False) \
            if removed else None
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

    def handle_describe_group(self, group_id: str) -> tuple[ErrorCode, GroupSummary]:
        """DescribeGroups describes classic groups; a consumer group is Dead to it, as
        Kafka answers (its members are described by ConsumerGroupDescribe)."""
        return super().handle_describe_group(group_id)

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

    def _on_group_unloaded(self, group: Group) -> None:
        super()._on_group_unloaded(group)


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


ClockMs = Callable[[], int]
