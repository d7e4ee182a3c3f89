"""Produce: append each partition's batches to its log, when this broker leads the partition.

acks=1 is answered once the leader has appended; acks=-1 (all) once the high watermark reached
the appended offsets, that is once every replica in the ISR has them (a :class:`DelayedProduce`
in the purgatory, re-checked whenever the partition's high watermark moves; with the leader
alone in the ISR it completes at once), or with REQUEST_TIMED_OUT after the request's
``timeout_ms``. An acks=all append to a partition whose ISR is smaller than its
``min.insync.replicas`` is refused with NOT_ENOUGH_REPLICAS, nothing appended; one whose ISR
shrank below it while waiting is answered NOT_ENOUGH_REPLICAS_AFTER_APPEND (the records are
in the log, and committed). acks=0 gets no response at all, and when a partition failed the
connection is closed (the only signal such a client gets: it refreshes its metadata before
sending more). Each partition's outcome is independent: a corrupt batch for one partition does
not fail the others.
Kafka's internal topics are written by the coordinators only: a Produce to them is answered
INVALID_TOPIC_EXCEPTION.

Requests that a producer pipelined on one connection, and that were read together, are answered
together when they all have acks=1, or all acks=all (:func:`handle_run`, see
:class:`~..dispatcher.Dispatcher`): each gets the answer it gets on its own, in turn, but the
records of all of them for a partition are appended in one write
(:meth:`~broker_lite.log.Log.append_all`), which is where a Python broker spends its time under
a producer's load: one append per request would be one lock, one roll check, one system call
and one high-watermark move each. With acks=all they wait in the purgatory as one operation, each
request for its own offsets.

A batch refused for some of its records (KIP-467: a record without a key on a compacted topic,
a timestamp out of the topic's bounds; see :mod:`broker_lite.log.record_checks`) is answered
INVALID_RECORD or INVALID_TIMESTAMP with ``record_errors`` naming each bad record by its index in
the batch, and ``error_message`` (v8+), so the client fails exactly those records with the error.

Batches of idempotent producers are checked by the log against the partition's producer state.
A retry of a batch already written is answered as Kafka 3.x answers it: no error, the offset it
got the first time, nothing written again (DUPLICATE_SEQUENCE_NUMBER is not used). A gap in the
sequence is OUT_OF_ORDER_SEQUENCE_NUMBER and a fenced epoch INVALID_PRODUCER_EPOCH; a producer
the partition does not know may start at any sequence, so UNKNOWN_PRODUCER_ID is not answered.
A transactional batch for a partition its transaction does not hold is INVALID_TXN_STATE when
this broker coordinates the transactional id (see
:meth:`~broker_lite.coordinator.transaction.TransactionCoordinator.verify_produce`).

Authorization, as Kafka's: a request carrying transactional batches (the first batch of some
partition says so) needs a transactional id, and Write on it, else every partition is answered
TRANSACTIONAL_ID_AUTHORIZATION_FAILED and nothing is written (without a transactional id, with
or without an authorizer); each topic needs Write, else its partitions are
TOPIC_AUTHORIZATION_FAILED (the others are written). Idempotent producers prove themselves at
InitProducerId.

Versions 0-2 carry message sets (formats v0/v1), which the log converts to its own format
(:mod:`broker_lite.log.validator`). From version 3 the records must be exactly one record batch
(magic 2), else INVALID_RECORD, and zstd needs version 7 (UNSUPPORTED_COMPRESSION_TYPE before), as
Kafka's ``ProduceRequest.validateRecords`` rules.
"""

import logging
import struct

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator import INTERNAL_TOPICS
from broker_lite.log import LogError
from broker_lite.log.record_checks import RecordValidationError
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.records import CompressionType, RecordsError
from broker_lite.records.record_batch import (
    ATTRIBUTES_OFFSET,
    BATCH_LENGTH_OFFSET,
    COMPRESSION_MASK,
    LOG_OVERHEAD,
    MAGIC,
    MAGIC_OFFSET,
    TRANSACTIONAL_FLAG,
)
from broker_lite.replication.errors import NotEnoughReplicasError, NotLeaderError
from broker_lite.replication.partition import Partition

from ..dispatcher import RequestContext
from ..errors import error_code_for, not_served_error
from ..network import CloseConnection
from ..services import HandlerServices
from .delayed_replication import DelayedReplication

logger = logging.getLogger(__name__)

VALID_ACKS = (-1, 0, 1)
FIRST_BATCH_VERSION = 3  # record batches only (KIP-98)
FIRST_ZSTD_VERSION = 7  # KIP-110


def handle(context: RequestContext, body: dict):
    services = context.services
    acks = body["acks"]
    transactional_id = body.get("transactional_id")
    appended: dict[TopicPartition, int] = {}  # partition -> the offset after its records
    refusal = _refusal(context, body)
    if refusal is None and acks not in VALID_ACKS:
        refusal = ErrorCode.INVALID_REQUIRED_ACKS
    results = _responses(context, body, refusal, lambda name, p: _append(
        services, name, p, transactional_id, context.version, appended, acks))
    services.purgatory.notify_appended(appended)
    if acks == 0:
        failed = {f"{t['name']}-{p['index']}": ErrorCode(p["error_code"]).name
                  for t in results for p in t["partition_responses"] if p["error_code"]}
        if failed:  # as Kafka does: the client notices the drop and refreshes its metadata
            raise CloseConnection(f"acks=0 produce failed: {failed}")
        return None
    response = {"responses": results, "throttle_time_ms": 0}
    if acks == -1 and appended:
        return DelayedProduce(context, body["timeout_ms"], [response], [appended]).wait()
    return response


def run_key(body: dict) -> int | None:
    """Which Produce requests a connection sent together may be answered together
    (:func:`handle_run`): those with the same acks, 1 or all; acks=0 has no answer to give with
    the others."""
    acks = body["acks"]
    return acks if acks in (1, -1) else None


def handle_run(contexts: list[RequestContext], bodies: list[dict]):
    """Produce requests a producer sent one after the other on its connection, read together,
    all with acks=1 or all with acks=all: each answered as :func:`handle` answers it, in turn,
    but the records of all of them for a partition are appended at once, in one write
    (:meth:`Log.append_all`). With acks=all they wait together for the replicas, each request
    for its own offsets, up to the first request's timeout."""
    services = contexts[0].services
    acks = bodies[0]["acks"]
    # per replica, in request order: (request, topic, partition data, its response to fill)
    pending: dict[Partition, list[tuple[int, str, dict, dict]]] = {}
    replicas: dict = {}  # (topic, partition) -> the replica led here, looked up once a run

    results = []
    for request, (context, body) in enumerate(zip(contexts, bodies, strict=True)):
        transactional_id = body.get("transactional_id")

        def take(name: str, partition: dict, request=request, version=context.version,
                 transactional_id=transactional_id) -> dict:
            target = _append_target(services, name, partition, transactional_id, version,
                                    replicas)
            if isinstance(target, dict):
                return target
            response: dict = {}
            pending.setdefault(target, []).append((request, name, partition, response))
            return response

        results.append({"responses": _responses(context, body, _refusal(context, body), take),
                        "throttle_time_ms": 0})
    appended: list[dict[TopicPartition, int]] = [{} for _ in bodies]  # each request's
    for replica, appends in pending.items():
        try:
            outcomes = replica.append_all_as_leader([p["records"] for _, _, p, _ in appends],
                                                    required_acks=acks)
        except Exception as exc:
            outcomes = [exc] * len(appends)
        for (request, name, partition, response), outcome in zip(appends, outcomes, strict=True):
            response.update(_failed(name, partition, outcome, replica.log)
                            if isinstance(outcome, Exception)
                            else _written(name, partition, outcome, replica.log,
                                          appended[request]))
    services.purgatory.notify_appended({tp: offset for each in appended
                                        for tp, offset in each.items()})
    if acks == -1 and any(appended):
        return DelayedProduceRun(contexts[0], bodies[0]["timeout_ms"], results, appended).wait()
    return results


def _responses(context: RequestContext, body: dict, refusal: ErrorCode | None,
               append) -> list[dict]:
    """Each topic's partition responses: ``append(topic, partition)`` for those the principal
    may write, unless the whole request is refused. (Plain loops: a producer's every request
    passes here.)"""
    topics = body["topic_data"]
    writable = () if refusal is not None else context.authorized_names(
        AclOperation.WRITE, ResourceType.TOPIC, [t["name"] for t in topics])
    responses = []
    for topic in topics:
        name = topic["name"]
        if name in writable:
            partitions = [append(name, p) for p in topic["partition_data"]]
        else:
            error = refusal if refusal is not None else ErrorCode.TOPIC_AUTHORIZATION_FAILED
            partitions = [_error(p, error) for p in topic["partition_data"]]
        responses.append({"name": name, "partition_responses": partitions})
    return responses


def _refusal(context: RequestContext, body: dict) -> ErrorCode | None:
    """TRANSACTIONAL_ID_AUTHORIZATION_FAILED for transactional batches the principal may not
    write for their transactional id (Kafka's ``hasTransactionalRecords`` looks at the first
    batch of each partition)."""
    transactional_id = body.get("transactional_id")
    for topic in body["topic_data"]:  # (plain loops, as in _responses)
        for partition in topic["partition_data"]:
            if _first_batch_transactional(partition["records"]):
                if transactional_id is None or not context.authorize(
                        AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
                    return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                return None
    return None


def _first_batch_transactional(records) -> bool:
    return records is not None and len(records) > ATTRIBUTES_OFFSET + 1 \
        and records[MAGIC_OFFSET] == MAGIC \
        and bool(records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG)


# -- acks=all ----------------------------------------------------------------------------------


class DelayedProduce(DelayedReplication[tuple[int, TopicPartition]]):
    """A Produce with acks=all waiting until every partition's high watermark reaches the
    offsets it appended (Kafka's DelayedProduce): answered when all are committed, or after
    ``timeout_ms`` with REQUEST_TIMED_OUT for those that are not. With one replica the high
    watermark moves with the append, so it completes at once.

    ``bodies`` are the response bodies of the requests answered (one, or a run's), and
    ``required`` their appended partitions, request by request."""

    def __init__(self, context: RequestContext, timeout_ms: int, bodies: list[dict],
                 required: list[dict[TopicPartition, int]]):
        super().__init__(context, timeout_ms,
                         {(request, tp): (tp, offset)
                          for request, appended in enumerate(required)
                          for tp, offset in appended.items()})
        self.bodies = bodies
        self._responses = {(request, TopicPartition(t["name"], p["index"])): p
                           for request, body in enumerate(bodies)
                           for t in body["responses"] for p in t["partition_responses"]}

    def replicated(self, key, done: bool, error: ErrorCode) -> None:
        if error == ErrorCode.NOT_LEADER_OR_FOLLOWER:  # leadership moved while waiting
            self._responses[key].update(error_code=error, base_offset=-1)
        elif error != ErrorCode.NONE:
            self._responses[key]["error_code"] = error

    def response(self):
        for key in self.pending:
            self._responses[key]["error_code"] = ErrorCode.REQUEST_TIMED_OUT
        return self.bodies[0]


class DelayedProduceRun(DelayedProduce):
    """The requests of a run (:func:`handle_run`) waiting together: answered with the list of
    their bodies."""

    def response(self):
        super().response()
        return self.bodies


def _error(partition: dict, code: ErrorCode, message: str | None = None) -> dict:
    return {"index": partition["index"], "error_code": code, "base_offset": -1,
            "log_append_time_ms": -1, "log_start_offset": -1, "error_message": message}


def _record_errors(partition: dict, exc: RecordValidationError, log_start_offset: int) -> dict:
    """KIP-467: a batch refused for some of its records, each named by its index in the batch
    with Kafka's message, and the error's message (Produce v8+; older versions carry the error
    code alone). The log start offset is reported, as Kafka does for this failure."""
    response = _error(partition, error_code_for(exc), str(exc))
    response["log_start_offset"] = log_start_offset
    response["record_errors"] = [
        {"batch_index": e.batch_index, "batch_index_error_message": e.message}
        for e in exc.record_errors]
    return response


def _append(services: HandlerServices, topic: str, partition: dict,
            transactional_id: str | None, version: int,
            appended: dict[TopicPartition, int] | None = None, acks: int = 1) -> dict:
    target = _append_target(services, topic, partition, transactional_id, version)
    if isinstance(target, dict):
        return target
    try:
        written = target.append_as_leader(partition["records"], required_acks=acks)
    except Exception as exc:
        return _failed(topic, partition, exc, target.log)
    return _written(topic, partition, written, target.log, appended)


def _append_target(services: HandlerServices, topic: str, partition: dict,
                   transactional_id: str | None, version: int, replicas: dict | None = None):
    """The replica to append ``partition``'s records to, or the response refusing them
    (``replicas``: those looked up already, by topic and partition, the replica appending
    checks its leadership again)."""
    index = partition["index"]
    if topic in INTERNAL_TOPICS:  # only the coordinators write there
        return _error(partition, ErrorCode.INVALID_TOPIC_EXCEPTION,
                      f"Cannot append to internal topic {topic}")
    if replicas is None:
        replica = services.partitions.leader_partition(topic, index)
    else:
        replica = replicas.get((topic, index))
        if replica is None:
            replica = replicas[topic, index] = services.partitions.leader_partition(topic, index)
    if replica is None:
        return _error(partition, not_served_error(services.cluster, topic, index))
    records = partition["records"]
    if records is None or len(records) == 0:
        return _error(partition, ErrorCode.CORRUPT_MESSAGE, "no records")
    refused = _version_refusal(records, version)
    if refused is not None:
        return _error(partition, *refused)
    if transactional_id is not None:  # added to the transaction?
        error = services.transactions.verify_produce(transactional_id, topic, index, records)
        if error != ErrorCode.NONE:
            return _error(partition, error)
    return replica


def _failed(topic: str, partition: dict, exc: Exception, log) -> dict:
    """The response to records the append refused, or failed to write."""
    if isinstance(exc, NotEnoughReplicasError):
        return _error(partition, ErrorCode.NOT_ENOUGH_REPLICAS, str(exc))
    if isinstance(exc, NotLeaderError):
        return _error(partition, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    if isinstance(exc, RecordValidationError):
        return _record_errors(partition, exc, log.log_start_offset)
    if isinstance(exc, (RecordsError, LogError)):
        return _error(partition, error_code_for(exc), str(exc))
    # answered as UNKNOWN_SERVER_ERROR; the others keep being served
    logger.error("append to %s-%d failed", topic, partition["index"], exc_info=exc)
    return _error(partition, ErrorCode.UNKNOWN_SERVER_ERROR, str(exc))


def _written(topic: str, partition: dict, written, log,
             appended: dict[TopicPartition, int] | None) -> dict:
    index = partition["index"]
    if appended is not None:
        appended[TopicPartition(topic, index)] = written.last_offset + 1
    log_append_time = written.max_timestamp \
        if log.config.message_timestamp_type == "LogAppendTime" else -1
    return {"index": index, "error_code": 0, "base_offset": written.first_offset,
            "log_append_time_ms": log_append_time, "log_start_offset": log.log_start_offset}


def _version_refusal(records, version: int) -> tuple[ErrorCode, str] | None:
    """What Kafka answers records a Produce of ``version`` may not carry: from version 3 a
    message set or more than one batch, zstd before version 7. Records too short to tell are
    left to the log's checks."""
    if version < FIRST_BATCH_VERSION or len(records) <= ATTRIBUTES_OFFSET + 1:
        return None
    if records[MAGIC_OFFSET] != MAGIC:
        return ErrorCode.INVALID_RECORD, (
            f"Produce requests with version {version} are only allowed to contain record "
            f"batches with magic version 2")
    if version < FIRST_ZSTD_VERSION and \
            records[ATTRIBUTES_OFFSET + 1] & COMPRESSION_MASK == CompressionType.ZSTD:
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, (
            f"Produce requests with version {version} are not allowed to use ZStandard "
            f"compression")
    if _complete_batch_after_first(records):
        return ErrorCode.INVALID_RECORD, (
            f"Produce requests with version {version} are only allowed to contain exactly one "
            f"record batch")
    return None


def _complete_batch_after_first(records) -> bool:
    """Whether a whole second batch follows the first, as Kafka's batch iterator sees it (a
    partial one at the end is not a batch)."""
    second = LOG_OVERHEAD + struct.unpack_from(">i", records, BATCH_LENGTH_OFFSET)[0]
    if second < LOG_OVERHEAD or len(records) < second + LOG_OVERHEAD:
        return False
    (second_length,) = struct.unpack_from(">i", records, second + BATCH_LENGTH_OFFSET)
    return len(records) >= second + LOG_OVERHEAD + second_length
