"""OffsetForLeaderEpoch: where a leader epoch ended in a partition's log, so a consumer (or a
follower) can tell whether the log it read was truncated since.

For each partition: the largest epoch of the log's leader epoch cache not above the requested one,
and the offset where it ended (the start of the next epoch, or the log end offset for the latest),
with Kafka's answers at the edges (see ``LeaderEpochCache.end_offset_for``; a leader records its
epoch at the log end when it becomes leader, so its current epoch ends at the log end even
before it wrote anything).

``current_leader_epoch`` (unless -1) must match the partition's: older is FENCED_LEADER_EPOCH,
newer UNKNOWN_LEADER_EPOCH. Only the leader answers (NOT_LEADER_OR_FOLLOWER), except to the
debugging replica id -2 (also the default of versions before 3), which any replica answers, as in
Kafka. A replica whose log dir is offline answers KAFKA_STORAGE_ERROR (the controller asks so
after a log dir event: :mod:`..offline_replicas`).

A principal with ClusterAction on the cluster (a broker) may ask for any topic; others need
Describe on the topic (KIP-320), else TOPIC_AUTHORIZATION_FAILED.
"""

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import (
    DEBUGGING_REPLICA_ID,
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    AclOperation,
    ResourceType,
)

from ..dispatcher import RequestContext
from ..errors import not_served_error
from ..services import HandlerServices


def handle(context: RequestContext, body: dict) -> dict:
    services = context.services
    leader_only = body.get("replica_id", DEBUGGING_REPLICA_ID) != DEBUGGING_REPLICA_ID
    names = [topic["topic"] for topic in body["topics"]]
    allowed = set(names) if context.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER,
                                              log_denied=False) \
        else context.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    return {"throttle_time_ms": 0, "topics": [
        {"topic": topic["topic"],
         "partitions": [_partition(services, topic["topic"], p, leader_only)
                        if topic["topic"] in allowed else _refused(p)
                        for p in topic["partitions"]]}
        for topic in body["topics"]
    ]}


def _refused(request: dict) -> dict:
    return {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "partition": request["partition"],
            "leader_epoch": UNDEFINED_EPOCH, "end_offset": UNDEFINED_EPOCH_OFFSET}


def _partition(services: HandlerServices, topic: str, request: dict, leader_only: bool) -> dict:
    index = request["partition"]
    response = {"error_code": 0, "partition": index, "leader_epoch": UNDEFINED_EPOCH,
                "end_offset": UNDEFINED_EPOCH_OFFSET}
    state = services.partitions.state(topic, index)
    log = services.logs.get(topic, index) if state is not None else None
    if state is None or log is None:
        response["error_code"] = not_served_error(services.cluster, topic, index)
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
    if log.offline:  # its log dir failed (KIP-112)
        response["error_code"] = ErrorCode.KAFKA_STORAGE_ERROR
        return response
    epoch, end_offset = log.leader_epochs.end_offset_for(request["leader_epoch"],
                                                         log.log_end_offset)
    response.update(leader_epoch=epoch, end_offset=end_offset)
    return response
