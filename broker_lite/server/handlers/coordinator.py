"""FindCoordinator: which broker coordinates a key (versions 0-4; v4 asks for many keys at once).

A key's coordinator is the leader of the key's partition of the coordinator's internal topic. A
coordinator type maps to the service that owns the topic (``key_type`` 0, groups: the group
coordinator and ``__consumer_offsets``; 1, transactions: a transaction coordinator and
``__transaction_state``, answered COORDINATOR_NOT_AVAILABLE while the broker has none). The
service tells the topic's name (``topic``), the partition of a key (``partition_for(key)``), and
how to create the topic (``create_topic()``).

As Kafka does, the first lookup creates the topic and answers COORDINATOR_NOT_AVAILABLE, which
clients retry; so does a lookup while the partition has no leader yet, or its leader is not
registered, or is this broker but has not taken the partition over yet. The answer is read
from ZooKeeper, so every broker gives the same one.
"""

import logging

from broker_lite.protocol import ErrorCode
from broker_lite.zk.admin import get_partition_state
from broker_lite.zk.layout import TopicZNode

logger = logging.getLogger(__name__)

# key_type -> the BrokerServices attribute holding that coordinator
COORDINATOR_SERVICES = {0: "group_coordinator", 1: "transaction_coordinator"}

NO_NODE = (-1, "", -1)


def find_coordinator(context, body: dict) -> dict:
    key_type = body.get("key_type", 0) if context.version >= 1 else 0
    if context.version >= 4:
        return {"throttle_time_ms": 0, "coordinators": [
            _coordinator_entry(key, *_lookup(context.services, key_type, key))
            for key in body["coordinator_keys"]
        ]}
    error, message, (node_id, host, port) = _lookup(context.services, key_type, body["key"])
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message,
            "node_id": node_id, "host": host, "port": port}


def _coordinator_entry(key: str, error: ErrorCode, message: str | None, node) -> dict:
    node_id, host, port = node
    return {"key": key, "node_id": node_id, "host": host, "port": port, "error_code": error,
            "error_message": message}


def _lookup(services, key_type: int, key: str) -> tuple[ErrorCode, str | None, tuple]:
    if key_type not in COORDINATOR_SERVICES:
        return ErrorCode.INVALID_REQUEST, f"Unknown coordinator type {key_type}", NO_NODE
    coordinator = getattr(services, COORDINATOR_SERVICES[key_type], None)
    if coordinator is None:
        return (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                "this broker has no coordinator of this type", NO_NODE)
    topic = coordinator.topic
    if services.zk.exists(TopicZNode.path(topic)) is None:
        try:
            coordinator.create_topic()
        except Exception as exc:  # the client retries; the next lookup tries again
            logger.warning("could not create %s: %s", topic, exc)
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{topic} is being created", NO_NODE
    partition = coordinator.partition_for(key)
    state = get_partition_state(services.zk, topic, partition)
    if state is None or state.leader < 0:
        return (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"{topic}-{partition} has no leader yet", NO_NODE)
    if state.leader == services.broker_id:
        local = services.partitions.state(topic, partition)
        if local is None or local.leader_epoch < state.leader_epoch:
            return (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                    f"this broker does not serve {topic}-{partition} yet", NO_NODE)
    broker = next((b for b in services.cluster.brokers() if b.broker_id == state.leader), None)
    if broker is None:
        return (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                f"the leader of {topic}-{partition} is not available", NO_NODE)
    return ErrorCode.NONE, None, (broker.broker_id, broker.host, broker.port)
