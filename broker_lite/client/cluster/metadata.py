"""Cluster metadata: brokers, topics, and each partition's leader and leader epoch.

:func:`parse_metadata` turns a Metadata response into immutable values (sans I/O);
:class:`MetadataCache` keeps the latest ones for a client, thread-safe, and answers "who leads
this partition" with the error that the client should act on:

* a topic the cluster metadata does not know -> :class:`UnknownTopicOrPartitionError`, final
  (not retriable) when the metadata is fresh, since asking again gives the same answer;
* a partition number beyond the topic's partitions -> the same;
* no leader right now (an election, a topic being created) -> :class:`LeaderNotAvailableError`,
  retriable.

The cache is refreshed (by :class:`.cluster.Cluster`) when it is older than
``metadata.max.age.ms``, when it lacks a topic or partition asked for (unknown topics are not
remembered, so a topic created since is found at once), and after any error marked
``invalid_metadata`` (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE,
epoch errors, a lost connection), which :meth:`MetadataCache.mark_stale` records.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ZERO_UUID, ErrorCode

from ..errors import (
    KafkaClientError,
    LeaderNotAvailableError,
    UnknownTopicOrPartitionError,
    error_for,
    error_of,
    final_error,
)


@dataclass(frozen=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True)
class PartitionMetadata:
    partition: int
    leader: int  # -1: none
    leader_epoch: int  # -1: unknown (Metadata before v7)
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    error_code: int = 0
    offline_replicas: tuple[int, ...] = ()  # replicas on brokers not alive (Metadata v5+)


@dataclass(frozen=True)
class TopicMetadata:
    name: str
    topic_id: uuid.UUID  # ZERO_UUID when the broker reports none (before Metadata v10)
    is_internal: bool
    partitions: dict[int, PartitionMetadata] = field(default_factory=dict)
    error_code: int = 0

    @property
    def partition_count(self) -> int:
        return len(self.partitions)


@dataclass(frozen=True)
class MetadataSnapshot:
    """One Metadata response: ``topics`` found, ``missing`` the topics asked for and unknown."""

    brokers: dict[int, BrokerInfo]
    topics: dict[str, TopicMetadata]
    missing: frozenset[str]
    cluster_id: str | None
    controller_id: int


def metadata_request(topics: Iterable[str] | None, version: int, *,
                     auto_create: bool = False) -> dict:
    """A Metadata request body for ``topics`` (None: every topic); missing topics are created
    only with ``auto_create`` (and a broker that allows it), as producers ask."""
    return {
        "topics": None if topics is None else
        [{"topic_id": ZERO_UUID, "name": name} for name in sorted(topics)],
        "allow_auto_topic_creation": auto_create,
        "include_topic_authorized_operations": False,
        "include_cluster_authorized_operations": False,
    }


def parse_metadata(body: dict) -> MetadataSnapshot:
    """A Metadata response body as a :class:`MetadataSnapshot`; topics answered with
    UNKNOWN_TOPIC_OR_PARTITION (or INVALID_TOPIC_EXCEPTION) are ``missing``."""
    brokers = {b["node_id"]: BrokerInfo(b["node_id"], b["host"], b["port"], b.get("rack"))
               for b in body["brokers"]}
    topics, missing = {}, set()
    for topic in body["topics"]:
        name = topic["name"]
        if name is None:
            continue
        code = topic["error_code"]
        if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_TOPIC_EXCEPTION):
            missing.add(name)
            continue
        partitions = {
            p["partition_index"]: PartitionMetadata(
                p["partition_index"], p["leader_id"], p.get("leader_epoch", -1),
                tuple(p["replica_nodes"]), tuple(p["isr_nodes"]), p["error_code"],
                tuple(p.get("offline_replicas") or ()))
            for p in topic["partitions"]
        }
        topics[name] = TopicMetadata(name, topic.get("topic_id", ZERO_UUID),
                                     bool(topic.get("is_internal", False)), partitions, code)
    return MetadataSnapshot(brokers, topics, frozenset(missing), body.get("cluster_id"),
                            body.get("controller_id", -1))


class MetadataCache:
    """The latest known cluster metadata of one client; every method is thread-safe."""

    def __init__(self, max_age_ms: int):
        self.max_age_ms = max_age_ms
        self._lock = threading.Lock()
        self._brokers: dict[int, BrokerInfo] = {}
        self._topics: dict[str, TopicMetadata] = {}
        self._updated: dict[str, float] = {}  # topic -> monotonic time of its last answer
        self._brokers_updated: float | None = None
        self._stale = False
        self.cluster_id: str | None = None
        self.controller_id = -1

    def update(self, snapshot: MetadataSnapshot, *, every_topic: bool) -> None:
        """Apply a response; ``every_topic`` when it listed all topics (then topics absent from
        it are gone)."""
        now = time.monotonic()
        with self._lock:
            self._brokers = dict(snapshot.brokers)
            self._brokers_updated = now
            self.cluster_id = snapshot.cluster_id
            self.controller_id = snapshot.controller_id
            if every_topic:
                self._topics = {}
                self._updated = {}
            for name in snapshot.missing:
                self._topics.pop(name, None)
                self._updated.pop(name, None)
            for name, topic in snapshot.topics.items():
                self._topics[name] = topic
                self._updated[name] = now
            self._stale = False

    def mark_stale(self) -> None:
        """Refresh before the next use (an error said the metadata is out of date)."""
        with self._lock:
            self._stale = True

    def needs_refresh(self, tps: Iterable[TopicPartition] = (), topics: Iterable[str] = ()) -> bool:
        """Whether the cache must be refreshed before answering for ``tps`` / ``topics``."""
        with self._lock:
            if self._stale or self._expired(self._brokers_updated):
                return True
            for name in {*topics, *(tp.topic for tp in tps)}:
                # unknown topics are asked about every time: they may have been created since
                if name not in self._topics or self._expired(self._updated.get(name)):
                    return True
            return any(tp.topic in self._topics and
                       tp.partition not in self._topics[tp.topic].partitions for tp in tps)

    def _expired(self, updated: float | None) -> bool:
        return updated is None or (time.monotonic() - updated) * 1000 >= self.max_age_ms

    def known_topics(self) -> set[str]:
        with self._lock:
            return set(self._topics)

    def topic(self, name: str) -> TopicMetadata | None:
        with self._lock:
            return self._topics.get(name)

    def topics(self) -> dict[str, TopicMetadata]:
        with self._lock:
            return dict(self._topics)

    def brokers(self) -> dict[int, BrokerInfo]:
        with self._lock:
            return dict(self._brokers)

    def broker(self, node_id: int) -> BrokerInfo | None:
        with self._lock:
            return self._brokers.get(node_id)

    def leader(self, tp: TopicPartition) -> tuple[BrokerInfo, int]:
        """The leader of ``tp`` and its leader epoch, or the error explaining why there is none
        (see the module docstring)."""
        with self._lock:
            topic = self._topics.get(tp.topic)
            if topic is None:
                raise _unknown(tp, "the topic does not exist")
            if topic.error_code:
                raise error_of(topic.error_code, where=f"topic {tp.topic}")
            partition = topic.partitions.get(tp.partition)
            if partition is None:
                raise _unknown(tp, f"the topic has {topic.partition_count} partitions")
            broker = self._brokers.get(partition.leader)
            if partition.leader < 0 or broker is None:
                error = error_for(partition.error_code, where=str(tp)) if partition.error_code \
                    else None
                if isinstance(error, KafkaClientError) and not error.retriable:
                    raise error
                raise LeaderNotAvailableError(
                    f"no leader for {tp} (leader {partition.leader}) in the cluster metadata")
            return broker, partition.leader_epoch


def _unknown(tp: TopicPartition, why: str) -> KafkaClientError:
    return final_error(UnknownTopicOrPartitionError(
        f"UNKNOWN_TOPIC_OR_PARTITION for {tp}: {why} (cluster metadata)", where=str(tp)))
