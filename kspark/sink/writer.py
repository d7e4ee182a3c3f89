"""``df.write.format("kpy")`` and ``df.writeStream.format("kpy")``: Arrow batches to Kafka
record batches, exactly-once through Kafka transactions.

Each write task produces inside a transaction of its own, with a transactional id derived from
the write (the streaming query id, or a random id per batch write) and the task's partition:
``kpy-<id>-<partition>``. A retried or speculative attempt of the task takes the same id over,
which fences the earlier attempt and aborts what it wrote. Tasks leave their transactions open
and report them to the driver; the driver's ``commit`` records its decision
(:mod:`.decisions`), then ends every transaction, so a batch becomes visible to read_committed
consumers all at once or not at all. A micro-batch that Spark runs again after a driver crash
finds its decision recorded: its tasks write nothing and its commit finishes the recorded
transactions. A task that fails (bad input, a record too large, a broker error) aborts its own
transaction before it gives up, and the driver's ``abort`` ends those of the tasks that
succeeded, so a failed write leaves nothing open to hold read_committed readers back.

A task that has not reported when the write fails may still be running: Spark stops the tasks
of a failed job without waiting for them, and a Python worker is killed only
``spark.python.task.killTimeout`` (2 s) after its task is. Such a straggler may even start its
transaction after the driver's ``abort`` has fenced its transactional id, and then be killed
with the transaction open, holding read_committed readers of those partitions back until the
transaction times out. So ``abort`` fences the ids of the tasks that did not report twice: at
once, and again once the stragglers are gone (:data:`STRAGGLERS_GONE_S` later).

With ``kpy.sink.guarantee=at_least_once`` tasks produce idempotently without transactions (a
failed task's retry writes its rows again), for brokers that do not support transactions.

On a cluster with ACLs, an exactly-once write is first checked on the driver
(:func:`check_access`), and any refusal, on the driver or in a task, says what the sink needs
granted (:mod:`.access`).
"""

import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from broker_lite.client import KafkaClient, Producer, shared_client
from broker_lite.client.cluster.coordinators import TRANSACTIONAL_ID, Coordinators
from broker_lite.client.errors import (
    GroupAuthorizationFailedError,
    KafkaApiError,
    KafkaClientError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)
from broker_lite.client.producer.transactions import TransactionHandle, end_transaction
from kspark.options import log_unused_kafka_settings

from . import decisions
from .access import AUTHORIZATION_ERRORS, TRANSACTIONAL_ID_PREFIX, refused
from .options import SINK_KAFKA_SETTINGS, SinkOptions
from .rows import coalesced, rows_by_topic

logger = logging.getLogger(__name__)

# A task combines Spark's Arrow batches into sends of eight times ``batch.size`` (but at most
# 64 MiB, whatever batch.size is), so that most record batches go out full (see .rows).
SEND_BATCHES = 8
MAX_SEND_BYTES = 64 * 1024 * 1024

# How long after a write fails its unfinished tasks may still start a transaction: Spark's
# spark.python.task.killTimeout (2 s) before their Python workers are killed, and a margin for
# a request in flight.
STRAGGLERS_GONE_S = 5.0


@dataclass
class KpyCommitMessage(WriterCommitMessage):
    """What one write task reports to the driver."""

    partition: int
    handle: TransactionHandle | None = None  # the open transaction, if the task wrote any
    records: dict[str, int] = field(default_factory=dict)  # per topic
    bytes: dict[str, int] = field(default_factory=dict)  # keys and values, per topic
    decided: bool = False  # the batch's decision was found recorded: nothing was written
    write_id: str = ""


def transactional_id(write_id: str, partition: int) -> str:
    return f"{TRANSACTIONAL_ID_PREFIX}{write_id}-{partition}"


def write_task(options: SinkOptions, batches: Iterator[pa.RecordBatch], write_id: str,
               partition: int) -> KpyCommitMessage:
    """Produce every row of ``batches``; in a transaction left open when exactly-once."""
    message = KpyCommitMessage(partition, write_id=write_id)
    batches = (batch for batch in batches if batch.num_rows)
    if options.structured is not None:  # struct keys and values into payloads
        from kspark.structured.writing import encode_batch

        plan = options.structured
        batches = (encode_batch(batch, plan) for batch in batches)
    first = next(batches, None)
    if first is None:  # a task with no rows opens no transaction
        return message
    # The producer is the task's own (its transaction, producer id and epoch); the connections
    # are those its Python worker keeps from task to task.
    with shared_client(options.client) as client:
        try:
            producer = _producer(client, options, write_id, partition)
        except AUTHORIZATION_ERRORS as exc:
            raise _refused(exc, options, write_id, partition, options.topic) from exc
        send_bytes = min(SEND_BATCHES * producer.batch_size, MAX_SEND_BYTES)
        try:
            for batch in coalesced(chain([first], batches), send_bytes):
                for topic, rows in rows_by_topic(batch, options.topic):
                    producer.send_arrow(topic, rows)
                    message.records[topic] = message.records.get(topic, 0) + rows.num_rows
                    message.bytes[topic] = message.bytes.get(topic, 0) + _payload_bytes(rows)
            if options.exactly_once:
                message.handle = producer.transaction_handle()
            return message
        except AUTHORIZATION_ERRORS as exc:
            if options.exactly_once:
                _abort_own_transaction(producer)
            raise _refused(exc, options, write_id, partition,
                           ", ".join(sorted(message.records)) or options.topic) from exc
        except BaseException:
            if options.exactly_once:
                _abort_own_transaction(producer)
            raise
        finally:
            producer.close()  # an open transaction stays open for the driver to end


def _producer(client: KafkaClient, options: SinkOptions, write_id: str,
              partition: int) -> Producer:
    if not options.exactly_once:
        return Producer(client)
    producer = Producer(client, transactional_id=transactional_id(write_id, partition))
    try:
        producer.init_transactions()  # fences (and aborts) earlier attempts of this task
        producer.begin_transaction()
    except BaseException:
        producer.close()
        raise
    return producer


def _refused(exc: KafkaApiError, options: SinkOptions, write_id: str, partition: int | None,
             topics: str | None) -> KafkaApiError:
    """An authorization failure, saying what the sink needs granted (:mod:`.access`)."""
    named = f"Topic '{topics}'" if topics else "a topic written"
    return refused(exc, options.client, exactly_once=options.exactly_once, resources={
        TransactionalIdAuthorizationFailedError: (
            "Write", f"TransactionalId '{transactional_id(write_id, partition or 0)}'"),
        GroupAuthorizationFailedError: ("Read", f"Group '{decisions.decision_group(write_id)}'"),
        TopicAuthorizationFailedError: ("Write" if partition is not None else "Read", named),
    })


def check_access(options: SinkOptions, write_id: str) -> None:
    """On the driver, before any task: look up the transaction coordinator of a transactional
    id of the write (FindCoordinator, which Kafka's brokers allow with Describe on it), so that
    a principal without TransactionalId ACLs is told once, rather than by every attempt of every
    task. Any other failure is left to the tasks, which retry what can be retried."""
    if not options.exactly_once:
        return
    try:
        with KafkaClient(dict(options.client)) as client:
            Coordinators(client.cluster, TRANSACTIONAL_ID).connection(
                transactional_id(write_id, 0), client.cluster.deadline())
    except AUTHORIZATION_ERRORS as exc:
        raise _refused(exc, options, write_id, 0, options.topic) from exc
    except KafkaClientError as exc:
        logger.debug("the transaction coordinator was not found before the write: %s", exc)


def _abort_own_transaction(producer: Producer) -> None:
    """A failing task aborts what it wrote, so that read_committed readers are not held back
    until the transaction times out: the driver of a streaming query does not learn the
    transactional ids of tasks that failed without reporting. A task that dies before this
    runs is fenced by its next attempt or by the query's restart."""
    try:
        producer.abort_transaction()
    except KafkaClientError as exc:  # fenced by a newer attempt, or the broker is gone
        logger.warning("could not abort the transaction of %s: %s", producer.transactional_id,
                       exc)


def _payload_bytes(rows: pa.RecordBatch) -> int:
    total = 0
    for name in ("key", "value"):
        if name in rows.schema.names:
            total += pc.sum(pc.binary_length(rows.column(name))).as_py() or 0
    return total


def finish(options: SinkOptions, messages: list, batch_id: int | None) -> None:
    """The driver's commit: record the decision (streaming), then end every transaction."""
    messages = [m for m in messages if isinstance(m, KpyCommitMessage)]
    _log_metrics(messages, batch_id)
    if not options.exactly_once or not messages:
        return
    write_id = messages[0].write_id
    try:
        _finish(options, messages, batch_id, write_id)
    except AUTHORIZATION_ERRORS as exc:
        topics = sorted({tp.topic for m in messages if m.handle for tp in m.handle.partitions})
        raise _refused(exc, options, write_id, None, ", ".join(topics)) from exc


def _finish(options: SinkOptions, messages: list[KpyCommitMessage], batch_id: int | None,
            write_id: str) -> None:
    with KafkaClient(dict(options.client)) as client:
        if any(m.decided for m in messages):
            decision = decisions.latest(client, write_id)
            if decision is None or decision.batch_id != batch_id:
                raise RuntimeError(f"batch {batch_id} was reported decided, but the recorded "
                                   f"decision is {decision}")
            handles = decisions.handles(client, decision,
                                        lambda p: transactional_id(write_id, p))
            logger.info("batch %s was decided before a restart: finishing %d transactions",
                        batch_id, len(handles))
        else:
            written = [m for m in messages if m.handle is not None]
            handles = [m.handle for m in written]
            if batch_id is not None and handles:
                topic = min(tp.topic for h in handles for tp in h.partitions)
                decisions.record(client, write_id, batch_id, topic, [
                    (m.partition, m.handle.producer_id, m.handle.producer_epoch)
                    for m in written])
        # Returning once the markers are written: a read that starts after the write (a
        # df.write's save(), a micro-batch) returns sees every row of it.
        for handle in handles:
            end_transaction(client, handle.transactional_id, handle.producer_id,
                            handle.producer_epoch, commit=True, wait_for_markers=True)


def abort(options: SinkOptions, messages: list, write_id: str | None) -> None:
    """Abort what the tasks wrote: the reported transactions, and those of tasks that did not
    report (taking their transactional ids over aborts them), twice: see the module's doc."""
    if not options.exactly_once:
        return
    unreported = [transactional_id(write_id, index) for index, message in enumerate(messages)
                  if not isinstance(message, KpyCommitMessage) and write_id is not None]
    with KafkaClient(dict(options.client)) as client:
        for message in messages:
            if isinstance(message, KpyCommitMessage) and message.handle is not None:
                handle = message.handle
                end_transaction(client, handle.transactional_id, handle.producer_id,
                                handle.producer_epoch, commit=False)
        _fence(client, unreported)
        if unreported:
            time.sleep(STRAGGLERS_GONE_S)
            _fence(client, unreported)


def _fence(client: KafkaClient, transactional_ids: list[str]) -> None:
    """Take each transactional id over, which aborts whatever transaction it has open."""
    for name in transactional_ids:
        with Producer(client, transactional_id=name) as producer:
            producer.init_transactions()


def _log_metrics(messages: list[KpyCommitMessage], batch_id: int | None) -> None:
    records: dict[str, int] = {}
    size: dict[str, int] = {}
    for m in messages:
        for topic, n in m.records.items():
            records[topic] = records.get(topic, 0) + n
            size[topic] = size.get(topic, 0) + m.bytes.get(topic, 0)
    for topic in sorted(records):
        logger.info("%s: %d records, %d bytes of keys and values written to %s",
                    "write" if batch_id is None else f"batch {batch_id}", records[topic],
                    size[topic], topic)


class KpyBatchWriter(DataSourceArrowWriter):
    """``df.write``: all rows or none, one transaction per task, committed together."""

    def __init__(self, options: SinkOptions):
        self.options = options
        self.write_id = uuid.uuid4().hex
        log_unused_kafka_settings(options.client, SINK_KAFKA_SETTINGS, "df.write")
        check_access(options, self.write_id)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KpyCommitMessage:
        return write_task(self.options, iterator, self.write_id, TaskContext.get().partitionId())

    def commit(self, messages: list) -> None:
        finish(self.options, messages, batch_id=None)

    def abort(self, messages: list) -> None:
        abort(self.options, messages, self.write_id)


class KpyStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream``: each micro-batch all or nothing, exactly once across restarts."""

    def __init__(self, options: SinkOptions):
        self.options = options
        log_unused_kafka_settings(options.client, SINK_KAFKA_SETTINGS, "df.writeStream")
        check_access(options, uuid.uuid4().hex)  # the query id is the tasks' to know

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KpyCommitMessage:
        context = TaskContext.get()
        partition = context.partitionId()
        query_id = context.getLocalProperty("sql.streaming.queryId")
        batch_id = int(context.getLocalProperty("streaming.sql.batchId"))
        if self.options.exactly_once:
            with shared_client(self.options.client) as client:
                decision = decisions.latest(client, query_id)
            if decision is not None and decision.batch_id >= batch_id:
                # Committed before a restart: writing again would duplicate the batch.
                return KpyCommitMessage(partition, decided=True, write_id=query_id)
        return write_task(self.options, iterator, query_id, partition)

    def commit(self, messages: list, batchId: int) -> None:
        finish(self.options, messages, batch_id=batchId)

    def abort(self, messages: list, batchId: int) -> None:
        query_ids = [m.write_id for m in messages if isinstance(m, KpyCommitMessage)]
        abort(self.options, messages, query_ids[0] if query_ids else None)
