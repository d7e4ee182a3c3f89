"""The producer: Arrow rows -> partition leaders, idempotent by default, transactional with a
``transactional.id``.

:class:`Producer` is the facade: it checks its settings (Kafka's producer configs, defaulting to
the client's), partitions rows, and runs the transaction API; its :class:`.sender.Sender`
delivers them (batches, Produce requests, retries, sequence numbers).

Sending
-------
:meth:`Producer.send_batch` writes rows to one partition, :meth:`Producer.send_arrow` to the
partitions of a topic that a ``partition`` column or the default partitioner
(:mod:`.partitioner`) choose. A topic the cluster does not know is created when the broker
allows it (as Kafka producers do); a partition it does not have is a final error. Both calls
block until every row is acknowledged (``acks``: all or 1) or the call fails; see :mod:`.sender`
for how the rows travel, retries, and idempotence.

With ``enable.idempotence`` (the default; it needs ``acks=all``) retries never duplicate and
never reorder.

Transactions
------------
With a ``transactional.id``: :meth:`Producer.init_transactions` once, then
:meth:`begin_transaction`, sends, :meth:`commit_transaction` or :meth:`abort_transaction`; the
producer adds each partition to the transaction before its first write (AddPartitionsToTxn).
After a send failed with batches whose fate is unknown, the abort is followed by a new epoch
(KIP-360). See :mod:`.transactions` for the states, and :func:`.transactions.end_transaction`
for ending a transaction from another process (:meth:`Producer.transaction_handle` gives what it
needs).

>>> from broker_lite.client import KafkaClient
>>> with KafkaClient({"bootstrap.servers": "127.0.0.1:9"}) as client:
...     Producer(client, acks="1", idempotent=True)
Traceback (most recent call last):
...
broker_lite.client.errors.ConfigError: enable.idempotence: needs acks=all, got acks=1
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode
from broker_lite.records import CompressionType

from ..cluster.cluster import Cluster, ClusterUser
from ..cluster.metadata import TopicMetadata
from ..config import ClientConfig, parse_setting
from ..errors import (
    ClientClosedError,
    ConfigError,
    InvalidArgumentError,
    TransactionStateError,
    error_for,
    error_of,
    final_error,
)
from ..retry import retry
from .batching import as_record_batch
from .partitioner import NO_PARTITION, partitions_for_keys, sticky_partition
from .sender import DeliverySettings, Sender
from .transactions import TransactionHandle, TransactionManager, TransactionState


class Producer:
    """A producer for one Kafka cluster; see the module docstring.

    Parameters
    ----------
    client_or_config
        A :class:`KafkaClient` whose connections to share (it stays open when the producer
        closes), or client settings (a mapping or :class:`ClientConfig`) for connections of the
        producer's own.
    transactional_id, idempotent, acks, compression, compression_level, batch_size,
    max_request_size, transaction_timeout_ms, delivery_timeout_ms, retries
        Override the settings ``transactional.id``, ``enable.idempotence``, ``acks``
        (``"all"``, ``"1"``), ``compression.type`` (``"none"``, ``"gzip"``, ``"snappy"``,
        ``"lz4"``, ``"zstd"``), the codec's level, ``batch.size``, ``max.request.size``,
        ``transaction.timeout.ms``, ``delivery.timeout.ms``, ``retries``.

    As in the Java client, idempotence is on unless turned off; when it was not asked for
    explicitly, ``acks=1`` or ``retries=0`` turn it off, and when it was, they are a
    :class:`ConfigError`. A transactional producer is always idempotent.
    """

    def __init__(self, client_or_config: ClusterUser | ClientConfig | Mapping[str, Any], *,
                 transactional_id: str | None = None, idempotent: bool | None = None,
                 acks: str | int | None = None, compression: str | None = None,
                 compression_level: int | None = None, batch_size: int | None = None,
                 max_request_size: int | None = None, transaction_timeout_ms: int | None = None,
                 delivery_timeout_ms: int | None = None, retries: int | None = None):
        self._closed = False
        if isinstance(client_or_config, (ClientConfig, Mapping)):
            config = client_or_config if isinstance(client_or_config, ClientConfig) \
                else ClientConfig(client_or_config)
            self._cluster, self._owns_cluster = Cluster(config), True
        else:
            self._cluster, self._owns_cluster = _shared_cluster(client_or_config), False
            config = client_or_config.config  # its settings, which may not be the cluster's
        try:
            self._configure(config, transactional_id, idempotent, acks,
                            compression, compression_level, batch_size, max_request_size,
                            transaction_timeout_ms, delivery_timeout_ms, retries)
        except BaseException:
            self.close()
            raise
        self._transaction = TransactionManager(self._cluster, self.transactional_id,
                                               self.transaction_timeout_ms) \
            if self.transactional_id is not None else None
        self._sender = Sender(self._cluster, DeliverySettings(
            acks=self.acks, compression=self.compression,
            compression_level=self.compression_level, batch_size=self.batch_size,
            max_request_size=self.max_request_size, delivery_timeout_ms=self.delivery_timeout_ms,
            retries=self.retries, idempotent=self.idempotent,
            transaction_timeout_ms=self.transaction_timeout_ms), self._transaction)
        self._rng = random.Random()
        self._lock = threading.RLock()

    def _configure(self, config: ClientConfig, transactional_id, idempotent, acks, compression,
                   compression_level, batch_size, max_request_size, transaction_timeout_ms,
                   delivery_timeout_ms, retries) -> None:
        def pick(value, name: str):
            """A keyword argument given here, parsed as the setting, else the config's value."""
            if value is None:
                return getattr(config, name.replace(".", "_"))
            return parse_setting(name, value)

        self.transactional_id = pick(transactional_id, "transactional.id")
        self.acks = pick(acks, "acks")
        self.compression = CompressionType[pick(compression, "compression.type").upper()]
        self.compression_level = compression_level
        self.batch_size = pick(batch_size, "batch.size")
        self.max_request_size = pick(max_request_size, "max.request.size")
        self.transaction_timeout_ms = pick(transaction_timeout_ms, "transaction.timeout.ms")
        self.delivery_timeout_ms = pick(delivery_timeout_ms, "delivery.timeout.ms")
        self.retries = pick(retries, "retries")

        explicit = idempotent is not None or config.is_set("enable.idempotence")
        wanted = pick(idempotent, "enable.idempotence")
        if self.transactional_id is not None:
            if explicit and not wanted:
                raise ConfigError("enable.idempotence",
                                  "a transactional producer is always idempotent")
            wanted, explicit = True, True
        if wanted and self.acks != -1:
            if explicit:
                raise ConfigError("enable.idempotence",
                                  f"needs acks=all, got acks={self.acks}")
            wanted = False
        if wanted and self.retries == 0:
            if explicit:
                raise ConfigError("enable.idempotence", "needs retries > 0")
            wanted = False
        self.idempotent = bool(wanted)

    # -- state ----------------------------------------------------------------------------------

    @property
    def producer_id(self) -> int:
        """The producer id (-1 before the first send, or when not idempotent)."""
        return self._sender.producer_id

    @property
    def producer_epoch(self) -> int:
        return self._sender.producer_epoch

    @property
    def transaction_state(self) -> TransactionState | None:
        """The state of a transactional producer (None otherwise)."""
        return self._transaction.state if self._transaction else None

    def transaction_handle(self) -> TransactionHandle:
        """What :func:`.transactions.end_transaction` needs to end the current transaction
        from another client (this producer may be closed in between)."""
        if self._transaction is None:
            raise TransactionStateError("transaction_handle() needs a transactional producer")
        return self._transaction.handle()

    def close(self) -> None:
        """Close the producer (and its connections, when it made its own). An open transaction
        is left open: another client may end it (:func:`.transactions.end_transaction`), or the
        coordinator aborts it after ``transaction.timeout.ms``."""
        self._closed = True
        if self._owns_cluster:
            self._cluster.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        kind = f"transactional id {self.transactional_id!r}" if self._transaction else \
            "idempotent" if self.idempotent else "not idempotent"
        return f"<Producer {kind}, producer id {self.producer_id}, epoch {self.producer_epoch}>"

    # -- transactions ---------------------------------------------------------------------------

    def init_transactions(self) -> None:
        """Get the producer id and epoch for ``transactional.id`` from its coordinator; an
        older producer with the same id is fenced, and its open transaction aborted."""
        txn = self._require_transactional("init_transactions")
        with self._lock:
            self._check_open()
            txn.require("init_transactions")
            txn.init()
            self._sender.reset_sequences()

    def begin_transaction(self) -> None:
        txn = self._require_transactional("begin_transaction")
        with self._lock:
            self._check_open()
            txn.begin()

    def commit_transaction(self) -> None:
        """Commit: the records written in the transaction become visible to read_committed
        consumers. After a timeout, call again."""
        txn = self._require_transactional("commit_transaction")
        with self._lock:
            self._check_open()
            txn.end(commit=True)

    def abort_transaction(self) -> None:
        """Abort: read_committed consumers never see the records of the transaction. After a
        failed send whose batches may or may not have been written, the abort is followed by
        InitProducerId, which starts the sequences afresh with a new epoch (KIP-360)."""
        txn = self._require_transactional("abort_transaction")
        with self._lock:
            self._check_open()
            txn.end(commit=False)
            if self._sender.sequences_in_doubt:
                txn.init()
                self._sender.reset_sequences()

    def _require_transactional(self, operation: str) -> TransactionManager:
        if self._transaction is None:
            raise TransactionStateError(f"{operation}() needs a transactional producer "
                                        "(transactional.id)")
        return self._transaction

    # -- sending --------------------------------------------------------------------------------

    def send_batch(self, topic: str, partition: int,
                   rows: pa.RecordBatch | pa.Table) -> tuple[int, int]:
        """Write ``rows`` (``value``, optional ``key``, ``headers``, ``timestamp`` columns; see
        :func:`broker_lite.records.arrow.encode.arrow_to_batch`) to one partition, in order.

        Returns ``(base offset, record count)``: the offset of the first row, and how many
        were written (``(-1, 0)`` for no rows). Rows cut into several batches are consecutive
        in the partition only if nobody else writes to it meanwhile.
        """
        if not isinstance(partition, (int, np.integer)) or partition < 0:
            raise InvalidArgumentError(f"partition must be an integer >= 0, got {partition!r}")
        tp = TopicPartition(topic, int(partition))
        rows = as_record_batch(rows)
        with self._lock:
            self._check_can_send()
            if rows.num_rows:  # a partition that does not exist fails before anything else
                _check_partition(self._topic(topic), tp.partition)
            return self._sender.send({tp: rows})[tp]

    def send_arrow(self, topic: str, rows: pa.RecordBatch | pa.Table
                   ) -> dict[TopicPartition, tuple[int, int]]:
        """Write ``rows`` to ``topic``: each row to the partition of its ``partition`` column
        when there is one and it is not null, else by its key (Kafka's murmur2 partitioner), and
        keyless rows all to one partition chosen at random among those with a leader. Other
        columns (``topic``, ``offset``, ... of Spark's Kafka rows) are ignored.

        Returns ``{partition: (base offset, record count)}`` for every partition written;
        rows keep their order within each partition.
        """
        rows = as_record_batch(rows)
        if rows.num_rows == 0:
            return {}
        with self._lock:
            self._check_can_send()
            topic_metadata = self._topic(topic)
            groups = self._partition(topic_metadata, rows)
            return self._sender.send(groups)

    def _topic(self, topic: str) -> TopicMetadata:
        cluster = self._cluster
        deadline = cluster.deadline()

        def attempt() -> TopicMetadata:
            cluster.ensure_metadata(deadline, topics=[topic])
            found = cluster.metadata.topic(topic)
            if found is None:  # as Kafka producers do: the broker creates it if it may
                cluster.refresh_metadata([topic], deadline, auto_create=True)
                found = cluster.metadata.topic(topic)
            if found is None:
                raise final_error(error_of(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                           "the topic does not exist", where=f"topic {topic}"))
            error = error_for(found.error_code, where=f"topic {topic}")
            if error is not None:
                raise error
            return found

        return retry(f"metadata of topic {topic}", deadline, cluster.backoff(), attempt,
                     cluster.on_retriable)

    def _partition(self, topic: TopicMetadata, rows: pa.RecordBatch
                   ) -> dict[TopicPartition, pa.RecordBatch]:
        """Split ``rows`` by destination partition, keeping their order within each."""
        n, count = rows.num_rows, topic.partition_count
        names = rows.schema.names
        partitions = np.full(n, NO_PARTITION, dtype=np.int32)
        if "partition" in names:
            column = rows.column("partition")
            if not pa.types.is_integer(column.type):
                raise InvalidArgumentError(
                    f"column 'partition' must be an integer column, not {column.type}")
            given = pc.fill_null(column, NO_PARTITION).to_numpy(zero_copy_only=False)
            if (given < NO_PARTITION).any():
                raise InvalidArgumentError(f"column 'partition' has negative partition "
                                           f"{int(given[given < NO_PARTITION][0])}")
            beyond = given >= count
            if beyond.any():
                _check_partition(topic, int(given[beyond][0]))
            partitions[:] = given
        if "key" in names:
            unset = partitions == NO_PARTITION
            if unset.any():
                keyed = partitions_for_keys(rows.column("key"), count)
                partitions[unset] = keyed[unset]
        unset = partitions == NO_PARTITION
        if unset.any():
            available = [p for p, m in sorted(topic.partitions.items()) if m.leader >= 0]
            partitions[unset] = sticky_partition(available, count, self._rng)

        order = np.argsort(partitions, kind="stable")
        ordered = partitions[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        if len(starts) == 1:
            return {TopicPartition(topic.name, int(ordered[0])): rows}
        grouped = rows.take(pa.array(order))
        ends = np.r_[starts[1:], n]
        return {TopicPartition(topic.name, int(ordered[s])): grouped.slice(s, e - s)
                for s, e in zip(starts.tolist(), ends.tolist(), strict=True)}

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("the producer is closed")

    def _check_can_send(self) -> None:
        self._check_open()
        if self._transaction is not None:
            self._transaction.require("send")


def _shared_cluster(client: ClusterUser) -> Cluster:
    """The connections of ``client``, which the producer shares."""
    cluster = getattr(client, "cluster", None)
    if not isinstance(cluster, Cluster):
        raise InvalidArgumentError(f"expected a KafkaClient, a ClientConfig or a mapping of "
                                   f"settings, got {type(client).__name__}")
    return cluster


def _check_partition(topic: TopicMetadata, partition: int) -> None:
    if partition not in topic.partitions:
        raise final_error(error_of(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            f"the topic has {topic.partition_count} partitions (cluster metadata)",
            where=f"{topic.name}-{partition}"))


