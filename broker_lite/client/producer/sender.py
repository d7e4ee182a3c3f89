"""The sender: rows for partitions -> v2 record batches -> Produce requests to the partition
leaders, with retries, and sequence numbers when idempotent.

:meth:`Sender.send` takes rows already split by partition (the :class:`.producer.Producer`
partitions them) and returns once every row is acknowledged (``acks``: all or 1) or the call
fails. The path from Arrow to the socket does no per-row Python work:

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

With ``enable.idempotence`` the sender gets a producer id (InitProducerId; a transactional
producer's comes from its :class:`.transactions.TransactionManager`) and numbers each
partition's records: a batch carries the producer id, epoch and the sequence number of its first
record. A resent batch carries the same numbers, so a broker that had written it answers with
the offset it got the first time and writes nothing: retries never duplicate, and never reorder.
If a call fails while a batch's fate is unknown (the deadline passed after a lost answer), the
sequences are no longer known to match the broker's (:attr:`Sender.sequences_in_doubt`): the
next call starts over with a new producer id (or, when transactional, the transaction must be
aborted and the next one gets a new epoch, :meth:`Sender.reset_sequences`).

In a transaction, the sender adds each partition to it before its first write
(AddPartitionsToTxn), and a failed call makes the transaction abortable.

:func:`produce_request` and :func:`parse_produce_response` are the Produce API, sans I/O.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa

from broker_lite.common.vocabulary import (
    MAX_SEQUENCE,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TopicPartition,
    now_ms,
)
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import CompressionType
from broker_lite.records.arrow.encode import arrow_to_batch
from broker_lite.records.arrow.sizes import record_sizes

from ..cluster.cluster import Cluster
from ..cluster.metadata import BrokerInfo
from ..errors import (
    BrokerNotAvailableError,
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    OutOfOrderSequenceError,
    ProducerFencedError,
    RecordTooLargeError,
    UnknownProducerIdError,
    error_for,
)
from ..retry import Deadline, retry, timed_out
from .batching import BATCH_OVERHEAD, split_rows
from .transactions import (
    TransactionManager,
    init_producer_id_request,
    parse_init_producer_id,
)

logger = logging.getLogger(__name__)

_TOO_LARGE = (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE)
_SPLIT = object()  # a round's outcome: the batch was too large for the broker, send it halved
#: Failures after which the producer's sequence numbers may not match the broker's.
_SEQUENCE_ERRORS = (OutOfOrderSequenceError, UnknownProducerIdError)


@dataclass(frozen=True)
class DeliverySettings:
    """The producer settings the sender works by, checked by the :class:`.producer.Producer`:
    ``acks`` (-1 for all, or 1), ``compression.type`` and the codec's level, ``batch.size``,
    ``max.request.size``, ``delivery.timeout.ms``, ``retries``, ``enable.idempotence``, and
    ``transaction.timeout.ms`` (which InitProducerId carries)."""

    acks: int
    compression: CompressionType
    compression_level: int | None
    batch_size: int
    max_request_size: int
    delivery_timeout_ms: int
    retries: int
    idempotent: bool
    transaction_timeout_ms: int


@dataclass
class _Batch:
    """One encoded batch on its way to a partition."""

    tp: TopicPartition
    rows: pa.RecordBatch
    data: bytes | bytearray
    sequence: int
    attempts: int = 0
    in_doubt: bool = False  # sent, and no answer came back: it may have been written
    last_error: KafkaClientError | None = None


class Sender:
    """Delivers the rows of one producer; see the module docstring. Not thread-safe: the
    producer serialises calls.

    Parameters
    ----------
    cluster
        The connections and metadata to send over.
    settings
        :class:`DeliverySettings`.
    transaction
        The producer's :class:`.transactions.TransactionManager` when it is transactional:
        its producer id and epoch stamp the batches, which are marked transactional.
    """

    def __init__(self, cluster: Cluster, settings: DeliverySettings,
                 transaction: TransactionManager | None = None):
        self._cluster = cluster
        self.settings = settings
        self._transaction = transaction
        self._transactional_id = transaction.transactional_id if transaction else None
        self._producer_id = NO_PRODUCER_ID  # an idempotent producer's own, without a transaction
        self._producer_epoch = NO_PRODUCER_EPOCH
        self._sequences: dict[TopicPartition, int] = {}
        self._sequences_in_doubt = False

    @property
    def producer_id(self) -> int:
        """The producer id the batches carry (-1 before the first send, or when not
        idempotent)."""
        return self._transaction.producer_id if self._transaction else self._producer_id

    @property
    def producer_epoch(self) -> int:
        return self._transaction.producer_epoch if self._transaction else self._producer_epoch

    @property
    def sequences_in_doubt(self) -> bool:
        """Whether a failed call left batches that may or may not have been written, so that
        the sequence numbers may no longer match the broker's."""
        return self._sequences_in_doubt

    def reset_sequences(self) -> None:
        """Number every partition from 0 again: the producer id or epoch is new."""
        self._sequences = {}
        self._sequences_in_doubt = False

    # -- sending --------------------------------------------------------------------------------

    def send(self, rows_by_tp: dict[TopicPartition, pa.RecordBatch]
             ) -> dict[TopicPartition, tuple[int, int]]:
        """Write each partition's rows, in order: ``{partition: (base offset, record count)}``
        (``(-1, 0)`` for no rows)."""
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
        max_request_size = self.settings.max_request_size
        if largest_size > max_request_size:
            raise RecordTooLargeError(
                f"the record in row {largest} for {tp} is {largest_size} bytes when serialized, "
                f"larger than max.request.size ({max_request_size})")
        return split_rows(rows, sizes, min(self.settings.batch_size, max_request_size))

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
                if self.settings.idempotent:
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
        settings = self.settings
        while True:
            rows = queue[0]
            sequence = self._sequences.get(tp, 0) if settings.idempotent else -1
            try:
                data = arrow_to_batch(
                    rows, compression=settings.compression,
                    compression_level=settings.compression_level, timestamp=timestamp,
                    producer_id=self.producer_id if settings.idempotent else -1,
                    producer_epoch=self.producer_epoch if settings.idempotent else -1,
                    base_sequence=sequence, is_transactional=self._transaction is not None)
            except (TypeError, ValueError, pa.ArrowException) as exc:
                raise InvalidArgumentError(f"rows for {tp}: {exc}") from exc
            if len(data) <= settings.max_request_size:
                return _Batch(tp, rows, data, sequence)
            if rows.num_rows == 1:
                raise RecordTooLargeError(
                    f"the record for {tp} is {len(data)} bytes as a "
                    f"{settings.compression.kafka_name} batch, larger than max.request.size "
                    f"({settings.max_request_size})")
            queue.popleft()
            half = rows.num_rows // 2
            queue.extendleft([rows.slice(half), rows.slice(0, half)])

    def _deliver(self, heads: dict[TopicPartition, _Batch]
                 ) -> tuple[dict[TopicPartition, Any], dict[TopicPartition, KafkaClientError]]:
        """Send one round: ``(outcomes, failures)``, outcomes being base offsets or _SPLIT."""
        cluster = self._cluster
        deadline, backoff = Deadline(self.settings.delivery_timeout_ms), cluster.backoff()
        pending = dict(heads)
        outcomes: dict[TopicPartition, Any] = {}
        failures: dict[TopicPartition, KafkaClientError] = {}

        def retry_later(batch: _Batch, error: KafkaClientError) -> None:
            batch.last_error = error
            batch.attempts += 1
            cluster.on_retriable(error)
            if batch.attempts > self.settings.retries:
                failures[batch.tp] = error
                del pending[batch.tp]

        while pending:
            attempt_deadline = Deadline(min(cluster.config.request_timeout_ms,
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
        for group in _requests(batches, self.settings.max_request_size):
            body = produce_request(self._transactional_id, self.settings.acks,
                                   self._cluster.config.request_timeout_ms, group)
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
        if in_doubt and self.settings.idempotent:
            self._sequences_in_doubt = True
            if self._transaction is None:  # the next call starts with a new producer id
                self._producer_id, self._producer_epoch = NO_PRODUCER_ID, NO_PRODUCER_EPOCH
                self._sequences = {}
        for tp, error in failures.items():
            logger.warning("producing to %s failed: %s", tp, error)
        fenced = [e for e in failures.values() if isinstance(e, ProducerFencedError)]
        return fenced[0] if fenced else failures[min(failures)]

    def _ensure_producer_id(self) -> None:
        """An idempotent producer without a transactional id gets its id from any broker."""
        if not self.settings.idempotent or self._transaction is not None \
                or self._producer_id >= 0:
            return
        cluster = self._cluster
        deadline = cluster.deadline()

        def attempt() -> tuple[int, int]:
            _, body = cluster.request_any(
                ApiKey.INIT_PRODUCER_ID,
                lambda version: init_producer_id_request(
                    None, self.settings.transaction_timeout_ms, version), deadline)
            return parse_init_producer_id(body, "InitProducerId")

        self._producer_id, self._producer_epoch = retry(
            "InitProducerId", deadline, cluster.backoff(), attempt, cluster.on_retriable)
        self.reset_sequences()


# -- Produce requests (sans I/O) -----------------------------------------------------------------


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
