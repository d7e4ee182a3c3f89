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
"""

from itertools import dropwhile

from broker_lite.protocol import ErrorCode

from ..dispatcher import RequestContext
from ..errors import not_served_error
from ..services import HandlerServices

EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL = -2, -1, -3, -4
READ_COMMITTED = 1
CONSUMER_REPLICA_ID = -1


def handle(context: RequestContext, body: dict) -> dict:
    services = context.services
    if context.version == 0:
        from_consumer = body["replica_id"] == CONSUMER_REPLICA_ID
        return {"topics": [
            {"name": topic["name"],
             "partitions": [_old_style_offsets(services, topic["name"], p, from_consumer)
                            for p in topic["partitions"]]}
            for topic in body["topics"]]}
    committed = body.get("isolation_level", 0) == READ_COMMITTED
    from_replica = body.get("replica_id", CONSUMER_REPLICA_ID) >= 0
    return {"throttle_time_ms": 0, "topics": [
        {"name": topic["name"],
         "partitions": [_offset(services, topic["name"], p, committed, from_replica)
                       for p in topic["partitions"]]}
        for topic in body["topics"]
    ]}


def _offset(services: HandlerServices, topic: str, request: dict, committed: bool,
            from_replica: bool = False) -> dict:
    index = request["partition_index"]
    response = {"partition_index": index, "error_code": 0, "timestamp": -1, "offset": -1,
                "leader_epoch": -1}
    log = services.partitions.leader_log(topic, index)
    if log is None:
        response["error_code"] = not_served_error(services.cluster, topic, index)
        return response
    target = request["timestamp"]
    fetchable = log.log_end_offset if from_replica else \
        log.last_stable_offset if committed else log.high_watermark
    if target in (EARLIEST, EARLIEST_LOCAL):
        found = (-1, log.log_start_offset)
    elif target == LATEST:
        found = (-1, fetchable)
    elif target == MAX_TIMESTAMP:
        found = log.record_with_max_timestamp()
    elif target >= 0:
        found = log.find_by_timestamp(target)
    else:
        response["error_code"] = ErrorCode.INVALID_REQUEST
        return response
    if found is not None and target not in (EARLIEST, EARLIEST_LOCAL, LATEST) \
            and found[1] >= fetchable:
        found = None
    if found is not None:
        timestamp, offset = found
        epoch = log.leader_epochs.latest_epoch if target == LATEST else \
            log.epoch_for_offset(offset)
        response.update(timestamp=timestamp, offset=offset, leader_epoch=epoch)
    return response


def _old_style_offsets(services: HandlerServices, topic: str, request: dict,
                       from_consumer: bool) -> dict:
    index = request["partition_index"]
    response = {"partition_index": index, "error_code": 0, "old_style_offsets": []}
    if request["timestamp"] < EARLIEST:
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
