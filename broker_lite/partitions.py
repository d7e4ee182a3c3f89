"""The partitions this broker holds on disk, kept in step with ZooKeeper's assignments.

A :class:`~broker_lite.zk.replicas.PartitionListener` backed by the :class:`LogManager`: a
partition assigned to this broker gets its log, created with its topic's overrides (in a
broker, read from ``/config/topics/[topic]``); the partitions of a deleted topic lose their logs
on disk; a partition moved to other brokers stops being served but keeps its data until its
topic is deleted. The latest partition state (leader, leader epoch, ISR) of each held partition
is kept for the request handlers.

Leadership listeners registered for a topic (the group coordinator, for ``__consumer_offsets``)
are told when this broker becomes the leader of one of its partitions (or its leader epoch
changes) and when it stops leading one. They are called on ZooKeeper's event thread, so they only
queue work. The broker may learn its own id after the partitions are loaded (a generated
``broker.id``): leadership is judged again when it is set.
"""

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Protocol

from broker_lite.log import Log
from broker_lite.log.manager import LogManager
from broker_lite.zk.layout import PartitionState

logger = logging.getLogger(__name__)


class LeadershipListener(Protocol):
    def on_elected(self, partition: int, leader_epoch: int) -> None:
        """This broker leads ``partition`` (newly, or in a new leader epoch)."""

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        """This broker no longer leads ``partition`` (``leader_epoch`` None: it is gone)."""


class PartitionManager:
    def __init__(self, log_manager: LogManager,
                 topic_config: Callable[[str], Mapping[str, str]], broker_id: int = -1):
        """``topic_config(topic)`` gives a topic's overrides; ``broker_id`` may be set later,
        once ZooKeeper has generated it."""
        self.log_manager = log_manager
        self.topic_config = topic_config
        self._broker_id = broker_id
        self._states: dict[tuple[str, int], PartitionState] = {}
        self._lock = threading.Lock()
        self._leadership_listeners: dict[str, list[LeadershipListener]] = {}
        self._led: dict[tuple[str, int], int] = {}  # partitions led -> leader epoch told

    @property
    def broker_id(self) -> int:
        return self._broker_id

    @broker_id.setter
    def broker_id(self, broker_id: int) -> None:
        self._broker_id = broker_id
        with self._lock:
            states = dict(self._states)
        for (topic, partition), state in sorted(states.items()):
            self._leadership_changed(topic, partition, state)

    def add_leadership_listener(self, topic: str, listener: LeadershipListener) -> None:
        """Tell ``listener`` when this broker starts or stops leading a partition of
        ``topic`` (at once for those it leads already)."""
        with self._lock:
            self._leadership_listeners.setdefault(topic, []).append(listener)
            led = sorted((p, self._states[(t, p)]) for (t, p) in self._states if t == topic)
        for partition, state in led:
            self._leadership_changed(topic, partition, state)

    def _leadership_changed(self, topic: str, partition: int,
                            state: PartitionState | None) -> None:
        leads = state is not None and self._broker_id >= 0 and state.leader == self._broker_id
        with self._lock:
            listeners = list(self._leadership_listeners.get(topic, ()))
            if not listeners:
                return
            before = self._led.get((topic, partition))
            if leads:
                self._led[(topic, partition)] = state.leader_epoch
            else:
                self._led.pop((topic, partition), None)
        for listener in listeners:
            try:
                if leads and before != state.leader_epoch:
                    listener.on_elected(partition, state.leader_epoch)
                elif not leads and before is not None:
                    listener.on_resigned(partition, state.leader_epoch if state else None)
            except Exception:  # one listener's failure must not stop the others
                logger.exception("leadership listener failed for %s-%d", topic, partition)

    def on_partition_assigned(self, topic: str, partition: int, state: PartitionState,
                              replicas: list[int]) -> None:
        log = self.log_manager.get_or_create(topic, partition, self.topic_config(topic))
        if state.leader == self.broker_id:
            # As Kafka's makeLeader: the new epoch starts at the log end, even before it writes.
            log.leader_epochs.assign(state.leader_epoch, log.log_end_offset)
        with self._lock:
            self._states[(topic, partition)] = state
        self._leadership_changed(topic, partition, state)

    def on_partition_removed(self, topic: str, partition: int, *, delete: bool) -> None:
        with self._lock:
            self._states.pop((topic, partition), None)
        self._leadership_changed(topic, partition, None)
        if delete:
            self.log_manager.delete(topic, partition)

    def state(self, topic: str, partition: int) -> PartitionState | None:
        with self._lock:
            return self._states.get((topic, partition))

    def is_leader(self, topic: str, partition: int) -> bool:
        state = self.state(topic, partition)
        return state is not None and state.leader == self.broker_id

    def leader_log(self, topic: str, partition: int) -> Log | None:
        """The log of a partition this broker leads, else None (NOT_LEADER_OR_FOLLOWER)."""
        return self.log_manager.get(topic, partition) if self.is_leader(topic, partition) else None
