"""Metadata: live brokers, the controller, and the partitions of the requested topics (all topics
when the request names none), with leaders and replicas. Unknown topics are created when the
request allows it and ``auto.create.topics.enable`` is set; they answer LEADER_NOT_AVAILABLE until
the controller has elected their leaders (and, when the leader is this broker, until it serves
them), and clients retry. Kafka's internal topics are marked
internal; ``__consumer_offsets`` is auto-created by the group coordinator, with its own settings.

Authorized operations (v8+, KIP-430) are reported when asked for
(``include_cluster_authorized_operations``, v8-10; ``include_topic_authorized_operations``):
without an authorizer, every operation the cluster or a topic supports, as Kafka reports them
(:mod:`..authorized_operations`); -2**31 when not asked.

The brokers are given at their endpoints of the listener the request came in on, as Kafka's
metadata cache answers per listener name: a client on a SASL_SSL listener is sent to the other
brokers' SASL_SSL endpoints."""

from broker_lite.config import ConfigError
from broker_lite.coordinator import INTERNAL_TOPICS
from broker_lite.protocol import ErrorCode
from broker_lite.zk.admin import TopicSpec
from broker_lite.zk.errors import TopicExistsError, ZooKeeperError

from ..authorized_operations import CLUSTER_OPERATIONS, NOT_REQUESTED, TOPIC_OPERATIONS
from ..dispatcher import RequestContext
from ..errors import error_code_for
from ..metadata import NO_TOPIC_ID, PartitionInfo, has_serving_leader
from ..services import HandlerServices
from .coordinator import create_coordinator_topic


def handle(context: RequestContext, body: dict) -> dict:
    services = context.services
    cluster = services.cluster
    requested = body.get("topics")
    if requested is None or (context.version == 0 and not requested):
        names = cluster.topic_names()  # null (v1+) or empty (v0) means every topic
        allow_create = False
    else:
        names = [t["name"] for t in requested]
        allow_create = body.get("allow_auto_topic_creation", True) and \
            services.config["auto.create.topics.enable"]
    topics = [_topic(services, name, allow_create) for name in names]
    topic_operations = TOPIC_OPERATIONS if body.get("include_topic_authorized_operations") \
        else NOT_REQUESTED
    for topic in topics:
        topic["topic_authorized_operations"] = topic_operations
    return {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack}
                    for b in cluster.brokers(context.listener)],
        "cluster_id": services.cluster_id,
        "controller_id": cluster.controller_id(),
        "topics": topics,
        "cluster_authorized_operations": CLUSTER_OPERATIONS
        if body.get("include_cluster_authorized_operations") else NOT_REQUESTED,
    }


def _topic(services: HandlerServices, name: str | None, allow_create: bool) -> dict:
    if name is None:
        return {"error_code": ErrorCode.UNKNOWN_TOPIC_ID, "name": None, "topic_id": NO_TOPIC_ID,
                "partitions": []}
    info = services.cluster.topic(name)
    if info is None:
        return {"error_code": _auto_create(services, name) if allow_create
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "name": name, "topic_id": NO_TOPIC_ID, "partitions": []}
    return {
        "error_code": 0, "name": name, "topic_id": info.topic_id,
        "is_internal": name in INTERNAL_TOPICS,
        "partitions": [_partition(p, has_serving_leader(services.partitions, name, p))
                       for p in info.partitions],
    }


def _partition(info: PartitionInfo, leader_serving: bool) -> dict:
    state = info.state
    if not leader_serving:
        return {"error_code": ErrorCode.LEADER_NOT_AVAILABLE, "partition_index": info.partition,
                "leader_id": -1, "leader_epoch": -1, "replica_nodes": list(info.replicas),
                "isr_nodes": list(state.isr) if state else [], "offline_replicas": []}
    return {"error_code": 0, "partition_index": info.partition, "leader_id": state.leader,
            "leader_epoch": state.leader_epoch, "replica_nodes": list(info.replicas),
            "isr_nodes": list(state.isr), "offline_replicas": []}


def _auto_create(services: HandlerServices, name: str) -> ErrorCode:
    """Create the topic, answering LEADER_NOT_AVAILABLE (the client asks again), or say why
    not."""
    groups = services.groups
    if name == groups.topic:  # created with the offsets topic's own settings
        create_coordinator_topic(groups)
        return ErrorCode.LEADER_NOT_AVAILABLE
    try:
        services.admin.create_topic(TopicSpec(name))
    except TopicExistsError:
        pass  # created meanwhile by someone else
    except (ZooKeeperError, ConfigError) as exc:
        return error_code_for(exc)
    return ErrorCode.LEADER_NOT_AVAILABLE
