"""DescribeProducers: the producer state of partitions this broker leads (KIP-664).

Each partition answers every producer id its log remembers: epoch, last sequence, timestamp of
its last batch, coordinator epoch of its last transaction marker, and the first offset of its
open transaction (-1 when none), as Kafka 3.9 does. A partition that does not exist answers
UNKNOWN_TOPIC_OR_PARTITION, one led by another broker NOT_LEADER_OR_FOLLOWER, one of a topic the
principal may not Read TOPIC_AUTHORIZATION_FAILED (as Kafka's).
"""

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..dispatcher import RequestContext
from ..errors import not_served_error
from ..services import HandlerServices

_MESSAGES = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: "partition {topic}-{index} does not exist",
    ErrorCode.NOT_LEADER_OR_FOLLOWER: "this broker does not lead partition {topic}-{index}",
}


def describe_producers(context: RequestContext, body: dict) -> dict:
    services = context.services
    readable = context.authorized_names(AclOperation.READ, ResourceType.TOPIC,
                                        (t["name"] for t in body["topics"]))
    return {"throttle_time_ms": 0, "topics": [
        {"name": topic["name"],
         "partitions": [_partition(services, topic["name"], index) if topic["name"] in readable
                        else {"partition_index": index, "active_producers": [],
                              "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                              "error_message": None}
                        for index in topic["partition_indexes"]]}
        for topic in body["topics"]
    ]}


def _partition(services: HandlerServices, topic: str, index: int) -> dict:
    response: dict = {"partition_index": index, "error_code": 0, "error_message": None,
                      "active_producers": []}
    log = services.partitions.leader_log(topic, index)
    if log is None:
        error = not_served_error(services.cluster, topic, index)
        response.update(error_code=error,
                        error_message=_MESSAGES[error].format(topic=topic, index=index))
        return response
    response["active_producers"] = [
        {"producer_id": p.producer_id, "producer_epoch": p.epoch,
         "last_sequence": p.last_sequence, "last_timestamp": p.timestamp,
         "coordinator_epoch": p.coordinator_epoch,
         "current_txn_start_offset": p.current_txn_first_offset}
        for p in log.active_producers()
    ]
    return response
