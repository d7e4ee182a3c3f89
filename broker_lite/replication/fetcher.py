"""Followers copying their leaders' logs (Kafka's ``ReplicaFetcherManager``,
``ReplicaFetcherThread`` and ``AbstractFetcherThread``).

A broker runs one fetcher thread per broker it follows partitions of, over one connection of the
broker's own client (:class:`~broker_lite.client.cluster.connection.BrokerConnection`). Each
partition it follows goes through two phases, as in Kafka since KIP-101 and KIP-279:

1. **Truncating.** The follower asks the leader, with OffsetForLeaderEpoch, where the latest
   leader epoch of its own log ended in the leader's log, and truncates to the end of the
   largest epoch both logs share (the *epoch boundary*), never to its high watermark: records
   past it were written by a leader that did not keep them, and the leader's log is the truth.
   When the leader answers with an epoch the follower does not know, the follower truncates to
   the end of its own largest epoch below it and asks again. Only a log without leader epochs
   (written in message formats before v2) falls back to its high watermark.
2. **Fetching.** Fetch requests carrying the follower's broker id (``replica_id``), from its
   log end offset, in the leader epoch it follows (a leader in another epoch answers
   FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH), up to ``replica.fetch.max.bytes`` per
   partition and ``replica.fetch.response.max.bytes`` in all, waiting at most
   ``replica.fetch.wait.max.ms`` for ``replica.fetch.min.bytes``. The batches are appended as
   the leader wrote them (:meth:`~broker_lite.log.Log.append_as_follower`), then the
   follower's high watermark becomes the leader's (but not past its own log end) and its log
   start offset follows the leader's. The fetch itself tells the leader how far the follower
   got.

A fetch offset out of range on the leader means the logs diverged without epochs to tell where
(an unclean election): the follower truncates to the leader's log end when it is below its own,
or, when its log ends below the leader's log start, empties its log and starts at the leader's
log start (Kafka's ``fetchOffsetAndTruncate``). A fenced partition waits for the controller's
next state; other errors, and a leader that cannot be reached, are retried after
``replica.fetch.backoff.ms``.

Everything a thread does to a partition's log happens under the partition's lock, after
checking that the partition still follows the same leader in the same epoch
(:class:`~.partition.Partition`), so a leadership change never races a truncation or an append.
"""

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from broker_lite.client.cluster.connection import BrokerConnection
from broker_lite.client.config import ClientConfig
from broker_lite.client.errors import KafkaClientError
from broker_lite.client.retry import Deadline
from broker_lite.common.vocabulary import TopicPartition
from broker_lite.log import LogError
from broker_lite.log.leader_epochs import UNDEFINED_EPOCH, LeaderEpochCache
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.enums import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from broker_lite.records import BatchReader, RecordsError

from .partition import Partition

logger = logging.getLogger(__name__)

FETCH_BY_NAME = 12  # the last Fetch version naming topics, with replica_id as a field
UNDEFINED_OFFSET = -1


@dataclass(frozen=True)
class FetcherSettings:
    """Kafka's ``replica.fetch.*`` settings and ``replica.socket.timeout.ms``, and the client
    settings of the inter-broker listener (``security.protocol``, TLS stores, the SASL login)
    that followers connect to their leaders with."""

    wait_max_ms: int = 500
    min_bytes: int = 1
    max_bytes: int = 1048576
    response_max_bytes: int = 10485760
    backoff_ms: int = 1000
    socket_timeout_ms: int = 30000
    security: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_broker_config(cls, config, security: Mapping[str, str] | None = None
                           ) -> "FetcherSettings":
        return cls(config["replica.fetch.wait.max.ms"], config["replica.fetch.min.bytes"],
                   config["replica.fetch.max.bytes"], config["replica.fetch.response.max.bytes"],
                   config["replica.fetch.backoff.ms"], config["replica.socket.timeout.ms"],
                   dict(security or {}))


@dataclass
class _Fetching:
    leader_epoch: int
    truncating: bool = True
    fenced: bool = False  # waits for the controller's next state
    delayed_until: float = 0.0


def whole_batches(records) -> memoryview:
    """The complete batches at the start of ``records`` (a fetch may end with part of one)."""
    view = records if isinstance(records, memoryview) else memoryview(records)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    reader = BatchReader(view)
    for _ in reader:
        pass
    return view[:reader.position]


def truncation_point(epochs: LeaderEpochCache, log_end_offset: int, high_watermark: int,
                     leader_epoch: int, leader_end_offset: int) -> tuple[int, bool]:
    """Where a follower truncates, given the leader's answer for its latest epoch (``leader_epoch``
    and where it ends in the leader's log), as Kafka's ``getOffsetTruncationState``: the offset,
    and whether truncation is complete (False: ask again, for the epoch below).

    >>> import tempfile; cache = LeaderEpochCache(tempfile.mkdtemp())
    >>> cache.assign(0, 0); cache.assign(2, 100); cache.assign(4, 150)
    >>> truncation_point(cache, 180, 90, 4, 170)      # same latest epoch: the shorter end
    (170, True)
    >>> truncation_point(cache, 180, 90, 3, 120)      # epoch 3 unknown here: epoch 2 ended at 150
    (150, False)
    >>> truncation_point(cache, 150, 90, 2, 120)      # asked again: epoch 2 ends at 120 there
    (120, True)
    """
    if leader_end_offset == UNDEFINED_OFFSET:  # the leader keeps no epochs: Kafka's fallback
        return high_watermark, True
    if leader_epoch == UNDEFINED_EPOCH:
        return min(leader_end_offset, log_end_offset), True
    own_epoch, own_end = epochs.end_offset_for(leader_epoch, log_end_offset)
    if own_epoch == UNDEFINED_EPOCH:  # the leader's epoch is older than all of ours
        return min(leader_end_offset, log_end_offset), True
    if own_epoch != leader_epoch:
        # The leader answered an epoch this log does not know: cut to where our largest epoch
        # below it ended, and ask again from there.
        return min(own_end, log_end_offset), False
    return min(own_end, leader_end_offset, log_end_offset), True


class ReplicaFetcherThread:
    """Fetches the partitions this broker follows from one leader, ``leader_id``.

    ``replica(tp)`` gives the partition's :class:`~.partition.Partition` on this broker (None
    once it is gone); ``address()`` the leader's host and port (None while it is not
    registered).
    """

    def __init__(self, leader_id: int, local_id: int, address: Callable[[], tuple | None],
                 replica: Callable[[TopicPartition], Partition | None],
                 settings: FetcherSettings):
        self.leader_id = leader_id
        self.local_id = local_id
        self.address = address
        self.replica = replica
        self.settings = settings
        self._partitions: dict[TopicPartition, _Fetching] = {}
        self._lock = threading.Condition()
        self._stopped = False
        self._connection: BrokerConnection | None = None
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"ReplicaFetcherThread-{local_id}-{leader_id}")

    def start(self) -> "ReplicaFetcherThread":
        self._thread.start()
        return self

    def stop(self, *, wait: bool = True) -> None:
        """Stop fetching; ``wait`` for the thread to end (at most the socket timeout)."""
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        connection = self._connection
        if connection is not None:
            connection.close()  # a fetch waiting on the leader ends now
        if wait and self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.settings.socket_timeout_ms / 1000)

    # -- partitions (any thread) ------------------------------------------------------------------

    def add(self, partition: TopicPartition, leader_epoch: int) -> None:
        """Follow ``partition`` in ``leader_epoch``, starting with truncation."""
        with self._lock:
            self._partitions[partition] = _Fetching(leader_epoch)
            self._lock.notify_all()

    def remove(self, partition: TopicPartition) -> None:
        with self._lock:
            self._partitions.pop(partition, None)

    @property
    def partitions(self) -> dict[TopicPartition, int]:
        """The partitions followed, with their leader epochs."""
        with self._lock:
            return {tp: state.leader_epoch for tp, state in self._partitions.items()}

    def _current(self, partition: TopicPartition, state: _Fetching) -> bool:
        with self._lock:
            return self._partitions.get(partition) is state

    # -- the thread --------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._stopped and not self._ready():
                    self._lock.wait(timeout=self._next_wake())
                if self._stopped:
                    break
                ready = {tp: s for tp, s in self._partitions.items()
                         if not s.fenced and s.delayed_until <= time.monotonic()}
            try:
                connection = self._connect()
                truncating = {tp: s for tp, s in ready.items() if s.truncating}
                if truncating:
                    self._truncate(connection, truncating)
                fetching = {tp: s for tp, s in ready.items() if not s.truncating}
                if fetching:
                    self._fetch(connection, fetching)
            except (KafkaClientError, OSError) as exc:
                if not self._stopped:
                    logger.info("fetcher %d -> %d: %s; retrying in %d ms", self.local_id,
                                self.leader_id, exc, self.settings.backoff_ms)
                    self._delay(ready, self.settings.backoff_ms)
            except Exception:  # a bug must not end replication of every partition for good
                logger.exception("fetcher %d -> %d failed", self.local_id, self.leader_id)
                self._delay(ready, self.settings.backoff_ms)
        if self._connection is not None:
            self._connection.close()

    def _ready(self) -> bool:
        now = time.monotonic()
        return any(not s.fenced and s.delayed_until <= now for s in self._partitions.values())

    def _next_wake(self) -> float | None:
        waiting = [s.delayed_until for s in self._partitions.values() if not s.fenced]
        return max(min(waiting) - time.monotonic(), 0.001) if waiting else None

    def _delay(self, partitions: dict[TopicPartition, _Fetching], delay_ms: int) -> None:
        until = time.monotonic() + delay_ms / 1000
        with self._lock:
            for state in partitions.values():
                state.delayed_until = until

    def _connect(self) -> BrokerConnection:
        address = self.address()
        if address is None:
            raise _LeaderUnknown(f"broker {self.leader_id} is not registered")
        connection = self._connection
        if connection is None or (connection.host, connection.port) != tuple(address):
            if connection is not None:
                connection.close()
            host, port = address
            timeout = self.settings.socket_timeout_ms
            config = ClientConfig({
                **self.settings.security, "bootstrap.servers": f"{host}:{port}",
                "client.id": f"broker-{self.local_id}-fetcher-{self.leader_id}",
                "request.timeout.ms": str(timeout),
                "reconnect.backoff.ms": str(self.settings.backoff_ms),
                "reconnect.backoff.max.ms": str(self.settings.backoff_ms)})
            connection = self._connection = BrokerConnection(host, port, config,
                                                             node_id=self.leader_id)
        return connection

    def _deadline(self, waits_ms: int = 0) -> Deadline:
        return Deadline(self.settings.socket_timeout_ms + waits_ms)

    # -- truncation --------------------------------------------------------------------------------

    def _truncate(self, connection: BrokerConnection,
                  partitions: dict[TopicPartition, _Fetching]) -> None:
        asking = {}
        for tp, state in partitions.items():
            replica = self.replica(tp)
            if replica is None:
                self.remove(tp)
                continue
            latest = replica.log.leader_epochs.latest_epoch
            if latest == UNDEFINED_EPOCH:
                # Nothing written with epochs: an empty log, or message formats before v2.
                self._finish_truncation(tp, state, replica, replica.log.high_watermark)
            else:
                asking[tp] = (state, replica, latest)
        if not asking:
            return
        topics: dict[str, list] = {}
        for tp, (state, _replica, latest) in sorted(asking.items()):
            topics.setdefault(tp.topic, []).append({
                "partition": tp.partition, "current_leader_epoch": state.leader_epoch,
                "leader_epoch": latest})
        _version, response = connection.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, {
            "replica_id": self.local_id,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]},
            self._deadline())
        for topic in response["topics"]:
            for answer in topic["partitions"]:
                tp = TopicPartition(topic["topic"], answer["partition"])
                if tp in asking:
                    state, replica, _latest = asking[tp]
                    self._on_epoch_end_offset(tp, state, replica, answer)

    def _on_epoch_end_offset(self, tp: TopicPartition, state: _Fetching, replica,
                             answer: dict) -> None:
        error = ErrorCode(answer["error_code"])
        if error != ErrorCode.NONE:
            self._on_partition_error(tp, state, error, "OffsetForLeaderEpoch")
            return
        log = replica.log
        offset, complete = truncation_point(log.leader_epochs, log.log_end_offset,
                                            log.high_watermark, answer["leader_epoch"],
                                            answer["end_offset"])
        if complete:
            self._finish_truncation(tp, state, replica, offset)
        elif replica.follower_truncate(self.leader_id, state.leader_epoch, offset):
            logger.info("%s-%d: leader %d answered epoch %d, unknown here; truncated to %d and "
                        "asking again", *tp, self.leader_id, answer["leader_epoch"], offset)

    def _finish_truncation(self, tp: TopicPartition, state: _Fetching, replica,
                           offset: int) -> None:
        if replica.follower_truncate(self.leader_id, state.leader_epoch, offset):
            with self._lock:
                if self._partitions.get(tp) is state:
                    state.truncating = False

    # -- fetching ----------------------------------------------------------------------------------

    def _fetch(self, connection: BrokerConnection,
               partitions: dict[TopicPartition, _Fetching]) -> None:
        requested = {}
        topics: dict[str, list] = {}
        for tp, state in sorted(partitions.items()):
            replica = self.replica(tp)
            if replica is None:
                self.remove(tp)
                continue
            log = replica.log
            requested[tp] = (state, replica, log.log_end_offset)
            topics.setdefault(tp.topic, []).append({
                "partition": tp.partition, "current_leader_epoch": state.leader_epoch,
                "fetch_offset": log.log_end_offset, "last_fetched_epoch": -1,
                "log_start_offset": log.log_start_offset,
                "partition_max_bytes": self.settings.max_bytes})
        if not requested:
            return
        body = {"replica_id": self.local_id, "max_wait_ms": self.settings.wait_max_ms,
                "min_bytes": self.settings.min_bytes,
                "max_bytes": self.settings.response_max_bytes, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [],
                "rack_id": "",
                "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]}
        _version, response = connection.request(ApiKey.FETCH, body,
                                                self._deadline(self.settings.wait_max_ms),
                                                max_version=FETCH_BY_NAME)
        for topic in response["responses"]:
            for answer in topic["partitions"]:
                tp = TopicPartition(topic["topic"], answer["partition_index"])
                if tp in requested:
                    state, replica, offset = requested[tp]
                    if self._current(tp, state):
                        self._on_fetched(connection, tp, state, replica, offset, answer)

    def _on_fetched(self, connection: BrokerConnection, tp: TopicPartition, state: _Fetching,
                    replica, offset: int, answer: dict) -> None:
        error = ErrorCode(answer["error_code"])
        if error == ErrorCode.OFFSET_OUT_OF_RANGE:
            self._reset_out_of_range(connection, tp, state, replica)
            return
        if error != ErrorCode.NONE:
            self._on_partition_error(tp, state, error, "Fetch")
            return
        try:
            records = whole_batches(answer["records"] or b"")
            replica.follower_append(self.leader_id, state.leader_epoch, offset, records,
                                    answer["high_watermark"], answer["log_start_offset"])
        except (RecordsError, LogError) as exc:
            logger.error("%s-%d: the batches fetched from leader %d at offset %d cannot be "
                         "appended: %s", *tp, self.leader_id, offset, exc)
            self._delay({tp: state}, self.settings.backoff_ms)

    def _reset_out_of_range(self, connection: BrokerConnection, tp: TopicPartition,
                            state: _Fetching, replica) -> None:
        leader_end = self._list_offset(connection, tp, state, LATEST_TIMESTAMP)
        end = replica.log.log_end_offset
        if leader_end is None:
            return
        if leader_end < end:
            logger.warning("%s-%d: truncating to leader %d's log end %d, below ours (%d)", *tp,
                           self.leader_id, leader_end, end)
            replica.follower_truncate(self.leader_id, state.leader_epoch, leader_end)
            return
        leader_start = self._list_offset(connection, tp, state, EARLIEST_TIMESTAMP)
        if leader_start is not None and leader_start > end:
            logger.warning("%s-%d: our log ends at %d, below leader %d's log start %d: "
                           "starting afresh there", *tp, end, self.leader_id, leader_start)
            replica.follower_truncate_fully(self.leader_id, state.leader_epoch, leader_start)

    def _list_offset(self, connection: BrokerConnection, tp: TopicPartition,
                     state: _Fetching, timestamp: int) -> int | None:
        _version, response = connection.request(ApiKey.LIST_OFFSETS, {
            "replica_id": self.local_id, "isolation_level": 0,
            "topics": [{"name": tp.topic, "partitions": [{
                "partition_index": tp.partition, "current_leader_epoch": state.leader_epoch,
                "timestamp": timestamp, "max_num_offsets": 1}]}]}, self._deadline())
        answer = response["topics"][0]["partitions"][0]
        error = ErrorCode(answer["error_code"])
        if error != ErrorCode.NONE:
            self._on_partition_error(tp, state, error, "ListOffsets")
            return None
        return answer["offset"]

    def _on_partition_error(self, tp: TopicPartition, state: _Fetching, error: ErrorCode,
                            request: str) -> None:
        if error == ErrorCode.FENCED_LEADER_EPOCH:
            logger.info("%s-%d: leader %d has a newer epoch than %d (%s); waiting for the new "
                        "state", *tp, self.leader_id, state.leader_epoch, request)
            with self._lock:
                state.fenced = True
            return
        logger.info("%s-%d: leader %d answered %s to %s; retrying in %d ms", *tp,
                    self.leader_id, error.name, request, self.settings.backoff_ms)
        self._delay({tp: state}, self.settings.backoff_ms)


class _LeaderUnknown(KafkaClientError):
    """The leader is not registered: nowhere to fetch from yet."""


class ReplicaFetcherManager:
    """The fetcher threads of this broker, one per leader it follows partitions of."""

    def __init__(self, local_id: int, address_of: Callable[[int], tuple | None],
                 replica: Callable[[TopicPartition], Partition | None],
                 settings: FetcherSettings):
        self.local_id = local_id
        self.address_of = address_of
        self.replica = replica
        self.settings = settings
        self._lock = threading.Lock()
        self._threads: dict[int, ReplicaFetcherThread] = {}
        self._stopped = False

    def follow(self, partition: TopicPartition, leader_id: int, leader_epoch: int) -> None:
        """Fetch ``partition`` from ``leader_id`` in ``leader_epoch``, truncating first."""
        with self._lock:
            if self._stopped:
                return
            for other_id, thread in self._threads.items():
                if other_id != leader_id:
                    thread.remove(partition)
            found = self._threads.get(leader_id)
            if found is None:
                found = self._threads[leader_id] = ReplicaFetcherThread(
                    leader_id, self.local_id, lambda: self.address_of(leader_id), self.replica,
                    self.settings).start()
            found.add(partition, leader_epoch)

    def unfollow(self, partition: TopicPartition) -> None:
        with self._lock:
            for thread in self._threads.values():
                thread.remove(partition)
        self._stop_idle()

    def _stop_idle(self) -> None:
        with self._lock:
            idle = [leader for leader, thread in self._threads.items() if not thread.partitions]
            stopping = [self._threads.pop(leader) for leader in idle]
        for thread in stopping:  # the caller, ZooKeeper's event thread, does not wait
            thread.stop(wait=False)

    def followed(self) -> dict[TopicPartition, tuple[int, int]]:
        """Partition -> (leader, leader epoch) of everything followed."""
        with self._lock:
            threads = list(self._threads.values())
        return {tp: (thread.leader_id, epoch) for thread in threads
                for tp, epoch in thread.partitions.items()}

    def shutdown(self) -> None:
        with self._lock:
            self._stopped = True
            threads = list(self._threads.values())
            self._threads.clear()
        for thread in threads:
            thread.stop()
