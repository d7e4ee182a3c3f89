"""ZooKeeperGroupConsumer: a member of a Kafka 0.8-style consumer group coordinated in ZooKeeper.

The group lives under ``/consumers/[group]`` (see :mod:`.registry` and :mod:`.offsets`); its
members agree on who consumes which partition with no broker involved, each running the same
rebalance on the same ZooKeeper state:

1. on :meth:`~ZooKeeperGroupConsumer.subscribe` a member registers (ephemeral
   ``ids/[consumer_id]`` with its topics) and rebalances;
2. a rebalance reads the members and the subscribed topics' partitions, leaving watches on
   ``ids`` (members join and leave), ``/brokers/ids`` (brokers come and go) and each
   ``/brokers/topics/[topic]`` (created, partitions added), any of which triggers the next
   rebalance;
3. it computes the group's range assignment (:mod:`.assignment`); when its own share differs
   from what it owns, it withdraws its assignment (:meth:`poll` returns nothing meanwhile),
   commits the positions of what it owned, deletes its ``owners/[topic]/[p]`` znodes, then
   creates one for each partition of its new share;
4. an owner znode that exists already belongs to a member that has not released it yet: the
   member deletes what it claimed in this attempt, waits ``rebalance.backoff.ms`` and starts
   over, up to ``rebalance.max.retries`` attempts;
5. once it owns all of its share it reads where to resume each partition (the committed offset,
   else ``auto.offset.reset``), and only then publishes the new assignment.

A member owns a partition only while its owner znode exists, so two members never consume one
partition. When the ZooKeeper connection drops, the member stops consuming (it cannot know
whether its session, and so its znodes, survive); when it comes back, it rebalances, and when
its session expired it registers again first. Rebalances run on a thread of their own, started
by ``subscribe``; ``poll``, ``commit`` and ``close`` are for the application's thread.

Positions advance when :meth:`poll` returns records: :meth:`commit` commits them, and so do a
rebalance (for the partitions it gives away) and :meth:`close`. Committing after each poll,
every record is consumed once while members come and go cleanly; a member that dies loses what
it consumed after its last commit to the next owner, which consumes it again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, NoNodeError

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.zk.client import connect
from broker_lite.zk.errors import MalformedZnodeError
from broker_lite.zk.registration import get_broker, live_broker_ids

from ..client import KafkaClient
from ..consumer.partition_reader import OutOfRange, PartitionReader
from ..errors import (
    BrokerNotAvailableError,
    ClientClosedError,
    ConfigError,
    InvalidArgumentError,
    KafkaClientError,
)
from ..types import EARLIEST, LATEST
from .assignment import (
    STATIC,
    assign_ranges,
    consumer_threads,
    owned_by,
    resolve_subscription,
)
from .config import SMALLEST, ZooKeeperConsumerConfig
from .errors import (
    ConsumerRebalanceFailedError,
    NotSubscribedError,
    ZooKeeperConsumerError,
)
from .offsets import OffsetStorage, ZooKeeperOffsets
from .records import ConsumerRecord, consumer_records
from .registry import GroupRegistry

log = logging.getLogger(__name__)

STREAMS_PER_TOPIC = 1  # one stream (thread id [consumer_id]-0) per subscribed topic
_REBALANCE_ERRORS = (KazooException, KafkaClientError, MalformedZnodeError)


def discover_bootstrap_servers(zk: KazooClient) -> str:
    """``host:port,...`` of the live brokers' PLAINTEXT listeners under ``/brokers/ids``."""
    addresses = []
    try:
        broker_ids = live_broker_ids(zk)
    except NoNodeError:
        broker_ids = []
    for broker_id in broker_ids:
        try:
            registration = get_broker(zk, broker_id)
        except MalformedZnodeError as exc:
            log.warning("ignoring a broker registration: %s", exc)
            continue
        endpoint = registration and registration.plaintext_endpoint
        if endpoint:
            host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
            addresses.append(f"{host}:{endpoint.port}")
    if not addresses:
        raise BrokerNotAvailableError("no live broker with a PLAINTEXT listener is registered "
                                      "under /brokers/ids; set bootstrap.servers")
    return ",".join(addresses)


class ZooKeeperGroupConsumer:
    """A consumer in a ZooKeeper-coordinated group; settings as in :mod:`.config`.

    Usage, committing after each poll::

        consumer = ZooKeeperGroupConsumer({"zookeeper.connect": "127.0.0.1:2181/kafka",
                                           "group.id": "audit"})
        consumer.subscribe(["events"])
        try:
            while running:
                for record in consumer.poll(1.0):
                    handle(record.value)
                consumer.commit()
        finally:
            consumer.close()
    """

    def __init__(self, config: Mapping[str, Any] | ZooKeeperConsumerConfig):
        self.config = (config if isinstance(config, ZooKeeperConsumerConfig)
                       else ZooKeeperConsumerConfig(config))
        if "isolation.level" in self.config.client_settings:
            raise ConfigError("isolation.level", "a ZooKeeper-based group consumer reads all "
                                                 "records, as Kafka 0.8's consumer did")
        self.group_id: str = self.config.group_id
        self.consumer_id: str = self.config.consumer_id
        self._zk = connect(self.config.zookeeper_connect,
                           session_timeout_ms=self.config.zookeeper_session_timeout_ms,
                           connection_timeout_ms=self.config.zookeeper_connection_timeout_ms)
        try:
            servers = self.config.bootstrap_servers or discover_bootstrap_servers(self._zk)
            self._client = KafkaClient(self.config.client_config(servers))
        except BaseException:
            self._zk.stop()
            self._zk.close()
            raise
        self._registry = GroupRegistry(self._zk, self.group_id, self.consumer_id)
        self._offsets = OffsetStorage(self.config.offsets_storage,
                                      self.config.dual_commit_enabled,
                                      ZooKeeperOffsets(self._zk, self.group_id), self._client,
                                      self.group_id)
        self._thread_id = consumer_threads(self.consumer_id, STREAMS_PER_TOPIC)[0]
        self._backoff_s = self.config.rebalance_backoff_ms / 1000

        # Shared with poll() and the connection listener; never held during I/O.
        self._lock = threading.Condition()
        self._subscription: dict[str, int] = {}
        self._positions: dict[TopicPartition, int] = {}  # the published assignment
        self._epoch = 0  # bumped whenever the assignment is withdrawn: in-flight polls drop out
        self._reader: PartitionReader | None = None  # reads the assignment of _reader_epoch
        self._reader_epoch = -1
        self._parked: dict[TopicPartition, int] | None = None  # positions while disconnected
        self._session_lost = False
        self._closed = False
        self._rebalances = 0
        self._requested = 0  # rebalances asked for by subscribe(), and the last one served
        self._served = 0
        self._last_failure: str | None = None

        # Serializes rebalances, commits and close; guards _owned and _registered.
        self._io = threading.RLock()
        self._owned: set[TopicPartition] = set()  # owner znodes this session holds
        self._registered = False
        self._trigger = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._zk.add_listener(self._on_connection_state)

    # -- the application's API ------------------------------------------------------------------

    @property
    def zookeeper(self) -> KazooClient:
        """The ZooKeeper client (its session holds this member's ephemeral znodes)."""
        return self._zk

    @property
    def client(self) -> KafkaClient:
        """The Kafka client that fetches (and commits, with ``offsets.storage=kafka``)."""
        return self._client

    @property
    def rebalances(self) -> int:
        """How many rebalances have completed (including those that changed nothing)."""
        with self._lock:
            return self._rebalances

    def subscribe(self, topics: Iterable[str]) -> None:
        """Register in the group for ``topics`` (replacing an earlier subscription) and wait for
        the first rebalance: :class:`ConsumerRebalanceFailedError` when it fails
        ``rebalance.max.retries`` times (the member stays registered and keeps trying in the
        background), :class:`ConsumerIdInUseError` when another member has this
        ``consumer.id``."""
        self._check_open()
        topics = list(topics)
        for topic in topics:
            if not isinstance(topic, str) or not topic or "/" in topic:
                raise InvalidArgumentError(f"not a topic name: {topic!r}")
        topics = sorted(set(topics))
        if not topics:
            raise InvalidArgumentError("subscribe to at least one topic")
        subscription = dict.fromkeys(topics, STREAMS_PER_TOPIC)
        with self._io:
            with self._lock:
                changed = self._registered and subscription != self._subscription
            if changed:  # others watch the ids' children, not their data: leave and rejoin
                self._registry.unregister()
            self._registry.register(subscription)
            self._registered = True
            with self._lock:
                self._subscription = subscription
                self._requested += 1
                wanted = self._requested
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"zk-rebalance-{self.consumer_id}")
            self._thread.start()
        self._trigger.set()
        with self._lock:
            self._lock.wait_for(lambda: self._served >= wanted or self._closed)
            failure = self._last_failure
        self._check_open()
        if failure is not None:
            raise ConsumerRebalanceFailedError(
                f"{self.consumer_id} could not rebalance after {self.config.rebalance_max_retries}"
                f" attempts: {failure}")

    def assignment(self) -> set[TopicPartition]:
        """The partitions this member owns and consumes now."""
        with self._lock:
            return set(self._positions)

    def position(self, tp: TopicPartition) -> int | None:
        """The next offset :meth:`poll` returns from ``tp`` (None when not assigned)."""
        with self._lock:
            return self._positions.get(tp)

    def poll(self, timeout: float = 1.0) -> list[ConsumerRecord]:
        """The records fetched from the assigned partitions at their positions, waiting up to
        ``timeout`` seconds for some; positions move past them. Empty while nothing is
        assigned. Partitions whose position is out of range restart per ``auto.offset.reset``,
        with a warning."""
        self._check_open()
        with self._lock:
            if not self._subscription:
                raise NotSubscribedError("subscribe() before poll()")
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._positions or self._closed,
                                    max(deadline - time.monotonic(), 0.0))
                self._check_open()
                if not self._positions:
                    return []
                if self._reader is None or self._reader_epoch != self._epoch:
                    self._reader = PartitionReader(
                        self._client, self._positions, on_out_of_range=self._reset_position,
                        on_error=self._fetch_failed)
                    self._reader_epoch = self._epoch
                reader, epoch = self._reader, self._epoch
            wait_ms = int(max(deadline - time.monotonic(), 0.0) * 1000)
            chunks = reader.poll(wait_ms)
            records = [record for chunk in chunks for record in consumer_records(chunk)]
            with self._lock:
                if self._epoch == epoch:
                    self._positions.update(reader.positions)
                    if records:
                        return records
                # else the assignment changed meanwhile: what was fetched is not ours to return
            if time.monotonic() >= deadline:
                return []

    def _reset_position(self, gone: OutOfRange) -> int:
        """Where a partition out of range goes on, as ``auto.offset.reset`` says (the reader's
        hook)."""
        offset = gone.log_start if self.config.auto_offset_reset == SMALLEST else gone.log_end
        log.warning("group %s: offset %d of %s is out of range; resuming at %d "
                    "(auto.offset.reset=%s)", self.group_id, gone.position, gone.tp, offset,
                    self.config.auto_offset_reset)
        return offset

    def _fetch_failed(self, tp: TopicPartition, error: KafkaClientError) -> None:
        """A partition's fetch failed for good this round: said, and fetched again next round,
        as the old consumer's fetcher threads go on."""
        log.warning("group %s: fetching %s failed: %s", self.group_id, tp, error)

    def commit(self, offsets: Mapping[TopicPartition, int] | None = None) -> None:
        """Commit ``offsets`` (next offsets to consume), by default the positions of the
        assigned partitions, to the storage of ``offsets.storage`` (and ZooKeeper too with
        ``dual.commit.enabled``)."""
        self._check_open()
        with self._io:
            if offsets is None:
                with self._lock:
                    if not self._subscription:
                        raise NotSubscribedError("subscribe() before commit()")
                    offsets = dict(self._positions)
            self._offsets.commit(offsets)

    def committed(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int | None]:
        """Where the group would resume ``tps``, read as a rebalance reads it."""
        self._check_open()
        return self._offsets.committed(tps)

    def close(self, commit: bool = True) -> None:
        """Leave the group: commit the positions (unless ``commit`` is False), release the
        partitions and the registration, and close the connections. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._lock.notify_all()
        # A rebalance under way finishes or gives up first (committing what it gives away).
        self._stop.set()
        self._trigger.set()
        if self._thread is not None:
            self._thread.join()
        try:
            with self._io:
                with self._lock:
                    positions = self._positions
                    self._positions = {}
                    self._epoch += 1
                if self._zk.connected:  # else the session, or at least its ownership, is gone
                    owned = {tp: o for tp, o in positions.items() if tp in self._owned}
                    if commit and owned:
                        self._offsets.commit(owned)
                    self._release_owned()
                    self._registry.unregister()
        except _REBALANCE_ERRORS as exc:
            log.warning("group %s: %s did not leave cleanly: %s", self.group_id,
                        self.consumer_id, exc)
        finally:
            self._zk.remove_listener(self._on_connection_state)
            self._zk.stop()
            self._zk.close()
            self._client.close()

    def __enter__(self) -> ZooKeeperGroupConsumer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError(f"the consumer {self.consumer_id} is closed")

    # -- events ---------------------------------------------------------------------------------

    def _on_watch(self, event) -> None:
        """A watched znode changed (or the connection dropped): rebalance."""
        self._trigger.set()

    def _on_connection_state(self, state: str) -> None:
        """Kazoo's connection listener (on its connection thread: must not block)."""
        with self._lock:
            if state == KazooState.SUSPENDED:
                # Until the connection is back, this session (and its znodes) may be gone.
                if self._parked is None:
                    self._parked = self._positions
                self._positions = {}
                self._epoch += 1
            elif state == KazooState.LOST:
                # The session and its znodes are gone: positions go uncommitted.
                self._session_lost = True
                self._parked = None
                self._positions = {}
                self._epoch += 1
            self._lock.notify_all()
        if state in (KazooState.CONNECTED, KazooState.LOST):
            self._trigger.set()

    # -- rebalancing ----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            self._trigger.wait()
            if self._stop.is_set():
                return
            self._trigger.clear()
            with self._lock:
                serving = self._requested
            try:
                failure = self._synced_rebalance()
            except Exception as exc:  # a bug: report it to subscribe() rather than hang it
                log.exception("group %s: the rebalance of %s failed", self.group_id,
                              self.consumer_id)
                failure = f"{type(exc).__name__}: {exc}"
            with self._lock:
                self._served = max(self._served, serving)
                self._last_failure = failure
                self._lock.notify_all()
            if failure is not None:
                log.error("group %s: %s could not rebalance after %d attempts (trying again "
                          "later): %s", self.group_id, self.consumer_id,
                          self.config.rebalance_max_retries, failure)
                if not self._stop.wait(self._backoff_s):
                    self._trigger.set()

    def _synced_rebalance(self) -> str | None:
        """Up to ``rebalance.max.retries`` attempts; None on success, else why the last
        attempt failed."""
        failure = None
        for attempt in range(1, self.config.rebalance_max_retries + 1):
            try:
                if self._await_connection():
                    with self._io:
                        if self._stop.is_set():
                            return None
                        failure = self._rebalance()
                else:
                    failure = (f"not connected to ZooKeeper within "
                               f"{self.config.zookeeper_connection_timeout_ms} ms")
            except (*_REBALANCE_ERRORS, ZooKeeperConsumerError) as exc:
                failure = f"{type(exc).__name__}: {exc}"
            if self._stop.is_set():
                return None
            if failure is None:
                with self._lock:
                    self._rebalances += 1
                return None
            log.info("group %s: rebalance attempt %d of %s failed: %s", self.group_id, attempt,
                     self.consumer_id, failure)
            if self._stop.wait(self._backoff_s):
                return None
        return failure

    def _await_connection(self) -> bool:
        """Wait (up to ``zookeeper.connection.timeout.ms``) until connected; False if not."""
        deadline = time.monotonic() + self.config.zookeeper_connection_timeout_ms / 1000
        while not self._zk.connected:
            if self._stop.wait(0.05) or time.monotonic() > deadline:
                return False
        return True

    def _rebalance(self) -> str | None:
        """One attempt (holding ``_io``); None on success, else why it failed."""
        with self._lock:
            if self._session_lost:
                self._session_lost = False
                self._owned.clear()  # the session's znodes went with it
                self._registered = False
            subscription = dict(self._subscription)
        if not self._registered or not self._registry.is_registered():
            self._registry.register(subscription)
            self._registered = True

        share = self._share(subscription)
        with self._lock:
            intact = self._parked is None and set(self._positions) == self._owned
        if share == self._owned and intact:
            return None

        with self._lock:  # withdraw the assignment
            positions = self._positions if self._parked is None else self._parked
            self._positions, self._parked = {}, None
            self._epoch += 1
            epoch = self._epoch
        self._commit_quietly({tp: o for tp, o in positions.items() if tp in self._owned})
        self._release_owned()

        for tp in sorted(share):
            holder = self._registry.claim(tp, self._thread_id)
            if holder is not None:
                self._release_owned()
                return f"{tp} is still owned by {holder}"
            self._owned.add(tp)

        starts = self._start_positions(share)
        with self._lock:
            if self._epoch == epoch and not self._session_lost:
                self._positions = starts
                self._lock.notify_all()
                return None
        self._release_owned()
        return "the ZooKeeper connection was interrupted during the rebalance"

    def _share(self, subscription: Mapping[str, int]) -> set[TopicPartition]:
        """This member's partitions in the group's range assignment, from the registrations
        and partitions in ZooKeeper now, leaving watches on what the assignment depends on."""
        members = self._registry.members(watch=self._on_watch)
        if self.consumer_id not in members:
            self._registered = False
            raise ZooKeeperConsumerError(f"{self._registry.registration_path} vanished")
        self._registry.brokers(watch=self._on_watch)
        all_topics = None
        if any(m.pattern != STATIC for m in members.values()):
            all_topics = self._registry.topics(watch=self._on_watch)
        relevant: dict[str, dict[str, int]] = {}
        for consumer_id, registration in members.items():
            try:
                topics = resolve_subscription(registration.pattern, registration.subscription,
                                              all_topics or ())
            except ValueError as exc:
                log.warning("group %s: ignoring member %s: %s", self.group_id, consumer_id, exc)
                continue
            relevant[consumer_id] = {t: n for t, n in topics.items() if t in subscription}
        partitions = {topic: self._registry.partitions(topic, watch=self._on_watch)
                      for topic in subscription}
        return owned_by(assign_ranges(relevant, partitions), [self._thread_id])

    def _start_positions(self, tps: set[TopicPartition]) -> dict[TopicPartition, int]:
        committed = self._offsets.committed(tps)
        missing = sorted(tp for tp, offset in committed.items() if offset is None)
        starts = {tp: offset for tp, offset in committed.items() if offset is not None}
        if missing:
            starts.update(self._reset_positions(missing))
            if not starts.keys() >= set(missing):
                raise ZooKeeperConsumerError(
                    f"no {self.config.auto_offset_reset} offset for "
                    f"{', '.join(str(tp) for tp in missing if tp not in starts)}")
            log.info("group %s: no committed offset for %s; starting at %s "
                     "(auto.offset.reset=%s)", self.group_id, ", ".join(map(str, missing)),
                     ", ".join(str(starts[tp]) for tp in missing), self.config.auto_offset_reset)
        return starts

    def _reset_positions(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        spec = EARLIEST if self.config.auto_offset_reset == SMALLEST else LATEST
        found = self._client.list_offsets(dict.fromkeys(tps, spec))
        return {tp: offset for tp, offset in found.items() if offset is not None}

    def _commit_quietly(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit what a rebalance gives away; a failure is logged, not fatal (the partitions
        are released either way, or the group would wait on this member)."""
        try:
            self._offsets.commit(offsets)
        except _REBALANCE_ERRORS as exc:
            log.warning("group %s: committing %s before releasing them failed: %s",
                        self.group_id, ", ".join(map(str, sorted(offsets))), exc)

    def _release_owned(self) -> None:
        for tp in sorted(self._owned):
            self._registry.release(tp)
            self._owned.discard(tp)
