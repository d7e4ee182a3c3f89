"""The partitions one broker replicates, followed from ZooKeeper and reported to a listener.

Read (and watched): ``/brokers/topics`` (topics), ``/brokers/topics/[topic]`` (replicas),
``/brokers/topics/[topic]/partitions/[p]/state`` of this broker's partitions (leader and ISR) and
``/admin/delete_topics`` (topics being deleted).

A partition is reported assigned once the controller has written its state, and again whenever
its state (or the state znode's version, the partition epoch a leader's conditional ISR writes
need) or its replicas change. The partitions of a topic found changed in one refresh are
reported as one run, between ``on_assignments_begin`` and ``on_assignments_end``: the controller
writes a new topic's partition states in one transaction, and its partitions become served
together, as Kafka's metadata cache takes them in one UpdateMetadata.

A partition is reported removed with ``delete=True`` when its topic is being deleted (a marker
under ``/admin/delete_topics``, honoured only with ``delete.topic.enable``, the switch the
controller obeys) or is gone, and with ``delete=False`` when this broker is no longer among its
replicas. A topic znode with a new creation zxid is a new topic with an old name: the
old one's partitions are reported deleted first, so stale data never passes for the new topic's.

Everything runs on the broker's event loop; ZooKeeper watches only queue refreshes. Watches are
one-shot and kazoo drops them all on a disconnection, so the owner calls :meth:`refresh_all`
after every reconnection.
"""

import logging
from typing import Protocol

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import EventType, WatchedEvent

from .errors import MalformedZnodeError
from .events import EventLoop
from .layout import (
    DELETE_TOPICS_PATH,
    TOPICS_PATH,
    PartitionState,
    TopicPartitionStateZNode,
    TopicZNode,
)


class PartitionListener(Protocol):
    def on_partition_assigned(self, topic: str, partition: int, state: PartitionState,
                              replicas: list[int], version: int = -1) -> None:
        """This broker replicates the partition (as leader or follower); called again when the
        state or the replicas change. ``version`` is the state znode's."""

    def on_partition_removed(self, topic: str, partition: int, *, delete: bool) -> None:
        """This broker no longer replicates the partition; ``delete=True`` when the topic is being
        deleted: the listener deletes the partition's data. May come for a partition never
        reported assigned (a deletion found at startup)."""

    def on_assignments_begin(self, topic: str, partitions: list[int]) -> None:
        """:meth:`on_partition_assigned` follows for each of ``partitions`` of ``topic``, read in
        one refresh, then :meth:`on_assignments_end`: what becomes served in between may be
        shown served together, at the end (a new topic's partitions all at once)."""

    def on_assignments_end(self, topic: str, partitions: list[int]) -> None:
        """The calls :meth:`on_assignments_begin` announced are done (or failed)."""


class ReplicaWatcher:
    def __init__(self, client: KazooClient, broker_id: int, listener: PartitionListener,
                 loop: EventLoop, *, delete_topic_enable: bool = True,
                 logger: logging.Logger | None = None):
        self.client = client
        self.broker_id = broker_id
        self.listener = listener
        self.delete_topic_enable = delete_topic_enable
        self._loop = loop
        self._log = logger or logging.getLogger(__name__)
        self._closed = False
        self._topics: dict[str, int] = {}  # every topic seen -> czxid of its znode
        self._marked: set[str] = set()  # topics with a deletion marker
        self._deleted: set[tuple[str, int]] = set()  # reported deleted, still in ZooKeeper
        # partition -> (state, replicas, state znode version)
        self.hosted: dict[tuple[str, int], tuple[PartitionState, tuple[int, ...], int]] = {}

    def close(self) -> None:
        self._closed = True

    # -- watches (kazoo's thread): queue, never block ------------------------------------------

    def _watch(self, event: WatchedEvent) -> None:
        if self._closed or event.type == EventType.NONE or event.path is None:
            return  # NONE: the connection dropped; refresh_all follows the reconnection
        if event.path == TOPICS_PATH:
            self._loop.put(self.refresh_topics)
        elif event.path == DELETE_TOPICS_PATH:
            self._loop.put(self.refresh_deletions)
        elif event.path.startswith(TOPICS_PATH + "/"):
            topic = event.path[len(TOPICS_PATH) + 1:].split("/", 1)[0]
            self._loop.put(lambda: self.refresh_topic(topic))

    # -- refreshes (the event loop) -------------------------------------------------------------

    def refresh_all(self) -> None:
        self.refresh_deletions(refresh_topics=False)
        self.refresh_topics(everything=True)

    def refresh_topics(self, everything: bool = False) -> None:
        if self._closed:
            return
        topics = set(self.client.get_children(TOPICS_PATH, watch=self._watch))
        for topic in sorted(set(self._topics) - topics):
            self._topic_gone(topic)
        for topic in sorted(topics):
            if everything or topic not in self._topics:
                self.refresh_topic(topic)

    def refresh_deletions(self, refresh_topics: bool = True) -> None:
        if self._closed:
            return
        marked = set(self.client.get_children(DELETE_TOPICS_PATH, watch=self._watch))
        changed = marked ^ self._marked
        self._marked = marked
        for topic in sorted(changed):
            self._deleted = {tp for tp in self._deleted if tp[0] != topic}
            if refresh_topics:
                self.refresh_topic(topic)

    def refresh_topic(self, topic: str) -> None:
        if self._closed:
            return
        path = TopicZNode.path(topic)
        try:
            data, stat = self.client.get(path, watch=self._watch)
        except NoNodeError:
            self._topic_gone(topic)
            return
        if self._topics.get(topic, stat.czxid) != stat.czxid:
            self._log.info("topic %s was deleted and created again", topic)
            self._topic_gone(topic)
        self._topics[topic] = stat.czxid
        try:
            assignment = TopicZNode.decode(data, path)
        except MalformedZnodeError as exc:
            self._log.error("ignoring topic %s: %s", topic, exc)
            return
        mine = {p: replicas for p, replicas in assignment.partitions.items()
                if self.broker_id in replicas}
        if topic in self._marked and self.delete_topic_enable:
            for partition in sorted(set(mine) | {p for t, p in self.hosted if t == topic}):
                if (topic, partition) not in self._deleted:
                    self._remove(topic, partition, delete=True)
                    self._deleted.add((topic, partition))
            return
        for (t, partition) in sorted(self.hosted):
            if t == topic and partition not in mine:
                self._remove(topic, partition, delete=False)
        states = {partition: self._read_state(topic, partition) for partition in sorted(mine)}
        missing = [partition for partition, found in states.items() if found is None]
        if missing and len(missing) < len(states):
            # Read while the controller wrote them? It writes a topic's states in one
            # transaction: once one of them is seen, a second read finds the others.
            states.update((partition, self._read_state(topic, partition)) for partition in missing)
        changed = []  # reported together, once all are read
        for partition, found in states.items():
            if found is not None and \
                    self.hosted.get((topic, partition)) != (found[0], mine[partition], found[1]):
                changed.append((partition, found[0], mine[partition], found[1]))
        if not changed:
            return
        partitions = [partition for partition, *_ in changed]
        self._tell(self.listener.on_assignments_begin, topic, partitions)
        try:
            for partition, state, replicas, version in changed:
                self._assign(topic, partition, state, replicas, version)
        finally:
            self._tell(self.listener.on_assignments_end, topic, partitions)

    def _read_state(self, topic: str, partition: int) -> tuple[PartitionState, int] | None:
        """The partition's state and its znode's version, watched; None (watching for its
        creation) until it has one."""
        path = TopicPartitionStateZNode.path(topic, partition)
        while True:
            try:
                data, stat = self.client.get(path, watch=self._watch)
                break
            except NoNodeError:
                if self.client.exists(path, watch=self._watch) is None:
                    return None
        try:
            return TopicPartitionStateZNode.decode(data, path), stat.version
        except MalformedZnodeError as exc:
            self._log.error("ignoring partition %s-%d: %s", topic, partition, exc)
            return None

    def _topic_gone(self, topic: str) -> None:
        for (t, partition) in sorted(self.hosted):
            if t == topic:
                self._remove(topic, partition, delete=True)
        self._topics.pop(topic, None)
        self._deleted = {tp for tp in self._deleted if tp[0] != topic}

    # -- listener calls: a failing listener is logged, and retried at the next refresh ----------

    def _assign(self, topic: str, partition: int, state: PartitionState,
                replicas: tuple[int, ...], version: int) -> None:
        try:
            self.listener.on_partition_assigned(topic, partition, state, list(replicas),
                                                version)
        except Exception:  # the listener's failure must not stop the watcher
            self._log.exception("listener failed on partition %s-%d assigned", topic, partition)
            return
        self.hosted[(topic, partition)] = (state, replicas, version)

    def _tell(self, call, topic: str, partitions: list[int]) -> None:
        try:
            call(topic, partitions)
        except Exception:  # the listener's failure must not stop the watcher
            self._log.exception("listener failed on partitions %s of %s", partitions, topic)

    def _remove(self, topic: str, partition: int, *, delete: bool) -> None:
        self.hosted.pop((topic, partition), None)
        try:
            self.listener.on_partition_removed(topic, partition, delete=delete)
        except Exception:  # the listener's failure must not stop the watcher
            self._log.exception("listener failed on partition %s-%d removed", topic, partition)
