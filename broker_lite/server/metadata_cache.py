"""The cluster as this broker answers it (Kafka's MetadataCache): the answers of a
:class:`~.services.ClusterView`, kept in memory and read again when ZooKeeper says what they were
read from changed.

Kafka's brokers answer Metadata from a cache the controller keeps current. broker_lite's view
reads ZooKeeper (:class:`~.metadata.ClusterMetadata`), and :class:`MetadataCache` keeps each of
its answers: every read the view makes leaves a ZooKeeper watch (a data or children watch on a
znode that exists, an existence watch on one that does not), and when any of them fires, or the
ZooKeeper session changes state, every answer is marked stale and the next call reads again.
Changes are rare (topics created or deleted, leaders elected, brokers joining or leaving), so
Metadata, FindCoordinator and Fetch by topic id cost no ZooKeeper round trip between them. An
answer being computed while a change arrives is returned and kept as stale (read again next
time, but there to answer from while ZooKeeper is out of reach), and at most
:data:`MAX_ANSWERS` are kept (clients asking for ever new topic names do not grow it further).

A broker cut off from ZooKeeper still answers, from memory, as Kafka's does: while the session
has no connection (kazoo's SUSPENDED or LOST) a stale answer is given as it is, without asking
ZooKeeper, and a read that fails because the connection went down, or that takes longer than
``read_timeout_s``, falls back to it too. Only a question never answered before fails then,
with :class:`~broker_lite.zk.errors.ZooKeeperUnreachableError`. No request handler thread
waits on a ZooKeeper that does not answer (with every handler waiting, even ApiVersions would go
unanswered). Kafka's cache holds every topic (the controller sends it all); this one holds at
least every topic the broker hosts, and the list of topics (:class:`RememberingListener` reads
them again whenever the broker's partitions change: a new leader, a new ISR), so a leader cut
off from ZooKeeper still answers for what it leads, and lists the topics, as it last knew them,
whoever asked before.
"""

import threading
import uuid
from collections.abc import Callable

from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, NoNodeError, SessionExpiredError
from kazoo.handlers.threading import KazooTimeoutError

from broker_lite.zk.errors import ZooKeeperError, ZooKeeperUnreachableError
from broker_lite.zk.layout import PartitionState
from broker_lite.zk.replicas import PartitionListener

from .metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo

MAX_ANSWERS = 10_000
READ_TIMEOUT_S = 6.0  # a read's longest wait for a connection that went silent
# What a read raises when ZooKeeper cannot be reached (the connection is lost, the session
# expired, the client closed, or the read's wait ran out).
UNREACHABLE = (ConnectionLoss, SessionExpiredError, ConnectionClosedError, KazooTimeoutError)


class _WatchingClient:
    """A kazoo client whose reads leave a watch calling ``on_change`` (and everything else as
    the client does it)."""

    def __init__(self, client: KazooClient, on_change: Callable[..., None],
                 timeout_s: float = READ_TIMEOUT_S):
        self._client = client
        self._on_change = on_change
        self._timeout_s = timeout_s

    def get(self, path: str, watch=None):
        return self._read(self._client.get_async, path)

    def get_children(self, path: str, watch=None, include_data: bool = False):
        return self._read(self._client.get_children_async, path, include_data=include_data)

    def exists(self, path: str, watch=None):
        return self._exists(path)

    def _exists(self, path: str):
        return self._client.exists_async(path, watch=self._on_change).get(
            timeout=self._timeout_s)

    def _read(self, read, path: str, **options):
        # kazoo's blocking calls wait for a lost connection to come back, for ever: these wait
        # at most the timeout
        try:
            return read(path, watch=self._on_change, **options).get(timeout=self._timeout_s)
        except NoNodeError:
            # Told when it is created; created between the two reads, the watch will not fire,
            # so the answer being computed is kept as stale.
            if self._exists(path) is not None:
                self._on_change()
            raise

    def __getattr__(self, name: str):
        return getattr(self._client, name)


class MetadataCache:
    """A :class:`~.services.ClusterView` keeping the answers of the view ``make_view`` builds
    on a watching client (see the module docstring)."""

    def __init__(self, client: KazooClient, make_view: Callable[[KazooClient], ClusterMetadata],
                 on_change: Callable[[], None] | None = None, *,
                 read_timeout_s: float = READ_TIMEOUT_S):
        self._lock = threading.Lock()
        # key -> (the generation it was read in, the answer); stale once the generation moved
        self._answers: dict[tuple, tuple[int, object]] = {}
        self._generation = 0
        self._on_change = on_change
        self._client = client
        self._view = make_view(_WatchingClient(client, self.invalidate, read_timeout_s))
        client.add_listener(self._on_session_state)

    def invalidate(self, *_event) -> None:
        """Mark every answer stale: what it was read from changed. ``on_change`` is told (on
        the thread of the watch; it must not block)."""
        with self._lock:
            self._generation += 1
        if self._on_change is not None:
            self._on_change()

    def _on_session_state(self, _state) -> bool:
        self.invalidate()  # watches may have been lost with the session
        return False  # keep listening

    def _answer(self, key: tuple, compute: Callable[[], object]):
        with self._lock:
            kept = self._answers.get(key)
            if kept is not None and kept[0] == self._generation:
                return kept[1]
            generation = self._generation
        if not self._client.connected:  # ZooKeeper out of reach: from memory, or not at all
            if kept is not None:
                return kept[1]
            raise ZooKeeperUnreachableError(f"ZooKeeper cannot be reached to read {key}")
        try:
            value = compute()
        except UNREACHABLE as exc:
            if kept is not None:
                return kept[1]
            raise ZooKeeperUnreachableError(
                f"ZooKeeper cannot be reached to read {key}: {type(exc).__name__}") from exc
        with self._lock:
            current = self._answers.get(key)
            if (current is None and len(self._answers) < MAX_ANSWERS) or \
                    (current is not None and current[0] <= generation):
                # read in ``generation``: stale at once if a change arrived meanwhile
                self._answers[key] = (generation, value)
        return value

    @property
    def local_broker(self) -> BrokerInfo | None:
        """This broker, once registered (listed even while ZooKeeper does not show it yet)."""
        return self._view.local_broker

    @local_broker.setter
    def local_broker(self, broker: BrokerInfo | None) -> None:
        self._view.local_broker = broker
        self.invalidate()  # the broker list includes it from now on

    def set_local_endpoints(self, endpoints: dict[str, BrokerInfo]) -> None:
        """This broker at each of its listeners' advertised endpoints."""
        self._view.local_endpoints = dict(endpoints)
        self.invalidate()

    def shows_itself(self) -> bool:
        """Whether ZooKeeper lists this broker and names a controller, read afresh: the broker
        asks it while it waits to be shown, so no answer may be kept."""
        return self._view.shows_itself()

    # -- ClusterView ------------------------------------------------------------------------

    def brokers(self, listener: str | None = None) -> list[BrokerInfo]:
        return list(self._answer(("brokers", listener), lambda: self._view.brokers(listener)))

    def controller_id(self) -> int:
        return self._answer(("controller",), self._view.controller_id)

    def topic_names(self) -> list[str]:
        return list(self._answer(("topics",), self._view.topic_names))

    def topic(self, name: str) -> TopicInfo | None:
        return self._answer(("topic", name), lambda: self._view.topic(name))

    def remember_topic(self, name: str) -> None:
        """Read the topic's answer, and the list of topics, unless current ones are held."""
        for key, read in ((("topics",), self.topic_names), (("topic", name),
                                                            lambda: self.topic(name))):
            with self._lock:
                kept = self._answers.get(key)
                if kept is not None and kept[0] == self._generation:
                    continue
            try:
                read()
            except (ZooKeeperError, *UNREACHABLE):
                pass  # asked again at the next assignment, or by a client

    def partitions(self, name: str) -> list[PartitionInfo] | None:
        found = self._answer(("partitions", name), lambda: self._view.partitions(name))
        return None if found is None else list(found)

    def partition_count(self, name: str) -> int | None:
        return self._answer(("partition_count", name), lambda: self._view.partition_count(name))

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        return self._answer(("partition_state", topic, partition),
                            lambda: self._view.partition_state(topic, partition))

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self._answer(("topic_name", topic_id), lambda: self._view.topic_name(topic_id))


class RememberingListener:
    """A :class:`~broker_lite.zk.replicas.PartitionListener` passing everything on to
    ``listener``, and once a run of a topic's assignments is over, making sure ``cache`` holds
    that topic as it is now (see the module docstring)."""

    def __init__(self, listener: PartitionListener, cache: MetadataCache):
        self.listener = listener
        self.cache = cache

    def on_partition_assigned(self, topic: str, partition: int, state: PartitionState,
                              replicas: list[int], version: int = -1) -> None:
        self.listener.on_partition_assigned(topic, partition, state, replicas, version)

    def on_partition_removed(self, topic: str, partition: int, *, delete: bool) -> None:
        self.listener.on_partition_removed(topic, partition, delete=delete)

    def on_assignments_begin(self, topic: str, partitions: list[int]) -> None:
        self.listener.on_assignments_begin(topic, partitions)

    def on_assignments_end(self, topic: str, partitions: list[int]) -> None:
        self.listener.on_assignments_end(topic, partitions)
        self.cache.remember_topic(topic)
