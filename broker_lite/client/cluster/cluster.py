"""The client's view of the cluster: connections by broker address, metadata, routing.

One :class:`BrokerConnection` per broker address, opened on first use and shared by every
thread (each connection serialises its own requests). Requests that any broker can answer
(Metadata, FindCoordinator, DescribeConfigs) go to :meth:`Cluster.request_any`, which tries the
brokers that can take a request at once first (not throttled by a quota, not backing off after a
failed connection), open connections first among them, then the other known brokers, then
``bootstrap.servers``, until one answers; requests about partitions go to their leaders
(:meth:`Cluster.leaders`), and work for several brokers runs on them concurrently
(:meth:`Cluster.run_per_broker`), so a Fetch to three leaders waits for the slowest, not for
their sum.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey

from ..config import ClientConfig
from ..errors import (
    BrokerNotAvailableError,
    ClientClosedError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
)
from ..retry import Backoff, Deadline, retry
from .connection import Body, BrokerConnection
from .metadata import (
    BrokerInfo,
    MetadataCache,
    MetadataSnapshot,
    metadata_request,
    parse_metadata,
)
from .versions import api_name

K = TypeVar("K")
R = TypeVar("R")
MAX_WORKERS = 16


class Cluster:
    """Connections and metadata of one client; thread-safe."""

    def __init__(self, config: ClientConfig):
        self.config = config
        self.metadata = MetadataCache(config.metadata_max_age_ms)
        self._connections: dict[tuple[str, int], BrokerConnection] = {}
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    # -- timing ---------------------------------------------------------------------------------

    def deadline(self, extra_ms: int = 0) -> Deadline:
        """The deadline of an operation starting now: ``request.timeout.ms`` (+ ``extra_ms``)."""
        return Deadline(self.config.request_timeout_ms + extra_ms)

    def backoff(self) -> Backoff:
        return Backoff(self.config.retry_backoff_ms, self.config.retry_backoff_max_ms)

    def on_retriable(self, error: KafkaClientError) -> None:
        """Before retrying after ``error``: refresh the metadata if it may be out of date."""
        if error.invalid_metadata:
            self.metadata.mark_stale()

    # -- connections ----------------------------------------------------------------------------

    def connection(self, host: str, port: int, node_id: int | None = None) -> BrokerConnection:
        with self._lock:
            if self._closed:
                raise ClientClosedError("the client is closed")
            conn = self._connections.get((host, port))
            if conn is None:
                conn = self._connections[(host, port)] = BrokerConnection(
                    host, port, self.config, node_id=node_id)
            elif node_id is not None:
                conn.node_id = node_id
            return conn

    def node(self, node_id: int) -> BrokerConnection:
        """The connection to broker ``node_id`` of the cluster metadata."""
        broker = self.metadata.broker(node_id)
        if broker is None:
            raise BrokerNotAvailableError(f"broker {node_id} is not in the cluster metadata")
        return self.connection(broker.host, broker.port, node_id)

    def request_any(self, api_key: ApiKey, body: Body, deadline: Deadline, *,
                    max_version: int | None = None) -> tuple[int, dict]:
        """Send a request that any broker can answer to the first one that does."""
        errors: list[KafkaClientError] = []
        for conn in self._candidates():
            if deadline.expired():
                break
            try:
                return conn.request(api_key, body, deadline, max_version=max_version)
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                errors.append(exc)
        raise self._unreachable(api_key, errors)

    def _candidates(self) -> list[BrokerConnection]:
        known = [self.connection(b.host, b.port, b.node_id)
                 for b in self.metadata.brokers().values()]
        bootstrap = [self.connection(host, port) for host, port in self.config.bootstrap_servers]
        unique = list(dict.fromkeys(known + bootstrap))
        # those that can take a request now (not throttled, not backing off from failures)
        # first, open connections first among them; then the soonest ready, then the longest
        # ago failed
        now = time.monotonic()
        return sorted(unique, key=lambda c: (c.ready_at > now, not c.connected, c.ready_at,
                                             c.last_failure or 0.0))

    def _unreachable(self, api_key: ApiKey, errors: list[KafkaClientError]) -> KafkaClientError:
        servers = f"bootstrap.servers={self.config.bootstrap_text}"
        if not errors:
            return KafkaTimeoutError(f"no time left to send {api_name(api_key)} ({servers})")
        detail = "; ".join(str(e) for e in errors)
        if any(isinstance(e, KafkaTimeoutError) for e in errors):
            return KafkaTimeoutError(f"no broker answered {api_name(api_key)} ({servers}): "
                                     f"{detail}", last_error=errors[-1])
        return BrokerNotAvailableError(f"cannot reach any broker ({servers}): {detail}")

    def request_controller(self, api_key: ApiKey, body: Body,
                           deadline: Deadline) -> tuple[int, dict]:
        """Send an administrative request to the controller (Kafka in ZooKeeper mode answers
        NOT_CONTROLLER elsewhere); to any broker while the controller is unknown."""
        if self.metadata.needs_refresh():
            self.refresh_metadata((), deadline)
        controller = self.metadata.controller_id
        if controller < 0 or self.metadata.broker(controller) is None:
            return self.request_any(api_key, body, deadline)
        return self.node(controller).request(api_key, body, deadline)

    # -- metadata -------------------------------------------------------------------------------

    def refresh_metadata(self, topics: Iterable[str] | None, deadline: Deadline, *,
                         auto_create: bool = False) -> MetadataSnapshot:
        """Ask for ``topics`` and every topic already cached (None: every topic); with
        ``auto_create``, a broker that allows it creates those missing."""
        wanted = None if topics is None else set(topics) | self.metadata.known_topics()
        _, body = self.request_any(
            ApiKey.METADATA,
            lambda version: metadata_request(wanted, version, auto_create=auto_create), deadline)
        snapshot = parse_metadata(body)
        self.metadata.update(snapshot, every_topic=wanted is None)
        return snapshot

    def list_topics(self, include_internal: bool = False) -> dict[str, int]:
        """Every topic of the cluster with its partition count, from a Metadata request made now
        (retried within ``request.timeout.ms``); internal topics (``__consumer_offsets``, ...)
        only with ``include_internal``."""
        deadline = self.deadline()
        snapshot = retry("list_topics()", deadline, self.backoff(),
                         lambda: self.refresh_metadata(None, deadline), self.on_retriable)
        return {name: topic.partition_count for name, topic in sorted(snapshot.topics.items())
                if include_internal or not topic.is_internal}

    def ensure_metadata(self, deadline: Deadline, tps: Iterable[TopicPartition] = (),
                        topics: Iterable[str] = ()) -> None:
        tps, topics = list(tps), list(topics)
        if self.metadata.needs_refresh(tps, topics):
            self.refresh_metadata({*topics, *(tp.topic for tp in tps)}, deadline)

    def leaders(self, tps: Iterable[TopicPartition], deadline: Deadline
                ) -> tuple[dict[int, tuple[BrokerInfo, dict[TopicPartition, int]]],
                           dict[TopicPartition, KafkaClientError]]:
        """Group ``tps`` by leader: ``{node_id: (broker, {tp: leader_epoch})}``, and the
        partitions without a usable leader with the reason."""
        tps = list(tps)
        self.ensure_metadata(deadline, tps)
        by_leader: dict[int, tuple[BrokerInfo, dict[TopicPartition, int]]] = {}
        errors: dict[TopicPartition, KafkaClientError] = {}
        for tp in tps:
            try:
                broker, epoch = self.metadata.leader(tp)
            except KafkaClientError as exc:
                errors[tp] = exc
                continue
            by_leader.setdefault(broker.node_id, (broker, {}))[1][tp] = epoch
        return by_leader, errors

    # -- concurrency ----------------------------------------------------------------------------

    def run_per_broker(self, work: Mapping[K, Callable[[], R]]) -> dict[K, R | KafkaClientError]:
        """Run each callable (one per broker), concurrently when there are several; client
        errors are returned in place of results, other exceptions raised."""
        if len(work) <= 1:
            return {key: _call(fn) for key, fn in work.items()}
        executor = self._pool()
        futures = {key: executor.submit(_call, fn) for key, fn in work.items()}
        return {key: future.result() for key, future in futures.items()}

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._closed:
                raise ClientClosedError("the client is closed")
            if self._executor is None:
                self._executor = ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="kpy-client")
            return self._executor

    def close(self) -> None:
        with self._lock:
            self._closed = True
            connections, self._connections = list(self._connections.values()), {}
            executor, self._executor = self._executor, None
        for conn in connections:
            conn.close()
        if executor is not None:
            executor.shutdown(wait=False)


def _call(fn: Callable[[], R]) -> R | KafkaClientError:
    try:
        return fn()
    except KafkaClientError as exc:
        return exc


class ClusterUser(Protocol):
    """What lends its connections, metadata and settings to producers and transaction calls: a
    :class:`~broker_lite.client.KafkaClient`."""

    @property
    def cluster(self) -> Cluster: ...

    @property
    def config(self) -> ClientConfig: ...

    @property
    def closed(self) -> bool: ...
