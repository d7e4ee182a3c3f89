"""The controller: the one broker that owns ``/controller`` keeps every partition led.

Election, as Kafka 2.x registers a controller: read ``/controller_epoch`` and its znode version,
then in one ZooKeeper transaction create the ephemeral ``/controller`` and write the epoch + 1
(create ``1`` if absent) conditionally on that version. Losing either race means another broker
won; everyone else watches ``/controller`` and runs again when it goes, i.e. when the
controller's session ends.

Once elected, the controller watches ``/brokers/ids``, ``/brokers/topics``, each topic's znode
and ``/admin/delete_topics``, and after any change brings ZooKeeper to the state it derives:

* a partition without a state gets one: leader = first live replica, ISR = the live replicas,
  leader epoch 0 (none while no replica is live);
* a partition whose leader is not live gets the first live replica still in its ISR as leader,
  leader epoch + 1; with none, the partition goes offline (leader -1), keeping the last ISR member
  so that only it may lead again (no unclean election);
* a dead follower leaves the ISR (leader epoch + 1), as Kafka 2.x's controller does. Bringing a
  returning follower back into the ISR is its leader's job, once it has caught up;
* a topic marked under ``/admin/delete_topics`` is deleted once all its replicas are live (they
  see the marker and delete their data): ``/brokers/topics/[topic]`` recursively, then
  ``/config/topics/[topic]``, then the marker, so a successor finishes an interrupted deletion.
  Without ``delete.topic.enable`` the marker is removed and the topic kept.

Every state written names the controller epoch and is fenced: the transaction also checks that
``/controller_epoch`` still has the version this controller wrote, so a deposed controller's
writes fail instead of overwriting its successor's.
"""

import logging
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NoNodeError
from kazoo.protocol.states import EventType, WatchedEvent

from broker_lite.vocabulary import now_ms

from .errors import MalformedZnodeError
from .events import EventLoop, EventLoopStoppedError
from .layout import (
    DELETE_TOPICS_PATH,
    NO_LEADER,
    TOPICS_PATH,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerInfo,
    ControllerZNode,
    DeleteTopicsTopicZNode,
    PartitionState,
    TopicPartitionStateZNode,
    TopicZNode,
    topic_partition_path,
    topic_partitions_path,
)
from .registration import live_broker_ids

RETRY_DELAY_S = 0.2


def desired_state(state: PartitionState | None, replicas: tuple[int, ...], live: set[int],
                  controller_epoch: int) -> PartitionState | None:
    """The state the controller writes for a partition, given the live brokers (``state`` itself
    when nothing needs to change; None for a new partition without a live replica)."""
    if state is None:
        live_replicas = tuple(r for r in replicas if r in live)
        if not live_replicas:
            return None
        return PartitionState(live_replicas[0], 0, live_replicas, controller_epoch)
    live_isr = tuple(r for r in state.isr if r in live)
    if state.leader != NO_LEADER and state.leader in live:
        if live_isr == state.isr:
            return state
        return PartitionState(state.leader, state.leader_epoch + 1, live_isr, controller_epoch)
    candidates = [r for r in replicas if r in live_isr]
    if candidates:
        return PartitionState(candidates[0], state.leader_epoch + 1, live_isr, controller_epoch)
    if state.leader == NO_LEADER:
        return state
    last = (state.leader,) if state.leader in state.isr else state.isr[:1]
    return PartitionState(NO_LEADER, state.leader_epoch + 1, last, controller_epoch)


class Controller:
    """The controller role of one broker: campaigns for ``/controller`` and, while holding it,
    does the controller's work. Runs on its own event loop thread."""

    def __init__(self, client: KazooClient, broker_id: int, *, delete_topic_enable: bool = True,
                 logger: logging.Logger | None = None):
        self.client = client
        self.broker_id = broker_id
        self.delete_topic_enable = delete_topic_enable
        self._log = logger or logging.getLogger(__name__)
        self._loop = EventLoop(f"zk-controller-{broker_id}", self._log)
        self.active = False
        self.epoch: int | None = None
        self._epoch_version: int | None = None
        self._pending_lock = threading.Lock()
        self._pending = False
        self._stopped = False

    # -- lifecycle (caller's thread) -------------------------------------------------------------

    def start(self) -> None:
        self._loop.start()
        self._loop.put(self._elect)

    def stop(self, timeout: float = 10.0) -> None:
        """Give up the role (deleting ``/controller`` if held) and stop the loop."""
        self._stopped = True
        if not self.client.connected:  # /controller goes with the session; nobody to tell
            self._resign()
            self._loop.stop(timeout)
            return
        try:
            self._loop.call(self._resign_for_shutdown, timeout)
        except (EventLoopStoppedError, TimeoutError):
            pass
        except KazooException:
            self._log.warning("controller %d: could not delete %s on shutdown", self.broker_id,
                              ControllerZNode.PATH, exc_info=True)
        self._loop.stop(timeout)

    def session_lost(self) -> None:
        """The session ended, and ``/controller`` with it (called on kazoo's thread)."""
        if self.active:
            self._log.info("controller %d: session lost, resigning", self.broker_id)
        self._resign()

    def reconnected(self) -> None:
        """A session is usable again; watches must be set anew (called on kazoo's thread)."""
        self._loop.put(self._elect)

    # -- election (event loop) --------------------------------------------------------------------

    def _watch_controller(self, event: WatchedEvent) -> None:
        if not self._stopped and event.type != EventType.NONE:
            self._loop.put(self._elect)

    def _session_id(self) -> int | None:
        client_id = self.client.client_id
        return client_id[0] if client_id else None

    def _elect(self) -> None:
        if self._stopped:
            return
        while True:
            try:
                data, stat = self.client.get(ControllerZNode.PATH, watch=self._watch_controller)
            except NoNodeError:
                if self._register():
                    return
                continue  # lost the race: read the winner, watching it
            if self._holds(data, stat):
                if not self.active:  # still ours from before a reconnection
                    epoch_data, epoch_stat = self.client.get(ControllerEpochZNode.PATH)
                    self._activate(ControllerEpochZNode.decode(epoch_data), epoch_stat.version)
                self._request_reconcile()  # re-sets the watches a reconnection dropped
            elif self.active:
                self._log.info("controller %d: %s now names another broker, resigning",
                               self.broker_id, ControllerZNode.PATH)
                self._resign()
            return

    def _holds(self, data: bytes, stat) -> bool:
        try:
            info = ControllerZNode.decode(data)
        except MalformedZnodeError as exc:
            self._log.error("%s", exc)
            return False
        return info.broker_id == self.broker_id and stat.ephemeralOwner == self._session_id()

    def _register(self) -> bool:
        """One attempt at the election transaction; True when this broker won."""
        try:
            epoch_data, epoch_stat = self.client.get(ControllerEpochZNode.PATH)
            epoch = ControllerEpochZNode.decode(epoch_data) + 1
        except NoNodeError:
            epoch_stat, epoch = None, 1
        transaction = self.client.transaction()
        if epoch_stat is None:
            transaction.create(ControllerEpochZNode.PATH, ControllerEpochZNode.encode(epoch))
        else:
            transaction.set_data(ControllerEpochZNode.PATH, ControllerEpochZNode.encode(epoch),
                                 version=epoch_stat.version)
        info = ControllerInfo(self.broker_id, now_ms())
        transaction.create(ControllerZNode.PATH, ControllerZNode.encode(info), ephemeral=True)
        results = transaction.commit()
        if any(isinstance(r, Exception) for r in results):
            return False
        epoch_version = 0 if epoch_stat is None else results[0].version
        # notice losing the znode (a deleted /controller forces a new election, as in Kafka)
        self.client.exists(ControllerZNode.PATH, watch=self._watch_controller)
        self._activate(epoch, epoch_version)
        self._request_reconcile()
        return True

    def _activate(self, epoch: int, epoch_version: int) -> None:
        self.epoch, self._epoch_version, self.active = epoch, epoch_version, True
        self._log.info("broker %d is the controller, epoch %d", self.broker_id, epoch)

    def _resign(self) -> None:
        self.active = False
        self.epoch = self._epoch_version = None

    def _resign_for_shutdown(self) -> None:
        if not self.active:
            return
        self._resign()
        try:
            data, stat = self.client.get(ControllerZNode.PATH)
        except NoNodeError:
            return
        if self._holds(data, stat):
            try:
                self.client.delete(ControllerZNode.PATH, version=stat.version)
            except (NoNodeError, BadVersionError):
                pass

    # -- the controller's work (event loop) -------------------------------------------------------

    def _watch_cluster(self, event: WatchedEvent) -> None:
        if not self._stopped and event.type != EventType.NONE:
            self._request_reconcile()

    def _request_reconcile(self) -> None:
        with self._pending_lock:
            if self._pending:
                return  # one queued pass sees every change made before it runs
            self._pending = True
        self._loop.put(self._reconcile)

    def _retry_later(self) -> None:
        timer = threading.Timer(RETRY_DELAY_S, self._request_reconcile)
        timer.daemon = True
        timer.start()

    def _reconcile(self) -> None:
        with self._pending_lock:
            self._pending = False
        if not self.active or self._stopped:
            return
        live = set(live_broker_ids(self.client, watch=self._watch_cluster))
        topics = set(self.client.get_children(TOPICS_PATH, watch=self._watch_cluster))
        marked = set(self.client.get_children(DELETE_TOPICS_PATH, watch=self._watch_cluster))
        deleted = {topic for topic in sorted(marked) if self._delete_topic(topic, topics, live)}
        # topics waiting for deletion still get leaders elected: their replicas may serve them
        for topic in sorted(topics - deleted):
            if not self.active:
                return
            self._reconcile_topic(topic, live)

    def _reconcile_topic(self, topic: str, live: set[int]) -> None:
        # read once: session_lost() may resign on kazoo's thread while this runs
        epoch, epoch_version = self.epoch, self._epoch_version
        if epoch is None or epoch_version is None:
            return
        path = TopicZNode.path(topic)
        try:
            data, _stat = self.client.get(path, watch=self._watch_cluster)
        except NoNodeError:
            return
        try:
            assignment = TopicZNode.decode(data, path)
        except MalformedZnodeError as exc:
            self._log.error("controller %d: ignoring topic %s: %s", self.broker_id, topic, exc)
            return
        try:
            existing = set(self.client.get_children(topic_partitions_path(topic)))
        except NoNodeError:
            existing = None
        transaction = self.client.transaction()
        transaction.check(ControllerEpochZNode.PATH, epoch_version)
        changes = []
        for partition, replicas in assignment.partitions.items():
            state_path = TopicPartitionStateZNode.path(topic, partition)
            state, version = None, None
            if existing is not None and str(partition) in existing:
                try:
                    state_data, state_stat = self.client.get(state_path)
                    state = TopicPartitionStateZNode.decode(state_data, state_path)
                    version = state_stat.version
                except NoNodeError:
                    pass
                except MalformedZnodeError as exc:
                    self._log.error("controller %d: rewriting %s", self.broker_id, exc)
            new = desired_state(state, replicas, live, epoch)
            if new is None or new == state:
                continue
            encoded = TopicPartitionStateZNode.encode(new)
            if version is not None:
                transaction.set_data(state_path, encoded, version=version)
            else:
                if existing is None:
                    transaction.create(topic_partitions_path(topic), b"")
                    existing = set()
                if str(partition) not in existing:
                    transaction.create(topic_partition_path(topic, partition), b"")
                    existing.add(str(partition))
                transaction.create(state_path, encoded)
            changes.append((partition, state, new))
        if not changes:
            return
        results = transaction.commit()
        if isinstance(results[0], BadVersionError):
            self._log.warning("controller %d: epoch %d was superseded, resigning",
                              self.broker_id, epoch)
            self._resign()
            self._loop.put(self._elect)
        elif any(isinstance(r, Exception) for r in results):
            # a leader changed an ISR, or the topic went, since we read: read again shortly
            self._retry_later()
        else:
            for partition, old, new in changes:
                self._log.info("controller %d: %s-%d %s -> %s", self.broker_id, topic, partition,
                               old, new)

    def _delete_topic(self, topic: str, topics: set[str], live: set[int]) -> bool:
        """Handle one deletion marker; True when the topic is gone."""
        marker = DeleteTopicsTopicZNode.path(topic)
        if not self.delete_topic_enable:
            self._log.warning("controller %d: delete.topic.enable is false, not deleting %s",
                              self.broker_id, topic)
            self._delete_if_present(marker)
            return False
        if topic in topics:
            path = TopicZNode.path(topic)
            try:
                assignment = TopicZNode.decode(self.client.get(path)[0], path)
                replicas = {r for rs in assignment.partitions.values() for r in rs}
            except NoNodeError:
                replicas = set()
            except MalformedZnodeError:
                replicas = set()  # nobody can host an unreadable topic: deleting it is safe
            offline = sorted(replicas - live)
            if offline:
                # those brokers must see the marker to delete their data; retried when they return
                self._log.info("controller %d: deletion of %s waits for brokers %s",
                               self.broker_id, topic, offline)
                return False
            self.client.delete(TopicZNode.path(topic), recursive=True)
        self._delete_if_present(ConfigEntityZNode.path("topics", topic))
        self._delete_if_present(marker)
        self._log.info("controller %d: deleted topic %s", self.broker_id, topic)
        return True

    def _delete_if_present(self, path: str) -> None:
        try:
            self.client.delete(path)
        except NoNodeError:
            pass
