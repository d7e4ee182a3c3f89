"""Committed group offsets: FindCoordinator, then OffsetCommit / OffsetFetch at the coordinator.

Commits are standalone, as Kafka's admin client and ``assign()``-mode consumers make them:
generation -1 and an empty member id, accepted by a coordinator for a group without active
members. The coordinator of each group is looked up with FindCoordinator (key type 0, group) on
any broker and remembered until it answers NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE or its
connection fails. COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS (and
every other retriable error) are retried with backoff until ``request.timeout.ms`` has passed.
"""

from __future__ import annotations

from collections.abc import Iterable

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey, ErrorCode

from ..cluster.cluster import Cluster
from ..cluster.coordinators import GROUP, Coordinators
from ..errors import (
    CoordinatorNotAvailableError,
    InvalidArgumentError,
    KafkaClientError,
    UnsupportedVersionError,
    error_for,
)
from ..types import OffsetAndMetadata

FIRST_BATCHED_OFFSET_FETCH = 8  # Groups instead of GroupId
FIRST_OFFSET_FETCH_OF_ALL = 2  # null Topics: every partition with an offset
NO_OFFSET = -1


def offset_commit_request(group_id: str, offsets: dict[TopicPartition, int],
                          metadata: str) -> dict:
    topics: dict[str, list[dict]] = {}
    for tp, offset in sorted(offsets.items()):
        topics.setdefault(tp.topic, []).append({
            "partition_index": tp.partition, "committed_offset": offset,
            "committed_leader_epoch": -1, "commit_timestamp": -1, "committed_metadata": metadata,
        })
    return {"group_id": group_id, "generation_id_or_member_epoch": -1, "member_id": "",
            "group_instance_id": None, "retention_time_ms": -1,
            "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()]}


def parse_offset_commit(body: dict, group_id: str) -> dict[TopicPartition, KafkaClientError]:
    """The partitions whose commit failed, with the error."""
    errors = {}
    for topic in body["topics"]:
        for p in topic["partitions"]:
            tp = TopicPartition(topic["name"], p["partition_index"])
            error = error_for(p["error_code"], where=f"group {group_id}, {tp}")
            if error is not None:
                errors[tp] = error
    return errors


def offset_fetch_request(group_id: str, tps: Iterable[TopicPartition] | None,
                         version: int) -> dict:
    if tps is None:
        if version < FIRST_OFFSET_FETCH_OF_ALL:
            raise UnsupportedVersionError(
                f"listing every committed offset needs OffsetFetch v{FIRST_OFFSET_FETCH_OF_ALL}+,"
                f" the broker speaks v{version}")
        topics = None
    else:
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(tps):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topics = [{"name": name, "partition_indexes": parts} for name, parts in by_topic.items()]
    if version >= FIRST_BATCHED_OFFSET_FETCH:
        return {"groups": [{"group_id": group_id, "member_id": None, "member_epoch": -1,
                            "topics": topics}], "require_stable": False}
    return {"group_id": group_id, "topics": topics, "require_stable": False}


def parse_offset_fetch(body: dict, group_id: str, version: int, *, with_metadata: bool = False
                       ) -> dict[TopicPartition, int | OffsetAndMetadata | None]:
    """The committed offsets (None: none committed; with their metadata strings when
    ``with_metadata``), or the first error that is not "nothing committed here"."""
    if version >= FIRST_BATCHED_OFFSET_FETCH:
        group = next((g for g in body["groups"] if g["group_id"] == group_id), None)
        if group is None:
            raise CoordinatorNotAvailableError(
                f"the OffsetFetch response has no entry for group {group_id}")
        group_error, topics = group["error_code"], group["topics"]
    else:
        group_error, topics = body.get("error_code", 0), body["topics"]
    if group_error == ErrorCode.GROUP_ID_NOT_FOUND:
        return {}
    error = error_for(group_error, where=f"group {group_id}")
    if error is not None:
        raise error
    offsets: dict[TopicPartition, int | OffsetAndMetadata | None] = {}
    for topic in topics:
        for p in topic["partitions"]:
            tp = TopicPartition(topic["name"], p["partition_index"])
            code = p["error_code"]
            if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:  # older brokers: nothing committed
                offsets[tp] = None
                continue
            error = error_for(code, where=f"group {group_id}, {tp}")
            if error is not None:
                raise error
            offset = p["committed_offset"]
            if offset < 0:
                offsets[tp] = None
            elif with_metadata:
                offsets[tp] = OffsetAndMetadata(offset, p.get("metadata") or "")
            else:
                offsets[tp] = offset
    return offsets


class GroupOffsets:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.coordinators = Coordinators(cluster, GROUP)

    def committed(self, group_id: str | None, tps: list[TopicPartition] | None, *,
                  with_metadata: bool = False
                  ) -> dict[TopicPartition, int | OffsetAndMetadata | None]:
        group_id = _check_group(group_id)
        requested = None if tps is None else list(dict.fromkeys(tps))
        if requested == []:
            return {}

        def parse(version: int, body: dict
                  ) -> dict[TopicPartition, int | OffsetAndMetadata | None]:
            found = parse_offset_fetch(body, group_id, version, with_metadata=with_metadata)
            if requested is None:
                return {tp: offset for tp, offset in sorted(found.items()) if offset is not None}
            return {tp: found.get(tp) for tp in requested}

        return self.coordinators.call(
            f"committed() of group {group_id}", group_id, ApiKey.OFFSET_FETCH,
            lambda v: offset_fetch_request(group_id, requested, v), parse)

    def commit(self, group_id: str | None, offsets: dict[TopicPartition, int],
               metadata: str) -> None:
        group_id = _check_group(group_id)
        for tp, offset in offsets.items():
            if not isinstance(offset, int) or offset < 0:
                raise InvalidArgumentError(f"offset to commit for {tp} must be >= 0, "
                                           f"got {offset!r}")
        if not offsets:
            return

        def parse(version: int, body: dict) -> None:
            errors = parse_offset_commit(body, group_id)
            for error in errors.values():
                if not error.retriable:
                    raise error
            if errors:
                raise next(iter(errors.values()))

        self.coordinators.call(f"commit() of group {group_id}", group_id, ApiKey.OFFSET_COMMIT,
                               offset_commit_request(group_id, offsets, metadata), parse)


def _check_group(group_id: str | None) -> str:
    if not isinstance(group_id, str) or not group_id:
        raise InvalidArgumentError(f"a group id must be a non-empty string, got {group_id!r}")
    return group_id
