"""ListOffsets: an offset by time for each partition this broker leads.

    -2  earliest        the log start offset
    -1  latest          the high watermark (the next offset a consumer will see); under
                        READ_COMMITTED the last stable offset; to a follower (replica id 0
                        or more) the log end offset
    -3  max timestamp   the record with the largest timestamp (KIP-734)
    -4  earliest local  the log start offset (all data is local here)
    t >= 0              the earliest record with timestamp >= t; offset -1 when there is none

As in Kafka, lookups by time (``t >= 0`` and max timestamp) only answer offsets a consumer of the
request's isolation level can fetch: below the high watermark, or below the last stable offset
under READ_COMMITTED (isolation level 1, from version 2); beyond it the answer is offset -1.

Version 0 answers the old way, a list of offsets (``old_style_offsets``), up to
``max_num_offsets``, largest first, taken from segment boundaries by the time their files were
written (:meth:`~broker_lite.log.Log.offsets_before`): -1 gives the log end offset first, -2
the log start offset; other negative times are UNSUPPORTED_VERSION. For a consumer (replica id
-1) offsets past the high watermark are replaced by the high watermark, as Kafka 3.9 does.

A new leader's high watermark lags until its followers fetch from it (a follower learns the
high watermark one fetch late). Until it reaches the offset the leader's epoch began at, a
consumer's request (replica id -1) for the latest offset, or for a time (or the max timestamp)
found no lower, is
answered OFFSET_NOT_AVAILABLE (retriable), as Kafka's ``Partition.fetchOffsetForTimestamp``
does (KIP-207: the offsets a consumer is given never go back across a leader change).

A topic the principal may not Describe is answered TOPIC_AUTHORIZATION_FAILED, as in Kafka.
"""

from itertools import dropwhile

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import (
    CONSUMER_REPLICA_ID,
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    AclOperation,
    IsolationLevel,
    ResourceType,
)

from ..dispatcher import RequestContext
from ..errors import not_served_error
from ..services import HandlerServices

# timestamps that name a position of the log rather than a time
_LOG_POSITIONS = (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP, LATEST_TIMESTAMP)


def handle(context: RequestContext, body: dict) -> dict:
    services = context.services
    allowed = context.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC,
                                       (t["name"] for t in body["topics"]))
    from_consumer = body["replica_id"] == CONSUMER_REPLICA_ID
    committed = body.get("isolation_level", 0) == IsolationLevel.READ_COMMITTED
    from_replica = body["replica_id"] >= 0  # a follower (or a tool speaking for one)

    def answer(topic: str, request: dict) -> dict:
        if context.version == 0:
            return _old_style_offsets(services, topic, request, from_consumer)
        return _offset(services, topic, request, committed, from_replica, from_consumer)

    topics = [{"name": topic["name"],
               "partitions": [answer(topic["name"], p) if topic["name"] in allowed
                              else _refused(p, context.version) for p in topic["partitions"]]}
              for topic in body["topics"]]
    return {"topics": topics} if context.version == 0 else {"throttle_time_ms": 0,
                                                            "topics": topics}


def _refused(request: dict, version: int) -> dict:
    refused = {"partition_index": request["partition_index"],
               "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    if version == 0:
        return {**refused, "old_style_offsets": []}
    return {**refused, "timestamp": -1, "offset": -1, "leader_epoch": -1}


def _offset(services: HandlerServices, topic: str, request: dict, committed: bool,
            from_replica: bool = False, from_consumer: bool = False) -> dict:
    index = request["partition_index"]
    response = {"partition_index": index, "error_code": 0, "timestamp": -1, "offset": -1,
                "leader_epoch": -1}
    partition = services.partitions.leader_partition(topic, index)
    if partition is None:
        response["error_code"] = not_served_error(services.cluster, topic, index)
        return response
    log = partition.log
    lagging = from_consumer and partition.high_watermark_behind_epoch_start
    target = request["timestamp"]
    fetchable = log.log_end_offset if from_replica else \
        log.last_stable_offset if committed else log.high_watermark
    found: tuple[int, int] | None
    if target in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        found = (-1, log.log_start_offset)
    elif target == LATEST_TIMESTAMP:
        found = (-1, fetchable)
    elif target == MAX_TIMESTAMP:
        found = log.record_with_max_timestamp()
    elif target >= 0:
        found = log.find_by_timestamp(target)
    else:
        response["error_code"] = ErrorCode.INVALID_REQUEST
        return response
    if found is not None and target not in _LOG_POSITIONS and found[1] >= fetchable:
        found = None
    if lagging and (target == LATEST_TIMESTAMP or (found is None and
                                                   target not in _LOG_POSITIONS)):
        response["error_code"] = ErrorCode.OFFSET_NOT_AVAILABLE
        return response
    if found is not None:
        timestamp, offset = found
        epoch = log.leader_epochs.latest_epoch if target == LATEST_TIMESTAMP else \
            log.epoch_for_offset(offset)
        response.update(timestamp=timestamp, offset=offset, leader_epoch=epoch)
    return response


def _old_style_offsets(services: HandlerServices, topic: str, request: dict,
                       from_consumer: bool) -> dict:
    index = request["partition_index"]
    response = {"partition_index": index, "error_code": 0, "old_style_offsets": []}
    if request["timestamp"] < EARLIEST_TIMESTAMP:
        response["error_code"] = ErrorCode.UNSUPPORTED_VERSION
        return response
    log = services.partitions.leader_log(topic, index)
    if log is None:
        response["error_code"] = not_served_error(services.cluster, topic, index)
        return response
    offsets = log.offsets_before(request["timestamp"], request["max_num_offsets"])
    high_watermark = log.high_watermark
    if from_consumer and any(offset > high_watermark for offset in offsets):
        offsets = [high_watermark, *dropwhile(lambda offset: offset > high_watermark, offsets)]
    response["old_style_offsets"] = offsets
    return response
