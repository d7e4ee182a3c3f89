"""Share groups' administration (KIP-932), as Kafka's Admin client does it: describing a share
group (ShareGroupDescribe), its start offsets (DescribeShareGroupOffsets), and altering or
deleting them (AlterShareGroupOffsets, DeleteShareGroupOffsets), each at the group's
coordinator, retried as the other group requests are (:class:`.groups.GroupsAdmin`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from broker_lite.protocol import ApiKey

from ..cluster.cluster import Cluster
from ..cluster.connection import BrokerConnection
from ..errors import error_for
from .groups import GroupsAdmin


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    client_id: str
    client_host: str
    epoch: int
    assignment: tuple[tuple[str, int], ...]  # (topic, partition)


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    members: tuple[ShareMember, ...]
    coordinator: tuple[int, str, int]  # (id, host, port)


@dataclass(frozen=True)
class ShareOffset:
    topic: str
    partition: int
    start_offset: int  # -1: not initialized
    leader_epoch: int


def _raise_for(code: int, message: str | None, *, where: str) -> None:
    """Raise the client error of ``code`` unless it is NONE."""
    error = error_for(code, message, where=where)
    if error is not None:
        raise error


class ShareGroupsAdmin:
    """Share group administration over a client's connections."""

    def __init__(self, cluster: Cluster):
        self.groups = GroupsAdmin(cluster)

    def describe(self, group_id: str) -> ShareGroupDescription:
        def parse(conn: BrokerConnection, response: dict) -> ShareGroupDescription:
            group = response["groups"][0]
            _raise_for(group["error_code"], group["error_message"], where=group_id)
            return ShareGroupDescription(
                group_id, group["group_state"], group["group_epoch"], group["assignment_epoch"],
                tuple(ShareMember(m["member_id"], m["client_id"], m["client_host"],
                                  m["member_epoch"], tuple(
                                      (t["topic_name"], p) for t in
                                      m["assignment"]["topic_partitions"]
                                      for p in t["partitions"]))
                      for m in group["members"]),
                (-1 if conn.node_id is None else conn.node_id, conn.host, conn.port))

        return self.groups.at_coordinator(
            f"describe_share_group({group_id!r})", group_id, ApiKey.SHARE_GROUP_DESCRIBE,
            {"group_ids": [group_id], "include_authorized_operations": False}, parse)

    def offsets(self, group_id: str, topics: Mapping[str, Iterable[int]] | None = None
                ) -> list[ShareOffset]:
        """The start offsets of the group's share-partitions (``topics``: topic -> partitions;
        None: every topic its members subscribe to)."""
        wanted = None if topics is None else [
            {"topic_name": t, "partitions": list(p)} for t, p in topics.items()]

        def parse(conn: BrokerConnection, response: dict) -> list[ShareOffset]:
            group = response["groups"][0]
            _raise_for(group["error_code"], group["error_message"], where=group_id)
            found = []
            for topic in group["topics"]:
                for partition in topic["partitions"]:
                    _raise_for(partition["error_code"], partition["error_message"],
                                      where=f"{topic['topic_name']}-"
                                            f"{partition['partition_index']}")
                    found.append(ShareOffset(topic["topic_name"], partition["partition_index"],
                                             partition["start_offset"],
                                             partition["leader_epoch"]))
            return sorted(found, key=lambda o: (o.topic, o.partition))

        return self.groups.at_coordinator(
            f"describe_share_group_offsets({group_id!r})", group_id,
            ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
            {"groups": [{"group_id": group_id, "topics": wanted}]}, parse)

    def alter_offsets(self, group_id: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Start the share-partitions again at these offsets (the group must be empty)."""
        by_topic: dict[str, list[dict]] = {}
        for (topic, partition), offset in sorted(offsets.items()):
            by_topic.setdefault(topic, []).append({"partition_index": partition,
                                                   "start_offset": offset})

        def parse(conn: BrokerConnection, response: dict) -> None:
            _raise_for(response["error_code"], response["error_message"], where=group_id)
            for topic in response["responses"]:
                for partition in topic["partitions"]:
                    _raise_for(partition["error_code"], partition["error_message"],
                                      where=f"{topic['topic_name']}-"
                                            f"{partition['partition_index']}")

        self.groups.at_coordinator(
            f"alter_share_group_offsets({group_id!r})", group_id,
            ApiKey.ALTER_SHARE_GROUP_OFFSETS, {"group_id": group_id, "topics": [
                {"topic_name": t, "partitions": p} for t, p in by_topic.items()]}, parse)

    def delete_offsets(self, group_id: str, topics: Iterable[str]) -> None:
        """Forget the group's state of these topics (the group must be empty)."""
        def parse(conn: BrokerConnection, response: dict) -> None:
            _raise_for(response["error_code"], response["error_message"], where=group_id)
            for topic in response["responses"]:
                _raise_for(topic["error_code"], topic["error_message"],
                                  where=topic["topic_name"])

        self.groups.at_coordinator(
            f"delete_share_group_offsets({group_id!r})", group_id,
            ApiKey.DELETE_SHARE_GROUP_OFFSETS,
            {"group_id": group_id, "topics": [{"topic_name": t} for t in topics]}, parse)

