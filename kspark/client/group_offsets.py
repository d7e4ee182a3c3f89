"""Committed group offsets: FindCoordinator, then OffsetCommit / OffsetFetch at the coordinator.

Commits are standalone, as Kafka's admin client and ``assign()``-mode consumers make them:
generation -1 and an empty member id, accepted by a coordinator for a group without active
members. The coordinator of each group is looked up with FindCoordinator (key type 0, group) on
any broker and remembered until it answers NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE or its
connection fails. COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS (and
every other retriable error) are retried with backoff until ``request.timeout.ms`` has passed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from broker_lite.protocol import ApiKey, ErrorCode

from .cluster import Cluster
from .connection import BrokerConnection
from .errors import (
    CoordinatorNotAvailableError,
    InvalidArgumentError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NotCoordinatorError,
    UnsupportedVersionError,
    error_for,
)
from .metadata import BrokerInfo
from .retry import Deadline, retry
from .types import OffsetAndMetadata, TopicPartition

GROUP_KEY_TYPE = 0
FIRST_BATCHED_FIND_COORDINATOR = 4  # CoordinatorKeys instead of Key
FIRST_BATCHED_OFFSET_FETCH = 8  # Groups instead of GroupId
FIRST_OFFSET_FETCH_OF_ALL = 2  # null Topics: every partition with an offset
NO_OFFSET = -1
_COORDINATOR_MOVED = (NotCoordinatorError, CoordinatorNotAvailableError, KafkaConnectionError,
                      KafkaTimeoutError)


def find_coordinator_request(group_id: str, version: int) -> dict:
    if version >= FIRST_BATCHED_FIND_COORDINATOR:
        return {"key_type": GROUP_KEY_TYPE, "coordinator_keys": [group_id]}
    return {"key": group_id, "key_type": GROUP_KEY_TYPE}


def parse_find_coordinator(body: dict, group_id: str, version: int) -> BrokerInfo:
    """The coordinator's node, or the error (retriable while none is available)."""
    if version >= FIRST_BATCHED_FIND_COORDINATOR:
        entry = next((c for c in body["coordinators"] if c["key"] == group_id), None)
        if entry is None:
            raise CoordinatorNotAvailableError(
                f"the FindCoordinator response has no coordinator for group {group_id}")
    else:
        entry = body
    error = error_for(entry["error_code"], entry.get("error_message"), where=f"group {group_id}")
    if error is not None:
        raise error
    return BrokerInfo(entry["node_id"], entry["host"], entry["port"])


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
    offsets: dict[TopicPartition, int | None] = {}
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
        self._coordinators: dict[str, BrokerInfo] = {}
        self._lock = threading.Lock()

    def committed(self, group_id: str, tps: list[TopicPartition] | None, *,
                  with_metadata: bool = False
                  ) -> dict[TopicPartition, int | OffsetAndMetadata | None]:
        _check_group(group_id)
        requested = None if tps is None else list(dict.fromkeys(tps))
        if requested == []:
            return {}
        deadline = self.cluster.deadline()

        def attempt() -> dict[TopicPartition, int | OffsetAndMetadata | None]:
            conn = self._coordinator(group_id, deadline)
            version, body = conn.request(
                ApiKey.OFFSET_FETCH,
                lambda v: offset_fetch_request(group_id, requested, v), deadline)
            found = parse_offset_fetch(body, group_id, version, with_metadata=with_metadata)
            if requested is None:
                return {tp: offset for tp, offset in sorted(found.items()) if offset is not None}
            return {tp: found.get(tp) for tp in requested}

        return retry(f"committed() of group {group_id}", deadline, self.cluster.backoff(),
                     attempt, lambda error: self._on_retriable(group_id, error))

    def commit(self, group_id: str, offsets: dict[TopicPartition, int], metadata: str) -> None:
        _check_group(group_id)
        for tp, offset in offsets.items():
            if not isinstance(offset, int) or offset < 0:
                raise InvalidArgumentError(f"offset to commit for {tp} must be >= 0, "
                                           f"got {offset!r}")
        if not offsets:
            return
        deadline = self.cluster.deadline()

        def attempt() -> None:
            conn = self._coordinator(group_id, deadline)
            _, body = conn.request(ApiKey.OFFSET_COMMIT,
                                   offset_commit_request(group_id, offsets, metadata), deadline)
            errors = parse_offset_commit(body, group_id)
            for error in errors.values():
                if not error.retriable:
                    raise error
            if errors:
                raise next(iter(errors.values()))

        retry(f"commit() of group {group_id}", deadline, self.cluster.backoff(), attempt,
              lambda error: self._on_retriable(group_id, error))

    def _coordinator(self, group_id: str, deadline: Deadline) -> BrokerConnection:
        with self._lock:
            known = self._coordinators.get(group_id)
        if known is None:
            version, body = self.cluster.request_any(
                ApiKey.FIND_COORDINATOR,
                lambda v: find_coordinator_request(group_id, v), deadline)
            known = parse_find_coordinator(body, group_id, version)
            with self._lock:
                self._coordinators[group_id] = known
        return self.cluster.connection(known.host, known.port, known.node_id)

    def _on_retriable(self, group_id: str, error: KafkaClientError) -> None:
        self.cluster.on_retriable(error)
        if isinstance(error, _COORDINATOR_MOVED):
            with self._lock:
                self._coordinators.pop(group_id, None)


def _check_group(group_id: str) -> None:
    if not isinstance(group_id, str) or not group_id:
        raise InvalidArgumentError(f"a group id must be a non-empty string, got {group_id!r}")
