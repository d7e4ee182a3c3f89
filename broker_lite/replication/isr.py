"""A leader's ISR changes, written to ZooKeeper as Kafka's ZooKeeper-mode leaders write them
(``ZkAlterPartitionManager``, ``ReplicationUtils.updateLeaderAndIsr``).

The leader rewrites its partition's state znode, ``/brokers/topics/[t]/partitions/[p]/state``,
with the new ISR, keeping the leader, the leader epoch and the epoch of the controller that made
it leader, on the condition that the znode still has the version the leader last saw (its
*partition epoch*). A changed version means the controller wrote meanwhile (a new leader epoch,
a broker gone): the write fails, and the leader acts on the controller's state when it arrives.
A write that failed on the version but finds its own data there (a retry of a write that
succeeded) counts as done.

The partitions changed are then announced to the controller in batches: a sequential
``/isr_change_notification/isr_change_[seq]`` naming them, created once no change came for
``linger_ms`` (Kafka: 5 s) or ``max_delay_ms`` (60 s) after the last notice, checked every
``check_interval_ms`` (2.5 s). The controller reads and deletes them.
"""

import logging
import threading
import time
from typing import Protocol

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NoNodeError

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.zk.errors import MalformedZnodeError
from broker_lite.zk.layout import (
    IsrChangeNotificationSequenceZNode,
    PartitionState,
    TopicPartitionStateZNode,
)

logger = logging.getLogger(__name__)


class IsrWriter(Protocol):
    def write(self, partition: TopicPartition, state: PartitionState,
              version: int) -> int | None:
        """Write ``state`` if the state znode still has ``version``; the new version, or None
        when the write failed."""


class ZkIsrWriter:
    """:class:`IsrWriter` on ZooKeeper, with the batched change notifications."""

    def __init__(self, client: KazooClient, *, check_interval_ms: int = 2500,
                 linger_ms: int = 5000, max_delay_ms: int = 60000):
        self.client = client
        self.check_interval_ms = check_interval_ms
        self.linger_ms = linger_ms
        self.max_delay_ms = max_delay_ms
        self._lock = threading.Lock()
        self._changed: set[TopicPartition] = set()
        self._last_change = self._last_propagation = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "ZkIsrWriter":
        self._thread = threading.Thread(target=self._run, name="isr-change-propagation",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def write(self, partition: TopicPartition, state: PartitionState,
              version: int) -> int | None:
        path = TopicPartitionStateZNode.path(partition.topic, partition.partition)
        data = TopicPartitionStateZNode.encode(state)
        try:
            new_version = self.client.set(path, data, version=version).version
        except BadVersionError:
            new_version = self._written_already(path, state)
        except (NoNodeError, KazooException) as exc:
            logger.warning("writing the ISR %s of %s-%d failed: %s", list(state.isr),
                           partition.topic, partition.partition, exc)
            return None
        if new_version is None:
            logger.info("the ISR %s of %s-%d was not written: its state changed since "
                        "version %d", list(state.isr), partition.topic, partition.partition,
                        version)
            return None
        with self._lock:
            self._changed.add(partition)
            self._last_change = time.monotonic()
        return new_version

    def _written_already(self, path: str, state: PartitionState) -> int | None:
        try:
            data, stat = self.client.get(path)
            return stat.version if TopicPartitionStateZNode.decode(data, path) == state else None
        except (NoNodeError, KazooException, MalformedZnodeError):
            return None

    # -- notifications --------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.wait(self.check_interval_ms / 1000):
            try:
                self.maybe_propagate()
            except KazooException:
                logger.warning("could not announce ISR changes; trying again", exc_info=True)

    def maybe_propagate(self, *, force: bool = False) -> bool:
        """Announce the ISR changes not yet announced, when due (or ``force``); whether it
        did."""
        now = time.monotonic()
        with self._lock:
            due = force or self._last_change + self.linger_ms / 1000 < now or \
                self._last_propagation + self.max_delay_ms / 1000 < now
            if not self._changed or not due:
                return False
            changed = sorted(self._changed)
            self._changed.clear()
            self._last_propagation = now
        try:
            self.client.create(IsrChangeNotificationSequenceZNode.PATH_PREFIX,
                               IsrChangeNotificationSequenceZNode.encode(changed),
                               sequence=True, makepath=True)
        except KazooException:
            with self._lock:
                self._changed.update(changed)  # announced with the next batch
            raise
        return True
