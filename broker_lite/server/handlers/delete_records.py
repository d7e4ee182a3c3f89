"""DeleteRecords: move the log start offset of partitions this broker leads, as Kafka 3.9's
``ReplicaManager.deleteRecords`` does.

Each partition is answered on its own, with its new low watermark (the log start offset) or an
error and low watermark -1::

    offset -1                       the high watermark: every record written so far goes
    0 <= offset <= high watermark   records below ``offset`` go (a smaller offset than the
                                    current log start changes nothing)
    offset < -1 or > high watermark OFFSET_OUT_OF_RANGE
    an internal topic               INVALID_TOPIC_EXCEPTION (the coordinators own them)
    a topic or partition unknown    UNKNOWN_TOPIC_OR_PARTITION
    led by another broker           NOT_LEADER_OR_FOLLOWER
    cleanup.policy without delete   POLICY_VIOLATION (compacted topics keep every key)
    no Delete on the topic          TOPIC_AUTHORIZATION_FAILED

Records below the new log start are unreadable at once: a Fetch below it is answered
OFFSET_OUT_OF_RANGE and ListOffsets EARLIEST answers it. The log start offsets are
checkpointed (``log-start-offset-checkpoint``) before the response goes out, and the segments
wholly below it are deleted by the next retention pass (``log.retention.check.interval.ms``), as
in Kafka. The followers learn the new log start from their next fetch and report theirs in the
one after; the answer waits, up to the request's ``timeout_ms``, until every live replica's log
starts there (the partition's *low watermark*, Kafka's ``DelayedDeleteRecords``), so a leader
lost right after cannot bring the records back; past it the partition is REQUEST_TIMED_OUT. It
waits in the purgatory, holding no request handler.
With a single replica the low watermark moves with the leader's log start, at once.
"""

import logging

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator import INTERNAL_TOPICS
from broker_lite.log import OffsetOutOfRangeError
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import DELETE_RECORDS_HIGH_WATERMARK, AclOperation, ResourceType

from ..dispatcher import RESPONDS_LATER, DelayedResponse, RequestContext
from ..errors import not_served_error
from ..services import HandlerServices

logger = logging.getLogger(__name__)

INVALID_LOW_WATERMARK = -1


def handle(context: RequestContext, body: dict):
    services = context.services
    deletable = context.authorized_names(AclOperation.DELETE, ResourceType.TOPIC,
                                         (t["name"] for t in body["topics"]))
    results = [{"name": topic["name"],
                "partitions": [_delete(services, topic["name"], p) if topic["name"] in deletable
                               else _result(p["partition_index"],
                                            ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                               for p in topic["partitions"]]}
               for topic in body["topics"]]
    deleted = {TopicPartition(topic["name"], p["partition_index"]): p
               for topic in results for p in topic["partitions"]
               if p["error_code"] == ErrorCode.NONE}
    if deleted:
        services.logs.checkpoint_log_start_offsets()
    delayed = DelayedDeleteRecords(context, body.get("timeout_ms", 0), results, deleted)
    services.purgatory.delete_records.try_complete_else_watch(delayed, list(deleted))
    return RESPONDS_LATER


class DelayedDeleteRecords(DelayedResponse):
    """A DeleteRecords waiting until every live replica's log of each partition starts at the
    new log start (Kafka's DelayedDeleteRecords): watched under those partitions, checked again
    on each follower's fetch (which reports its log start) and whenever the cluster's metadata
    changes (a broker gone is not a live replica any more), answered when all are there, or
    after ``timeout_ms`` with REQUEST_TIMED_OUT for the others."""

    def __init__(self, context: RequestContext, timeout_ms: int, results: list,
                 deleted: dict[TopicPartition, dict]):
        super().__init__(context, max(timeout_ms, 0))
        self.results = results
        self.pending = dict(deleted)  # partition -> its result, with the low watermark awaited

    def try_complete(self) -> bool:
        partitions = self.context.services.partitions
        for tp, result in list(self.pending.items()):
            replica = partitions.leader_partition(tp.topic, tp.partition)
            if replica is None:
                result.update(error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                              low_watermark=INVALID_LOW_WATERMARK)
            elif replica.low_watermark() < result["low_watermark"]:
                continue
            del self.pending[tp]
        return not self.pending and self.force_complete()

    def response(self) -> dict:
        for result in self.pending.values():
            result.update(error_code=ErrorCode.REQUEST_TIMED_OUT,
                          low_watermark=INVALID_LOW_WATERMARK)
        return {"throttle_time_ms": 0, "topics": self.results}


def _result(index: int, error: ErrorCode, low_watermark: int = INVALID_LOW_WATERMARK) -> dict:
    return {"partition_index": index, "low_watermark": low_watermark, "error_code": error}


def _delete(services: HandlerServices, topic: str, request: dict) -> dict:
    index, offset = request["partition_index"], request["offset"]
    if topic in INTERNAL_TOPICS:
        return _result(index, ErrorCode.INVALID_TOPIC_EXCEPTION)
    log = services.partitions.leader_log(topic, index)
    if log is None:
        return _result(index, not_served_error(services.cluster, topic, index))
    if not log.config.delete:
        return _result(index, ErrorCode.POLICY_VIOLATION)
    target = log.high_watermark if offset == DELETE_RECORDS_HIGH_WATERMARK else offset
    if target < 0:
        return _result(index, ErrorCode.OFFSET_OUT_OF_RANGE)
    try:
        log.increment_log_start_offset(target)
    except OffsetOutOfRangeError:
        return _result(index, ErrorCode.OFFSET_OUT_OF_RANGE)
    logger.info("deleted records of %s-%d below offset %d", topic, index, target)
    return _result(index, ErrorCode.NONE, log.log_start_offset)
