"""The requests the controller answers (sent to the broker Metadata names as controller; any
other broker answers NOT_CONTROLLER, and the sender looks the controller up again):

* ControlledShutdown: a broker about to stop asks for its leadership to be moved away; the
  answer lists the partitions with other replicas it still leads (it asks again while any is
  left; :meth:`~broker_lite.controller.controller.Controller.controlled_shutdown`).
* ElectLeaders: preferred (election type 0) or unclean (1) leader elections for the partitions
  named, or, when the request names none (null), for every partition, the answer then leaving
  out those that needed none (ELECTION_NOT_NEEDED), as Kafka's ``handleElectLeaders``. Version 0
  is a preferred election and has no top-level error code.
* AlterPartitionReassignments and ListPartitionReassignments (KIP-455): start, replace or cancel
  (replicas null) reassignments; list those in progress, of the partitions named or all.

Authorization, as Kafka's ``KafkaApis``: ControlledShutdown needs ClusterAction on the cluster
(brokers ask it), ElectLeaders and AlterPartitionReassignments Alter, ListPartitionReassignments
Describe; a refusal is CLUSTER_AUTHORIZATION_FAILED for the whole request (and, for
ElectLeaders, each partition named).
"""

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.controller.controller import NotControllerError
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..dispatcher import RequestContext
from ..services import ControllerRequests

PREFERRED = 0
REFUSED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def _may(context: RequestContext, operation: AclOperation) -> bool:
    return context.authorize(operation, ResourceType.CLUSTER)


def _controller(context: RequestContext) -> ControllerRequests | None:
    """The controller role of this broker, when it holds it."""
    controller = context.services.controller
    return controller if controller is not None and controller.active else None


def controlled_shutdown(context: RequestContext, body: dict) -> dict:
    if not _may(context, AclOperation.CLUSTER_ACTION):
        return {"error_code": REFUSED, "remaining_partitions": []}
    controller = _controller(context)
    if controller is None:
        return {"error_code": ErrorCode.NOT_CONTROLLER, "remaining_partitions": []}
    error, remaining = controller.controlled_shutdown(body["broker_id"],
                                                      body.get("broker_epoch", -1))
    return {"error_code": error, "remaining_partitions": [
        {"topic_name": tp.topic, "partition_index": tp.partition} for tp in remaining]}


def elect_leaders(context: RequestContext, body: dict) -> dict:
    election_type = body.get("election_type", PREFERRED) if context.version >= 1 else PREFERRED
    requested = body["topic_partitions"]
    partitions = None if requested is None else [
        TopicPartition(topic["topic"], p) for topic in requested for p in topic["partitions"]]
    controller = _controller(context)
    timeout_s = max(body.get("timeout_ms", 60000), 0) / 1000
    allowed = _may(context, AclOperation.ALTER)
    outcomes: dict[TopicPartition, tuple[ErrorCode, str | None]]
    if not allowed:
        outcomes = {tp: (REFUSED, None) for tp in partitions or ()}
    elif controller is None:
        outcomes = {tp: (ErrorCode.NOT_CONTROLLER, None) for tp in partitions or ()}
    else:
        outcomes = {tp: (o.error, o.message) for tp, o in
                    controller.elect_leaders(partitions, election_type,
                                             timeout_s=timeout_s).items()}
        if partitions is None:
            outcomes = {tp: o for tp, o in outcomes.items()
                        if o[0] != ErrorCode.ELECTION_NOT_NEEDED}
    by_topic: dict[str, list] = {}
    for tp, (error, message) in sorted(outcomes.items()):
        by_topic.setdefault(tp.topic, []).append(
            {"partition_id": tp.partition, "error_code": error, "error_message": message})
    top_error = 0 if allowed or context.version == 0 else REFUSED
    return {"throttle_time_ms": 0, "error_code": top_error, "replica_election_results": [
        {"topic": topic, "partition_result": results} for topic, results in by_topic.items()]}


def alter_partition_reassignments(context: RequestContext, body: dict) -> dict:
    targets = {TopicPartition(topic["name"], p["partition_index"]):
               None if p["replicas"] is None else tuple(p["replicas"])
               for topic in body["topics"] for p in topic["partitions"]}
    response: dict = {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
                      "responses": []}
    if not _may(context, AclOperation.ALTER):
        response["error_code"] = REFUSED
        return response
    controller = _controller(context)
    if controller is None:
        response["error_code"] = ErrorCode.NOT_CONTROLLER
        return response
    outcomes = controller.alter_reassignments(targets,
                                              timeout_s=max(body["timeout_ms"], 0) / 1000)
    by_topic: dict[str, list] = {}
    for tp, outcome in sorted(outcomes.items()):
        by_topic.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "error_code": outcome.error,
             "error_message": outcome.message})
    response["responses"] = [{"name": t, "partitions": ps} for t, ps in by_topic.items()]
    return response


def list_partition_reassignments(context: RequestContext, body: dict) -> dict:
    response: dict = {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
                      "topics": []}
    requested = body["topics"]
    partitions = None if requested is None else [
        TopicPartition(t["name"], p) for t in requested for p in t["partition_indexes"]]
    if not _may(context, AclOperation.DESCRIBE):
        response["error_code"] = REFUSED
        return response
    controller = _controller(context)
    try:
        if controller is None:
            raise NotControllerError("this broker is not the controller")
        ongoing = controller.list_reassignments(partitions,
                                                timeout_s=max(body["timeout_ms"], 0) / 1000)
    except NotControllerError as exc:
        response.update(error_code=ErrorCode.NOT_CONTROLLER, error_message=str(exc))
        return response
    by_topic: dict[str, list] = {}
    for tp, reassignment in sorted(ongoing.items()):
        by_topic.setdefault(tp.topic, []).append({
            "partition_index": tp.partition, "replicas": list(reassignment.replicas),
            "adding_replicas": list(reassignment.adding),
            "removing_replicas": list(reassignment.removing)})
    response["topics"] = [{"name": t, "partitions": ps} for t, ps in by_topic.items()]
    return response
