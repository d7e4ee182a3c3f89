"""The partitions this broker replicates, kept in step with ZooKeeper's assignments (the
replica side of Kafka's ``ReplicaManager``).

A :class:`~broker_lite.zk.replicas.PartitionListener` backed by the :class:`LogManager`: a
partition assigned to this broker gets its log, created with its topic's overrides (in a
broker, read from ``/config/topics/[topic]``), and a
:class:`~broker_lite.replication.partition.Partition` that leads or follows as the controller's
latest state says: as the leader it keeps the ISR and the high watermark; as a follower it is
handed to the replica fetcher of its leader (:mod:`broker_lite.replication.fetcher`), which
truncates and copies the leader's log. The partitions of a deleted topic lose their logs on
disk, and so does a partition reassigned to other brokers once this one is no longer among its
replicas (Kafka's StopReplica with ``deletePartition``); a partition that was reassigned away
while this broker was down keeps its files, unused, as in Kafka's ZooKeeper mode. Every
``replica.lag.time.max.ms / 2`` the leaders drop lagging followers from their ISRs.

Leadership listeners registered for a topic (the group coordinator, for ``__consumer_offsets``)
are told when this broker becomes the leader of one of its partitions (or its leader epoch
changes) and when it stops leading one. They are called on ZooKeeper's event thread, so they only
queue work. The broker may learn its own id after the partitions are loaded (a generated
``broker.id``): roles are taken, and leadership judged, once it is set.

Without :meth:`PartitionManager.start_replication` (a broker always calls it; tests of the
request handlers need not) nothing is fetched and ISR changes stay local.
"""

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Protocol

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.log import Log
from broker_lite.log.manager import LogManager
from broker_lite.replication.fetcher import FetcherSettings, ReplicaFetcherManager
from broker_lite.replication.isr import IsrWriter
from broker_lite.replication.partition import Partition
from broker_lite.zk.layout import NO_LEADER, PartitionState

logger = logging.getLogger(__name__)


class LeadershipListener(Protocol):
    def on_elected(self, partition: int, leader_epoch: int) -> None:
        """This broker leads ``partition`` (newly, or in a new leader epoch)."""

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        """This broker no longer leads ``partition`` (``leader_epoch`` None: it is gone)."""


def _always_alive(_broker_id: int) -> bool:
    return True


def _ignore(_partition: TopicPartition) -> None:
    pass


class PartitionManager:
    def __init__(self, log_manager: LogManager,
                 topic_config: Callable[[str], Mapping[str, str]], broker_id: int = -1, *,
                 lag_time_max_ms: int = 30000):
        """``topic_config(topic)`` gives a topic's overrides; ``broker_id`` may be set later,
        once ZooKeeper has generated it."""
        self.log_manager = log_manager
        self.topic_config = topic_config
        self.lag_time_max_ms = lag_time_max_ms
        self._broker_id = broker_id
        # the controller's latest word on each partition held: (state, replicas, znode version)
        self._assigned: dict[TopicPartition, tuple[PartitionState, tuple[int, ...], int]] = {}
        self._partitions: dict[TopicPartition, Partition] = {}
        # new here, in a run of assignments not done yet: not shown served (served_states)
        self._taking_on: set[TopicPartition] = set()
        self._lock = threading.RLock()
        self._leadership_listeners: dict[str, list[LeadershipListener]] = {}
        self._led: dict[tuple[str, int], int] = {}  # partitions led -> leader epoch told
        self.isr_writer: IsrWriter | None = None
        self.is_alive: Callable[[int], bool] = _always_alive
        self.on_high_watermark: Callable[[TopicPartition], None] = _ignore
        self.fetchers: ReplicaFetcherManager | None = None
        self._fetcher_setup: tuple | None = None
        self._stop = threading.Event()
        self._shrinker: threading.Thread | None = None

    # -- replication (a broker's) ---------------------------------------------------------------

    def start_replication(self, *, isr_writer: IsrWriter, is_alive: Callable[[int], bool],
                          on_high_watermark: Callable[[TopicPartition], None],
                          address_of: Callable[[int], tuple | None],
                          fetcher_settings: FetcherSettings) -> None:
        """Replicate: ISR changes are written with ``isr_writer``, followers fetch from the
        leaders ``address_of`` finds, and lagging followers leave the ISR. ``is_alive`` tells
        registered brokers; ``on_high_watermark`` is told when a leader's high watermark
        moves."""
        self.isr_writer, self.is_alive = isr_writer, is_alive
        self.on_high_watermark = on_high_watermark
        self._fetcher_setup = (address_of, fetcher_settings)
        if self._broker_id >= 0:
            self._start_fetchers()
        self._shrinker = threading.Thread(target=self._shrink_isrs_periodically,
                                          name="isr-expiration", daemon=True)
        self._shrinker.start()

    def _start_fetchers(self) -> None:
        if self.fetchers is None and self._fetcher_setup is not None:
            address_of, settings = self._fetcher_setup
            self.fetchers = ReplicaFetcherManager(self._broker_id, address_of, self.partition,
                                                  settings)

    def stop_replication(self) -> None:
        self._stop.set()
        if self._shrinker is not None:
            self._shrinker.join()
        if self.fetchers is not None:
            self.fetchers.shutdown()

    def _shrink_isrs_periodically(self) -> None:
        while not self._stop.wait(max(self.lag_time_max_ms / 2, 1) / 1000):
            self.shrink_isrs()

    def shrink_isrs(self) -> None:
        """Drop lagging followers from the ISR of every partition led here (Kafka's
        ``maybeShrinkIsr``)."""
        with self._lock:
            led = [p for p in self._partitions.values() if p.is_leader]
        for partition in led:
            try:
                partition.maybe_shrink_isr()
            except Exception:  # one partition's trouble must not stop the others'
                logger.exception("ISR shrink check of %s failed", partition)

    # -- this broker's id -----------------------------------------------------------------------

    @property
    def broker_id(self) -> int:
        return self._broker_id

    @broker_id.setter
    def broker_id(self, broker_id: int) -> None:
        if broker_id == self._broker_id:
            return
        self._broker_id = broker_id
        self._start_fetchers()
        with self._lock:
            assigned = sorted(self._assigned)
        for tp in assigned:
            self._take_role(tp)

    # -- leadership listeners ---------------------------------------------------------------------

    def add_leadership_listener(self, topic: str, listener: LeadershipListener) -> None:
        """Tell ``listener`` when this broker starts or stops leading a partition of
        ``topic`` (at once for those it leads already)."""
        with self._lock:
            self._leadership_listeners.setdefault(topic, []).append(listener)
            held = sorted((tp.partition, self.state(*tp)) for tp in self._assigned
                          if tp.topic == topic)
        for partition, state in held:
            self._leadership_changed(topic, partition, state)

    def _leadership_changed(self, topic: str, partition: int,
                            state: PartitionState | None) -> None:
        # the epoch this broker leads in, None when it does not lead
        led_epoch = state.leader_epoch if state is not None and self._broker_id >= 0 \
            and state.leader == self._broker_id else None
        leads = led_epoch is not None
        with self._lock:
            listeners = list(self._leadership_listeners.get(topic, ()))
            if not listeners:
                return
            before = self._led.get((topic, partition))
            if led_epoch is not None:
                self._led[(topic, partition)] = led_epoch
            else:
                self._led.pop((topic, partition), None)
        for listener in listeners:
            try:
                if led_epoch is not None and before != led_epoch:
                    listener.on_elected(partition, led_epoch)
                elif not leads and before is not None:
                    listener.on_resigned(partition, state.leader_epoch if state else None)
            except Exception:  # one listener's failure must not stop the others
                logger.exception("leadership listener failed for %s-%d", topic, partition)

    # -- the controller's decisions (ZooKeeper's event thread) ------------------------------------

    def on_partition_assigned(self, topic: str, partition: int, state: PartitionState,
                              replicas: list[int], version: int = -1) -> None:
        """The controller's state for a partition held here (``version``: its znode's)."""
        tp = TopicPartition(topic, partition)
        self.log_manager.get_or_create(topic, partition, self.topic_config(topic))
        with self._lock:
            self._assigned[tp] = (state, tuple(replicas), version)
        self._take_role(tp)

    def on_assignments_begin(self, topic: str, partitions: list[int]) -> None:
        """A run of assignments of ``topic``'s partitions: those new here are shown served
        (:meth:`served_states`) only once all are taken on. Creating a partition's log takes
        milliseconds, and Metadata asked meanwhile would show a new topic with some partitions
        led and others not (a client asking for the others then fails)."""
        with self._lock:
            self._taking_on.update(tp for tp in (TopicPartition(topic, p) for p in partitions)
                                   if tp not in self._partitions)

    def on_assignments_end(self, topic: str, partitions: list[int]) -> None:
        with self._lock:
            self._taking_on.difference_update(TopicPartition(topic, p) for p in partitions)

    def _take_role(self, tp: TopicPartition) -> None:
        """Lead or follow ``tp`` as its latest state says (once this broker's id is known)."""
        with self._lock:
            assigned = self._assigned.get(tp)
            if assigned is None or self._broker_id < 0:
                return
            state, replicas, version = assigned
            replica = self._partitions.get(tp)
            if replica is None:
                log = self.log_manager.get(*tp)
                if log is None:
                    return
                replica = self._partitions[tp] = Partition(
                    tp, log, self._broker_id, lag_time_max_ms=self.lag_time_max_ms,
                    isr_writer=self.isr_writer, is_alive=self.is_alive,
                    on_high_watermark=self.on_high_watermark)
        if state.leader == self._broker_id:
            replica.make_leader(state, replicas, version)
            if self.fetchers is not None:
                self.fetchers.unfollow(tp)
        else:
            changed = replica.make_follower(state, replicas, version)
            if self.fetchers is not None:
                followed = self.fetchers.followed().get(tp)
                if state.leader == NO_LEADER or replica.log.offline:
                    self.fetchers.unfollow(tp)  # an offline log takes no write (KIP-112)
                elif changed or followed != (state.leader, state.leader_epoch):
                    self.fetchers.follow(tp, state.leader, state.leader_epoch)
        self._leadership_changed(tp.topic, tp.partition, replica.state)

    def stop_fetching_offline(self) -> None:
        """Stop following the partitions whose log dir went offline: their logs take no write,
        and a follower fetching still would look caught up to its leader (Kafka's
        ``handleLogDirFailure`` removes their fetchers)."""
        if self.fetchers is None:
            return
        for tp in list(self.fetchers.followed()):
            log = self.log_manager.get(*tp)
            if log is None or log.offline:
                self.fetchers.unfollow(tp)

    def on_partition_removed(self, topic: str, partition: int, *, delete: bool) -> None:
        tp = TopicPartition(topic, partition)
        with self._lock:
            self._assigned.pop(tp, None)
            self._partitions.pop(tp, None)
        if self.fetchers is not None:
            self.fetchers.unfollow(tp)
        self._leadership_changed(topic, partition, None)
        if not delete:
            logger.info("%s-%d: no longer assigned to broker %d; deleting its replica", topic,
                        partition, self._broker_id)
        self.log_manager.delete(topic, partition)

    # -- what the request handlers ask -------------------------------------------------------------

    def partition(self, topic_partition: TopicPartition) -> Partition | None:
        """The replica of a partition held here (None before its state is known)."""
        with self._lock:
            return self._partitions.get(topic_partition)

    def state(self, topic: str, partition: int) -> PartitionState | None:
        """The partition's leader, leader epoch and ISR as this broker knows them."""
        tp = TopicPartition(topic, partition)
        with self._lock:
            replica = self._partitions.get(tp)
            if replica is not None:
                return replica.state
            assigned = self._assigned.get(tp)
            return assigned[0] if assigned is not None else None

    def served_states(self, topic: str, partitions: list[int]) -> list[PartitionState | None]:
        """The state of each of ``partitions`` as :meth:`state` gives it, all read at one
        moment, and None for one taken on with others not yet (:meth:`on_assignments_begin`)."""
        with self._lock:
            return [None if TopicPartition(topic, p) in self._taking_on
                    else self.state(topic, p) for p in partitions]

    def is_leader(self, topic: str, partition: int) -> bool:
        state = self.state(topic, partition)
        return state is not None and state.leader == self.broker_id

    def leader_partition(self, topic: str, partition: int) -> Partition | None:
        """The replica of a partition this broker leads, else None (NOT_LEADER_OR_FOLLOWER)."""
        replica = self.partition(TopicPartition(topic, partition))
        return replica if replica is not None and replica.is_leader else None

    def leader_log(self, topic: str, partition: int) -> Log | None:
        """The log of a partition this broker leads, else None (NOT_LEADER_OR_FOLLOWER)."""
        replica = self.leader_partition(topic, partition)
        return replica.log if replica is not None else None

    def led_partitions(self) -> list[TopicPartition]:
        with self._lock:
            return sorted(tp for tp, p in self._partitions.items() if p.is_leader)
