"""The records of ``__consumer_offsets``: Kafka's key and value schemas, as data.

Every record's key and value start with an int16 version, followed by the body encoded with the
schema of that version (the schemas are Kafka's ``coordinator-records`` specs, declared with the
same DSL as the wire protocol). The key version says what the record is, so commits and group
metadata never compact into each other::

    key version 0, 1   OffsetCommitKey     group, topic, partition      -> OffsetCommitValue
    key version 2      GroupMetadataKey    group                        -> GroupMetadataValue

    OffsetCommitValue   v0 offset, metadata, commitTimestamp
                        v1 + expireTimestamp (only written for commits with a retention time)
                        v3 offset, leaderEpoch, metadata, commitTimestamp (written otherwise)
    GroupMetadataValue  v3 protocolType, generation, protocol, leader, currentStateTimestamp,
                           members[memberId, groupInstanceId, clientId, clientHost,
                                   rebalanceTimeout, sessionTimeout, subscription, assignment]

A null value (a tombstone) deletes the key's commit or group. The versions written are those of
a Kafka 3.x broker (key 1, OffsetCommitValue 3 or 1, GroupMetadataValue 3), so the topic reads the
same to Kafka's tools; every version of the specs (0-4) is read.

>>> key = offset_commit_key("g", "events", 3)
>>> key.hex()
'000100016700066576656e747300000003'
>>> parse_key(key)
OffsetCommitKey(group='g', topic='events', partition=3)
"""

from dataclasses import dataclass

from broker_lite.protocol.schema import BYTES, INT32, INT64, STRING, A, F, Message

from ..common.record_codec import data_schema, decode_versioned, encode_versioned
from .offsets import OffsetAndMetadata

# -- schemas (coordinator-records/*.json) ------------------------------------------------------


OFFSET_COMMIT_KEY = data_schema("OffsetCommitKey", "0-1", "none", [
    F("group", STRING, "0-1"),
    F("topic", STRING, "0-1"),
    F("partition", INT32, "0-1"),
])

OFFSET_COMMIT_VALUE = data_schema("OffsetCommitValue", "0-4", "4+", [
    F("offset", INT64, "0+"),
    F("leaderEpoch", INT32, "3+", default=-1, ignorable=True),
    F("metadata", STRING, "0+"),
    F("commitTimestamp", INT64, "0+"),
    F("expireTimestamp", INT64, "1", default=-1, ignorable=True),
])

GROUP_METADATA_KEY = data_schema("GroupMetadataKey", "2", "none", [
    F("group", STRING, "2"),
])

GROUP_METADATA_VALUE = data_schema("GroupMetadataValue", "0-4", "4+", [
    F("protocolType", STRING, "0+"),
    F("generation", INT32, "0+"),
    F("protocol", STRING, "0+", nullable="0+"),
    F("leader", STRING, "0+", nullable="0+"),
    F("currentStateTimestamp", INT64, "2+", default=-1, ignorable=True),
    A("members", "MemberMetadata", "0+", [
        F("memberId", STRING, "0+"),
        F("groupInstanceId", STRING, "3+", nullable="3+", default=None, ignorable=True),
        F("clientId", STRING, "0+"),
        F("clientHost", STRING, "0+"),
        F("rebalanceTimeout", INT32, "1+", default=-1, ignorable=True),
        F("sessionTimeout", INT32, "0+"),
        F("subscription", BYTES, "0+"),
        F("assignment", BYTES, "0+"),
    ]),
])

SCHEMAS = {s.name: s for s in (OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE, GROUP_METADATA_KEY,
                               GROUP_METADATA_VALUE)}

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_WITH_EXPIRY_VERSION = 1
GROUP_METADATA_VALUE_VERSION = 3
NO_EXPIRE_TIMESTAMP = -1


class CoordinatorRecordError(ValueError):
    """Bytes of ``__consumer_offsets`` that are not a record of any known version."""


# -- what the records mean ---------------------------------------------------------------------


@dataclass(frozen=True)
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupMetadataKey:
    group: str


@dataclass(frozen=True)
class MemberRecord:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupRecord:
    """A group as a completed rebalance left it (GroupMetadataValue)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int  # -1: unknown (versions before 2)
    members: tuple[MemberRecord, ...]


# -- encoding ----------------------------------------------------------------------------------


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return encode_versioned(OFFSET_COMMIT_KEY, OFFSET_COMMIT_KEY_VERSION,
                      {"group": group, "topic": topic, "partition": partition})


def group_metadata_key(group: str) -> bytes:
    return encode_versioned(GROUP_METADATA_KEY, GROUP_METADATA_KEY_VERSION, {"group": group})


def offset_commit_value(value: OffsetAndMetadata) -> bytes:
    version = OFFSET_COMMIT_VALUE_VERSION if value.expire_timestamp is None \
        else OFFSET_COMMIT_VALUE_WITH_EXPIRY_VERSION
    return encode_versioned(OFFSET_COMMIT_VALUE, version, {
        "offset": value.offset, "leader_epoch": value.leader_epoch,
        "metadata": value.metadata or "", "commit_timestamp": value.commit_timestamp,
        "expire_timestamp": NO_EXPIRE_TIMESTAMP if value.expire_timestamp is None
        else value.expire_timestamp,
    })


def group_metadata_value(group: GroupRecord) -> bytes:
    return encode_versioned(GROUP_METADATA_VALUE, GROUP_METADATA_VALUE_VERSION, {
        "protocol_type": group.protocol_type, "generation": group.generation,
        "protocol": group.protocol, "leader": group.leader,
        "current_state_timestamp": group.current_state_timestamp,
        "members": [{
            "member_id": m.member_id, "group_instance_id": m.group_instance_id,
            "client_id": m.client_id, "client_host": m.client_host,
            "rebalance_timeout": m.rebalance_timeout_ms, "session_timeout": m.session_timeout_ms,
            "subscription": m.subscription, "assignment": m.assignment,
        } for m in group.members],
    })


# -- decoding ----------------------------------------------------------------------------------


def _read(schema: Message, data, what: str, versions: range) -> tuple[int, dict]:
    return decode_versioned(schema, data, what, CoordinatorRecordError, versions)


def parse_key(data) -> OffsetCommitKey | GroupMetadataKey:
    """The key of a ``__consumer_offsets`` record; :class:`CoordinatorRecordError` for bytes
    that are none."""
    if data is None:
        raise CoordinatorRecordError("a record without a key")
    if len(data) < 2:
        raise CoordinatorRecordError(f"a key of {len(data)} bytes has no version")
    version = int.from_bytes(bytes(data[:2]), "big", signed=True)
    if version in OFFSET_COMMIT_KEY.versions:
        _, body = _read(OFFSET_COMMIT_KEY, data, "offset commit key", OFFSET_COMMIT_KEY.versions)
        return OffsetCommitKey(body["group"], body["topic"], body["partition"])
    if version in GROUP_METADATA_KEY.versions:
        _, body = _read(GROUP_METADATA_KEY, data, "group metadata key",
                        GROUP_METADATA_KEY.versions)
        return GroupMetadataKey(body["group"])
    raise CoordinatorRecordError(f"unknown key version {version}")


def parse_offset_commit_value(data) -> OffsetAndMetadata | None:
    """A commit, or None for a tombstone."""
    if data is None:
        return None
    _, body = _read(OFFSET_COMMIT_VALUE, data, "offset commit value",
                    OFFSET_COMMIT_VALUE.versions)
    expire = body["expire_timestamp"]
    return OffsetAndMetadata(body["offset"], body["leader_epoch"], body["metadata"],
                             body["commit_timestamp"],
                             None if expire == NO_EXPIRE_TIMESTAMP else expire)


def parse_group_metadata_value(data) -> GroupRecord | None:
    """A group, or None for a tombstone."""
    if data is None:
        return None
    version, body = _read(GROUP_METADATA_VALUE, data, "group metadata value",
                          GROUP_METADATA_VALUE.versions)
    members = tuple(MemberRecord(
        m["member_id"], m["group_instance_id"], m["client_id"], m["client_host"],
        # version 0 had no rebalance timeout: the session timeout served as both
        m["session_timeout"] if version == 0 else m["rebalance_timeout"],
        m["session_timeout"], bytes(m["subscription"]), bytes(m["assignment"]),
    ) for m in body["members"])
    return GroupRecord(body["protocol_type"], body["generation"], body["protocol"],
                       body["leader"], body["current_state_timestamp"], members)
