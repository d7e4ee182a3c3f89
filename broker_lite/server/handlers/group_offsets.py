"""Committed offsets: OffsetCommit (versions 0-9), OffsetFetch (0-9) and OffsetDelete (0).

Version 0 of OffsetCommit and OffsetFetch keeps offsets in ZooKeeper, as Kafka 0.8.1 did and a
Kafka 3.9 broker in ZooKeeper mode still does: ``/consumers/[group]/offsets/[topic]/[p]``
(``services.zk_offsets``), with no group membership, generation or metadata kept. A commit
writes each partition's znode (OFFSET_METADATA_TOO_LARGE when its metadata is longer than
``offset.metadata.max.bytes``); a fetch answers -1 for a partition without one.

Later versions are served by the group coordinator (:mod:`broker_lite.coordinator`).
OffsetCommit answers once the commit records are in ``__consumer_offsets``. v1 may give each
partition's commit time (else the broker's clock); v2-v4 may give a retention time, which sets
the commit's own expiry. OffsetFetch answers from the coordinator's cache: -1 and empty
metadata for a partition without a commit, every committed partition when no topics are named
(v2+), several groups in one request (v8+); with RequireStable (v7+), UNSTABLE_OFFSET_COMMIT
for a partition whose offset an open transaction commits. Group-level errors travel per
partition in v1, in the response in v2-v7, per group in v8+.

In every version, partitions of topics that do not exist (or past a topic's partition count)
are refused UNKNOWN_TOPIC_OR_PARTITION by OffsetCommit, and answered -1 by OffsetFetch v0.

Authorization, as Kafka's: OffsetCommit needs Read on the group (else every partition is
GROUP_AUTHORIZATION_FAILED) and Read on each topic (TOPIC_AUTHORIZATION_FAILED for that topic's
partitions, the others committed); OffsetFetch Describe on the group, and leaves out of an
answer for every committed partition the topics the principal may not Describe, answering those
it named TOPIC_AUTHORIZATION_FAILED; OffsetDelete Delete on the group and Read on each topic.
"""

import logging
from functools import partial

from broker_lite.common.vocabulary import NO_OFFSET, NO_PARTITION_LEADER_EPOCH, TopicPartition
from broker_lite.coordinator.group.offsets import OffsetAndMetadata
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..dispatcher import RequestContext
from ..services import ClusterView

logger = logging.getLogger(__name__)

NO_METADATA = ""
NO_RETENTION_TIME = -1
NO_COMMIT_TIMESTAMP = -1
ZOOKEEPER_VERSION = 0  # the version of OffsetCommit and OffsetFetch that ZooKeeper serves
READ, DESCRIBE, DELETE = AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE
GROUP, TOPIC = ResourceType.GROUP, ResourceType.TOPIC


def _refused_topics(context: RequestContext, operation: AclOperation, topics) -> set[str]:
    """The names among the request's ``topics`` the principal may not do ``operation`` on."""
    names = [t["name"] for t in topics or ()]
    return set(names) - context.authorized_names(operation, TOPIC, names)


def _partition_errors(topics, partitions_of, error_of) -> list[dict]:
    """A response's topics, each partition answered ``error_of(tp)``."""
    return [{"name": t["name"], "partitions": [
        {"partition_index": index,
         "error_code": error_of(TopicPartition(t["name"], index))}
        for index in partitions_of(t)]} for t in topics]


class _TopicSizes:
    """The partition counts of the topics a request names, each looked up once."""

    def __init__(self, cluster: ClusterView):
        self._cluster = cluster
        self._counts: dict[str, int | None] = {}

    def contains(self, tp: TopicPartition) -> bool:
        if tp.topic not in self._counts:
            self._counts[tp.topic] = self._cluster.partition_count(tp.topic)
        count = self._counts[tp.topic]
        return count is not None and 0 <= tp.partition < count


# -- OffsetCommit ----------------------------------------------------------------------------


def offset_commit(context: RequestContext, body: dict) -> dict:
    version = context.version
    if not context.authorize(READ, GROUP, body["group_id"]):
        return {"throttle_time_ms": 0, "topics": _partition_errors(
            body["topics"], _indexes, lambda tp: ErrorCode.GROUP_AUTHORIZATION_FAILED)}
    refused = _refused_topics(context, READ, body["topics"])
    if version == ZOOKEEPER_VERSION:
        return _commit_to_zookeeper(context, body, refused)
    coordinator = context.services.groups
    now = coordinator.clock_ms()
    retention = body.get("retention_time_ms", NO_RETENTION_TIME) if version <= 4 \
        else NO_RETENTION_TIME
    sizes = _TopicSizes(context.services.cluster)
    errors: dict[TopicPartition, ErrorCode] = {}
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    for topic in body["topics"]:
        for partition in topic["partitions"]:
            tp = TopicPartition(topic["name"], partition["partition_index"])
            if tp.topic in refused:
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if not sizes.contains(tp):
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            commit_timestamp = partition["commit_timestamp"] if version == 1 else \
                NO_COMMIT_TIMESTAMP
            offsets[tp] = OffsetAndMetadata(
                partition["committed_offset"],
                partition.get("committed_leader_epoch", NO_PARTITION_LEADER_EPOCH) if version >= 6
                else NO_PARTITION_LEADER_EPOCH,
                partition["committed_metadata"] or NO_METADATA,
                now if commit_timestamp == NO_COMMIT_TIMESTAMP else commit_timestamp,
                None if retention == NO_RETENTION_TIME else now + retention)
    if offsets:
        errors.update(coordinator.handle_commit_offsets(
            body["group_id"], body["member_id"],
            body.get("group_instance_id") if version >= 7 else None,
            body["generation_id_or_member_epoch"], offsets))
    return {"throttle_time_ms": 0,
            "topics": _partition_errors(body["topics"], _indexes, errors.__getitem__)}


def _indexes(topic: dict) -> list[int]:
    return [p["partition_index"] for p in topic["partitions"]]


def _commit_to_zookeeper(context: RequestContext, body: dict, refused: set[str]) -> dict:
    services = context.services
    sizes = _TopicSizes(services.cluster)
    max_metadata = services.config["offset.metadata.max.bytes"]
    group = body["group_id"]
    topics = []
    for topic in body["topics"]:
        partitions = []
        for partition in topic["partitions"]:
            tp = TopicPartition(topic["name"], partition["partition_index"])
            metadata = partition["committed_metadata"]
            if tp.topic in refused:
                error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif not sizes.contains(tp):
                error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif metadata is not None and len(metadata) > max_metadata:
                error = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                _, error = _in_zookeeper(
                    partial(services.zk_offsets.write, group, {tp: partition["committed_offset"]}),
                    f"committing the offset of {tp} for group {group}")
            partitions.append({"partition_index": tp.partition, "error_code": error})
        topics.append({"name": topic["name"], "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}


def _in_zookeeper(call, what: str) -> tuple[object, ErrorCode]:
    """``call()`` and NONE; a failure of ZooKeeper (or a malformed znode) is logged and
    answered UNKNOWN_SERVER_ERROR for this partition only, as Kafka answers it."""
    try:
        return call(), ErrorCode.NONE
    except Exception:  # answered as UNKNOWN_SERVER_ERROR, as Kafka does
        logger.exception("%s in ZooKeeper failed", what)
        return None, ErrorCode.UNKNOWN_SERVER_ERROR


# -- OffsetFetch -----------------------------------------------------------------------------


def offset_fetch(context: RequestContext, body: dict) -> dict:
    version = context.version
    if version == ZOOKEEPER_VERSION:
        return _fetch_from_zookeeper(context, body)
    if version >= 8:
        return {"throttle_time_ms": 0, "groups": [
            _fetch_group(context, group["group_id"], group["topics"], body["require_stable"],
                         group.get("member_id"), group.get("member_epoch", -1))
            for group in body["groups"]]}
    error, topics = _fetch(context, body["group_id"], body["topics"],
                           body.get("require_stable", False))
    if version < 2 and error != ErrorCode.NONE:  # v1 has no group error: each partition has it
        topics = [{"name": t["name"], "partitions": [
            _partition(index, None, error) for index in t["partition_indexes"]]}
            for t in body["topics"] or []]
    return {"throttle_time_ms": 0, "error_code": error, "topics": topics}


def _fetch_from_zookeeper(context: RequestContext, body: dict) -> dict:
    services = context.services
    sizes = _TopicSizes(services.cluster)
    group = body["group_id"]
    group_refused = not context.authorize(DESCRIBE, GROUP, group)
    refused = set() if group_refused else _refused_topics(context, DESCRIBE, body["topics"])
    topics = []
    for topic in body["topics"]:
        partitions = []
        for index in topic["partition_indexes"]:
            tp = TopicPartition(topic["name"], index)
            if group_refused:
                offset, error = None, ErrorCode.GROUP_AUTHORIZATION_FAILED
            elif tp.topic in refused:
                offset, error = None, ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif sizes.contains(tp):
                offset, error = _in_zookeeper(
                    partial(services.zk_offsets.read, group, tp),
                    f"reading the offset of {tp} for group {group}")
            else:
                offset, error = None, ErrorCode.NONE
            partitions.append({"partition_index": index,
                               "committed_offset": NO_OFFSET if offset is None else offset,
                               "metadata": NO_METADATA, "error_code": error})
        topics.append({"name": topic["name"], "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}


def _fetch_group(context: RequestContext, group_id: str, requested, require_stable: bool,
                 member_id: str | None = None, member_epoch: int = -1) -> dict:
    error, topics = _fetch(context, group_id, requested, require_stable, member_id,
                           member_epoch)
    return {"group_id": group_id, "error_code": error, "topics": topics}


def _fetch(context: RequestContext, group_id: str, requested, require_stable: bool,
           member_id: str | None = None, member_epoch: int = -1
           ) -> tuple[ErrorCode, list[dict]]:
    if not context.authorize(DESCRIBE, GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, []
    refused = _refused_topics(context, DESCRIBE, requested)
    partitions = None if requested is None else [
        TopicPartition(t["name"], index) for t in requested if t["name"] not in refused
        for index in t["partition_indexes"]]
    error, offsets = context.services.groups.handle_fetch_offsets(
        group_id, partitions, require_stable=require_stable, member_id=member_id,
        member_epoch=member_epoch)
    if error != ErrorCode.NONE:
        return error, []
    if requested is None:  # every committed partition: those of topics it may describe
        allowed = context.authorized_names(DESCRIBE, TOPIC, {tp.topic for tp in offsets})
        offsets = {tp: value for tp, value in offsets.items() if tp.topic in allowed}
    by_topic: dict[str, list[dict]] = {}
    for tp in (partitions if partitions is not None else sorted(offsets)):
        value = offsets.get(tp)
        by_topic.setdefault(tp.topic, []).append(
            _partition(tp.partition, None, value) if isinstance(value, ErrorCode)
            else _partition(tp.partition, value, ErrorCode.NONE))
    for topic in requested or ():
        if topic["name"] in refused:
            by_topic[topic["name"]] = [
                _partition(index, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                for index in topic["partition_indexes"]]
    return ErrorCode.NONE, [{"name": name, "partitions": parts}
                            for name, parts in by_topic.items()]


def _partition(index: int, value: OffsetAndMetadata | None, error: ErrorCode) -> dict:
    if value is None:
        return {"partition_index": index, "committed_offset": NO_OFFSET,
                "committed_leader_epoch": NO_PARTITION_LEADER_EPOCH, "metadata": NO_METADATA,
                "error_code": error}
    return {"partition_index": index, "committed_offset": value.offset,
            "committed_leader_epoch": value.leader_epoch, "metadata": value.metadata,
            "error_code": error}


# -- OffsetDelete ----------------------------------------------------------------------------


def offset_delete(context: RequestContext, body: dict) -> dict:
    if not context.authorize(DELETE, GROUP, body["group_id"]):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "throttle_time_ms": 0,
                "topics": []}
    refused = _refused_topics(context, READ, body["topics"])
    sizes = _TopicSizes(context.services.cluster)
    errors: dict[TopicPartition, ErrorCode] = {}
    known: list[TopicPartition] = []
    for topic in body["topics"]:
        for partition in topic["partitions"]:
            tp = TopicPartition(topic["name"], partition["partition_index"])
            if tp.topic in refused:
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif sizes.contains(tp):
                known.append(tp)
            else:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    group_error, deleted = context.services.groups.handle_delete_offsets(
        body["group_id"], known)
    if group_error != ErrorCode.NONE:
        return {"error_code": group_error, "throttle_time_ms": 0, "topics": []}
    errors.update(deleted)
    return {"error_code": 0, "throttle_time_ms": 0, "topics": _partition_errors(
        body["topics"], _indexes, lambda tp: errors.get(tp, ErrorCode.NONE))}
