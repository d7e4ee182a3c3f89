"""Administering replicas, through the controller: leader elections (ElectLeaders, KIP-183/460)
and partition reassignments (AlterPartitionReassignments, ListPartitionReassignments, KIP-455),
as Kafka's ``Admin.electLeaders``, ``alterPartitionReassignments`` and
``listPartitionReassignments``.

The requests go to the controller (:meth:`.cluster.Cluster.request_controller`); a broker that
no longer is one answers NOT_CONTROLLER, and the request is sent again to the controller the
refreshed metadata names, until the client's deadline. The answers are per partition: None for
success, else the error (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
INVALID_REPLICA_ASSIGNMENT, ...), with the controller's message.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey, ErrorCode

from ..cluster.cluster import Cluster
from ..errors import KafkaClientError, error_for, error_of
from ..retry import retry

PREFERRED, UNCLEAN = 0, 1  # ElectLeaders' election types


@dataclass(frozen=True)
class PartitionReassignment:
    """A reassignment in progress: the current replicas and those being added and removed."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


def _by_topic(partitions) -> dict[str, list[int]]:
    topics: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        topics.setdefault(tp.topic, []).append(tp.partition)
    return topics


def _top_level(response: dict, what: str) -> None:
    error = error_for(response.get("error_code", 0), response.get("error_message"), where=what)
    if error is not None:
        raise error


def elect_leaders(cluster: Cluster, election_type: int,
                  partitions: list[TopicPartition] | None = None
                  ) -> dict[TopicPartition, KafkaClientError | None]:
    """Preferred (:data:`PREFERRED`) or unclean (:data:`UNCLEAN`) elections for
    ``partitions`` (None: every partition; the answer then leaves out those that needed
    none)."""
    deadline = cluster.deadline()
    body = {"election_type": election_type, "timeout_ms": int(deadline.remaining_s() * 1000),
            "topic_partitions": None if partitions is None else [
                {"topic": t, "partitions": ps} for t, ps in _by_topic(partitions).items()]}

    def attempt() -> dict[TopicPartition, KafkaClientError | None]:
        _, response = cluster.request_controller(ApiKey.ELECT_LEADERS, body, deadline)
        _top_level(response, "ElectLeaders")
        results = {}
        for topic in response["replica_election_results"]:
            for p in topic["partition_result"]:
                tp = TopicPartition(topic["topic"], p["partition_id"])
                if p["error_code"] == ErrorCode.NOT_CONTROLLER:
                    raise error_of(p["error_code"], p["error_message"], where=str(tp))
                results[tp] = error_for(p["error_code"], p["error_message"], where=str(tp))
        return results

    return retry("ElectLeaders", deadline, cluster.backoff(), attempt, cluster.on_retriable)


def alter_partition_reassignments(cluster: Cluster,
                                  targets: dict[TopicPartition, list[int] | None]
                                  ) -> dict[TopicPartition, KafkaClientError | None]:
    """Move each partition to its target replicas (None: cancel its reassignment)."""
    deadline = cluster.deadline()

    def replicas(tp: TopicPartition) -> list[int] | None:
        target = targets[tp]
        return None if target is None else list(target)

    body = {"timeout_ms": int(deadline.remaining_s() * 1000), "topics": [
        {"name": topic, "partitions": [
            {"partition_index": p, "replicas": replicas(TopicPartition(topic, p))} for p in ps]}
        for topic, ps in _by_topic(targets).items()]}

    def attempt() -> dict[TopicPartition, KafkaClientError | None]:
        _, response = cluster.request_controller(ApiKey.ALTER_PARTITION_REASSIGNMENTS, body,
                                                 deadline)
        _top_level(response, "AlterPartitionReassignments")
        return {TopicPartition(t["name"], p["partition_index"]):
                error_for(p["error_code"], p["error_message"],
                          where=f"{t['name']}-{p['partition_index']}")
                for t in response["responses"] for p in t["partitions"]}

    return retry("AlterPartitionReassignments", deadline, cluster.backoff(), attempt,
                 cluster.on_retriable)


def list_partition_reassignments(cluster: Cluster,
                                 partitions: list[TopicPartition] | None = None
                                 ) -> dict[TopicPartition, PartitionReassignment]:
    """The reassignments in progress (of ``partitions``, or all)."""
    deadline = cluster.deadline()
    body = {"timeout_ms": int(deadline.remaining_s() * 1000),
            "topics": None if partitions is None else [
                {"name": t, "partition_indexes": ps} for t, ps in _by_topic(partitions).items()]}

    def attempt() -> dict[TopicPartition, PartitionReassignment]:
        _, response = cluster.request_controller(ApiKey.LIST_PARTITION_REASSIGNMENTS, body,
                                                 deadline)
        _top_level(response, "ListPartitionReassignments")
        return {TopicPartition(t["name"], p["partition_index"]): PartitionReassignment(
                    tuple(p["replicas"]), tuple(p["adding_replicas"]),
                    tuple(p["removing_replicas"]))
                for t in response["topics"] for p in t["partitions"]}

    return retry("ListPartitionReassignments", deadline, cluster.backoff(), attempt,
                 cluster.on_retriable)
