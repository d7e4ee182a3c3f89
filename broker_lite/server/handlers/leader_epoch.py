"""OffsetForLeaderEpoch: where a leader epoch ended in a partition's log, so a consumer (or a
follower) can tell whether the log it read was truncated since.

For each partition: the largest epoch of the log's leader epoch cache not above the requested one,
and the offset where it ended (the start of the next epoch, or the log end offset for the latest),
with Kafka's answers at the edges: the partition's current leader epoch, even before it wrote
anything, ends at the log end; an epoch older than every cached one ends where the first cached
epoch starts; an epoch newer than the current one, or -1, is unknown (-1, -1).

``current_leader_epoch`` (unless -1) must match the partition's: older is FENCED_LEADER_EPOCH,
newer UNKNOWN_LEADER_EPOCH. Only the leader answers (NOT_LEADER_OR_FOLLOWER), except to the
debugging replica id -2 (also the default of versions before 3), which any replica answers, as in
Kafka.
"""

from broker_lite.protocol import ErrorCode

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1
DEBUGGING_REPLICA_ID = -2


def handle(context, body: dict) -> dict:
    services = context.services
    leader_only = body.get("replica_id", DEBUGGING_REPLICA_ID) != DEBUGGING_REPLICA_ID
    return {"throttle_time_ms": 0, "topics": [
        {"topic": topic["topic"],
         "partitions": [_partition(services, topic["topic"], p, leader_only)
                        for p in topic["partitions"]]}
        for topic in body["topics"]
    ]}


def _partition(services, topic: str, request: dict, leader_only: bool) -> dict:
    index = request["partition"]
    response = {"error_code": 0, "partition": index, "leader_epoch": UNDEFINED_EPOCH,
                "end_offset": UNDEFINED_OFFSET}
    state = services.partitions.state(topic, index)
    log = services.logs.get(topic, index) if state is not None else None
    if state is None or log is None:
        known = services.cluster.partitions(topic)
        response["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION \
            if known is None or index >= len(known) else ErrorCode.NOT_LEADER_OR_FOLLOWER
        return response
    current = request.get("current_leader_epoch", -1)
    if current != -1 and current < state.leader_epoch:
        response["error_code"] = ErrorCode.FENCED_LEADER_EPOCH
        return response
    if current != -1 and current > state.leader_epoch:
        response["error_code"] = ErrorCode.UNKNOWN_LEADER_EPOCH
        return response
    if leader_only and state.leader != services.broker_id:
        response["error_code"] = ErrorCode.NOT_LEADER_OR_FOLLOWER
        return response
    epoch, end_offset = end_offset_for(log, request["leader_epoch"], state.leader_epoch)
    response.update(leader_epoch=epoch, end_offset=end_offset)
    return response


def end_offset_for(log, requested: int, partition_epoch: int) -> tuple[int, int]:
    """Kafka's ``LeaderEpochFileCache.endOffsetFor`` on the log's cache, which, as on a Kafka
    leader, is taken to hold the partition's current epoch from the log end when no record of
    that epoch was written yet."""
    cache = log.leader_epochs
    log_end_offset = log.log_end_offset
    latest = max(cache.latest_epoch, partition_epoch)
    if requested == UNDEFINED_EPOCH or requested > latest:
        return UNDEFINED_EPOCH, UNDEFINED_OFFSET
    if requested == latest:
        return requested, log_end_offset
    entries = cache.entries
    if not entries or requested < entries[0][0]:
        return requested, entries[0][1] if entries else log_end_offset
    return cache.end_offset_for(requested, log_end_offset)
