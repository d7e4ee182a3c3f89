"""The share groups this broker coordinates: ShareGroupHeartbeat and ShareGroupDescribe
(KIP-932), with the members' session timeouts.

A share group is coordinated where a consumer group of the same id would be: by the leader of
the group's partition of ``__consumer_offsets`` (FindCoordinator key type 0), which is why the
group coordinator's view of that partition answers NOT_COORDINATOR and
COORDINATOR_LOAD_IN_PROGRESS here too. An id already used by a classic group is not a share
group (GROUP_ID_NOT_FOUND, as Kafka answers). Membership is kept in memory (:mod:`.group`): a
member whose coordinator moved or restarted is told UNKNOWN_MEMBER_ID and joins again, while
the share-partitions' state, which is what must not be lost, is in ``__share_group_state``.
A member without a heartbeat for the group's ``share.session.timeout.ms`` leaves the group.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping

from broker_lite.protocol import ErrorCode

from ..common.timer import TimerTask
from ..group.coordinator import GroupCoordinator
from ..group.group import GroupState
from .config import ShareConfig
from .group import HeartbeatResult, ShareGroup
from .group_configs import ShareGroupSettings

logger = logging.getLogger(__name__)


class ShareGroupCoordinator:
    """Share group membership on top of the group coordinator's partitions.

    Parameters
    ----------
    config : ShareConfig
    groups : GroupCoordinator
        Whose partitions of ``__consumer_offsets`` say which groups are coordinated here.
    topics : callable
        ``topics(names) -> {name: (topic id, partition count)}`` of the topics that exist.
    settings : callable
        ``settings(group_id) -> ShareGroupSettings``.
    timer
        A :class:`..common.timer.Timer` for the session timeouts.
    on_member_left : callable
        ``on_member_left(group_id, member_id)``: a member's session expired; release what it
        holds. A member that leaves (epoch -1) closes its share sessions itself, with its last
        acknowledgements, which may reach the partitions' leaders after its leave reached
        the coordinator: what it holds is released by the sessions' close, not the leave.
    """

    def __init__(self, config: ShareConfig, groups: GroupCoordinator,
                 topics: Callable[[Iterable[str]], Mapping[str, tuple[uuid.UUID, int]]],
                 settings: Callable[[str], ShareGroupSettings], timer, *,
                 on_member_left: Callable[[str, str], None] = lambda group, member: None):
        self.config = config
        self.groups = groups
        self.topics = topics
        self.settings = settings
        self.timer = timer
        self.on_member_left = on_member_left
        self._lock = threading.Lock()
        self._groups: dict[str, ShareGroup] = {}
        self._sessions: dict[tuple[str, str], TimerTask] = {}

    def validate(self, group_id: str) -> ErrorCode | None:
        """The error a request about ``group_id`` gets before anything else, or None."""
        error = self.groups.validate_group_status(group_id)
        if error is not None:
            return error
        classic = self.groups.manager.get_group(group_id)
        if classic is not None and not classic.is_(GroupState.EMPTY) and \
                group_id not in self._groups:
            return ErrorCode.GROUP_ID_NOT_FOUND
        return None

    def heartbeat(self, group_id: str, member_id: str, epoch: int,
                  subscribed: list[str] | None, *, rack_id: str | None = None,
                  client_id: str = "", client_host: str = "") -> tuple[HeartbeatResult, int]:
        """One ShareGroupHeartbeat: (result, heartbeat interval)."""
        settings = self.settings(group_id)
        error = self.validate(group_id)
        if error is not None:
            return HeartbeatResult(error), settings.heartbeat_interval_ms
        with self._lock:
            group = self._groups.get(group_id)
            if group is None:
                if epoch != 0:
                    return HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID, message=(
                        f"Share group {group_id} has no member {member_id}.")), \
                        settings.heartbeat_interval_ms
                group = self._groups[group_id] = ShareGroup(group_id, self.config.max_size,
                                                            self.topics)
            group.refresh()
            result = group.heartbeat(member_id, epoch, subscribed, rack_id=rack_id,
                                     client_id=client_id, client_host=client_host)
            if result.error == ErrorCode.NONE and epoch != -1 and result.member_id:
                self._schedule_session(group_id, result.member_id, settings.session_timeout_ms)
            elif epoch == -1:
                self._cancel_session(group_id, member_id)
        return result, settings.heartbeat_interval_ms

    def describe(self, group_id: str) -> tuple[ErrorCode, ShareGroup | None]:
        error = self.validate(group_id)
        if error is not None:
            return error, None
        with self._lock:
            group = self._groups.get(group_id)
            if group is None:
                return ErrorCode.GROUP_ID_NOT_FOUND, None
            group.refresh()
            return ErrorCode.NONE, group

    def group_ids(self) -> list[str]:
        with self._lock:
            return sorted(g for g in self._groups
                          if self.groups.validate_group_status(g) is None)

    def is_share_group(self, group_id: str) -> bool:
        with self._lock:
            return group_id in self._groups

    def _schedule_session(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        self._cancel_session(group_id, member_id)

        def expire() -> None:
            with self._lock:
                group = self._groups.get(group_id)
                removed = group is not None and group.remove(member_id)
                self._sessions.pop((group_id, member_id), None)
            if removed:
                logger.info("share group %s: member %s left (no heartbeat for %d ms)",
                            group_id, member_id, timeout_ms)
                self.on_member_left(group_id, member_id)

        self._sessions[(group_id, member_id)] = self.timer.schedule(timeout_ms, expire)

    def _cancel_session(self, group_id: str, member_id: str) -> None:
        task = self._sessions.pop((group_id, member_id), None)
        if task is not None:
            task.cancel()
