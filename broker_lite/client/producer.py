"""The producer: Arrow rows -> v2 record batches -> partition leaders, idempotent by default,
transactional with a ``transactional.id``.

Sending
-------
:meth:`Producer.send_batch` writes rows to one partition, :meth:`Producer.send_arrow` to the
partitions of a topic that a ``partition`` column or the default partitioner
(:mod:`.partitioner`) choose. Both block until every row is acknowledged (``acks``: all or 1)
or the call fails. The path from Arrow to the socket does no per-row Python work:

1. the rows of each partition are cut into batches of at most ``batch.size`` bytes (an upper
   bound of the uncompressed records, :mod:`.batching`); a single record larger than
   ``max.request.size`` is refused with :class:`RecordTooLargeError` before anything is sent;
2. each batch is encoded by :func:`broker_lite.records.arrow.encode.arrow_to_batch` (compressed with
   ``compression.type``) when it is about to be sent, and halved if it still comes out larger
   than ``max.request.size``;
3. batches go in rounds: round ``i`` carries the ``i``-th batch of every partition, one Produce
   request per leader broker (several if they would exceed ``max.request.size``: Kafka takes one
   batch per partition per request), to all leaders at once.

A partition's next batch goes out only after its previous one was acknowledged, so batches
stay in order without relying on the broker (one in flight per partition).

Retries and idempotence
-----------------------
Retriable failures (a lost connection, no answer in time, NOT_LEADER_OR_FOLLOWER and the other
codes Kafka marks retriable) resend the very same batch bytes after a backoff
(``retry.backoff.ms`` doubling to ``retry.backoff.max.ms``), after refreshing the metadata when
the leader may have moved, up to ``retries`` times and until ``delivery.timeout.ms`` has passed
since the round started. A broker that refuses a batch as too large (MESSAGE_TOO_LARGE, its
``message.max.bytes`` or the topic's ``max.message.bytes`` is lower than ours) gets it in halves.

With ``enable.idempotence`` (the default; it needs ``acks=all``) the producer gets a producer id
(InitProducerId) and numbers each partition's records: a batch carries the producer id, epoch
and the sequence number of its first record. A resent batch carries the same numbers, so a
broker that had written it answers with the offset it got the first time and writes nothing:
retries never duplicate, and never reorder. If a call fails while a batch's fate is unknown
(the deadline passed after a lost answer), the sequences are no longer known to match the
broker's: the next call starts over with a new producer id (or, when transactional, the
transaction must be aborted and the next one gets a new epoch).

Transactions
------------
With a ``transactional.id``: :meth:`Producer.init_transactions` once, then
:meth:`begin_transaction`, sends, :meth:`commit_transaction` or :meth:`abort_transaction`; the
producer adds each partition to the transaction before its first write (AddPartitionsToTxn).
See :mod:`.transactions` for the states, and :func:`.transactions.end_transaction` for ending a
transaction from another process (:meth:`Producer.transaction_handle` gives what it needs).

>>> from broker_lite.client import KafkaClient
>>> with KafkaClient({"bootstrap.servers": "127.0.0.1:9"}) as client:
...     Producer(client, acks="1", idempotent=True)
Traceback (most recent call last):
...
broker_lite.client.errors.ConfigError: enable.idempotence: needs acks=all, got acks=1
"""

from __future__ import annotations

import logging
import random
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import CompressionType
from broker_lite.records.record_batch import now_ms
from broker_lite.records.arrow.encode import arrow_to_batch

from .batching import BATCH_OVERHEAD, as_record_batch, record_sizes, split_rows
from .client import KafkaClient
from .config import ClientConfig
from .errors import (
    BrokerNotAvailableError,
    ClientClosedError,
    ConfigError,
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    OutOfOrderSequenceError,
    ProducerFencedError,
    RecordTooLargeError,
    TransactionStateError,
    UnknownProducerIdError,
    error_for,
    final_error,
)
from .metadata import BrokerInfo, TopicMetadata
from .partitioner import NO_PARTITION, partitions_for_keys, sticky_partition
from .retry import Deadline, retry, timed_out
from .transactions import (
    TransactionHandle,
    TransactionManager,
    TransactionState,
    init_producer_id_request,
    parse_init_producer_id,
)
from .types import TopicPartition

logger = logging.getLogger(__name__)

MAX_SEQUENCE = 2**31 - 1  # sequences wrap to 0 after this
_TOO_LARGE = (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE)
_SPLIT = object()  # a round's outcome: the batch was too large for the broker, send it halved
_ACKS = {"all": -1, "-1": -1, "1": 1}
#: Failures after which the producer's sequence numbers may not match the broker's.
_SEQUENCE_ERRORS = (OutOfOrderSequenceError, UnknownProducerIdError)


@dataclass
class _Batch:
    """One encoded batch on its way to a partition."""

    tp: TopicPartition
    rows: pa.RecordBatch
    data: bytes
    sequence: int
    attempts: int = 0
    in_doubt: bool = False  # sent, and no answer came back: it may have been written
    last_error: KafkaClientError | None = None


class Producer:
    """A producer for one Kafka cluster; see the module docstring.

    Parameters
    ----------
    client_or_config
        A :class:`KafkaClient` to share (it stays open when the producer closes), or client
        settings (a mapping or :class:`ClientConfig`) for a client of the producer's own.
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

    def __init__(self, client_or_config: KafkaClient | ClientConfig | Mapping[str, Any], *,
                 transactional_id: str | None = None, idempotent: bool | None = None,
                 acks: str | int | None = None, compression: str | None = None,
                 compression_level: int | None = None, batch_size: int | None = None,
                 max_request_size: int | None = None, transaction_timeout_ms: int | None = None,
                 delivery_timeout_ms: int | None = None, retries: int | None = None):
        if isinstance(client_or_config, KafkaClient):
            self.client, self._owns_client = client_or_config, False
        else:
            self.client, self._owns_client = KafkaClient(client_or_config), True
        try:
            self._configure(self.client.config, transactional_id, idempotent, acks, compression,
                            compression_level, batch_size, max_request_size,
                            transaction_timeout_ms, delivery_timeout_ms, retries)
        except BaseException:
            self.close()
            raise
        self._cluster = self.client._cluster
        self._transaction = TransactionManager(self._cluster, self.transactional_id,
                                               self.transaction_timeout_ms) \
            if self.transactional_id is not None else None
        self._producer_id = -1
        self._producer_epoch = -1
        self._sequences: dict[TopicPartition, int] = {}
        self._sequences_in_doubt = False
        self._rng = random.Random()
        self._lock = threading.RLock()
        self._closed = False

    def _configure(self, config: ClientConfig, transactional_id, idempotent, acks, compression,
                   compression_level, batch_size, max_request_size, transaction_timeout_ms,
                   delivery_timeout_ms, retries) -> None:
        def pick(value, name: str):
            return getattr(config, name.replace(".", "_")) if value is None else value

        self.transactional_id = pick(transactional_id, "transactional.id")
        if self.transactional_id is not None and \
                (not isinstance(self.transactional_id, str) or not self.transactional_id):
            raise ConfigError("transactional.id", "a transactional id must be a non-empty "
                                                  f"string, got {self.transactional_id!r}")
        self.acks = _parse_acks(acks) if acks is not None else config.acks
        codec = str(pick(compression, "compression.type")).lower()
        if codec not in {c.kafka_name for c in CompressionType}:
            raise ConfigError("compression.type", f"expected one of none, gzip, snappy, lz4, "
                                                  f"zstd, got {codec!r}")
        self.compression = CompressionType[codec.upper()]
        self.compression_level = compression_level
        self.batch_size = _positive("batch.size", pick(batch_size, "batch.size"))
        self.max_request_size = _positive("max.request.size",
                                          pick(max_request_size, "max.request.size"))
        self.transaction_timeout_ms = _positive(
            "transaction.timeout.ms", pick(transaction_timeout_ms, "transaction.timeout.ms"))
        self.delivery_timeout_ms = _positive("delivery.timeout.ms",
                                             pick(delivery_timeout_ms, "delivery.timeout.ms"))
        self.retries = pick(retries, "retries")
        if not isinstance(self.retries, int) or self.retries < 0:
            raise ConfigError("retries", f"expected an integer >= 0, got {self.retries!r}")

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
        return self._transaction.producer_id if self._transaction else self._producer_id

    @property
    def producer_epoch(self) -> int:
        return self._transaction.producer_epoch if self._transaction else self._producer_epoch

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
        """Close the producer (and its client, when it made its own). An open transaction is
        left open: another client may end it (:func:`.transactions.end_transaction`), or the
        coordinator aborts it after ``transaction.timeout.ms``."""
        self._closed = True
        if self._owns_client:
            self.client.close()

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
            self._sequences = {}
            self._sequences_in_doubt = False

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
            if self._sequences_in_doubt:
                txn.init()
                self._sequences = {}
                self._sequences_in_doubt = False

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
            return self._send({tp: rows})[tp]

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
            return self._send(groups)

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
                raise final_error(error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
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
                for s, e in zip(starts.tolist(), ends.tolist())}

    def _send(self, rows_by_tp: dict[TopicPartition, pa.RecordBatch]
              ) -> dict[TopicPartition, tuple[int, int]]:
        with self._lock:
            self._check_can_send()
            txn = self._transaction
            timestamp = now_ms()
            results = {tp: (-1, 0) for tp, rows in rows_by_tp.items() if rows.num_rows == 0}
            queues = {tp: deque(self._cut(tp, rows, timestamp))
                      for tp, rows in rows_by_tp.items() if rows.num_rows}
            if not queues:
                return results
            try:
                self._ensure_producer_id()
                if txn is not None:
                    txn.add_partitions(queues)
                results.update(self._send_rounds(queues, timestamp))
            except KafkaClientError as exc:
                if txn is not None:
                    txn.fail(exc)
                raise
            return results

    def _cut(self, tp: TopicPartition, rows: pa.RecordBatch,
             timestamp: int) -> list[pa.RecordBatch]:
        """Rows -> batches under ``batch.size``; refuses a record over ``max.request.size``."""
        if "value" not in rows.schema.names:
            raise InvalidArgumentError("rows to write need a 'value' column")
        try:
            sizes = record_sizes(rows, timestamp)
        except (TypeError, ValueError, pa.ArrowException) as exc:
            raise InvalidArgumentError(f"rows for {tp}: {exc}") from exc
        largest = int(np.argmax(sizes))
        largest_size = int(sizes[largest]) + BATCH_OVERHEAD
        if largest_size > self.max_request_size:
            raise RecordTooLargeError(
                f"the record in row {largest} for {tp} is {largest_size} bytes when serialized, "
                f"larger than max.request.size ({self.max_request_size})")
        return split_rows(rows, sizes, min(self.batch_size, self.max_request_size))

    # -- rounds ---------------------------------------------------------------------------------

    def _send_rounds(self, queues: dict[TopicPartition, deque[pa.RecordBatch]],
                     timestamp: int) -> dict[TopicPartition, tuple[int, int]]:
        results: dict[TopicPartition, tuple[int, int]] = {}
        while queues:
            heads = {tp: self._encode(tp, queue, timestamp) for tp, queue in queues.items()}
            outcomes, failures = self._deliver(heads)
            for tp, outcome in outcomes.items():
                queue = queues[tp]
                if outcome is _SPLIT:
                    rows = queue.popleft()
                    half = rows.num_rows // 2
                    queue.extendleft([rows.slice(half), rows.slice(0, half)])
                    continue
                batch = heads[tp]
                if self.idempotent:
                    self._sequences[tp] = (batch.sequence + batch.rows.num_rows) & MAX_SEQUENCE
                base, count = results.get(tp, (outcome, 0))
                results[tp] = (base if count else outcome, count + batch.rows.num_rows)
                queue.popleft()
                if not queue:
                    del queues[tp]
            if failures:
                raise self._failed(failures, heads)
        return results

    def _encode(self, tp: TopicPartition, queue: deque[pa.RecordBatch],
                timestamp: int) -> _Batch:
        """Encode the first batch of ``queue``, halving it while it is over
        ``max.request.size`` (compression can make incompressible data grow)."""
        while True:
            rows = queue[0]
            sequence = self._sequences.get(tp, 0) if self.idempotent else -1
            try:
                data = arrow_to_batch(
                    rows, compression=self.compression, compression_level=self.compression_level,
                    timestamp=timestamp, producer_id=self.producer_id if self.idempotent else -1,
                    producer_epoch=self.producer_epoch if self.idempotent else -1,
                    base_sequence=sequence, is_transactional=self._transaction is not None)
            except (TypeError, ValueError, pa.ArrowException) as exc:
                raise InvalidArgumentError(f"rows for {tp}: {exc}") from exc
            if len(data) <= self.max_request_size:
                return _Batch(tp, rows, data, sequence)
            if rows.num_rows == 1:
                raise RecordTooLargeError(
                    f"the record for {tp} is {len(data)} bytes as a "
                    f"{self.compression.kafka_name} batch, larger than max.request.size "
                    f"({self.max_request_size})")
            queue.popleft()
            half = rows.num_rows // 2
            queue.extendleft([rows.slice(half), rows.slice(0, half)])

    def _deliver(self, heads: dict[TopicPartition, _Batch]
                 ) -> tuple[dict[TopicPartition, Any], dict[TopicPartition, KafkaClientError]]:
        """Send one round: ``(outcomes, failures)``, outcomes being base offsets or _SPLIT."""
        cluster = self._cluster
        deadline, backoff = Deadline(self.delivery_timeout_ms), cluster.backoff()
        pending = dict(heads)
        outcomes: dict[TopicPartition, Any] = {}
        failures: dict[TopicPartition, KafkaClientError] = {}

        def retry_later(batch: _Batch, error: KafkaClientError) -> None:
            batch.last_error = error
            batch.attempts += 1
            cluster.on_retriable(error)
            if batch.attempts > self.retries:
                failures[batch.tp] = error
                del pending[batch.tp]

        while pending:
            attempt_deadline = Deadline(min(self.client.config.request_timeout_ms,
                                            deadline.remaining_s() * 1000))
            try:
                by_leader, unroutable = cluster.leaders(pending, attempt_deadline)
            except KafkaClientError as exc:  # the metadata could not be refreshed
                by_leader, unroutable = {}, dict.fromkeys(pending, exc)
            for tp, error in unroutable.items():
                if error.retriable:
                    retry_later(pending[tp], error)
                else:
                    failures[tp] = error
                    del pending[tp]
            work = {node: partial(self._produce_to, broker, [pending[tp] for tp in parts],
                                  attempt_deadline)
                    for node, (broker, parts) in by_leader.items()}
            for node, answers in cluster.run_per_broker(work).items():
                for tp in by_leader[node][1]:
                    batch = pending[tp]
                    answer = answers if isinstance(answers, KafkaClientError) else answers[tp]
                    if isinstance(answer, KafkaClientError):  # no answer for this batch
                        if _maybe_sent(answer):
                            batch.in_doubt = True
                        if answer.retriable:
                            retry_later(batch, answer)
                        else:
                            failures[tp] = answer
                            del pending[tp]
                        continue
                    batch.in_doubt = False  # the broker has seen it now, whatever it says
                    outcome = self._outcome(batch, *answer)
                    if isinstance(outcome, KafkaClientError):
                        if outcome.retriable:
                            retry_later(batch, outcome)
                        else:
                            failures[tp] = outcome
                            del pending[tp]
                    else:
                        outcomes[tp] = outcome
                        del pending[tp]
            if pending and not backoff.wait(deadline):
                break
        for tp, batch in pending.items():
            failures[tp] = timed_out(f"delivery of {batch.rows.num_rows} records to {tp}",
                                     deadline, batch.last_error)
        return outcomes, failures

    def _outcome(self, batch: _Batch, code: int, base_offset: int, message: str | None):
        """A partition's answer -> its base offset, _SPLIT, or the error."""
        if code == ErrorCode.NONE or code == ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
            return base_offset  # a duplicate was written before (brokers before Kafka 2.x)
        if code in _TOO_LARGE:
            if batch.rows.num_rows > 1:
                return _SPLIT
            return RecordTooLargeError(
                f"{ErrorCode(code).name} ({code}) for {batch.tp}: the broker refuses a "
                f"{len(batch.data)}-byte batch of one record (its message.max.bytes or the "
                f"topic's max.message.bytes is lower): {message or ErrorCode(code).message}",
                error_code=code)
        return error_for(code, message, where=str(batch.tp))

    def _produce_to(self, broker: BrokerInfo, batches: list[_Batch], deadline: Deadline
                    ) -> dict[TopicPartition, tuple[int, int, str | None] | KafkaClientError]:
        """Produce requests to one leader (as few as ``max.request.size`` allows); each
        partition's answer ``(error code, base offset, message)``, or the request's error."""
        conn = self._cluster.connection(broker.host, broker.port, broker.node_id)
        answers: dict[TopicPartition, Any] = {}
        for group in _requests(batches, self.max_request_size):
            body = produce_request(self.transactional_id, self.acks,
                                   self.client.config.request_timeout_ms, group)
            try:
                _, response = conn.request(ApiKey.PRODUCE, body, deadline)
            except KafkaClientError as exc:
                answers.update((b.tp, exc) for b in group)
                if not exc.retriable:
                    continue
                # the connection is gone: the rest would fail the same way, unsent
                unsent = BrokerNotAvailableError(f"not sent: {exc}")
                for rest in batches:
                    answers.setdefault(rest.tp, unsent)
                break
            answers.update(parse_produce_response(response, [b.tp for b in group]))
        return answers

    def _failed(self, failures: dict[TopicPartition, KafkaClientError],
                heads: dict[TopicPartition, _Batch]) -> KafkaClientError:
        """The error to raise for a round that failed; remember whether the sequences are
        still known to match the broker's."""
        in_doubt = any(heads[tp].in_doubt or isinstance(error, _SEQUENCE_ERRORS)
                       for tp, error in failures.items())
        if in_doubt and self.idempotent:
            self._sequences_in_doubt = True
            if self._transaction is None:  # the next call starts with a new producer id
                self._producer_id, self._producer_epoch = -1, -1
                self._sequences = {}
        for tp, error in failures.items():
            logger.warning("producing to %s failed: %s", tp, error)
        fenced = [e for e in failures.values() if isinstance(e, ProducerFencedError)]
        return fenced[0] if fenced else failures[min(failures)]

    def _ensure_producer_id(self) -> None:
        """An idempotent producer without a transactional id gets its id from any broker."""
        if not self.idempotent or self._transaction is not None or self._producer_id >= 0:
            return
        cluster = self._cluster
        deadline = cluster.deadline()

        def attempt() -> tuple[int, int]:
            _, body = cluster.request_any(
                ApiKey.INIT_PRODUCER_ID,
                lambda version: init_producer_id_request(None, self.transaction_timeout_ms,
                                                         version), deadline)
            return parse_init_producer_id(body, "InitProducerId")

        self._producer_id, self._producer_epoch = retry(
            "InitProducerId", deadline, cluster.backoff(), attempt, cluster.on_retriable)
        self._sequences = {}
        self._sequences_in_doubt = False

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("the producer is closed")

    def _check_can_send(self) -> None:
        self._check_open()
        if self._transaction is not None:
            self._transaction.require("send")


# -- Produce requests (sans I/O) -------------------------------------------------------------------


def produce_request(transactional_id: str | None, acks: int, timeout_ms: int,
                    batches: list[_Batch]) -> dict:
    """A Produce body carrying one batch per partition."""
    topics: dict[str, list[dict]] = {}
    for batch in batches:
        topics.setdefault(batch.tp.topic, []).append(
            {"index": batch.tp.partition, "records": batch.data})
    return {"transactional_id": transactional_id, "acks": acks, "timeout_ms": timeout_ms,
            "topic_data": [{"name": name, "partition_data": parts}
                           for name, parts in topics.items()]}


def parse_produce_response(body: dict, requested: list[TopicPartition]
                           ) -> dict[TopicPartition, tuple[int, int, str | None] |
                                     KafkaClientError]:
    """Each requested partition's ``(error code, base offset, error message)``; a partition
    the broker left out gets an :class:`InvalidResponseError`."""
    answers: dict[TopicPartition, Any] = {}
    for topic in body["responses"]:
        for p in topic["partition_responses"]:
            tp = TopicPartition(topic["name"], p["index"])
            answers[tp] = (p["error_code"], p["base_offset"], p.get("error_message"))
    for tp in requested:
        if tp not in answers:
            answers[tp] = InvalidResponseError(f"the Produce response has no answer for {tp}")
    return {tp: answers[tp] for tp in requested}


def _requests(batches: list[_Batch], max_request_size: int) -> list[list[_Batch]]:
    """Group batches into requests of at most ``max_request_size`` bytes of records (one
    batch at least)."""
    groups: list[list[_Batch]] = []
    size = 0
    for batch in batches:
        if not groups or size + len(batch.data) > max_request_size:
            groups.append([])
            size = 0
        groups[-1].append(batch)
        size += len(batch.data)
    return groups


def _maybe_sent(error: KafkaClientError) -> bool:
    """Whether a request that failed with ``error`` may have reached the broker."""
    if isinstance(error, BrokerNotAvailableError):  # no connection: nothing was sent
        return False
    return isinstance(error, (KafkaConnectionError, KafkaTimeoutError, InvalidResponseError))


def _check_partition(topic: TopicMetadata, partition: int) -> None:
    if partition not in topic.partitions:
        raise final_error(error_for(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            f"the topic has {topic.partition_count} partitions (cluster metadata)",
            where=f"{topic.name}-{partition}"))


def _parse_acks(acks: str | int) -> int:
    value = _ACKS.get(str(acks).strip().lower())
    if value is None:
        raise ConfigError("acks", f"expected all, -1 or 1 (acks=0 is not supported), "
                                  f"got {acks!r}")
    return value


def _positive(name: str, value) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
        raise ConfigError(name, f"expected an integer > 0, got {value!r}")
    return int(value)
