"""FindCoordinator: which broker coordinates a key (versions 0-6; v4 asks for many keys at once,
v6 knows the share coordinator's key type).

A key's coordinator is the leader of the key's partition of the coordinator's internal topic. A
coordinator type maps to the coordinator that owns the topic (``key_type`` 0, groups: the group
coordinator and ``__consumer_offsets``; 1, transactions: the transaction coordinator and
``__transaction_state``; 2, a share-partition's state (``group:topicId:partition``, KIP-932):
the share coordinator and ``__share_group_state``, when share groups are enabled; another type
is INVALID_REQUEST). The coordinator tells the topic's
name, the partition of a key, and how to create the topic
(:class:`~broker_lite.server.services.CoordinatorTopic`).

As Kafka does, the first lookup creates the topic and answers COORDINATOR_NOT_AVAILABLE, which
clients retry; so does a lookup while the partition has no leader yet, or its leader is not
registered, or is this broker but has not taken the partition over yet. The answer comes from
the cluster's metadata (ZooKeeper), so every broker gives the same one.

Finding a group's coordinator needs Describe on the group (else GROUP_AUTHORIZATION_FAILED),
a transactional id's Describe on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
a share-partition's ClusterAction on the cluster (CLUSTER_AUTHORIZATION_FAILED: brokers ask it),
as in Kafka.
"""

import logging

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, CoordinatorType, ResourceType
from broker_lite.security.acl import AUTHORIZATION_ERRORS

from ..dispatcher import RequestContext
from ..services import CoordinatorTopic, HandlerServices

logger = logging.getLogger(__name__)

NO_NODE = (-1, "", -1)
_KEY_RESOURCES: dict[int, ResourceType] = {CoordinatorType.GROUP: ResourceType.GROUP,
                  CoordinatorType.TRANSACTION: ResourceType.TRANSACTIONAL_ID}


def find_coordinator(context: RequestContext, body: dict) -> dict:
    key_type = body.get("key_type", 0) if context.version >= 1 else 0
    if context.version >= 4:
        return {"throttle_time_ms": 0, "coordinators": [
            _coordinator_entry(key, *_authorized_lookup(context, key_type, key))
            for key in body["coordinator_keys"]
        ]}
    error, message, (node_id, host, port) = _authorized_lookup(context, key_type, body["key"])
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message,
            "node_id": node_id, "host": host, "port": port}


def _coordinator_entry(key: str, error: ErrorCode, message: str | None, node) -> dict:
    node_id, host, port = node
    return {"key": key, "node_id": node_id, "host": host, "port": port, "error_code": error,
            "error_message": message}


def create_coordinator_topic(coordinator: CoordinatorTopic) -> None:
    """Create a coordinator's internal topic on first use. A failure (no live broker yet,
    ZooKeeper trouble) is only logged: the request answers a retriable error either way, and
    the client's next request tries again."""
    try:
        coordinator.create_topic()
    except Exception as exc:  # whatever failed, the answer is the same
        logger.warning("could not create %s: %s", coordinator.topic, exc)


def _coordinator(services: HandlerServices, key_type: int) -> CoordinatorTopic | None:
    if key_type == CoordinatorType.GROUP:
        return services.groups
    if key_type == CoordinatorType.TRANSACTION:
        return services.transactions
    if key_type == CoordinatorType.SHARE and services.share is not None and \
            services.share.enabled:
        return services.share.coordinator
    return None


def _authorized_lookup(context: RequestContext, key_type: int, key: str
                       ) -> tuple[ErrorCode, str | None, tuple]:
    if key_type == CoordinatorType.SHARE and \
            not context.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER):
        error = AUTHORIZATION_ERRORS[ResourceType.CLUSTER]
        return error, error.message, NO_NODE
    resource_type = _KEY_RESOURCES.get(key_type)
    if resource_type is not None and \
            not context.authorize(AclOperation.DESCRIBE, resource_type, key):
        error = AUTHORIZATION_ERRORS[resource_type]
        return error, error.message, NO_NODE
    return _lookup(context.services, key_type, key, context.listener)


def _lookup(services: HandlerServices, key_type: int, key: str, listener: str | None
            ) -> tuple[ErrorCode, str | None, tuple]:
    coordinator = _coordinator(services, key_type)
    if coordinator is None:
        return ErrorCode.INVALID_REQUEST, f"Unknown coordinator type {key_type}", NO_NODE
    topic = coordinator.topic
    if services.cluster.partition_count(topic) is None:
        create_coordinator_topic(coordinator)
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{topic} is being created", NO_NODE
    partition = coordinator.partition_for(key)
    state = services.cluster.partition_state(topic, partition)
    if state is None or state.leader < 0:
        return (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"{topic}-{partition} has no leader yet", NO_NODE)
    if state.leader == services.broker_id:
        local = services.partitions.state(topic, partition)
        if local is None or local.leader_epoch < state.leader_epoch:
            return (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                    f"this broker does not serve {topic}-{partition} yet", NO_NODE)
    broker = next((b for b in services.cluster.brokers(listener)
                   if b.broker_id == state.leader), None)
    if broker is None:
        return (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"the leader of {topic}-{partition} is not available", NO_NODE)
    return ErrorCode.NONE, None, (broker.broker_id, broker.host, broker.port)
