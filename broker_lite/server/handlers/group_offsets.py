"""Committed offsets: OffsetCommit (versions 2-9), OffsetFetch (1-9) and OffsetDelete (0),
served by the group coordinator (:mod:`broker_lite.coordinator`).

OffsetCommit answers once the commit records are in ``__consumer_offsets``. Partitions of topics
that do not exist (or past a topic's partition count) are refused UNKNOWN_TOPIC_OR_PARTITION and
the others committed. v2-v4 may give a retention time, which sets the commit's own expiry; the
commit time is the broker's clock. OffsetFetch answers from the coordinator's cache: -1 and empty
metadata for a partition without a commit, every committed partition when no topics are named
(v2+), several groups in one request (v8+); with RequireStable (v7+), UNSTABLE_OFFSET_COMMIT
for a partition whose offset an open transaction commits. Group-level errors travel per
partition in v1, in the response in v2-v7, per group in v8+.
"""

from broker_lite.coordinator import GroupCoordinator
from broker_lite.coordinator.offsets import OffsetAndMetadata
from broker_lite.protocol import ErrorCode
from broker_lite.vocabulary import TopicPartition

from ..dispatcher import RequestContext
from ..services import ClusterView

NO_OFFSET = -1
NO_LEADER_EPOCH = -1
NO_METADATA = ""
NO_RETENTION_TIME = -1


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
            if not sizes.contains(tp):
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            offsets[tp] = OffsetAndMetadata(
                partition["committed_offset"],
                partition.get("committed_leader_epoch", NO_LEADER_EPOCH) if version >= 6
                else NO_LEADER_EPOCH,
                partition["committed_metadata"] or NO_METADATA, now,
                None if retention == NO_RETENTION_TIME else now + retention)
    if offsets:
        errors.update(coordinator.handle_commit_offsets(
            body["group_id"], body["member_id"],
            body.get("group_instance_id") if version >= 7 else None,
            body["generation_id_or_member_epoch"], offsets))
    return {"throttle_time_ms": 0, "topics": [
        {"name": topic["name"], "partitions": [
            {"partition_index": p["partition_index"],
             "error_code": errors[TopicPartition(topic["name"], p["partition_index"])]}
            for p in topic["partitions"]]}
        for topic in body["topics"]]}


# -- OffsetFetch -----------------------------------------------------------------------------


def offset_fetch(context: RequestContext, body: dict) -> dict:
    version = context.version
    coordinator = context.services.groups
    if version >= 8:
        return {"throttle_time_ms": 0, "groups": [
            _fetch_group(coordinator, group["group_id"], group["topics"], body["require_stable"])
            for group in body["groups"]]}
    error, topics = _fetch(coordinator, body["group_id"], body["topics"],
                           body.get("require_stable", False))
    if version < 2 and error != ErrorCode.NONE:  # v1 has no group error: each partition has it
        topics = [{"name": t["name"], "partitions": [
            _partition(index, None, error) for index in t["partition_indexes"]]}
            for t in body["topics"] or []]
    return {"throttle_time_ms": 0, "error_code": error, "topics": topics}


def _fetch_group(coordinator: GroupCoordinator, group_id: str, requested,
                 require_stable: bool) -> dict:
    error, topics = _fetch(coordinator, group_id, requested, require_stable)
    return {"group_id": group_id, "error_code": error, "topics": topics}


def _fetch(coordinator: GroupCoordinator, group_id: str, requested, require_stable: bool
           ) -> tuple[ErrorCode, list[dict]]:
    partitions = None if requested is None else [
        TopicPartition(t["name"], index) for t in requested for index in t["partition_indexes"]]
    error, offsets = coordinator.handle_fetch_offsets(group_id, partitions,
                                                      require_stable=require_stable)
    if error != ErrorCode.NONE:
        return error, []
    by_topic: dict[str, list[dict]] = {}
    for tp in (partitions if partitions is not None else sorted(offsets)):
        value = offsets.get(tp)
        by_topic.setdefault(tp.topic, []).append(
            _partition(tp.partition, None, value) if isinstance(value, ErrorCode)
            else _partition(tp.partition, value, ErrorCode.NONE))
    return ErrorCode.NONE, [{"name": name, "partitions": parts}
                            for name, parts in by_topic.items()]


def _partition(index: int, value: OffsetAndMetadata | None, error: ErrorCode) -> dict:
    if value is None:
        return {"partition_index": index, "committed_offset": NO_OFFSET,
                "committed_leader_epoch": NO_LEADER_EPOCH, "metadata": NO_METADATA,
                "error_code": error}
    return {"partition_index": index, "committed_offset": value.offset,
            "committed_leader_epoch": value.leader_epoch, "metadata": value.metadata,
            "error_code": error}


# -- OffsetDelete ----------------------------------------------------------------------------


def offset_delete(context: RequestContext, body: dict) -> dict:
    sizes = _TopicSizes(context.services.cluster)
    errors: dict[TopicPartition, ErrorCode] = {}
    known: list[TopicPartition] = []
    for topic in body["topics"]:
        for partition in topic["partitions"]:
            tp = TopicPartition(topic["name"], partition["partition_index"])
            if sizes.contains(tp):
                known.append(tp)
            else:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    group_error, deleted = context.services.groups.handle_delete_offsets(
        body["group_id"], known)
    if group_error != ErrorCode.NONE:
        return {"error_code": group_error, "throttle_time_ms": 0, "topics": []}
    errors.update(deleted)
    return {"error_code": 0, "throttle_time_ms": 0, "topics": [
        {"name": topic["name"], "partitions": [
            {"partition_index": p["partition_index"],
             "error_code": errors.get(TopicPartition(topic["name"], p["partition_index"]),
                                      ErrorCode.NONE)}
            for p in topic["partitions"]]}
        for topic in body["topics"]]}
