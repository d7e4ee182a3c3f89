"""Metadata: live brokers, the controller, and the partitions of the requested topics (all topics
when the request names none), with leaders and replicas. Unknown topics are created when the
request allows it and ``auto.create.topics.enable`` is set; they answer LEADER_NOT_AVAILABLE until
the controller has elected their leaders (and, when the leader is this broker, until it serves
them), and clients retry. Kafka's internal topics are marked
internal; ``__consumer_offsets`` is auto-created by the group coordinator, with its own settings.

A broker cut off from ZooKeeper answers from what it knew (:mod:`..metadata_cache`); a topic it
was never asked about is LEADER_NOT_AVAILABLE meanwhile, and the client asks again.

Authorization, as Kafka's ``handleTopicMetadataRequest``: a topic the principal may not
Describe is left out of an all-topics answer and answered TOPIC_AUTHORIZATION_FAILED (without
its id) when named; a topic to be auto-created needs Create on the cluster or on the topic,
else TOPIC_AUTHORIZATION_FAILED. Authorized operations (v8+, KIP-430) are reported when asked
for (``include_cluster_authorized_operations``, v8-10, only with Describe on the cluster, else
0; ``include_topic_authorized_operations``) from the authorizer (:mod:`..authorization`);
-2**31 when not asked.

The brokers are given at their endpoints of the listener the request came in on, as Kafka's
metadata cache answers per listener name: a client on a SASL_SSL listener is sent to the other
brokers' SASL_SSL endpoints."""

from broker_lite.config.parsers import ConfigError
from broker_lite.coordinator import INTERNAL_TOPICS
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.zk.admin import TopicSpec
from broker_lite.zk.errors import TopicExistsError, ZooKeeperError, ZooKeeperUnreachableError

from ..authorization import NOT_REQUESTED
from ..dispatcher import RequestContext
from ..errors import error_code_for
from ..metadata import NO_TOPIC_ID, PartitionInfo, serving_leaders
from ..services import HandlerServices
from .coordinator import create_coordinator_topic


def handle(context: RequestContext, body: dict) -> dict:
    services = context.services
    cluster = services.cluster
    requested = body.get("topics")
    every_topic = requested is None or (context.version == 0 and not requested)
    names: list[str | None]
    if every_topic:  # null (v1+) or empty (v0) means every topic
        names = list(cluster.topic_names())
        allow_create = False
    else:
        # a topic asked for by id alone (v10+: KIP-848 and KIP-932 clients) is named here
        names = [t["name"] if t["name"] is not None or not t.get("topic_id")
                 else cluster.topic_name(t["topic_id"]) for t in requested or ()]
        allow_create = body.get("allow_auto_topic_creation", True) and \
            services.config["auto.create.topics.enable"]
    describable = context.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC,
                                           (n for n in names if n is not None),
                                           log_denied=not every_topic)
    topics = []
    for name in names:
        if name is None:
            topics.append(_topic(services, name, False))
        elif name in describable:
            topics.append(_authorized_topic(context, name, allow_create))
        elif not every_topic:
            topics.append(_refused(name))
    with_operations = body.get("include_topic_authorized_operations")
    for topic in topics:
        topic.setdefault("topic_authorized_operations", context.authorized_operations(
            ResourceType.TOPIC, topic["name"]) if with_operations else NOT_REQUESTED)
    return {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack}
                    for b in cluster.brokers(context.listener)],
        "cluster_id": services.cluster_id,
        "controller_id": cluster.controller_id(),
        "topics": topics,
        "cluster_authorized_operations": cluster_operations(context)
        if body.get("include_cluster_authorized_operations") else NOT_REQUESTED,
    }


def cluster_operations(context: RequestContext) -> int:
    """The cluster's authorized operations (Metadata v8-10, DescribeCluster): none without
    Describe on the cluster."""
    if not context.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER):
        return 0
    return context.authorized_operations(ResourceType.CLUSTER)


def _refused(name: str) -> dict:
    """A topic the principal may not describe (or create): its existence is not disclosed."""
    return {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "name": name,
            "topic_id": NO_TOPIC_ID, "is_internal": False, "partitions": [],
            "topic_authorized_operations": NOT_REQUESTED}


def _authorized_topic(context: RequestContext, name: str, allow_create: bool) -> dict:
    try:
        return _described_topic(context, name, allow_create)
    except ZooKeeperUnreachableError:  # cut off from ZooKeeper, and never asked before
        return {"error_code": ErrorCode.LEADER_NOT_AVAILABLE, "name": name,
                "topic_id": NO_TOPIC_ID, "partitions": []}


def _described_topic(context: RequestContext, name: str, allow_create: bool) -> dict:
    services = context.services
    if allow_create and services.cluster.topic(name) is None and \
            not context.authorize(AclOperation.CREATE, ResourceType.CLUSTER, log_denied=False) \
            and not context.authorize(AclOperation.CREATE, ResourceType.TOPIC, name):
        refused = _refused(name)
        refused["is_internal"] = name in INTERNAL_TOPICS
        return refused
    return _topic(services, name, allow_create)


def _topic(services: HandlerServices, name: str | None, allow_create: bool) -> dict:
    if name is None:
        return {"error_code": ErrorCode.UNKNOWN_TOPIC_ID, "name": None, "topic_id": NO_TOPIC_ID,
                "partitions": []}
    info = services.cluster.topic(name)
    if info is None:
        return {"error_code": _auto_create(services, name) if allow_create
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "name": name, "topic_id": NO_TOPIC_ID, "partitions": []}
    live = {broker.broker_id for broker in services.cluster.brokers()}
    return {
        "error_code": 0, "name": name, "topic_id": info.topic_id,
        "is_internal": name in INTERNAL_TOPICS,
        "partitions": [_partition(p, serving, live) for p, serving in zip(
            info.partitions, serving_leaders(services.partitions, name, info.partitions),
            strict=True)],
    }


def _partition(info: PartitionInfo, leader_serving: bool, live: set[int]) -> dict:
    """A partition's leader, replicas, ISR and offline replicas (those on brokers not alive,
    v5+); a leader not alive, or not serving it yet, is LEADER_NOT_AVAILABLE, as Kafka's
    metadata cache answers."""
    state = info.state
    offline = [r for r in info.replicas if r not in live]
    if state is None or not leader_serving or state.leader not in live:
        return {"error_code": ErrorCode.LEADER_NOT_AVAILABLE, "partition_index": info.partition,
                "leader_id": -1, "leader_epoch": -1, "replica_nodes": list(info.replicas),
                "isr_nodes": list(state.isr) if state else [], "offline_replicas": offline}
    return {"error_code": 0, "partition_index": info.partition, "leader_id": state.leader,
            "leader_epoch": state.leader_epoch, "replica_nodes": list(info.replicas),
            "isr_nodes": list(state.isr), "offline_replicas": offline}


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
