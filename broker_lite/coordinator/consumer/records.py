"""The records of a consumer group in ``__consumer_offsets``: Kafka's key and value schemas for
consumer groups (``group-coordinator/src/main/resources/common/message``), as data.

As for the classic group's records (:mod:`..group.records`), a key starts with an int16 version
that says what the record is (Kafka 4 calls it the record type), and a value with the int16
version of its schema; a null value is a tombstone, which removes what the key named::

    key   record                                      key fields         value (v0, flexible)
    3     ConsumerGroupMetadata                       group              epoch; tagged 0:
                                                                         metadataHash (int64)
    4     ConsumerGroupPartitionMetadata              group              topics[topicId, topicName,
                                                                         numPartitions,
                                                                         partitionMetadata[..]]
    5     ConsumerGroupMemberMetadata                 group, memberId    instanceId, rackId,
                                                                         clientId, clientHost,
                                                                         subscribedTopicNames,
                                                                         subscribedTopicRegex,
                                                                         rebalanceTimeoutMs,
                                                                         serverAssignor; tagged 0:
                                                                         classicMemberMetadata
    6     ConsumerGroupTargetAssignmentMetadata       group              assignmentEpoch
    7     ConsumerGroupTargetAssignmentMember         group, memberId    topicPartitions[topicId,
                                                                         partitions]
    8     ConsumerGroupCurrentMemberAssignment        group, memberId    memberEpoch,
                                                                         previousMemberEpoch,
                                                                         state (int8),
                                                                         assignedPartitions,
                                                                         partitionsPendingRevocation

Kafka writes them in the order a heartbeat changes things: the group's epoch and the
subscription metadata, the member's metadata, the target assignment (members first, then its
epoch), then the member's current assignment; a member leaving is three tombstones (current
assignment, target assignment, metadata) before the new group epoch; a deleted group's last
tombstones are its target assignment metadata, partition metadata and metadata. Replaying them
in log order (:mod:`.loader`) rebuilds the group.

>>> key = member_metadata_key("g", "m")
>>> key.hex()
'000500016700016d'
>>> parse_key(key)
ConsumerGroupKey(record_type=5, group='g', member_id='m')
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from broker_lite.protocol.schema import BYTES, INT8, INT32, INT64, STRING, UUID, A, F, S

from ..common.record_codec import data_schema, decode_versioned, encode_versioned
from ..group.records import CoordinatorRecordError

GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA = 3, 4, 5
TARGET_ASSIGNMENT_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT = 6, 7, 8
RECORD_TYPES = range(GROUP_METADATA, CURRENT_MEMBER_ASSIGNMENT + 1)

#: topic id -> partitions, the shape of every assignment in these records
Assignment = Mapping[uuid.UUID, frozenset[int]]


# -- schemas -----------------------------------------------------------------------------------


def _group_key(name: str, version: int) -> Any:
    return data_schema(name, str(version), "none", [F("GroupId", STRING, str(version))])


def _member_key(name: str, version: int) -> Any:
    return data_schema(name, str(version), "none", [
        F("GroupId", STRING, str(version)),
        F("MemberId", STRING, str(version)),
    ])


def _topic_partitions(name: str) -> Any:
    return A(name, "TopicPartitions", "0+", [
        F("TopicId", UUID, "0+"),
        A("Partitions", INT32, "0+"),
    ])


KEYS = {
    GROUP_METADATA: _group_key("ConsumerGroupMetadataKey", GROUP_METADATA),
    PARTITION_METADATA: _group_key("ConsumerGroupPartitionMetadataKey", PARTITION_METADATA),
    MEMBER_METADATA: _member_key("ConsumerGroupMemberMetadataKey", MEMBER_METADATA),
    TARGET_ASSIGNMENT_METADATA: _group_key("ConsumerGroupTargetAssignmentMetadataKey",
                                           TARGET_ASSIGNMENT_METADATA),
    TARGET_ASSIGNMENT_MEMBER: _member_key("ConsumerGroupTargetAssignmentMemberKey",
                                          TARGET_ASSIGNMENT_MEMBER),
    CURRENT_MEMBER_ASSIGNMENT: _member_key("ConsumerGroupCurrentMemberAssignmentKey",
                                           CURRENT_MEMBER_ASSIGNMENT),
}

VALUES = {
    GROUP_METADATA: data_schema("ConsumerGroupMetadataValue", "0", "0+", [
        F("Epoch", INT32, "0+"),
        F("MetadataHash", INT64, "0+", tag=0, tagged="0+"),  # Kafka 4.1 (KIP-1101)
    ]),
    PARTITION_METADATA: data_schema("ConsumerGroupPartitionMetadataValue", "0", "0+", [
        A("Topics", "TopicMetadata", "0+", [
            F("TopicId", UUID, "0+"),
            F("TopicName", STRING, "0+"),
            F("NumPartitions", INT32, "0+"),
            A("PartitionMetadata", "PartitionMetadata", "0+", [  # racks: not used since 4.0
                F("Partition", INT32, "0+"),
                A("Racks", STRING, "0+"),
            ]),
        ]),
    ]),
    MEMBER_METADATA: data_schema("ConsumerGroupMemberMetadataValue", "0", "0+", [
        F("InstanceId", STRING, "0+", nullable="0+"),
        F("RackId", STRING, "0+", nullable="0+"),
        F("ClientId", STRING, "0+"),
        F("ClientHost", STRING, "0+"),
        A("SubscribedTopicNames", STRING, "0+"),
        F("SubscribedTopicRegex", STRING, "0+", nullable="0+"),
        F("RebalanceTimeoutMs", INT32, "0+", default=-1),
        F("ServerAssignor", STRING, "0+", nullable="0+"),
        S("ClassicMemberMetadata", "ClassicMemberMetadata", "0+", [
            F("SessionTimeoutMs", INT32, "0+"),
            A("SupportedProtocols", "ClassicProtocol", "0+", [
                F("Name", STRING, "0+"),
                F("Metadata", BYTES, "0+"),
            ]),
        ], nullable="0+", default=None, tag=0, tagged="0+"),
    ]),
    TARGET_ASSIGNMENT_METADATA: data_schema("ConsumerGroupTargetAssignmentMetadataValue", "0",
                                            "0+", [F("AssignmentEpoch", INT32, "0+")]),
    TARGET_ASSIGNMENT_MEMBER: data_schema("ConsumerGroupTargetAssignmentMemberValue", "0",
                                          "0+", [_topic_partitions("TopicPartitions")]),
    CURRENT_MEMBER_ASSIGNMENT: data_schema("ConsumerGroupCurrentMemberAssignmentValue", "0",
                                           "0+", [
        F("MemberEpoch", INT32, "0+"),
        F("PreviousMemberEpoch", INT32, "0+"),
        F("State", INT8, "0+"),
        _topic_partitions("AssignedPartitions"),
        _topic_partitions("PartitionsPendingRevocation"),
    ]),
}

VALUE_VERSION = 0


# -- what the records mean ---------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerGroupKey:
    record_type: int
    group: str
    member_id: str | None = None


@dataclass(frozen=True)
class TopicMetadata:
    """A subscribed topic as the group last saw it (ConsumerGroupPartitionMetadata)."""

    topic_id: uuid.UUID
    name: str
    num_partitions: int


@dataclass(frozen=True)
class ClassicProtocols:
    """What a member that speaks the classic protocol joined with (inside a consumer group)."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class MemberMetadata:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic: ClassicProtocols | None = None


@dataclass(frozen=True)
class CurrentAssignment:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: Assignment
    pending_revocation: Assignment


# -- encoding ----------------------------------------------------------------------------------

Record = tuple[bytes, bytes | None]


def _key(record_type: int, group: str, member_id: str | None = None) -> bytes:
    body = {"group_id": group} if member_id is None else {"group_id": group,
                                                          "member_id": member_id}
    return encode_versioned(KEYS[record_type], record_type, body)


def group_metadata_key(group: str) -> bytes:
    return _key(GROUP_METADATA, group)


def member_metadata_key(group: str, member_id: str) -> bytes:
    return _key(MEMBER_METADATA, group, member_id)


def _value(record_type: int, body: dict) -> bytes:
    return encode_versioned(VALUES[record_type], VALUE_VERSION, body)


def _partitions(assignment: Assignment) -> list[dict]:
    return [{"topic_id": topic_id, "partitions": sorted(partitions)}
            for topic_id, partitions in sorted(assignment.items()) if partitions]


def group_metadata_record(group: str, epoch: int) -> Record:
    return group_metadata_key(group), _value(GROUP_METADATA, {"epoch": epoch})


def partition_metadata_record(group: str, topics: Mapping[str, TopicMetadata]) -> Record:
    return _key(PARTITION_METADATA, group), _value(PARTITION_METADATA, {"topics": [
        {"topic_id": t.topic_id, "topic_name": t.name, "num_partitions": t.num_partitions,
         "partition_metadata": []} for _, t in sorted(topics.items())]})


def member_metadata_record(group: str, member_id: str, member: MemberMetadata) -> Record:
    classic = None if member.classic is None else {
        "session_timeout_ms": member.classic.session_timeout_ms,
        "supported_protocols": [{"name": n, "metadata": m}
                                for n, m in member.classic.protocols]}
    return member_metadata_key(group, member_id), _value(MEMBER_METADATA, {
        "instance_id": member.instance_id, "rack_id": member.rack_id,
        "client_id": member.client_id, "client_host": member.client_host,
        "subscribed_topic_names": list(member.subscribed_topic_names),
        "subscribed_topic_regex": member.subscribed_topic_regex,
        "rebalance_timeout_ms": member.rebalance_timeout_ms,
        "server_assignor": member.server_assignor, "classic_member_metadata": classic})


def target_assignment_metadata_record(group: str, assignment_epoch: int) -> Record:
    return _key(TARGET_ASSIGNMENT_METADATA, group), _value(
        TARGET_ASSIGNMENT_METADATA, {"assignment_epoch": assignment_epoch})


def target_assignment_member_record(group: str, member_id: str,
                                    assignment: Assignment) -> Record:
    return _key(TARGET_ASSIGNMENT_MEMBER, group, member_id), _value(
        TARGET_ASSIGNMENT_MEMBER, {"topic_partitions": _partitions(assignment)})


def current_assignment_record(group: str, member_id: str,
                              current: CurrentAssignment) -> Record:
    return _key(CURRENT_MEMBER_ASSIGNMENT, group, member_id), _value(CURRENT_MEMBER_ASSIGNMENT, {
        "member_epoch": current.member_epoch,
        "previous_member_epoch": current.previous_member_epoch, "state": current.state,
        "assigned_partitions": _partitions(current.assigned),
        "partitions_pending_revocation": _partitions(current.pending_revocation)})


def member_tombstones(group: str, member_id: str) -> list[Record]:
    """A member leaving: its current assignment, target assignment and metadata, in that
    order."""
    return [(_key(record_type, group, member_id), None) for record_type in
            (CURRENT_MEMBER_ASSIGNMENT, TARGET_ASSIGNMENT_MEMBER, MEMBER_METADATA)]


def group_tombstones(group: str) -> list[Record]:
    """The group's own records, after its members' (a deleted or converted group)."""
    return [(_key(record_type, group), None) for record_type in
            (TARGET_ASSIGNMENT_METADATA, PARTITION_METADATA, GROUP_METADATA)]


# -- decoding ----------------------------------------------------------------------------------


def record_type_of(key: bytes | memoryview) -> int:
    """The int16 a key starts with (its record type), or -1 for bytes too short to have one."""
    return int.from_bytes(bytes(key[:2]), "big", signed=True) if len(key) >= 2 else -1


def parse_key(data: bytes | memoryview) -> ConsumerGroupKey:
    record_type = record_type_of(data)
    if record_type not in KEYS:
        raise CoordinatorRecordError(f"not a consumer group key: version {record_type}")
    _, body = decode_versioned(KEYS[record_type], data, "consumer group key",
                               CoordinatorRecordError)
    return ConsumerGroupKey(record_type, body["group_id"], body.get("member_id"))


def _assignment(topics: list[dict]) -> dict[uuid.UUID, frozenset[int]]:
    return {t["topic_id"]: frozenset(t["partitions"]) for t in topics if t["partitions"]}


def parse_value(record_type: int, data: bytes | memoryview | None) -> object:
    """The value of a record of ``record_type``: an int (group metadata's epoch, target
    assignment metadata's assignment epoch), a dict of :class:`TopicMetadata` by name, a
    :class:`MemberMetadata`, an assignment or a :class:`CurrentAssignment`; None for a
    tombstone."""
    if data is None:
        return None
    _, body = decode_versioned(VALUES[record_type], data, VALUES[record_type].name,
                               CoordinatorRecordError)
    if record_type == GROUP_METADATA:
        return body["epoch"]
    if record_type == TARGET_ASSIGNMENT_METADATA:
        return body["assignment_epoch"]
    if record_type == PARTITION_METADATA:
        return {t["topic_name"]: TopicMetadata(t["topic_id"], t["topic_name"],
                                               t["num_partitions"]) for t in body["topics"]}
    if record_type == TARGET_ASSIGNMENT_MEMBER:
        return _assignment(body["topic_partitions"])
    if record_type == CURRENT_MEMBER_ASSIGNMENT:
        return CurrentAssignment(body["member_epoch"], body["previous_member_epoch"],
                                 body["state"], _assignment(body["assigned_partitions"]),
                                 _assignment(body["partitions_pending_revocation"]))
    classic = body["classic_member_metadata"]
    return MemberMetadata(
        body["instance_id"], body["rack_id"], body["client_id"], body["client_host"],
        tuple(body["subscribed_topic_names"]), body["subscribed_topic_regex"],
        body["rebalance_timeout_ms"], body["server_assignor"],
        None if classic is None else ClassicProtocols(
            classic["session_timeout_ms"],
            tuple((p["name"], bytes(p["metadata"])) for p in classic["supported_protocols"])))
