"""``spark.readStream.format("kpy")``: micro-batches of exact offset ranges, with admission
control, Trigger.AvailableNow, and progress committed to the query's consumer group.

Spark keeps the reader object on the driver for the life of the query and calls, per trigger,
``latestOffset(start, limit)`` (how far this micro-batch goes), ``partitions(start, end)`` (the
ranges to read) and, once the batch is done, ``commit(end)``. Offsets are the next offset to read
per partition (see :mod:`.positions`); a micro-batch reads exactly ``[start, end)`` per
partition, so a query restarted from its checkpoint re-reads the same records.

Progress goes to the query's consumer group, ``kafka.group.id``, with OffsetCommit, so lag
monitors and Kafka tools see it. A failed commit loses nothing (Spark's checkpoint decides
what is read) and is only logged, except a refusal by the cluster's authorizer
(GROUP_AUTHORIZATION_FAILED: the query's principal may not Read the group), which fails the
query with an error naming the group, since no retry can mend it. A query without
``kafka.group.id`` commits nothing, as Spark's Kafka source commits nothing: its generated
group id would change at every start (PySpark's Python source API gives a source neither the
checkpoint location nor the query id, so nothing stable could name it), and every start would
leave behind a group whose lag only grows. Spark calls ``commit(end)`` for a batch only when
it plans the next one with new data, which would leave the group a batch behind (and the last
batch of a Trigger.AvailableNow run never committed); but whenever Spark asks for
``latestOffset(start, ...)``, every batch up to ``start`` has finished and is in the commit
log, so ``start`` is committed there too. (With Spark's asynchronous progress tracking batches
may be planned before earlier ones finish; the group then shows planned progress.)

Read limits: ``maxOffsetsPerTrigger`` caps a micro-batch (shared among partitions in proportion
to what each has waiting), ``minOffsetsPerTrigger`` holds a trigger back until that many records
wait or ``maxTriggerDelay`` has passed since the last micro-batch. As in Spark, the delay is
counted from the last trigger that ran a batch, and from 0 before the first: a new (or
restarted) query's first trigger reads whatever waits. When Spark asks for everything available
(``ReadAllAvailable``) the options are ignored, as Spark requires; with Trigger.AvailableNow the
query stops at the offsets that were latest when it started.

The driver's offset lookups are retried per ``fetchOffset.numRetries`` and
``fetchOffset.retryIntervalMs`` (:func:`.connect.with_offset_retries`).
"""

import logging
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)

from broker_lite.client import (
    EARLIEST,
    LATEST,
    KafkaClient,
    KafkaClientError,
    TopicPartition,
)
from broker_lite.client.errors import (
    GroupAuthorizationFailedError,
    TopicAuthorizationFailedError,
)
from broker_lite.client.principal import principal_of
from kspark.options import log_unused_kafka_settings
from kspark.structured.plan import StructuredPlan

from .batch import read_partition
from .connect import open_client, with_offset_retries
from .options import SOURCE_KAFKA_SETTINGS, SourceOptions
from .partition_reader import report_data_loss
from .planning import OffsetRange, available, plan_ranges, rate_limit
from .positions import from_json, resolve, to_json

logger = logging.getLogger(__name__)

T = TypeVar("T")


class KpyStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: SourceOptions, structured: StructuredPlan | None = None):
        # Nothing here may fail: PySpark 4.3 masks an error raised while the reader is made.
        self.options = options
        self.structured = structured  # the reader schemas the query started with
        self.group_id = options.group_id  # progress is committed to a named group only
        self._client: KafkaClient | None = None
        self._initial: dict | None = None  # initialOffset's answer, kept for the query
        self._latest: dict[TopicPartition, int] | None = None
        self._available_now: dict[TopicPartition, int] | None = None
        self._last_trigger: float | None = None  # when a trigger last ran a batch (monotonic s)
        self._committed: dict[TopicPartition, int] | None = None
        log_unused_kafka_settings(options.client, SOURCE_KAFKA_SETTINGS, "spark.readStream")

    def __getstate__(self):  # executors get the options, not the driver's connections
        state = dict(self.__dict__)
        state["_client"] = None
        return state

    # -- driver side -----------------------------------------------------------------------------
    def initialOffset(self) -> dict:
        # Resolved once per reader, as Spark's KafkaMicroBatchStream resolves its initial
        # partition offsets once: Spark asks again when it plans the first batch, and a second
        # lookup would cost a round trip and, with startingOffsets=latest, could answer later
        # offsets than the first batch was planned from.
        if self._initial is None:
            spec = self.options.starting_for(streaming=True)
            self._initial = to_json(self._lookup(lambda client: resolve(
                client, spec, self._partitions(), isolation_level=self.options.isolation_level,
                group_id=self.group_id)))
        return {topic: dict(offsets) for topic, offsets in self._initial.items()}

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.min_offsets_per_trigger is not None:
            return ReadMinRows(self.options.min_offsets_per_trigger)
        if self.options.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = self._lookup(
            lambda client: self._latest_offsets(self._partitions()))

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = from_json(start)
        self._commit_progress(begin)  # every batch up to ``start`` has finished
        if self._available_now is not None:
            latest = dict(self._available_now)
        else:
            latest = self._lookup(lambda client: self._latest_offsets(self._partitions()))
        self._latest = latest
        begin.update(self._earliest_of([tp for tp in latest if tp not in begin]))
        # Partitions that vanished are left out; partitions() reports them per failOnDataLoss.
        return to_json(self._admit(begin, latest, limit))

    def _admit(self, begin, latest, limit: ReadLimit) -> dict[TopicPartition, int]:
        if isinstance(limit, ReadAllAvailable):
            return latest
        if isinstance(limit, ReadMinRows) and self._available_now is None and \
                self._delay_batch(limit.min_rows, available(begin, latest)):
            return {tp: begin[tp] for tp in latest}
        max_rows = (limit.max_rows if isinstance(limit, ReadMaxRows)
                    else self.options.max_offsets_per_trigger)
        return latest if max_rows is None else rate_limit(begin, latest, max_rows)

    def _delay_batch(self, min_rows: int, waiting: int) -> bool:
        """Whether to hold this trigger back (Spark's ``delayBatch``): never once
        ``maxTriggerDelay`` has passed since the last trigger that ran a batch (or before the
        first one), else while fewer than ``min_rows`` records wait."""
        now = time.monotonic()
        if self._last_trigger is not None and waiting < min_rows and \
                (now - self._last_trigger) * 1000 < self.options.max_trigger_delay_ms:
            return True
        self._last_trigger = now
        return False

    def reportLatestOffset(self) -> dict | None:
        return None if self._latest is None else to_json(self._latest)

    def partitions(self, start: dict, end: dict) -> list[OffsetRange]:
        begin, until = from_json(start), from_json(end)
        gone = sorted(set(begin) - set(until))
        if gone:
            report_data_loss("partitions " + ", ".join(f"{tp.topic}-{tp.partition}" for tp in gone)
                         + " are gone", self.options.fail_on_data_loss)
        # discovered since the last batch: read from their beginning
        begin.update(self._earliest_of([tp for tp in until if tp not in begin]))
        for tp in sorted(until):
            if until[tp] < begin[tp]:
                report_data_loss(f"{tp.topic}-{tp.partition} went back from offset {begin[tp]} to "
                             f"{until[tp]} (was the topic deleted and created again?)",
                             self.options.fail_on_data_loss)
        return plan_ranges(begin, until, min_partitions=self.options.min_partitions,
                           max_records_per_partition=self.options.max_records_per_partition)

    def commit(self, end: dict) -> None:
        self._commit_progress(from_json(end))

    def _commit_progress(self, offsets: dict[TopicPartition, int]) -> None:
        """Record the query's progress in its consumer group, for lag monitors and tools; a
        failure here loses nothing (Spark's checkpoint is the source of truth), so it is
        logged rather than failing the query, unless the authorizer refused it."""
        done = self._committed or {}
        if self.group_id is None or not offsets or \
                all(done.get(tp, -1) >= offset for tp, offset in offsets.items()):
            return  # no group named, or nothing new (Spark's own commit call comes after ours)
        try:
            self.client.commit(self.group_id, offsets)
            self._committed = dict(offsets)
        except (GroupAuthorizationFailedError, TopicAuthorizationFailedError) as exc:
            principal = principal_of(self.client.config)
            raise type(exc)(
                f"the query's progress cannot be committed to its consumer group "
                f"{self.group_id!r} (kafka.group.id): {exc}; the query's principal "
                f"{principal} needs Read on group {self.group_id!r} and on the topics read, "
                f"or leave kafka.group.id unset", where=exc.where) from exc
        except KafkaClientError as exc:
            logger.warning("could not commit offsets of group %s: %s", self.group_id, exc)

    def stop(self) -> None:
        self._drop_client()

    @property
    def client(self) -> KafkaClient:
        if self._client is None:
            self._client = open_client(self.options)
        return self._client

    def _lookup(self, lookup: Callable[[KafkaClient], T]) -> T:
        """``lookup(client)``, retried per ``fetchOffset.*`` with a new client each time."""
        return with_offset_retries(self.options, lambda: lookup(self.client), self._drop_client)

    def _drop_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _earliest_of(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        if not partitions:
            return {}
        return self._lookup(lambda client: client.list_offsets(
            {tp: EARLIEST for tp in partitions}, isolation_level=self.options.isolation_level))

    def _partitions(self) -> list[TopicPartition]:
        return self.options.subscription.resolve(self.client.topics())

    def _latest_offsets(self, partitions) -> dict[TopicPartition, int]:
        found = self.client.list_offsets({tp: LATEST for tp in partitions},
                                         isolation_level=self.options.isolation_level)
        return {tp: offset for tp, offset in found.items() if offset is not None}

    # -- executor side ---------------------------------------------------------------------------
    def read(self, partition: OffsetRange) -> Iterator[pa.RecordBatch]:
        yield from read_partition(self.options, partition, self.structured)
