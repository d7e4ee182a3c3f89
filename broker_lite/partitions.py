"""The partitions this broker holds on disk, kept in step with ZooKeeper's assignments.

A :class:`~broker_lite.zk.replicas.PartitionListener` backed by the :class:`LogManager`: a
partition assigned to this broker gets its log, created with its topic's overrides from
``/config/topics/[topic]``; the partitions of a deleted topic lose their logs on disk; a partition
moved to other brokers stops being served but keeps its data until its topic is deleted. The
latest partition state (leader, leader epoch, ISR) of each held partition is kept for the request
handlers.
"""

import threading

from kazoo.client import KazooClient

from broker_lite.log import Log
from broker_lite.log.manager import LogManager
from broker_lite.zk.admin import get_topic_config
from broker_lite.zk.layout import PartitionState


class PartitionManager:
    def __init__(self, log_manager: LogManager, client: KazooClient, broker_id: int = -1):
        """``broker_id`` may be set later, once ZooKeeper has generated it."""
        self.log_manager = log_manager
        self.client = client
        self.broker_id = broker_id
        self._states: dict[tuple[str, int], PartitionState] = {}
        self._lock = threading.Lock()

    def on_partition_assigned(self, topic: str, partition: int, state: PartitionState,
                              replicas: list[int]) -> None:
        log = self.log_manager.get_or_create(topic, partition,
                                             get_topic_config(self.client, topic))
        if state.leader == self.broker_id:
            # As Kafka's makeLeader: the new epoch starts at the log end, even before it writes.
            log.leader_epochs.assign(state.leader_epoch, log.log_end_offset)
        with self._lock:
            self._states[(topic, partition)] = state

    def on_partition_removed(self, topic: str, partition: int, *, delete: bool) -> None:
        with self._lock:
            self._states.pop((topic, partition), None)
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
