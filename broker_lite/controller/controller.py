"""The controller: the one broker that owns ``/controller`` keeps every partition led.

Election, as Kafka 2.x registers a controller: read ``/controller_epoch`` and its znode version,
then in one ZooKeeper transaction create the ephemeral ``/controller`` and write the epoch + 1
(create ``1`` if absent) conditionally on that version. Losing either race means another broker
won; everyone else watches ``/controller`` and runs again when it goes, i.e. when the
controller's session ends.

Once elected, the controller watches ``/brokers/ids``, ``/brokers/topics``, each topic's znode,
``/admin/delete_topics``, ``/isr_change_notification``, ``/admin/reassign_partitions`` and
``/admin/preferred_replica_election``, and after any change brings ZooKeeper to the state it
derives (:func:`.elections.desired_state`: new partitions get leaders, dead or shutting-down
followers leave the ISR, a dead leader is replaced by the first live replica in the ISR, or by
any live replica where ``unclean.leader.election.enable`` allows it, else the partition goes
offline). A broker registered again under a new session (a restart the controller did not see
as a death) is treated as one that died and came back, as Kafka treats a *bounced* broker.

How brokers learn the decisions: through ZooKeeper itself, not LeaderAndIsr requests. Every
broker watches the state znodes of its partitions (:mod:`.replicas`) and becomes leader or
follower as they say; the znode version is the partition epoch a leader's conditional ISR
writes need. The controller in turn learns of the leaders' ISR changes from the sequential
``/isr_change_notification`` znodes they leave (it deletes them), and watches the state znodes of
partitions being reassigned directly, as Kafka's ZooKeeper-mode controller does.

A log dir that fails on a broker (KIP-112) is announced by a sequential
``/log_dir_event_notification/log_dir_event_<seq>`` znode naming the broker. The controller reads
and deletes each, asks that broker which of its replicas are offline, and from then on counts
those replicas as dead: they leave the ISR, and the partitions they led get a new leader among
the other replicas in the ISR (Kafka's ``onBrokerLogDirFailure``). Kafka's controller learns them
from the KAFKA_STORAGE_ERROR of the broker's answers to LeaderAndIsr; broker_lite's brokers take
no LeaderAndIsr, so the broker is asked with OffsetForLeaderEpoch as the debugging replica, which
every replica answers, an offline one with the same error (``offline_replicas_of``, given by the
broker). A broker's offline replicas are forgotten when it registers again: a restarted broker
serves every log dir again.

Beyond keeping partitions led, the controller answers (on its event thread):

* **controlled shutdown** (ControlledShutdown, :meth:`Controller.controlled_shutdown`): the
  broker is marked shutting down; the partitions it leads with other replicas in the ISR get
  another leader, and it leaves every ISR it shares. The broker is told which partitions it
  still leads and asks again until none is left (``controlled.shutdown.max.retries``);
* **leader elections** (ElectLeaders, ``/admin/preferred_replica_election``, and every
  ``leader.imbalance.check.interval.seconds`` with ``auto.leader.rebalance.enable``, for the
  brokers whose share of preferred partitions led elsewhere exceeds
  ``leader.imbalance.per.broker.percentage``): :mod:`.elections`;
* **partition reassignments** (AlterPartitionReassignments, ListPartitionReassignments and
  ``/admin/reassign_partitions``): :mod:`.reassignment`.

A topic marked under ``/admin/delete_topics`` is deleted once all its replicas are live (they
see the marker and delete their data): ``/brokers/topics/[topic]`` recursively, then
``/config/topics/[topic]``, then the marker, so a successor finishes an interrupted deletion.
Without ``delete.topic.enable`` the marker is removed and the topic kept.

Every state written names the controller epoch and is fenced: the transaction also checks that
``/controller_epoch`` still has the version this controller wrote, so a deposed controller's
writes fail instead of overwriting its successor's.
"""

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NoNodeError
from kazoo.protocol.states import EventType, WatchedEvent

from broker_lite.client.errors import KafkaClientError
from broker_lite.common.vocabulary import TopicPartition, now_ms
from broker_lite.config.parsers import InvalidValue, boolean
from broker_lite.protocol import ErrorCode
from broker_lite.zk.errors import MalformedZnodeError
from broker_lite.zk.events import EventLoop, EventLoopStoppedError
from broker_lite.zk.layout import (
    BROKER_IDS_PATH,
    DEFAULT_ENTITY,
    DELETE_TOPICS_PATH,
    ISR_CHANGE_NOTIFICATION_PATH,
    LOG_DIR_EVENT_NOTIFICATION_PATH,
    TOPICS_PATH,
    BrokerIdZNode,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerInfo,
    ControllerZNode,
    DeleteTopicsTopicZNode,
    LogDirEventNotificationSequenceZNode,
    PartitionState,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicAssignment,
    TopicPartitionStateZNode,
    TopicZNode,
    topic_partition_path,
    topic_partitions_path,
)

from .elections import desired_state, preferred_election, unclean_election
from .reassignment import Assignment, check_target, complete, is_complete, with_assignments

__all__ = ["Controller", "ElectionType", "desired_state"]

RETRY_DELAY_S = 0.2
# asks a broker which of these partitions it holds in an offline log dir
OfflineReplicasOf = Callable[[int, list[TopicPartition]], set[TopicPartition]]
UNCLEAN = "unclean.leader.election.enable"
ELECTION_ATTEMPTS = 3


class ElectionType:
    """ElectLeaders' election types."""

    PREFERRED = 0
    UNCLEAN = 1


@dataclass(frozen=True)
class Outcome:
    """The answer to one partition of a request to the controller."""

    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


@dataclass(frozen=True)
class Reassignment:
    """A partition being reassigned, as ListPartitionReassignments lists it."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


@dataclass(frozen=True)
class ControllerSettings:
    """The broker settings the controller's own work follows."""

    delete_topic_enable: bool = True
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_s: float = 300.0
    leader_imbalance_per_broker_percentage: int = 10

    @classmethod
    def from_broker_config(cls, config) -> "ControllerSettings":
        return cls(config["delete.topic.enable"], config["auto.leader.rebalance.enable"],
                   config["leader.imbalance.check.interval.seconds"],
                   config["leader.imbalance.per.broker.percentage"])


class Controller:
    """The controller role of one broker: campaigns for ``/controller`` and, while holding it,
    does the controller's work. Runs on its own event loop thread.

    ``unclean_default()`` is the broker's ``unclean.leader.election.enable`` (topics without
    an override follow it; a dynamic cluster-wide value in ``/config/brokers/<default>`` comes
    first). ``offline_replicas_of(broker, partitions)`` asks a broker which of ``partitions``
    it holds in an offline log dir (raising :class:`OSError` or
    :class:`~broker_lite.client.errors.KafkaClientError` when it cannot be asked); without it,
    log dir events are deleted unheeded.
    """

    def __init__(self, client: KazooClient, broker_id: int, *, delete_topic_enable: bool = True,
                 settings: ControllerSettings | None = None,
                 unclean_default: Callable[[], bool] = lambda: False,
                 offline_replicas_of: OfflineReplicasOf | None = None,
                 logger: logging.Logger | None = None):
        self.client = client
        self.broker_id = broker_id
        self.settings = settings or ControllerSettings(delete_topic_enable=delete_topic_enable)
        self.delete_topic_enable = self.settings.delete_topic_enable
        self.unclean_default = unclean_default
        self.offline_replicas_of = offline_replicas_of
        # broker id -> its replicas in offline log dirs, until it registers again
        self.offline_replicas: dict[int, set[TopicPartition]] = {}
        self._log = logger or logging.getLogger(__name__)
        self._loop = EventLoop(f"zk-controller-{broker_id}", self._log)
        self.active = False
        self.epoch: int | None = None
        self._epoch_version: int | None = None
        self._pending_lock = threading.Lock()
        self._pending = False
        self._stopped = False
        self.shutting_down: dict[int, int] = {}  # broker id -> its broker epoch
        self._broker_epochs: dict[int, int] = {}  # live broker id -> its registration's czxid
        self._rebalance_timer: threading.Timer | None = None

    # -- lifecycle (caller's thread) -------------------------------------------------------------

    def start(self) -> None:
        self._loop.start()
        self._loop.put(self._elect)

    def stop(self, timeout: float = 10.0) -> None:
        """Give up the role (deleting ``/controller`` if held) and stop the loop."""
        self._stopped = True
        self._cancel_rebalance()
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
                self._watch_admin_requests()
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
        self._watch_admin_requests()
        return True

    def _activate(self, epoch: int, epoch_version: int) -> None:
        self.epoch, self._epoch_version, self.active = epoch, epoch_version, True
        self.shutting_down.clear()
        self._broker_epochs.clear()
        self.offline_replicas.clear()  # asked again: the notices are read from the start
        self._log.info("broker %d is the controller, epoch %d", self.broker_id, epoch)
        self._schedule_rebalance()

    def _resign(self) -> None:
        self.active = False
        self.epoch = self._epoch_version = None
        self._cancel_rebalance()

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

    # -- keeping partitions led (event loop) -------------------------------------------------------

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

    def _live_brokers(self, watch=None) -> dict[int, int]:
        """The registered brokers, each with its broker epoch (its registration's czxid)."""
        brokers = {}
        for child in self.client.get_children(BROKER_IDS_PATH, watch=watch):
            if child.isdigit():
                stat = self.client.exists(BrokerIdZNode.path(int(child)))
                if stat is not None:
                    brokers[int(child)] = stat.czxid
        return brokers

    def _reconcile(self) -> None:
        with self._pending_lock:
            self._pending = False
        if not self.active or self._stopped:
            return
        brokers = self._live_brokers(watch=self._watch_cluster)
        bounced = {b for b, epoch in brokers.items()
                   if self._broker_epochs.get(b, epoch) != epoch}
        for broker, epoch in list(self.shutting_down.items()):
            if brokers.get(broker) != epoch:  # gone, or back under a new session
                del self.shutting_down[broker]
        self._broker_epochs = brokers
        live = set(brokers)
        for broker in list(self.offline_replicas):
            if broker not in live or broker in bounced:  # started again: every dir serves
                del self.offline_replicas[broker]
        self._delete_isr_change_notifications()
        topics = set(self.client.get_children(TOPICS_PATH, watch=self._watch_cluster))
        self._handle_log_dir_events(topics, live)
        marked = set(self.client.get_children(DELETE_TOPICS_PATH, watch=self._watch_cluster))
        deleted = {topic for topic in sorted(marked) if self._delete_topic(topic, topics, live)}
        if bounced:
            self._log.info("controller %d: brokers %s registered again; moving what they led",
                           self.broker_id, sorted(bounced))
        # topics waiting for deletion still get leaders elected: their replicas may serve them
        for view in ([live - bounced, live] if bounced else [live]):
            for topic in sorted(topics - deleted):
                if not self.active:
                    return
                self._reconcile_topic(topic, view, topic in marked)

    def _reconcile_topic(self, topic: str, live: set[int], marked: bool) -> None:
        # read once: session_lost() may resign on kazoo's thread while this runs
        epoch, epoch_version = self.epoch, self._epoch_version
        if epoch is None or epoch_version is None:
            return
        path = TopicZNode.path(topic)
        try:
            data, topic_stat = self.client.get(path, watch=self._watch_cluster)
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
        shutting_down = set(self.shutting_down)
        offline = {b: {tp.partition for tp in tps if tp.topic == topic}
                   for b, tps in self.offline_replicas.items()}
        unclean: list[bool] = []  # read once, when a partition needs it

        def unclean_enabled() -> bool:
            if not unclean:
                unclean.append(self._unclean_enabled(topic))
            return unclean[0]

        transaction = self.client.transaction()
        transaction.check(ControllerEpochZNode.PATH, epoch_version)
        changes, completed, leaderless = [], {}, False
        for partition, replicas in assignment.partitions.items():
            # a replica in an offline log dir counts as dead for its partition
            serving = {b for b in live if partition not in offline.get(b, ())}
            current = Assignment.of(assignment, partition)
            reassigning = current.being_reassigned and not marked
            state_path = TopicPartitionStateZNode.path(topic, partition)
            state, version = None, None
            if existing is not None and str(partition) in existing:
                try:
                    # a partition being reassigned completes on an ISR change: watch it
                    state_data, state_stat = self.client.get(
                        state_path, watch=self._watch_cluster if reassigning else None)
                    state = TopicPartitionStateZNode.decode(state_data, state_path)
                    version = state_stat.version
                except NoNodeError:
                    pass
                except MalformedZnodeError as exc:
                    self._log.error("controller %d: rewriting %s", self.broker_id, exc)
            needs_unclean = state is not None and state.leader not in serving
            new = desired_state(state, replicas, serving, epoch, shutting_down=shutting_down,
                                unclean=needs_unclean and unclean_enabled())
            if reassigning and is_complete(new or state, current):
                done = complete(new or state, current, serving - shutting_down, epoch)
                if done is not None:
                    new = done
                    completed[partition] = Assignment(current.target_replicas)
            leaderless |= (new or state) is not None and (new or state).leader < 0
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
        if leaderless:
            self._watch_unclean_setting(topic)
        if completed:
            transaction.set_data(path, TopicZNode.encode(with_assignments(assignment, completed)),
                                 version=topic_stat.version)
        if not changes and not completed:
            return
        if not self._commit(transaction, epoch):
            return
        for partition, old, new in changes:
            self._log.info("controller %d: %s-%d %s -> %s", self.broker_id, topic, partition,
                           old, new)
        for partition, done in completed.items():
            self._log.info("controller %d: reassignment of %s-%d to %s completed",
                           self.broker_id, topic, partition, list(done.replicas))
        if completed:
            self._remove_zk_reassignments({TopicPartition(topic, p) for p in completed})

    def _commit(self, transaction, epoch: int) -> bool:
        """Commit a fenced transaction; False (and a retry soon, or a resignation) when it
        failed."""
        results = transaction.commit()
        if isinstance(results[0], BadVersionError):
            self._log.warning("controller %d: epoch %d was superseded, resigning",
                              self.broker_id, epoch)
            self._resign()
            self._loop.put(self._elect)
            return False
        if any(isinstance(r, Exception) for r in results):
            # a leader changed an ISR, or the topic changed, since we read: read again shortly
            self._retry_later()
            return False
        return True

    def _unclean_enabled(self, topic: str) -> bool:
        """The topic's ``unclean.leader.election.enable``, else the cluster-wide dynamic one,
        else the broker's."""
        for entity_type, name in (("topics", topic), ("brokers", DEFAULT_ENTITY)):
            path = ConfigEntityZNode.path(entity_type, name)
            try:
                value = ConfigEntityZNode.decode(self.client.get(path)[0], path).get(UNCLEAN)
            except (NoNodeError, MalformedZnodeError):
                continue
            if value is not None:
                try:
                    return boolean(value)
                except InvalidValue:
                    self._log.error("controller %d: %s has %s=%r, not a boolean",
                                    self.broker_id, path, UNCLEAN, value)
        return self.unclean_default()

    def _watch_unclean_setting(self, topic: str) -> None:
        """A partition is offline for want of an in-sync replica: enabling unclean election
        for its topic (or the cluster) elects one at once."""
        for path in (ConfigEntityZNode.path("topics", topic),
                     ConfigEntityZNode.path("brokers", DEFAULT_ENTITY)):
            self.client.exists(path, watch=self._watch_cluster)

    def _delete_isr_change_notifications(self) -> None:
        """The leaders' ISR changes: nothing to tell other brokers (they watch the state
        znodes), so each notice only calls for this pass, and goes."""
        for child in self.client.get_children(ISR_CHANGE_NOTIFICATION_PATH,
                                              watch=self._watch_cluster):
            try:
                self.client.delete(f"{ISR_CHANGE_NOTIFICATION_PATH}/{child}")
            except NoNodeError:
                pass

    def _handle_log_dir_events(self, topics: set[str], live: set[int]) -> None:
        """Read each log dir event, ask its broker which of its replicas are offline (see the
        module docstring), and delete it; a broker that cannot be asked now is asked again
        shortly (its notice stays), one no longer registered needs no answer."""
        notices: dict[int, list[str]] = {}
        for child in self.client.get_children(LOG_DIR_EVENT_NOTIFICATION_PATH,
                                              watch=self._watch_cluster):
            path = f"{LOG_DIR_EVENT_NOTIFICATION_PATH}/{child}"
            try:
                broker, _event = LogDirEventNotificationSequenceZNode.decode(
                    self.client.get(path)[0], path)
            except NoNodeError:
                continue
            except MalformedZnodeError as exc:
                self._log.error("controller %d: deleting %s", self.broker_id, exc)
                self._delete_if_present(path)
                continue
            notices.setdefault(broker, []).append(path)
        for broker, paths in sorted(notices.items()):
            if broker in live and self.offline_replicas_of is not None:
                held = self._replicas_on(broker, topics)
                try:
                    offline = self.offline_replicas_of(broker, sorted(held))
                except (OSError, KafkaClientError) as exc:
                    self._log.warning("controller %d: could not ask broker %d for its offline "
                                      "replicas (%s); asking again", self.broker_id, broker, exc)
                    self._retry_later()
                    continue
                self.offline_replicas.setdefault(broker, set()).update(offline)
                self._log.info("controller %d: a log dir of broker %d failed; its replicas of "
                               "%s are offline", self.broker_id, broker,
                               ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(offline))
                               or "no partition")
            for path in paths:
                self._delete_if_present(path)

    def _replicas_on(self, broker: int, topics: set[str]) -> set[TopicPartition]:
        """The partitions of ``topics`` assigned to ``broker``."""
        held: set[TopicPartition] = set()
        for topic in topics:
            found = self._topic(topic)
            if found is not None:
                held.update(TopicPartition(topic, p)
                            for p, replicas in found[0].partitions.items() if broker in replicas)
        return held

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

    # -- reading the cluster (event loop) --------------------------------------------------------

    def _topic(self, topic: str) -> tuple[TopicAssignment, int] | None:
        path = TopicZNode.path(topic)
        try:
            data, stat = self.client.get(path)
            return TopicZNode.decode(data, path), stat.version
        except (NoNodeError, MalformedZnodeError):
            return None

    def _state(self, topic: str, partition: int) -> tuple[PartitionState, int] | None:
        path = TopicPartitionStateZNode.path(topic, partition)
        try:
            data, stat = self.client.get(path)
            return TopicPartitionStateZNode.decode(data, path), stat.version
        except (NoNodeError, MalformedZnodeError):
            return None

    def _marked_for_deletion(self) -> set[str]:
        return set(self.client.get_children(DELETE_TOPICS_PATH))

    def _call(self, work: Callable[[], object], timeout_s: float):
        """Run ``work`` on the event loop, as the active controller (NOT_CONTROLLER raised as
        :class:`NotControllerError` otherwise)."""
        def run():
            if not self.active or self._stopped:
                raise NotControllerError(f"broker {self.broker_id} is not the controller")
            return work()
        try:
            return self._loop.call(run, timeout_s)
        except EventLoopStoppedError:
            raise NotControllerError(f"broker {self.broker_id} is shutting down") from None

    # -- controlled shutdown ---------------------------------------------------------------------

    def controlled_shutdown(self, broker_id: int, broker_epoch: int, *,
                            timeout_s: float = 30.0) -> tuple[ErrorCode, list[TopicPartition]]:
        """Kafka's ``doControlledShutdown``: mark ``broker_id`` shutting down, move away the
        leadership of its partitions that have other replicas, take it out of their ISRs; the
        error, and the partitions with other replicas it still leads."""
        def shut_down():
            brokers = self._live_brokers()
            if broker_id not in brokers:
                return ErrorCode.BROKER_NOT_AVAILABLE, []
            if broker_epoch != -1 and broker_epoch < brokers[broker_id]:
                return ErrorCode.STALE_BROKER_EPOCH, []
            self._log.info("controller %d: broker %d is shutting down", self.broker_id,
                           broker_id)
            self.shutting_down[broker_id] = brokers[broker_id]
            self._reconcile()
            return ErrorCode.NONE, self._led_with_others(broker_id)
        try:
            return self._call(shut_down, timeout_s)
        except NotControllerError:
            return ErrorCode.NOT_CONTROLLER, []

    def _led_with_others(self, broker_id: int) -> list[TopicPartition]:
        """Partitions with more than one replica that ``broker_id`` leads (Kafka's
        ``partitionLeadersOnBroker``), topics being deleted left out."""
        marked = self._marked_for_deletion()
        led = []
        for topic in sorted(set(self.client.get_children(TOPICS_PATH)) - marked):
            found = self._topic(topic)
            if found is None:
                continue
            for partition, replicas in found[0].partitions.items():
                state = self._state(topic, partition)
                if len(replicas) > 1 and state is not None and state[0].leader == broker_id:
                    led.append(TopicPartition(topic, partition))
        return led

    # -- leader elections --------------------------------------------------------------------------

    def elect_leaders(self, partitions: list[TopicPartition] | None, election_type: int, *,
                      timeout_s: float = 60.0) -> dict[TopicPartition, Outcome]:
        """ElectLeaders: a preferred or unclean election for each partition (every partition
        when None); each one's outcome, as Kafka's ``processReplicaLeaderElection`` answers."""
        try:
            return self._call(lambda: self._elect_leaders(partitions, election_type), timeout_s)
        except NotControllerError as exc:
            return {tp: Outcome(ErrorCode.NOT_CONTROLLER, str(exc)) for tp in partitions or ()}

    def _elect_leaders(self, partitions: list[TopicPartition] | None,
                       election_type: int) -> dict[TopicPartition, Outcome]:
        marked = self._marked_for_deletion()
        topics = set(self.client.get_children(TOPICS_PATH))
        if partitions is None:
            partitions = [TopicPartition(t, p) for t in sorted(topics - marked)
                          for p in (self._topic(t) or (TopicAssignment({}), 0))[0].partitions]
        by_topic: dict[str, list[int]] = {}
        results: dict[TopicPartition, Outcome] = {}
        for tp in partitions:
            if tp.topic in marked:
                results[tp] = Outcome(ErrorCode.INVALID_TOPIC_EXCEPTION,
                                      "The topic is being deleted")
            else:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
        elect = preferred_election if election_type == ElectionType.PREFERRED \
            else unclean_election
        for topic, wanted in by_topic.items():
            for _attempt in range(ELECTION_ATTEMPTS):
                done = self._elect_in_topic(topic, wanted, elect, results)
                if done:
                    break
            else:
                for p in wanted:
                    results.setdefault(TopicPartition(topic, p), Outcome(
                        ErrorCode.UNKNOWN_SERVER_ERROR, "the partition state kept changing"))
        return results

    def _elect_in_topic(self, topic: str, wanted: list[int], elect,
                        results: dict[TopicPartition, Outcome]) -> bool:
        """One attempt at the elections of one topic, written in one transaction; False when
        a state changed meanwhile (try again)."""
        epoch, epoch_version = self.epoch, self._epoch_version
        found = self._topic(topic)
        live = set(self._live_brokers())
        transaction = self.client.transaction()
        transaction.check(ControllerEpochZNode.PATH, epoch_version)
        elected = {}
        for partition in wanted:
            tp = TopicPartition(topic, partition)
            state = self._state(topic, partition)
            if found is None or partition not in found[0].partitions or state is None:
                results[tp] = Outcome(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                      "The partition does not exist.")
                continue
            new, error = elect(state[0], found[0].partitions[partition], live, epoch,
                               shutting_down=set(self.shutting_down))
            if new is None:
                results[tp] = Outcome(error, f"{error.name} for {topic}-{partition}")
                continue
            transaction.set_data(TopicPartitionStateZNode.path(topic, partition),
                                 TopicPartitionStateZNode.encode(new), version=state[1])
            elected[tp] = (state[0], new)
        if not elected:
            return True
        results_ = transaction.commit()
        if isinstance(results_[0], BadVersionError):
            self._resign()
            self._loop.put(self._elect)
            for tp in elected:
                results[tp] = Outcome(ErrorCode.NOT_CONTROLLER, "the controller moved")
            return True
        if any(isinstance(r, Exception) for r in results_):
            return False
        for tp, (old, new) in elected.items():
            self._log.info("controller %d: elected %d to lead %s-%d (was %d)", self.broker_id,
                           new.leader, *tp, old.leader)
            results[tp] = Outcome()
        return True

    def _watch_admin_requests(self) -> None:
        """Watch ``/admin/preferred_replica_election`` and ``/admin/reassign_partitions``,
        acting on those present."""
        for path in self._ADMIN_PATHS:
            if self.client.exists(path, watch=self._watch_admin) is not None:
                self._loop.put(getattr(self, self._ADMIN_PATHS[path]))

    _ADMIN_PATHS: ClassVar[dict[str, str]] = {
        PreferredReplicaElectionZNode.PATH: "_zk_preferred_election",
        ReassignPartitionsZNode.PATH: "_zk_reassignment"}

    def _watch_admin(self, event: WatchedEvent) -> None:
        if not self._stopped and event.type != EventType.NONE and event.path in self._ADMIN_PATHS:
            self._loop.put(getattr(self, self._ADMIN_PATHS[event.path]))

    def _read_admin(self, path: str) -> bytes | None:
        """An admin znode's data, watched (None: absent, and watched for its creation; also
        None when this broker is not the controller)."""
        if not self.active:
            return None
        try:
            data, _stat = self.client.get(path, watch=self._watch_admin)
        except NoNodeError:
            self.client.exists(path, watch=self._watch_admin)
            return None
        return data

    def _zk_preferred_election(self) -> None:
        """``/admin/preferred_replica_election``: run the preferred elections it asks for, then
        delete it (Kafka's ZooKeeper route of kafka-preferred-replica-election.sh)."""
        path = PreferredReplicaElectionZNode.PATH
        data = self._read_admin(path)
        if data is None:
            return
        try:
            wanted = sorted(TopicPartition(*tp) for tp in PreferredReplicaElectionZNode.decode(
                data, path))
        except MalformedZnodeError as exc:
            self._log.error("controller %d: ignoring %s", self.broker_id, exc)
            wanted = []
        outcomes = self._elect_leaders(wanted, ElectionType.PREFERRED)
        self._log.info("controller %d: preferred replica elections asked in %s: %s",
                       self.broker_id, path, {f"{t}-{p}": o.error.name
                                              for (t, p), o in outcomes.items()})
        self._delete_if_present(path)

    # -- automatic leader rebalance ----------------------------------------------------------------

    def _schedule_rebalance(self) -> None:
        if not self.settings.auto_leader_rebalance_enable or self._stopped:
            return
        self._cancel_rebalance()
        timer = threading.Timer(self.settings.leader_imbalance_check_interval_s,
                                lambda: self._loop.put(self._check_leader_balance))
        timer.daemon = True
        timer.start()
        self._rebalance_timer = timer

    def _cancel_rebalance(self) -> None:
        if self._rebalance_timer is not None:
            self._rebalance_timer.cancel()
            self._rebalance_timer = None

    def _check_leader_balance(self) -> None:
        """Kafka's ``checkAndTriggerAutoLeaderRebalance``: for each broker, the share of the
        partitions it prefers that another broker leads; above
        ``leader.imbalance.per.broker.percentage``, preferred elections for them."""
        if not self.active or self._stopped:
            return
        try:
            marked = self._marked_for_deletion()
            preferred: dict[int, list[tuple[TopicPartition, int]]] = {}
            for topic in sorted(set(self.client.get_children(TOPICS_PATH)) - marked):
                found = self._topic(topic)
                for partition, replicas in (found[0].partitions.items() if found else ()):
                    state = self._state(topic, partition)
                    if replicas and state is not None:
                        preferred.setdefault(replicas[0], []).append(
                            (TopicPartition(topic, partition), state[0].leader))
            candidates = []
            for broker, partitions in preferred.items():
                elsewhere = [tp for tp, leader in partitions if leader != broker]
                ratio = len(elsewhere) / len(partitions)
                if ratio > self.settings.leader_imbalance_per_broker_percentage / 100:
                    candidates.extend(elsewhere)
            if candidates:
                outcomes = self._elect_leaders(candidates, ElectionType.PREFERRED)
                moved = sorted(f"{t}-{p}" for (t, p), o in outcomes.items()
                               if o.error == ErrorCode.NONE)
                if moved:
                    self._log.info("controller %d: leadership rebalanced to the preferred "
                                   "replicas of %s", self.broker_id, moved)
        finally:
            self._schedule_rebalance()

    # -- partition reassignments -------------------------------------------------------------------

    def alter_reassignments(self, targets: dict[TopicPartition, tuple[int, ...] | None], *,
                            timeout_s: float = 60.0) -> dict[TopicPartition, Outcome]:
        """AlterPartitionReassignments: start, replace or (target None) cancel each
        partition's reassignment; each one's outcome."""
        try:
            outcomes = self._call(lambda: self._alter_reassignments(targets), timeout_s)
        except NotControllerError as exc:
            return {tp: Outcome(ErrorCode.NOT_CONTROLLER, str(exc)) for tp in targets}
        # the API takes precedence over a reassignment asked for in ZooKeeper
        self._loop.put(lambda: self._remove_zk_reassignments(
            {tp for tp, o in outcomes.items() if o.error == ErrorCode.NONE}))
        return outcomes

    def _alter_reassignments(self, targets: dict[TopicPartition, tuple[int, ...] | None]
                             ) -> dict[TopicPartition, Outcome]:
        marked = self._marked_for_deletion()
        live = set(self._live_brokers())
        results: dict[TopicPartition, Outcome] = {}
        by_topic: dict[str, dict[int, tuple[int, ...] | None]] = {}
        for tp, target in targets.items():
            by_topic.setdefault(tp.topic, {})[tp.partition] = target
        for topic, wanted in sorted(by_topic.items()):
            found = None if topic in marked else self._topic(topic)
            changes: dict[int, Assignment] = {}
            for partition, target in sorted(wanted.items()):
                tp = TopicPartition(topic, partition)
                if found is None or partition not in found[0].partitions:
                    results[tp] = Outcome(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                          "The partition does not exist.")
                    continue
                current = Assignment.of(found[0], partition)
                if target is None:
                    if not current.being_reassigned:
                        results[tp] = Outcome(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS)
                        continue
                    changes[partition] = current.reassign_to(current.origin_replicas)
                    continue
                error, message = check_target(tuple(target), current, live)
                if error != ErrorCode.NONE:
                    results[tp] = Outcome(error, message)
                    continue
                changes[partition] = current.reassign_to(tuple(target))
            if not changes:
                continue
            error = self._write_assignment(topic, found[0], found[1], changes)
            for partition, change in changes.items():
                results[TopicPartition(topic, partition)] = Outcome(error)
                if error == ErrorCode.NONE:
                    self._log.info("controller %d: reassigning %s-%d: %s", self.broker_id,
                                   topic, partition, change)
        self._reconcile()  # starts, or at once completes, what was asked
        return results

    def _write_assignment(self, topic: str, assignment: TopicAssignment, version: int,
                          changes: dict[int, Assignment]) -> ErrorCode:
        transaction = self.client.transaction()
        transaction.check(ControllerEpochZNode.PATH, self._epoch_version)
        transaction.set_data(TopicZNode.path(topic),
                             TopicZNode.encode(with_assignments(assignment, changes)),
                             version=version)
        results = transaction.commit()
        if isinstance(results[0], BadVersionError):
            self._resign()
            self._loop.put(self._elect)
            return ErrorCode.NOT_CONTROLLER
        if any(isinstance(r, Exception) for r in results):
            return ErrorCode.REASSIGNMENT_IN_PROGRESS  # the topic changed meanwhile: ask again
        return ErrorCode.NONE

    def list_reassignments(self, partitions: list[TopicPartition] | None = None, *,
                           timeout_s: float = 60.0) -> dict[TopicPartition, Reassignment]:
        """ListPartitionReassignments: the partitions being reassigned (of ``partitions``, or
        all). Raises :class:`NotControllerError`."""
        def listing():
            topics = sorted({tp.topic for tp in partitions}) if partitions is not None \
                else sorted(self.client.get_children(TOPICS_PATH))
            ongoing = {}
            for topic in topics:
                found = self._topic(topic)
                for partition in (found[0].partitions if found else ()):
                    tp = TopicPartition(topic, partition)
                    current = Assignment.of(found[0], partition)
                    if current.being_reassigned and (partitions is None or tp in partitions):
                        ongoing[tp] = Reassignment(current.replicas, current.adding,
                                                   current.removing)
            return ongoing
        return self._call(listing, timeout_s)

    def _zk_reassignment(self) -> None:
        """``/admin/reassign_partitions``: start the reassignments it asks for; those refused
        leave it at once, the others when they complete (Kafka's
        ``processZkPartitionReassignment``)."""
        path = ReassignPartitionsZNode.PATH
        data = self._read_admin(path)
        if data is None:
            return
        try:
            targets = {TopicPartition(*tp): replicas
                       for tp, replicas in ReassignPartitionsZNode.decode(data, path).items()}
        except MalformedZnodeError as exc:
            self._log.error("controller %d: deleting %s", self.broker_id, exc)
            self._delete_if_present(path)
            return
        to_start, done = {}, set()
        for tp, target in targets.items():
            found = self._topic(tp.topic)
            current = Assignment.of(found[0], tp.partition) \
                if found is not None and tp.partition in found[0].partitions else None
            if current is not None and current.target_replicas == tuple(target):
                if not current.being_reassigned:
                    done.add(tp)  # there already
            else:
                to_start[tp] = tuple(target)  # new, or unknown (refused below)
        outcomes = self._alter_reassignments(to_start) if to_start else {}
        failed = {tp for tp, o in outcomes.items() if o.error != ErrorCode.NONE}
        for tp in sorted(failed):
            self._log.warning("controller %d: reassignment of %s-%d in %s refused: %s",
                              self.broker_id, *tp, path, outcomes[tp].error.name)
        self._remove_zk_reassignments(failed | done)

    def _remove_zk_reassignments(self, partitions: set[TopicPartition]) -> None:
        """Take completed or superseded partitions out of ``/admin/reassign_partitions``,
        deleting it with the last one."""
        path = ReassignPartitionsZNode.PATH
        if not partitions:
            return
        try:
            data, stat = self.client.get(path)
            targets = ReassignPartitionsZNode.decode(data, path)
        except NoNodeError:
            return
        except MalformedZnodeError:
            self._delete_if_present(path)
            return
        left = {tp: r for tp, r in targets.items() if TopicPartition(*tp) not in partitions}
        if left == targets:
            return
        try:
            if left:
                self.client.set(path, ReassignPartitionsZNode.encode(left), version=stat.version)
            else:
                self.client.delete(path, version=stat.version)
        except (BadVersionError, NoNodeError):
            self._loop.put(self._zk_reassignment)  # rewritten meanwhile: read it again


class NotControllerError(Exception):
    """This broker is not (or no longer) the controller: NOT_CONTROLLER."""
