"""Writing the markers that end a transaction on each of its partitions.

A marker is a control batch of one record (COMMIT or ABORT, with the coordinator epoch; see
:mod:`broker_lite.records.control`), written with the producer's id and epoch. Writing it closes
the producer's transaction on the partition: read_committed consumers read past it, and the
last stable offset moves on. On a ``__consumer_offsets`` partition it also decides the offsets
the producer committed in the transaction (TxnOffsetCommit): a COMMIT makes them the group's
committed offsets, an ABORT drops them.

:func:`write_markers_locally` appends markers to partitions this broker leads and waits for
their ISRs; the WriteTxnMarkers handler serves other coordinators with its parts
(:func:`append_markers`, then :func:`settle_offsets` once replicated), waiting in the purgatory
instead of on a handler thread. :class:`TxnMarkerWriter` is the
coordinator's side (Kafka's ``TransactionMarkerChannelManager``): one thread takes the
transactions whose markers are due, finds each partition's leader, writes the local ones itself
and sends the others to their leaders as one WriteTxnMarkers request (version 1) per broker,
and retries what failed for a retriable reason (no leader yet, leader moved, broker unreachable)
until every partition has its marker; then the transaction is completed. A partition whose topic
was deleted needs no marker. A leader answering INVALID_PRODUCER_EPOCH or
TRANSACTION_COORDINATOR_FENCED has seen a newer producer or coordinator: the transaction's
markers are abandoned, as in Kafka.
"""

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.log import KafkaStorageError, LogError
from broker_lite.log.errors import (
    InvalidProducerEpochError,
    TransactionCoordinatorFencedError,
)
from broker_lite.log.producer_state import AppendOrigin
from broker_lite.protocol import (
    ApiKey,
    ErrorCode,
)
from broker_lite.records import ControlRecordType, EndTransactionMarker, RecordsError
from broker_lite.records.record_batch import build_control_batch
from broker_lite.zk.admin import get_partition_state
from broker_lite.zk.layout import TopicZNode

from ..common.broker_channel import BrokerChannel
from ..common.internal_topic import OFFSETS_TOPIC

logger = logging.getLogger(__name__)

WRITE_TXN_MARKERS_VERSION = 1
RETRY_BACKOFF_S = 0.1

# told when markers reached __consumer_offsets: (producer id, its partitions, committed)
OffsetsCompletion = Callable[[int, set[int], bool], None]

# Answers that need no retry: the marker is written, or cannot be written on that log ever.
_DONE = {ErrorCode.NONE, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrorCode.UNSUPPORTED_VERSION}
# Answers that make the coordinator give up the transaction's markers.
_ABANDON = {ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED}


def write_markers_locally(partitions, producer_id: int, producer_epoch: int,
                          coordinator_epoch: int, committed: bool,
                          targets: Iterable[TopicPartition], *, timestamp_ms: int,
                          on_offsets_completed: OffsetsCompletion | None = None,
                          replication_timeout_s: float | None = None,
                          on_appended: Callable[[], None] = lambda: None
                          ) -> dict[TopicPartition, ErrorCode]:
    """Append a marker to each of ``targets`` (partitions of ``partitions``, the broker's
    :class:`~broker_lite.replication.partition_manager.PartitionManager`); the error of each. With
    ``replication_timeout_s`` a marker counts once the partition's ISR has it, as Kafka writes
    markers with acks=all: a marker lost with its leader would leave the transaction open there
    for good. ``on_appended`` is told once the markers are appended, before that wait (it wakes
    the followers' fetches that copy them). This thread waits: the coordinator's own; a request
    handler appends (:func:`append_markers`), waits in the purgatory, then settles
    (:func:`settle_offsets`)."""
    errors, ends = append_markers(partitions, producer_id, producer_epoch, coordinator_epoch,
                                  committed, targets, timestamp_ms=timestamp_ms)
    on_appended()
    if replication_timeout_s is not None:
        deadline = time.monotonic() + replication_timeout_s
        for tp, end in ends.items():
            replica = partitions.partition(tp)
            if replica is not None:
                errors[tp] = replica.wait_for_replication(
                    end, max(deadline - time.monotonic(), 0))
    settle_offsets(producer_id, committed, errors, on_offsets_completed)
    return errors


def append_markers(partitions, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                   committed: bool, targets: Iterable[TopicPartition], *, timestamp_ms: int
                   ) -> tuple[dict[TopicPartition, ErrorCode], dict[TopicPartition, int]]:
    """Append a marker to each of ``targets``: the error of each, and the offset after each
    marker appended (what the high watermark must reach for the ISR to have it)."""
    marker = EndTransactionMarker(
        ControlRecordType.COMMIT if committed else ControlRecordType.ABORT, coordinator_epoch)
    errors: dict[TopicPartition, ErrorCode] = {}
    ends: dict[TopicPartition, int] = {}
    for tp in targets:
        errors[tp], end = _append_marker(partitions, tp, marker, producer_id, producer_epoch,
                                         timestamp_ms)
        if end is not None:
            ends[tp] = end
    return errors, ends


def settle_offsets(producer_id: int, committed: bool, errors: Mapping[TopicPartition, ErrorCode],
                   on_offsets_completed: OffsetsCompletion | None) -> None:
    """Tell ``on_offsets_completed`` the ``__consumer_offsets`` partitions whose marker is in
    (``errors`` NONE): the transaction's offsets there are decided."""
    offsets_partitions = {tp.partition for tp, error in errors.items()
                          if tp.topic == OFFSETS_TOPIC and error == ErrorCode.NONE}
    if offsets_partitions and on_offsets_completed is not None:
        on_offsets_completed(producer_id, offsets_partitions, committed)


def _append_marker(partitions, tp: TopicPartition, marker: EndTransactionMarker,
                   producer_id: int, producer_epoch: int,
                   timestamp_ms: int) -> tuple[ErrorCode, int | None]:
    """The error, and the offset after the marker once appended."""
    state = partitions.state(tp.topic, tp.partition)
    if state is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    log = partitions.leader_log(tp.topic, tp.partition)
    if log is None:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, None
    batch = build_control_batch(marker, producer_id=producer_id, producer_epoch=producer_epoch,
                                timestamp=timestamp_ms)
    try:
        written = log.append(batch, partition_leader_epoch=state.leader_epoch,
                             origin=AppendOrigin.COORDINATOR)
    except InvalidProducerEpochError as exc:
        logger.info("%s-%d refused a marker: %s", tp.topic, tp.partition, exc)
        return ErrorCode.INVALID_PRODUCER_EPOCH, None
    except TransactionCoordinatorFencedError as exc:
        logger.info("%s-%d refused a marker: %s", tp.topic, tp.partition, exc)
        return ErrorCode.TRANSACTION_COORDINATOR_FENCED, None
    except KafkaStorageError:
        return ErrorCode.KAFKA_STORAGE_ERROR, None
    except (LogError, RecordsError) as exc:
        logger.error("%s-%d: marker append failed: %s", tp.topic, tp.partition, exc)
        return ErrorCode.UNKNOWN_SERVER_ERROR, None
    return ErrorCode.NONE, written.last_offset + 1


# -- the coordinator's side ---------------------------------------------------------------------


@dataclass(eq=False)
class MarkerJob:
    """The markers of one transaction still to write."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    committed: bool
    pending: set[TopicPartition]
    is_current: Callable[[], bool]  # False once the coordinator lost the transaction
    on_partition_done: Callable[[TopicPartition], None]
    on_complete: Callable[[], bool]  # every marker written; False: call again later
    abandoned: bool = field(default=False)


_GONE = object()  # the partition's topic no longer exists


class TxnMarkerWriter:
    """Writes the markers of the transactions handed to :meth:`add`, on a thread of its own.

    Parameters
    ----------
    broker_id : callable
        This broker's id.
    partitions : PartitionManager
        The partitions this broker holds (local markers, and whether it leads one).
    zk : KazooClient
        Where the leaders of other partitions are read.
    brokers : callable
        The live brokers (``broker_id``, ``host``, ``port``).
    write_locally : callable
        ``write_locally(job, partitions) -> {partition: error}`` for partitions led here.
    security : mapping, optional
        The client settings of the inter-broker listener (its security protocol, TLS and SASL
        settings), when it is secured.
    """

    def __init__(self, broker_id: Callable[[], int], partitions, zk,
                 brokers: Callable[[], list], write_locally, *, request_timeout_s: float = 30,
                 security: Mapping[str, str] | None = None):
        self.security = security
        self.broker_id = broker_id
        self.partitions = partitions
        self.zk = zk
        self.brokers = brokers
        self.write_locally = write_locally
        self.request_timeout_s = request_timeout_s
        self._jobs: list[MarkerJob] = []
        self._wakeup = threading.Condition()
        self._channels: dict[int, BrokerChannel] = {}
        self._thread: threading.Thread | None = None
        self._stopping = False

    def start(self) -> "TxnMarkerWriter":
        self._thread = threading.Thread(target=self._run, name="txn-marker-writer", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        with self._wakeup:
            self._stopping = True
            self._wakeup.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        for channel in self._channels.values():
            channel.close()

    def add(self, job: MarkerJob) -> None:
        with self._wakeup:
            self._jobs.append(job)
            self._wakeup.notify_all()

    def pending_jobs(self) -> int:
        with self._wakeup:
            return len(self._jobs)

    # -- the loop ---------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._wakeup:
                while not self._jobs and not self._stopping:
                    self._wakeup.wait()
                if self._stopping:
                    return
                jobs = list(self._jobs)
            try:
                finished = self._round(jobs)
            except Exception:  # never let one bad round stop every later transaction
                logger.exception("writing transaction markers failed")
                finished = set()
            with self._wakeup:
                self._jobs = [j for j in self._jobs if j not in finished]
                if self._jobs and not self._stopping:
                    # what is left waits for a leader or a broker: back off, unless more comes
                    self._wakeup.wait(RETRY_BACKOFF_S)

    def _round(self, jobs: list[MarkerJob]) -> set[MarkerJob]:
        finished: set[MarkerJob] = set()
        by_broker: dict[int, list[tuple[MarkerJob, list[TopicPartition]]]] = {}
        for job in jobs:
            if not job.is_current():
                logger.info("markers of %s are no longer this coordinator's to write",
                            job.transactional_id)
                finished.add(job)
                continue
            targets: dict[int, list[TopicPartition]] = {}
            for tp in sorted(job.pending):
                leader = self._leader(tp)
                if leader is _GONE:
                    logger.info("%s-%d no longer exists: no marker of %s needed", tp.topic,
                                tp.partition, job.transactional_id)
                    self._done(job, tp)
                elif leader is not None:
                    targets.setdefault(leader, []).append(tp)
            for leader, tps in targets.items():
                by_broker.setdefault(leader, []).append((job, tps))
        local = self.broker_id()
        for broker, items in by_broker.items():
            if broker == local:
                for job, tps in items:
                    self._handle(job, self.write_locally(job, tps))
            else:
                self._send(broker, items)
        for job in jobs:
            if job in finished:
                continue
            if job.abandoned or (not job.pending and job.on_complete()):
                finished.add(job)
        return finished

    def _leader(self, tp: TopicPartition):
        if self.partitions.is_leader(tp.topic, tp.partition):
            return self.broker_id()
        state = get_partition_state(self.zk, tp.topic, tp.partition)
        if state is None:
            return _GONE if self.zk.exists(TopicZNode.path(tp.topic)) is None else None
        return state.leader if state.leader >= 0 else None

    def _send(self, broker_id: int, items: list[tuple[MarkerJob, list[TopicPartition]]]) -> None:
        channel = self._channel(broker_id)
        if channel is None:
            return  # not registered (yet): retried
        body = {"markers": [{
            "producer_id": job.producer_id, "producer_epoch": job.producer_epoch,
            "transaction_result": job.committed, "coordinator_epoch": job.coordinator_epoch,
            "topics": [{"name": topic, "partition_indexes": [tp.partition for tp in tps
                                                             if tp.topic == topic]}
                       for topic in sorted({tp.topic for tp in tps})],
        } for job, tps in items]}
        try:
            response = channel.request(ApiKey.WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION, body)
        except ConnectionError as exc:
            logger.info("could not send transaction markers to broker %d: %s", broker_id, exc)
            return
        for (job, _), result in zip(items, response["markers"], strict=False):
            self._handle(job, {TopicPartition(t["name"], p["partition_index"]): p["error_code"]
                               for t in result["topics"] for p in t["partitions"]})

    def _channel(self, broker_id: int) -> BrokerChannel | None:
        broker = next((b for b in self.brokers() if b.broker_id == broker_id), None)
        if broker is None:
            return None
        channel = self._channels.get(broker_id)
        if channel is None or channel.address != (broker.host, broker.port):
            if channel is not None:
                channel.close()
            channel = self._channels[broker_id] = BrokerChannel(
                broker.host, broker.port, self.request_timeout_s, self.security,
                client_id="txn-coordinator")
        return channel

    def _handle(self, job: MarkerJob, errors: dict[TopicPartition, int]) -> None:
        for tp, error in errors.items():
            error = ErrorCode(error)
            if error in _DONE:
                self._done(job, tp)
            elif error in _ABANDON:
                logger.info("abandoning the markers of %s: %s-%d answered %s",
                            job.transactional_id, tp.topic, tp.partition, error.name)
                job.abandoned = True
            elif error == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:  # retried, but said aloud
                logger.warning("the leader of %s-%d refused the transaction markers of %s: this "
                               "broker's principal needs ClusterAction on the cluster", tp.topic,
                               tp.partition, job.transactional_id)
            else:
                logger.debug("marker of %s for %s-%d: %s, retrying", job.transactional_id,
                             tp.topic, tp.partition, error.name)

    @staticmethod
    def _done(job: MarkerJob, tp: TopicPartition) -> None:
        if tp in job.pending:
            job.pending.discard(tp)
            job.on_partition_done(tp)


def wait_for_markers(writer: TxnMarkerWriter, timeout_s: float) -> bool:
    """Wait until the writer has nothing left to write (tests)."""
    deadline = time.monotonic() + timeout_s
    while writer.pending_jobs():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
