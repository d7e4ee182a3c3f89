"""DescribeCluster: the live brokers, the controller and the cluster id, as Kafka 3.9 answers it
on a broker listener (endpoint type BROKER; a request for the CONTROLLER endpoints is answered
MISMATCHED_ENDPOINT_TYPE, an unknown type UNSUPPORTED_ENDPOINT_TYPE, both INVALID_REQUEST in v0).
The cluster's authorized operations, when asked for, are those the authorizer allows (every
one without an authorizer), or 0 without Describe on the cluster, as in Kafka
(:mod:`..authorization`)."""

from broker_lite.protocol import ErrorCode

from ..authorization import NOT_REQUESTED
from ..dispatcher import RequestContext
from .metadata import cluster_operations

UNKNOWN_ENDPOINT, BROKER_ENDPOINT, CONTROLLER_ENDPOINT = 0, 1, 2
_ENDPOINT_NAMES = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}


def describe_cluster(context: RequestContext, body: dict) -> dict:
    services = context.services
    endpoint_type = body.get("endpoint_type", BROKER_ENDPOINT)
    response: dict = {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
                      "endpoint_type": BROKER_ENDPOINT, "cluster_id": "", "controller_id": -1,
                      "brokers": [], "cluster_authorized_operations": NOT_REQUESTED}
    if endpoint_type not in _ENDPOINT_NAMES:
        response.update(error_code=ErrorCode.INVALID_REQUEST if context.version == 0
                        else ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
                        error_message=f"Unsupported endpoint type {endpoint_type}")
        return response
    if endpoint_type != BROKER_ENDPOINT:
        response.update(error_code=ErrorCode.INVALID_REQUEST if context.version == 0
                        else ErrorCode.MISMATCHED_ENDPOINT_TYPE,
                        error_message=f"The request was sent to an endpoint of type BROKER, but "
                                      f"we wanted an endpoint of type "
                                      f"{_ENDPOINT_NAMES[endpoint_type]}")
        return response
    cluster = services.cluster
    response.update(
        cluster_id=services.cluster_id or "",
        controller_id=cluster.controller_id(),
        brokers=[{"broker_id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack}
                 for b in cluster.brokers(context.listener)],
    )
    if body.get("include_cluster_authorized_operations"):
        response["cluster_authorized_operations"] = cluster_operations(context)
    return response
