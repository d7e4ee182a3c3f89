"""The group coordinator: the classic group protocol, as Kafka's ``GroupCoordinator`` serves it,
and the facade the request handlers call for groups and their offsets.

A member joins (JoinGroup), the group rebalances, the leader's assignment is handed to everyone
(SyncGroup), and members stay in the group by heartbeating within their session timeout:

- JoinGroup without a member id (v4+) is answered MEMBER_ID_REQUIRED with a new id
  (``client.id-<uuid>``, or ``group.instance.id-<uuid>`` for static members), which the member
  joins with. The first join of a group, or any join changing a member's protocols (or the
  leader's), starts a rebalance: the group prepares (PreparingRebalance) and every JoinGroup waits
  until all known members have rejoined or the rebalance timeout (the largest of the members')
  passes, when those missing are dropped. A new group first waits
  ``group.initial.rebalance.delay.ms`` (again while members keep arriving, within the rebalance
  timeout) so the first members do not each cause a rebalance.
- When the join phase completes, the generation is bumped, the protocol chosen, and every waiting
  JoinGroup answered; the leader gets the members' metadata. The group then waits for the
  leader's SyncGroup (CompletingRebalance); members that send no SyncGroup within the rebalance
  timeout are removed. The leader's assignment is written to ``__consumer_offsets`` with the
  generation, and only then handed out (Stable).
- Heartbeats keep a session alive; during a rebalance they answer REBALANCE_IN_PROGRESS, which
  sends the member back to JoinGroup. A member silent for its session timeout is removed, and the
  group rebalances. LeaveGroup removes members at once.
- Static members (``group.instance.id``) keep their place across restarts: rejoining with an
  unknown member id replaces the old id (fenced from then on: FENCED_INSTANCE_ID), without a
  rebalance when the group is Stable and the protocol choice does not change.

Offsets are the concern of :class:`.offset_coordinator.OffsetCoordinator` (OffsetCommit, the
append of TxnOffsetCommit, OffsetFetch, OffsetDelete, transactions ending); the
:class:`GroupCoordinator` hands those requests to it, and a member's commit restarts its session
here. Listing, describing and deleting groups are here too.

Timing is Kafka's delayed operations as timer tasks (:mod:`.timer`); each group is changed under
its own lock only. Requests for groups of a ``__consumer_offsets`` partition still loading
answer COORDINATOR_LOAD_IN_PROGRESS, of one this broker does not lead NOT_COORDINATOR.
"""

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Self

from broker_lite.common.vocabulary import TopicPartition, now_ms
from broker_lite.protocol import ErrorCode

from ..common.timer import Timer
from .config import GroupConfig, OffsetConfig
from .group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    UNKNOWN_MEMBER_ID,
    Group,
    GroupSummary,
    JoinResult,
    Member,
    Protocols,
    SyncResult,
)
from .manager import GroupMetadataManager, LeaderLog
from .offset_coordinator import OffsetCoordinator
from .offsets import OffsetAndMetadata
from .offsets_topic import OFFSETS_TOPIC

logger = logging.getLogger(__name__)

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # a new member's JoinGroup may be abandoned
NO_GENERATION = -1
# DescribeGroups of a group this broker cannot describe, and of one it does not know
EMPTY_SUMMARY = GroupSummary("", "", "", ())
DEAD_SUMMARY = GroupSummary("Dead", "", "", ())

JoinCallback = Callable[[JoinResult], None]
SyncCallback = Callable[[SyncResult], None]


@dataclass(frozen=True)
class LeavingMember:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class GroupOverview:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"  # ListGroups v5's type: classic or consumer (KIP-848)


class GroupCoordinator:
    """Groups and their offsets on this broker: the membership protocol here, the offsets in
    :attr:`offsets` (an :class:`.offset_coordinator.OffsetCoordinator`).

    Parameters
    ----------
    group_config, offset_config
        :class:`.config.GroupConfig` and :class:`.config.OffsetConfig`.
    leader_log : callable
        ``leader_log(partition) -> (Log, leader_epoch) | None`` for ``__consumer_offsets``.
    partition_count : callable
        The topic's partition count once it exists, else None.
    create_topic : callable
        Creates ``__consumer_offsets`` (FindCoordinator does, on first use).
    timer : Timer or ManualTimer
    clock_ms : callable
        Wall-clock milliseconds.
    on_appended : callable
        Told after every append to the topic.
    """

    topic = OFFSETS_TOPIC
    manager_type: type[GroupMetadataManager] = GroupMetadataManager

    def __init__(self, group_config: GroupConfig, offset_config: OffsetConfig,
                 leader_log: LeaderLog, *, partition_count: Callable[[], int | None] = lambda: None,
                 create_topic: Callable[[], None] = lambda: None, timer=None,
                 clock_ms: Callable[[], int] = now_ms,
                 on_appended: Callable[[], None] = lambda: None):
        self.group_config = group_config
        self.offset_config = offset_config
        self.timer = timer if timer is not None else Timer("group-coordinator")
        self.clock_ms = clock_ms
        self.manager = self.manager_type(offset_config, leader_log,
                                         partition_count=partition_count, clock_ms=clock_ms,
                                         on_appended=on_appended)
        self.offsets = OffsetCoordinator(self.manager, self.validate_group_status,
                                         self._schedule_heartbeat)
        self._create_topic = create_topic
        self.active = False
        self._expiry_task = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> Self:
        self.timer.start()
        self.manager.start()
        self.active = True
        self._schedule_expiry()
        return self

    def shutdown(self) -> None:
        """Stop serving: waiting JoinGroup and SyncGroup requests are answered NOT_COORDINATOR
        (the clients look for the coordinator again)."""
        if self.manager.shutting_down:
            return
        self.active = False
        if self._expiry_task is not None:
            self._expiry_task.cancel()
        self.manager.shutdown()
        self.manager.unload_all(self._on_group_unloaded)
        self.timer.stop()

    def _schedule_expiry(self) -> None:
        def run() -> None:
            if not self.active:
                return
            try:
                self.manager.cleanup_expired()
            finally:
                self._schedule_expiry()

        self._expiry_task = self.timer.schedule(
            self.offset_config.retention_check_interval_ms, run)

    # -- the offsets topic ------------------------------------------------------------------

    def partition_for(self, group_id: str) -> int:
        return self.manager.partition_for(group_id)

    def create_topic(self) -> None:
        self._create_topic()

    def on_elected(self, partition: int, leader_epoch: int) -> None:
        """This broker now leads ``partition`` of ``__consumer_offsets``: load its groups."""
        self.manager.schedule_load(partition, leader_epoch, self._on_group_loaded)

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        """This broker no longer leads ``partition``: drop its groups."""
        self.manager.schedule_unload(partition, leader_epoch, self._on_group_unloaded)

    def _on_group_loaded(self, group: Group) -> None:
        with group.lock:
            logger.info("loaded group %s, generation %d", group.group_id, group.generation_id)
            if group.size > self.group_config.max_size:
                self._prepare_rebalance(group, "the loaded group is over group.max.size")
            for member in list(group.members.values()):
                self._schedule_heartbeat(group, member)

    def _on_group_unloaded(self, group: Group) -> None:
        with group.lock:
            previous = group.state
            group.transition_to(DEAD, self.clock_ms())
            if previous is PREPARING_REBALANCE:
                for member in list(group.members.values()):
                    group.maybe_invoke_join(member, JoinResult(member.member_id,
                                                               ErrorCode.NOT_COORDINATOR))
            elif previous in (STABLE, COMPLETING_REBALANCE):
                for member in group.members.values():
                    group.maybe_invoke_sync(member, SyncResult(ErrorCode.NOT_COORDINATOR))
            self._cancel_group_tasks(group)

    def _cancel_group_tasks(self, group: Group) -> None:
        for task in (group.rebalance_task, group.sync_task,
                     *(m.heartbeat_task for m in group.members.values())):
            if task is not None:
                task.cancel()
        group.rebalance_task = group.sync_task = None

    # -- validation -------------------------------------------------------------------------

    def validate_group_status(self, group_id: str | None, *,
                              allow_empty_id: bool = False) -> ErrorCode | None:
        """The error every group request gets before anything else, or None."""
        if group_id is None or (not group_id and not allow_empty_id):
            return ErrorCode.INVALID_GROUP_ID
        if not self.active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if self.manager.is_group_loading(group_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if not self.manager.is_group_local(group_id):
            return ErrorCode.NOT_COORDINATOR
        return None

    @staticmethod
    def _join_refusal(group: Group, protocol_type: str, protocols: Protocols) -> ErrorCode | None:
        """Why no JoinGroup, of a new member or a known one, can join ``group`` now, or None."""
        if group.is_(DEAD):
            # removed meanwhile (unloaded, deleted): the member finds the coordinator again
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if not group.supports_protocols(protocol_type, [name for name, _ in protocols]):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _accept_joining_member(self, group: Group, member_id: str) -> bool:
        if group.state in (EMPTY, DEAD):
            return True
        if group.is_(PREPARING_REBALANCE):
            return (group.has(member_id) and group.get(member_id).is_awaiting_join) or \
                group.num_awaiting_join < self.group_config.max_size
        return group.has(member_id) or group.size < self.group_config.max_size

    # -- JoinGroup --------------------------------------------------------------------------

    def handle_join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                          require_known_member_id: bool, support_skipping_assignment: bool,
                          client_id: str, client_host: str, rebalance_timeout_ms: int,
                          session_timeout_ms: int, protocol_type: str, protocols: Protocols,
                          callback: JoinCallback, reason: str | None = None) -> None:
        """Join ``member_id`` (empty: a new member) to the group; ``callback`` gets the answer,
        possibly later (when the rebalance completes)."""
        error = self.validate_group_status(group_id)
        if error is not None:
            callback(JoinResult(member_id, error))
            return
        if not self.group_config.min_session_timeout_ms <= session_timeout_ms \
                <= self.group_config.max_session_timeout_ms:
            callback(JoinResult(member_id, ErrorCode.INVALID_SESSION_TIMEOUT))
            return
        is_unknown = member_id == UNKNOWN_MEMBER_ID
        group = self.manager.get_or_create_group(group_id) if is_unknown \
            else self.manager.get_group(group_id)
        if group is None:
            callback(JoinResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
            return
        reason = reason or "not provided"
        with group.lock:
            if not self._accept_joining_member(group, member_id):
                removed = group.remove(member_id)
                if removed is not None:
                    self._cancel_heartbeat(removed)
                callback(JoinResult(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED))
            elif (error := self._join_refusal(group, protocol_type, protocols)) is not None:
                callback(JoinResult(UNKNOWN_MEMBER_ID if is_unknown else member_id, error))
            elif is_unknown:
                self._new_member_join(group, group_instance_id, require_known_member_id,
                                      support_skipping_assignment, client_id, client_host,
                                      rebalance_timeout_ms, session_timeout_ms, protocol_type,
                                      protocols, callback, reason)
            else:
                self._current_member_join(group, member_id, group_instance_id, client_id,
                                          client_host, rebalance_timeout_ms, session_timeout_ms,
                                          protocol_type, protocols, callback, reason)
            if group.is_(PREPARING_REBALANCE):
                self._check_join_complete(group)

    def _new_member_join(self, group: Group, group_instance_id, require_known_member_id,
                         support_skipping_assignment, client_id, client_host,
                         rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols,
                         callback, reason) -> None:
        new_member_id = group.generate_member_id(client_id, group_instance_id)
        if group_instance_id is not None:
            old_member_id = group.current_static_member_id(group_instance_id)
            if old_member_id is not None:
                logger.info("static member %s of group %s rejoins as %s, replacing %s",
                            group_instance_id, group.group_id, new_member_id, old_member_id)
                self._update_static_member_and_rebalance(
                    group, old_member_id, new_member_id, group_instance_id, protocols, callback,
                    reason, support_skipping_assignment)
            else:
                self._add_member_and_rebalance(
                    group, rebalance_timeout_ms, session_timeout_ms, new_member_id,
                    group_instance_id, client_id, client_host, protocol_type, protocols,
                    callback, reason)
        elif require_known_member_id:
            logger.info("new member of group %s (%s) gets member id %s", group.group_id,
                        group.state.value, new_member_id)
            group.add_pending_member(new_member_id)
            self._schedule_pending_member_expiry(group, new_member_id, session_timeout_ms)
            callback(JoinResult(new_member_id, ErrorCode.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(
                group, rebalance_timeout_ms, session_timeout_ms, new_member_id, None, client_id,
                client_host, protocol_type, protocols, callback, reason)

    def _current_member_join(self, group: Group, member_id, group_instance_id, client_id,
                             client_host, rebalance_timeout_ms, session_timeout_ms,
                             protocol_type, protocols, callback, reason) -> None:
        if group.is_pending_member(member_id):
            if group_instance_id is not None:  # pending members are dynamic by construction
                callback(JoinResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
                return
            self._add_member_and_rebalance(
                group, rebalance_timeout_ms, session_timeout_ms, member_id, None, client_id,
                client_host, protocol_type, protocols, callback, reason)
            return
        error = group.member_error(member_id, group_instance_id)
        if error is not None:
            callback(JoinResult(member_id, error))
            return
        member = group.get(member_id)
        if group.is_(PREPARING_REBALANCE):
            self._update_member_and_rebalance(
                group, member, protocols, callback,
                f"member {member_id} joining during PreparingRebalance; client reason: {reason}")
        elif group.is_(COMPLETING_REBALANCE):
            if member.matches(protocols):
                # the same metadata (it may have missed the JoinGroup answer): this generation
                callback(group.join_result(member))
            else:
                self._update_member_and_rebalance(
                    group, member, protocols, callback,
                    f"member {member_id} changed its metadata; client reason: {reason}")
        elif group.is_(STABLE):
            if group.is_leader(member_id):
                # the leader may rejoin to rebalance for reasons only it sees (new partitions)
                self._update_member_and_rebalance(
                    group, member, protocols, callback,
                    f"leader {member_id} rejoining; client reason: {reason}")
            elif not member.matches(protocols):
                self._update_member_and_rebalance(
                    group, member, protocols, callback,
                    f"member {member_id} changed its metadata; client reason: {reason}")
            else:
                callback(group.join_result(member, with_members=False))
        else:  # Empty: the member is gone; it resets its generation and joins again
            logger.warning("member %s of group %s rejoined the group in state %s", member_id,
                           group.group_id, group.state.value)
            callback(JoinResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))

    def _add_member_and_rebalance(self, group: Group, rebalance_timeout_ms: int,
                                  session_timeout_ms: int, member_id: str,
                                  group_instance_id: str | None, client_id: str,
                                  client_host: str, protocol_type: str, protocols: Protocols,
                                  callback: JoinCallback, reason: str) -> None:
        member = Member(member_id, group_instance_id, client_id, client_host,
                        rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols,
                        is_new=True)
        if group.is_(PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True  # the initial delay may be extended
        group.add(member, callback)
        # A new member's JoinGroup can be abandoned (a client timing out and retrying), and it
        # cannot heartbeat without a member id: it gets a long deadline instead.
        self._schedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(
            group, f"adding new member {member_id} with group instance id "
                   f"{group_instance_id}; client reason: {reason}")

    def _update_member_and_rebalance(self, group: Group, member: Member, protocols: Protocols,
                                     callback: JoinCallback, reason: str) -> None:
        group.update_member(member, protocols, callback)
        self._maybe_prepare_rebalance(group, reason)

    def _update_static_member_and_rebalance(self, group: Group, old_member_id: str,
                                            new_member_id: str, instance_id: str,
                                            protocols: Protocols, callback: JoinCallback,
                                            reason: str, support_skipping_assignment: bool
                                            ) -> None:
        current_leader = group.leader_id
        member = group.replace_static_member(instance_id, old_member_id, new_member_id)
        self._schedule_heartbeat(group, member)
        old_protocols = member.protocols
        group.update_member(member, protocols, callback)
        if group.is_(STABLE):
            if group.select_protocol() == group.protocol_name:
                # the protocol choice holds: persist the new member id, no rebalance
                assignment = {m.member_id: m.assignment for m in group.members.values()}
                error = self.manager.store_group(group, assignment)
                if error != ErrorCode.NONE:
                    group.update_member(member, old_protocols, None)
                    restored = group.replace_static_member(instance_id, new_member_id,
                                                           old_member_id)
                    self._schedule_heartbeat(group, restored)
                    callback(JoinResult(UNKNOWN_MEMBER_ID, error, group.generation_id,
                                        group.protocol_type, group.protocol_name,
                                        current_leader or ""))
                elif support_skipping_assignment:
                    # v9+: the leader learns it leads, but must not reassign a stable group
                    is_leader = group.is_leader(new_member_id)
                    group.maybe_invoke_join(member, group.join_result(
                        member, skip_assignment=is_leader, with_members=is_leader))
                else:
                    # the old leader id: the returning member does not take itself for the
                    # leader and compute an assignment a stable group would not hand out
                    group.maybe_invoke_join(member, group.join_result(
                        member, leader_id=current_leader or "", with_members=False))
            else:
                self._maybe_prepare_rebalance(
                    group, f"static member {new_member_id} ({instance_id}) changed the "
                           f"protocol choice; client reason: {reason}")
        elif group.is_(COMPLETING_REBALANCE):
            # the leader may be assigning to the old member id: start over
            self._prepare_rebalance(group, f"static member {new_member_id} ({instance_id}) "
                                           f"rejoined; client reason: {reason}")
        # PreparingRebalance: the member simply waits with the others

    # -- rebalancing ------------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.is_(COMPLETING_REBALANCE):  # those waiting for the assignment rejoin
            self._reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self._cancel_sync_expiry(group)
        if group.rebalance_task is not None:
            group.rebalance_task.cancel()
        initial = group.is_(EMPTY)
        group.transition_to(PREPARING_REBALANCE, self.clock_ms())
        logger.info("preparing to rebalance group %s with old generation %d "
                    "(__consumer_offsets-%d) (reason: %s)", group.group_id, group.generation_id,
                    self.partition_for(group.group_id), reason)
        if initial:
            delay = self.group_config.initial_rebalance_delay_ms
            self._schedule_initial_join(group, delay, max(group.rebalance_timeout_ms - delay, 0))
        else:
            self._schedule_join(group, group.rebalance_timeout_ms)

    def _schedule_join(self, group: Group, timeout_ms: int) -> None:
        """Complete the join phase when all members have joined (checked on every change) or
        when ``timeout_ms`` passes."""
        def expire() -> None:
            with group.lock:
                if group.rebalance_task is task:
                    group.rebalance_task = None
                    self._on_complete_join(group)

        task = group.rebalance_task = self.timer.schedule(timeout_ms, expire)
        group.rebalance_is_initial = False
        self._check_join_complete(group)

    def _schedule_initial_join(self, group: Group, delay_ms: int, remaining_ms: int) -> None:
        """A new group's join phase: never completes early; after ``delay_ms`` it waits again
        if members arrived meanwhile and rebalance time remains."""
        def expire() -> None:
            with group.lock:
                if group.rebalance_task is not task:
                    return
                group.rebalance_task = None
                if group.new_member_added and remaining_ms != 0:
                    group.new_member_added = False
                    delay = min(self.group_config.initial_rebalance_delay_ms, remaining_ms)
                    self._schedule_initial_join(group, delay, max(remaining_ms - delay_ms, 0))
                else:
                    self._on_complete_join(group)

        task = group.rebalance_task = self.timer.schedule(delay_ms, expire)
        group.rebalance_is_initial = True

    def _check_join_complete(self, group: Group) -> None:
        task = group.rebalance_task
        if task is None or group.rebalance_is_initial or not group.is_(PREPARING_REBALANCE):
            return
        if group.has_all_members_joined():
            task.cancel()
            group.rebalance_task = None
            self._on_complete_join(group)

    def _on_complete_join(self, group: Group) -> None:
        for member in group.not_yet_rejoined_members():
            if not member.is_static:  # static members keep their place until their session ends
                logger.info("group %s drops member %s, which did not rejoin", group.group_id,
                            member.member_id)
                group.remove(member.member_id)
                self._cancel_heartbeat(member)
        if group.is_(DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # nobody rejoined: wait again, until sessions expire and empty the group
            logger.error("group %s could not complete its rebalance: no member rejoined",
                         group.group_id)
            self._schedule_join(group, group.rebalance_timeout_ms)
            return
        group.init_next_generation(self.clock_ms())
        if group.is_(EMPTY):
            logger.info("group %s with generation %d is now empty (__consumer_offsets-%d)",
                        group.group_id, group.generation_id, self.partition_for(group.group_id))
            error = self.manager.store_group(group, {})
            if error != ErrorCode.NONE:
                logger.warning("could not write the empty metadata of group %s: %s",
                               group.group_id, error.name)
            return
        logger.info("stabilized group %s generation %d (__consumer_offsets-%d) with %d members",
                    group.group_id, group.generation_id, self.partition_for(group.group_id),
                    group.size)
        for member in list(group.members.values()):
            group.maybe_invoke_join(member, group.join_result(member))
            self._schedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        self._schedule_sync_expiry(group)

    def _schedule_sync_expiry(self, group: Group) -> None:
        generation = group.generation_id

        def expire() -> None:
            with group.lock:
                if group.sync_task is not task:
                    return
                group.sync_task = None
                if generation != group.generation_id or \
                        group.state not in (COMPLETING_REBALANCE, STABLE):
                    return
                if not group.has_received_sync_from_all_members():
                    missing = sorted(group.pending_sync_members)
                    for member_id in missing:
                        member = group.remove(member_id)
                        if member is not None:
                            self._cancel_heartbeat(member)
                    self._prepare_rebalance(group, f"removing {missing}, which sent no "
                                                   f"SyncGroup in time")

        task = group.sync_task = self.timer.schedule(group.rebalance_timeout_ms, expire)

    def _cancel_sync_expiry(self, group: Group) -> None:
        group.pending_sync_members.clear()
        if group.sync_task is not None:
            group.sync_task.cancel()
            group.sync_task = None

    def _remove_pending_sync_member(self, group: Group, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if group.has_received_sync_from_all_members() and group.sync_task is not None:
            group.sync_task.cancel()
            group.sync_task = None

    def _reset_and_propagate_assignment_error(self, group: Group, error: ErrorCode) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _set_and_propagate_assignment(self, group: Group, assignment: Mapping[str, bytes]) -> None:
        for member in group.members.values():
            member.assignment = assignment[member.member_id]
        self._propagate_assignment(group, ErrorCode.NONE)

    def _propagate_assignment(self, group: Group, error: ErrorCode) -> None:
        ok = error == ErrorCode.NONE
        for member in list(group.members.values()):
            result = SyncResult(error, member.assignment,
                                group.protocol_type if ok else None,
                                group.protocol_name if ok else None)
            if group.maybe_invoke_sync(member, result):
                # sessions that ended while waiting for the assignment start afresh
                self._schedule_heartbeat(group, member)

    # -- sessions ---------------------------------------------------------------------------

    def _schedule_heartbeat(self, group: Group, member: Member,
                            timeout_ms: int | None = None) -> None:
        """Restart the member's session: it is removed unless it heartbeats (or waits in a
        rebalance) within ``timeout_ms`` (default: its session timeout)."""
        self._cancel_heartbeat(member)

        def expire() -> None:
            with group.lock:
                if member.heartbeat_task is not task:
                    return
                member.heartbeat_task = None
                self._on_heartbeat_expired(group, member)

        task = member.heartbeat_task = self.timer.schedule(
            member.session_timeout_ms if timeout_ms is None else timeout_ms, expire)

    @staticmethod
    def _cancel_heartbeat(member: Member) -> None:
        if member.heartbeat_task is not None:
            member.heartbeat_task.cancel()
            member.heartbeat_task = None

    def _on_heartbeat_expired(self, group: Group, member: Member) -> None:
        if group.is_(DEAD) or group.members.get(member.member_id) is not member:
            return
        if member.has_satisfied_heartbeat():
            return  # waiting in a rebalance: its session restarts when the rebalance ends
        logger.info("member %s of group %s has failed (session timeout %d ms); removing it",
                    member.member_id, group.group_id, member.session_timeout_ms)
        self._remove_member_and_update_group(
            group, member, f"removing member {member.member_id} on heartbeat expiration")

    def _schedule_pending_member_expiry(self, group: Group, member_id: str,
                                        timeout_ms: int) -> None:
        def expire() -> None:
            with group.lock:
                if group.is_pending_member(member_id):
                    logger.info("pending member %s of group %s never joined; forgotten",
                                member_id, group.group_id)
                    self._remove_pending_member_and_update_group(group, member_id)

        self.timer.schedule(timeout_ms, expire)

    def _remove_member_and_update_group(self, group: Group, member: Member, reason: str) -> None:
        # A new member may still wait in its JoinGroup: answer it first, so it can join again.
        group.maybe_invoke_join(member, JoinResult(UNKNOWN_MEMBER_ID,
                                                   ErrorCode.UNKNOWN_MEMBER_ID))
        group.maybe_invoke_sync(member, SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        self._cancel_heartbeat(member)
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, reason)
        elif group.is_(PREPARING_REBALANCE):
            self._check_join_complete(group)

    def _remove_pending_member_and_update_group(self, group: Group, member_id: str) -> None:
        group.remove(member_id)
        if group.is_(PREPARING_REBALANCE):
            self._check_join_complete(group)

    # -- SyncGroup --------------------------------------------------------------------------

    def handle_sync_group(self, group_id: str, generation_id: int, member_id: str,
                          protocol_type: str | None, protocol_name: str | None,
                          group_instance_id: str | None, assignment: Mapping[str, bytes],
                          callback: SyncCallback) -> None:
        error = self.validate_group_status(group_id)
        if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # the rebalance's state was lost with the load: rejoining starts it over
            callback(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
            return
        if error is not None:
            callback(SyncResult(error))
            return
        group = self.manager.get_group(group_id)
        if group is None:
            callback(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        with group.lock:
            error = self._validate_sync(group, generation_id, member_id, protocol_type,
                                        protocol_name, group_instance_id)
            if error is not None:
                callback(SyncResult(error))
            elif group.is_(EMPTY):
                callback(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
            elif group.is_(PREPARING_REBALANCE):
                callback(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
            elif group.is_(COMPLETING_REBALANCE):
                group.get(member_id).awaiting_sync = callback
                self._remove_pending_sync_member(group, member_id)
                if group.is_leader(member_id):
                    self._complete_sync(group, generation_id, member_id, assignment)
            else:  # Stable: the assignment already handed out
                self._remove_pending_sync_member(group, member_id)
                member = group.get(member_id)
                callback(SyncResult(ErrorCode.NONE, member.assignment, group.protocol_type,
                                    group.protocol_name))
                self._schedule_heartbeat(group, member)

    def _validate_sync(self, group: Group, generation_id: int, member_id: str,
                       protocol_type: str | None, protocol_name: str | None,
                       group_instance_id: str | None) -> ErrorCode | None:
        error = group.generation_member_error(member_id, group_instance_id, generation_id)
        if error is not None:
            return error
        if protocol_type is not None and protocol_type != group.protocol_type:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and protocol_name != group.protocol_name:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _complete_sync(self, group: Group, generation_id: int, leader_id: str,
                       assignment: Mapping[str, bytes]) -> None:
        logger.info("assignment received from leader %s of group %s for generation %d; "
                    "%d members", leader_id, group.group_id, generation_id, group.size)
        full = {member_id: bytes(assignment.get(member_id) or b"") for member_id in group.members}
        missing = sorted(set(group.members) - set(assignment))
        if missing:
            logger.warning("empty assignments for members %s of group %s, generation %d",
                           missing, group.group_id, generation_id)
        error = self.manager.store_group(group, full)
        if not group.is_(COMPLETING_REBALANCE) or generation_id != group.generation_id:
            return
        if error != ErrorCode.NONE:
            self._reset_and_propagate_assignment_error(group, error)
            self._maybe_prepare_rebalance(
                group, f"error storing the assignment of generation {generation_id}")
        else:
            self._set_and_propagate_assignment(group, full)
            group.transition_to(STABLE, self.clock_ms())

    # -- Heartbeat --------------------------------------------------------------------------

    def handle_heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None,
                         generation_id: int) -> ErrorCode:
        error = self.validate_group_status(group_id)
        if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            return ErrorCode.NONE  # the group is being loaded: nothing to say yet
        if error is not None:
            return error
        group = self.manager.get_group(group_id)
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        with group.lock:
            error = group.generation_member_error(member_id, group_instance_id, generation_id)
            if error is not None:
                return error
            if group.is_(EMPTY):
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._schedule_heartbeat(group, group.get(member_id))
            if group.is_(PREPARING_REBALANCE):
                return ErrorCode.REBALANCE_IN_PROGRESS
            return ErrorCode.NONE

    # -- LeaveGroup -------------------------------------------------------------------------

    def handle_leave_group(self, group_id: str, leaving: Iterable[LeavingMember]
                           ) -> tuple[ErrorCode, list[tuple[LeavingMember, ErrorCode]]]:
        """The top-level error and one per leaving member."""
        leaving = list(leaving)
        error = self.validate_group_status(group_id)
        if error is not None:
            return error, []
        group = self.manager.get_group(group_id)
        if group is None:
            return ErrorCode.NONE, [(m, ErrorCode.UNKNOWN_MEMBER_ID) for m in leaving]
        with group.lock:
            if group.is_(DEAD):
                return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
            return ErrorCode.NONE, [(m, self._leave(group, m)) for m in leaving]

    def _leave(self, group: Group, leaving: LeavingMember) -> ErrorCode:
        reason = f"removing member {leaving.member_id or leaving.group_instance_id} on " \
                 f"LeaveGroup; client reason: {leaving.reason or 'not provided'}"
        if leaving.member_id == UNKNOWN_MEMBER_ID:  # an administrator removing an instance
            current = group.current_static_member_id(leaving.group_instance_id) \
                if leaving.group_instance_id is not None else None
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._remove_member_and_update_group(group, group.get(current), reason)
            return ErrorCode.NONE
        if group.is_pending_member(leaving.member_id):
            self._remove_pending_member_and_update_group(group, leaving.member_id)
            return ErrorCode.NONE
        error = group.member_error(leaving.member_id, leaving.group_instance_id)
        if error is not None:
            return error
        logger.info("member %s leaves group %s", leaving.member_id, group.group_id)
        self._remove_member_and_update_group(group, group.get(leaving.member_id), reason)
        return ErrorCode.NONE

    # -- offsets, in the offset coordinator ------------------------------------------------

    def handle_commit_offsets(self, group_id: str, member_id: str,
                              group_instance_id: str | None, generation_id: int,
                              offsets: Mapping[TopicPartition, OffsetAndMetadata]
                              ) -> dict[TopicPartition, ErrorCode]:
        """OffsetCommit: :meth:`.offset_coordinator.OffsetCoordinator.handle_commit_offsets`."""
        return self.offsets.handle_commit_offsets(group_id, member_id, group_instance_id,
                                                  generation_id, offsets)

    def append_transactional_offsets(self, group: Group,
                                     offsets: Mapping[TopicPartition, OffsetAndMetadata],
                                     producer_id: int, producer_epoch: int
                                     ) -> dict[TopicPartition, ErrorCode]:
        """TxnOffsetCommit's append:
        :meth:`.offset_coordinator.OffsetCoordinator.append_transactional_offsets`."""
        return self.offsets.append_transactional_offsets(group, offsets, producer_id,
                                                         producer_epoch)

    def commit_transactional_offsets_elsewhere(
            self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
            generation_id: int, offsets: Mapping[TopicPartition, OffsetAndMetadata]
            ) -> dict[TopicPartition, ErrorCode] | None:
        """TxnOffsetCommit for a group that is not a classic group: the errors, or None for a
        classic group (a subclass serving other kinds of group answers for those)."""
        return None

    def on_transaction_completed(self, producer_id: int, partitions: set[int],
                                 committed: bool) -> None:
        """A transaction marker reached ``__consumer_offsets``:
        :meth:`.offset_coordinator.OffsetCoordinator.on_transaction_completed`."""
        self.offsets.on_transaction_completed(producer_id, partitions, committed)

    def handle_fetch_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None,
                             *, require_stable: bool = False, member_id: str | None = None,
                             member_epoch: int = -1
                             ) -> tuple[ErrorCode,
                                        dict[TopicPartition, OffsetAndMetadata | ErrorCode | None]]:
        """OffsetFetch: :meth:`.offset_coordinator.OffsetCoordinator.handle_fetch_offsets`
        (the member id and epoch of OffsetFetch v9 are checked for consumer groups only)."""
        return self.offsets.handle_fetch_offsets(group_id, partitions,
                                                 require_stable=require_stable)

    def handle_delete_offsets(self, group_id: str, partitions: Iterable[TopicPartition]
                              ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: :meth:`.offset_coordinator.OffsetCoordinator.handle_delete_offsets`."""
        return self.offsets.handle_delete_offsets(group_id, partitions)

    # -- listing, describing, deleting ------------------------------------------------------

    def handle_list_groups(self, states: Iterable[str] = (), types: Iterable[str] = ()
                           ) -> tuple[ErrorCode, list[GroupOverview]]:
        """Every group of this broker (filtered by state and type names, case-insensitively);
        COORDINATOR_LOAD_IN_PROGRESS with the groups so far while a partition is loading."""
        if not self.active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        wanted_states = {s.lower() for s in states}
        wanted_types = {t.lower() for t in types}
        if wanted_types and "classic" not in wanted_types:
            groups = []  # every group here is a classic group
        else:
            groups = []
            for group in self.manager.current_groups():
                with group.lock:
                    if group.is_(DEAD):
                        continue
                    if wanted_states and group.state.value.lower() not in wanted_states:
                        continue
                    groups.append(GroupOverview(group.group_id, group.protocol_type or "",
                                                group.state.value))
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if self.manager.is_loading \
            else ErrorCode.NONE
        return error, sorted(groups, key=lambda g: g.group_id)

    def handle_describe_group(self, group_id: str) -> tuple[ErrorCode, GroupSummary]:
        error = self.validate_group_status(group_id, allow_empty_id=True)
        if error is not None:
            return error, EMPTY_SUMMARY
        group = self.manager.get_group(group_id)
        if group is None:
            return ErrorCode.NONE, DEAD_SUMMARY
        with group.lock:
            return ErrorCode.NONE, group.summary()

    def handle_delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        errors: dict[str, ErrorCode] = {}
        eligible: list[Group] = []
        for group_id in group_ids:
            error = self.validate_group_status(group_id, allow_empty_id=True)
            if error is not None:
                errors[group_id] = error
                continue
            group = self.manager.get_group(group_id)
            not_found = ErrorCode.GROUP_ID_NOT_FOUND if self.manager.group_not_exists(group_id) \
                else ErrorCode.NOT_COORDINATOR
            if group is None:
                errors[group_id] = not_found
                continue
            with group.lock:
                if group.is_(DEAD):
                    errors[group_id] = not_found
                elif group.is_(EMPTY):
                    group.transition_to(DEAD, self.clock_ms())
                    eligible.append(group)
                else:
                    errors[group_id] = ErrorCode.NON_EMPTY_GROUP
        if eligible:
            removed = self.manager.cleanup_group_metadata(eligible,
                                                          lambda g: g.offsets.remove_all())
            logger.info("deleted groups %s and their %d offsets",
                        ", ".join(g.group_id for g in eligible), removed)
            errors.update({g.group_id: ErrorCode.NONE for g in eligible})
        return errors
