"""KafkaClient: the Kafka client of the Spark source and sink, for any Kafka-protocol cluster.

It speaks only standard Kafka APIs, in the versions negotiated with each broker (ApiVersions),
over blocking sockets, and never decodes records: fetched data stays raw bytes for
:mod:`broker_lite.records.arrow`. One client may be shared by threads.

Retry policy
------------
Every call has a deadline of ``request.timeout.ms`` from its start (``fetch`` adds its
``max_wait_ms``); no socket wait inside a call outlasts it, so no call hangs.

* **Retriable errors are retried** until the deadline, waiting ``retry.backoff.ms`` before the
  first retry and doubling up to ``retry.backoff.max.ms`` (with jitter). Retriable are the
  error codes Kafka marks retriable (``ErrorCode.retriable``: NOT_LEADER_OR_FOLLOWER,
  LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
  COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, ...), failed or lost connections, and
  responses that do not come in time.
* **Metadata is refreshed first** when the error says it may be out of date (the leader moved,
  the topic changed, a broker went away: ``invalid_metadata``), so the retry goes to the new
  leader. Metadata is also refreshed when older than ``metadata.max.age.ms`` and whenever a call
  names a topic or partition it does not know (a topic created after the client started).
* **Only what failed is retried**: list_offsets and fetch retry the partitions that failed,
  against their current leaders, and keep the answers they have.
* **Final answers are not retried**: non-retriable codes (OFFSET_OUT_OF_RANGE,
  TOPIC_AUTHORIZATION_FAILED, ...) and a topic or partition that fresh metadata says does not
  exist (UnknownTopicOrPartitionError with ``retriable`` False) are raised at once, or, in
  ``fetch``, returned as the partition's ``error``.
* **At the deadline** a :class:`KafkaTimeoutError` says what did not complete and why: its message
  includes the last error (say, the bootstrap servers that refused connections, or
  COORDINATOR_NOT_AVAILABLE for a group), which is also its ``last_error``.

>>> client = KafkaClient({"bootstrap.servers": "127.0.0.1:9", "request.timeout.ms": "200",
...                       "retry.backoff.ms": "20", "reconnect.backoff.ms": "0"})
>>> client.topics()  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
broker_lite.client.errors.KafkaTimeoutError: list_topics() did not complete within 200 ms;
last error: cannot reach any broker (bootstrap.servers=127.0.0.1:9):
cannot connect to broker 127.0.0.1:9: Connection refused
>>> client.close()
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

from broker_lite.common.vocabulary import TopicPartition

from .cluster.cluster import Cluster
from .config import ClientConfig
from .consumer.fetcher import Fetcher
from .consumer.group_offsets import GroupOffsets
from .consumer.offsets import OffsetLookup
from .errors import ClientClosedError, InvalidArgumentError, error_for, error_of, final_error
from .retry import retry
from .types import LOG_END, FetchedPartition, OffsetAndMetadata, OffsetAndTimestamp

if TYPE_CHECKING:
    from .admin.admin import Admin
    from .consumer.partition_reader import FetchedChunk, OutOfRangeHook
    from .producer.producer import Producer


class KafkaClient:
    """A client for one Kafka cluster; settings as in :mod:`.config` (``bootstrap.servers`` is
    required). Close it with :meth:`close` or use it as a context manager.

    ``cluster`` gives it the connections and metadata of another client to share (whose
    :data:`.config.CONNECTION_SETTINGS` must be the same; see :mod:`.shared`): closing this
    client leaves them open.
    """

    def __init__(self, config: Mapping[str, Any] | ClientConfig, *,
                 cluster: Cluster | None = None):
        self.config = config if isinstance(config, ClientConfig) else ClientConfig(config)
        self._owns_cluster = cluster is None
        if cluster is None:
            cluster = Cluster(self.config)
        elif cluster.config.connection_key != self.config.connection_key:
            raise InvalidArgumentError("a client can only share the connections of a cluster "
                                       "with the same connection settings")
        self._cluster = cluster
        self._fetcher = Fetcher(self._cluster, self.config)
        self._offsets = OffsetLookup(self._cluster)
        self._groups = GroupOffsets(self._cluster)
        self._admin: Admin | None = None
        self._closed = False

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> KafkaClient:
        """A client from Spark options: the ``kafka.``-prefixed ones (``kafka.bootstrap.servers``,
        ...), others ignored; a ConfigError names the option (``kafka.<key>``)."""
        return cls(ClientConfig.from_spark_options(options))

    def close(self) -> None:
        """Close the client, and its connections unless it shares them (``cluster``)."""
        self._closed = True
        if self._owns_cluster:
            self._cluster.close()

    def __enter__(self) -> KafkaClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("the client is closed")

    @property
    def cluster(self) -> Cluster:
        """The connections and cluster metadata of this client, which the producers and
        transaction calls given this client share."""
        return self._cluster

    @property
    def closed(self) -> bool:
        return self._closed

    # -- cluster metadata -----------------------------------------------------------------------

    def topics(self, include_internal: bool = False) -> dict[str, int]:
        """Every topic of the cluster with its partition count (internal topics such as
        ``__consumer_offsets`` only with ``include_internal``); always asks the cluster."""
        self._check_open()
        return self._cluster.list_topics(include_internal)

    def partitions(self, topic: str) -> list[int]:
        """The partition numbers of ``topic``, asking the cluster (so new partitions show);
        :class:`UnknownTopicOrPartitionError` when it does not exist."""
        self._check_open()
        cluster = self._cluster
        deadline = cluster.deadline()

        def attempt() -> list[int]:
            snapshot = cluster.refresh_metadata([topic], deadline)
            found = snapshot.topics.get(topic)
            if found is None:
                raise final_error(error_of(3, "the topic does not exist", where=f"topic {topic}"))
            error = error_for(found.error_code, where=f"topic {topic}")
            if error is not None:
                raise error
            return sorted(found.partitions)

        return retry(f"partitions({topic!r})", deadline, cluster.backoff(), attempt,
                     cluster.on_retriable)

    # -- offsets --------------------------------------------------------------------------------

    def list_offsets(self, specs: Mapping[TopicPartition, int],
                     isolation_level: str | None = None) -> dict[TopicPartition, int | None]:
        """The offset for each spec: EARLIEST (-2), LATEST (-1), or a timestamp in ms (the
        first offset whose record timestamp is >= it; None when there is none). Under
        read_committed, LATEST is the last stable offset."""
        found = self.list_offsets_and_timestamps(specs, isolation_level)
        return {tp: None if f is None else f.offset for tp, f in found.items()}

    def list_offsets_and_timestamps(self, specs: Mapping[TopicPartition, int],
                                    isolation_level: str | None = None
                                    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """Like :meth:`list_offsets`, with the timestamp of the record found (-1 for EARLIEST
        and LATEST)."""
        self._check_open()
        return self._offsets.list_offsets(dict(specs), isolation_level or
                                          self.config.isolation_level)

    # -- fetching -------------------------------------------------------------------------------

    def fetch(self, requests: Mapping[TopicPartition, int], *, max_wait_ms: int | None = None,
              min_bytes: int | None = None, isolation_level: str | None = None,
              partition_max_bytes: Mapping[TopicPartition, int] | None = None
              ) -> dict[TopicPartition, FetchedPartition]:
        """One Fetch per leader broker for ``{partition: offset}``.

        Each partition gets a :class:`FetchedPartition`: raw record batches (the last may be
        partial), watermarks, aborted transactions, and ``error`` for a partition that failed
        for good (OffsetOutOfRangeError, ...) rather than raising. Leader moves are followed
        within the call. ``max_wait_ms`` / ``min_bytes`` default to ``fetch.max.wait.ms`` /
        ``fetch.min.bytes``; ``partition_max_bytes`` gives partitions a byte limit other than
        ``max.partition.fetch.bytes``. Reading on from what came back is
        :class:`~.partition_reader.PartitionReader`'s work.
        """
        self._check_open()
        return self._fetcher.fetch(
            dict(requests),
            max_wait_ms=self.config.fetch_max_wait_ms if max_wait_ms is None else max_wait_ms,
            min_bytes=self.config.fetch_min_bytes if min_bytes is None else min_bytes,
            isolation_level=isolation_level or self.config.isolation_level,
            partition_max_bytes=partition_max_bytes)

    def read_range(self, tp: TopicPartition, start: int, end: int = LOG_END, *,
                   isolation_level: str | None = None,
                   on_out_of_range: OutOfRangeHook | None = None,
                   max_wait_ms: int = 0) -> Iterator[FetchedChunk]:
        """Read ``tp`` from ``start`` to ``end`` (exclusive), or with ``LOG_END`` to the end of
        the log (the high watermark; under read_committed the last stable offset), one fetch at
        a time; see :func:`.partition_reader.read_range`.

        Yields a :class:`FetchedChunk` per fetch that moved: its data batches, checked (with
        ``check.crcs``), without control batches and (read_committed) aborted transactions;
        decode them with ``chunk.to_arrow()`` or ``chunk.records()``. A range the log does not
        hold (below its start; an ``end`` past its end) goes to ``on_out_of_range``, which
        says where to go on, or raises :class:`OffsetOutOfRangeError` without one.
        """
        self._check_open()
        # loaded when first used: a process that only looks up offsets (a Spark driver) needs
        # neither the read loop nor the record codecs it brings
        from .consumer.partition_reader import read_range

        return read_range(self, tp, start, end, isolation_level=isolation_level,
                          on_out_of_range=on_out_of_range, max_wait_ms=max_wait_ms)

    # -- group offsets --------------------------------------------------------------------------

    @overload
    def committed(self, group_id: str | None, tps: list[TopicPartition] | None = None, *,
                  with_metadata: Literal[False] = False) -> dict[TopicPartition, int | None]: ...

    @overload
    def committed(self, group_id: str | None, tps: list[TopicPartition] | None = None, *,
                  with_metadata: Literal[True]
                  ) -> dict[TopicPartition, OffsetAndMetadata | None]: ...

    @overload
    def committed(self, group_id: str | None, tps: list[TopicPartition] | None = None, *,
                  with_metadata: bool = False
                  ) -> dict[TopicPartition, int | OffsetAndMetadata | None]: ...

    def committed(self, group_id: str | None, tps: list[TopicPartition] | None = None, *,
                  with_metadata: bool = False
                  ) -> Mapping[TopicPartition, int | OffsetAndMetadata | None]:
        """The offsets committed by ``group_id`` (default ``group.id``) for ``tps`` (None for
        none committed), or every committed partition when ``tps`` is None; with
        ``with_metadata``, :class:`OffsetAndMetadata` values carry the committed metadata."""
        self._check_open()
        return self._groups.committed(group_id or self.config.group_id, tps,
                                      with_metadata=with_metadata)

    def commit(self, group_id: str | None, offsets: Mapping[TopicPartition, int],
               metadata: str = "") -> None:
        """Commit offsets for ``group_id`` (default ``group.id``) outside any group membership
        (generation -1, empty member id), as Kafka's admin client does."""
        self._check_open()
        self._groups.commit(group_id or self.config.group_id, dict(offsets), metadata)

    # -- administration -------------------------------------------------------------------------

    @property
    def admin(self) -> Admin:
        """Topic administration (:class:`.admin.Admin`) over this client's connections."""
        self._check_open()
        if self._admin is None:
            from .admin.admin import Admin  # loaded when first used: readers need none of it

            self._admin = Admin(self._cluster)
        return self._admin

    # -- producing ------------------------------------------------------------------------------

    def producer(self, **settings: Any) -> Producer:
        """A :class:`.producer.Producer` over this client's connections (closing it leaves the
        client open); ``settings`` are its keyword arguments (``transactional_id``, ``acks``,
        ``compression``, ...), defaulting to this client's settings."""
        self._check_open()
        from .producer.producer import Producer  # loaded when first used: readers need none of it

        return Producer(self, **settings)
