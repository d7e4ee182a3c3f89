"""The records of ``__share_group_state``: Kafka 4.2's key and value schemas (the share
coordinator's ``ShareSnapshotKey/Value`` and ``ShareUpdateKey/Value``), as data.

Every record is about one share-partition, keyed by (group, topic id, partition); a key starts
with its record type as an int16 (0: snapshot, 1: update, the specs' ``apiKey``), a value with
its version (0)::

    ShareSnapshotKey    type 0  GroupId: string, TopicId: uuid, Partition: int32
    ShareSnapshotValue  v0      (flexible) SnapshotEpoch: int32, StateEpoch: int32,
                                LeaderEpoch: int32, StartOffset: int64,
                                CreateTimestamp: int64, WriteTimestamp: int64,
                                StateBatches: [FirstOffset: int64, LastOffset: int64,
                                               DeliveryState: int8, DeliveryCount: int16];
                                tagged 0: DeliveryCompleteCount int32 (-1: unknown; 4.2, KIP-1226)
    ShareUpdateKey      type 1  GroupId: string, TopicId: uuid, Partition: int32
    ShareUpdateValue    v0      (flexible) SnapshotEpoch: int32, LeaderEpoch: int32,
                                StartOffset: int64 (-1: unchanged), StateBatches (as above);
                                tagged 0: DeliveryCompleteCount int32

A snapshot is the whole state of a share-partition; an update carries the batches that changed
since, and applies on the snapshot of the same snapshot epoch (:mod:`.state`). A tombstone (a
snapshot key with a null value) deletes the state. Compaction keeps the latest record of each
key, which is why a snapshot is written every ``share.coordinator.snapshot.update.records.per.
snapshot`` updates (the updates before it may then go).

>>> import uuid
>>> key = snapshot_key(StateKey("g", uuid.UUID(int=1), 0))
>>> key[:2].hex(), parse_key(key)[1].group_id
('0000', 'g')
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from broker_lite.protocol import ProtocolError, Reader, Writer, decode, encode
from broker_lite.protocol.schema import INT8, INT16, INT32, INT64, STRING, UUID, A, F

from ..common.record_codec import data_schema, decode_versioned, encode_versioned
from .share_partition import StateBatch

SNAPSHOT, UPDATE = 0, 1  # the record types that start a key

_KEY_FIELDS = [
    F("GroupId", STRING, "0"),
    F("TopicId", UUID, "0"),
    F("Partition", INT32, "0"),
]
SHARE_SNAPSHOT_KEY = data_schema("ShareSnapshotKey", "0", "none", _KEY_FIELDS)
SHARE_UPDATE_KEY = data_schema("ShareUpdateKey", "0", "none", _KEY_FIELDS)

_STATE_BATCHES = A("StateBatches", "StateBatch", "0+", [
    F("FirstOffset", INT64, "0+"),
    F("LastOffset", INT64, "0+"),
    F("DeliveryState", INT8, "0+"),
    F("DeliveryCount", INT16, "0+"),
])
_DELIVERY_COMPLETE_COUNT = F("DeliveryCompleteCount", INT32, "0+", default=-1, tag=0,
                             tagged="0+")

SHARE_SNAPSHOT_VALUE = data_schema("ShareSnapshotValue", "0", "0+", [
    F("SnapshotEpoch", INT32, "0+"),
    F("StateEpoch", INT32, "0+"),
    F("LeaderEpoch", INT32, "0+"),
    F("StartOffset", INT64, "0+"),
    _DELIVERY_COMPLETE_COUNT,
    F("CreateTimestamp", INT64, "0+"),
    F("WriteTimestamp", INT64, "0+"),
    _STATE_BATCHES,
])

SHARE_UPDATE_VALUE = data_schema("ShareUpdateValue", "0", "0+", [
    F("SnapshotEpoch", INT32, "0+"),
    F("LeaderEpoch", INT32, "0+"),
    F("StartOffset", INT64, "0+"),
    _DELIVERY_COMPLETE_COUNT,
    _STATE_BATCHES,
])

VALUE_VERSION = 0


class ShareStateRecordError(ValueError):
    """Bytes of ``__share_group_state`` that are not a record of any known type or version."""


@dataclass(frozen=True)
class StateKey:
    """Which share-partition: the group, the topic (by id) and the partition."""

    group_id: str
    topic_id: uuid.UUID
    partition: int

    @property
    def coordinator_key(self) -> str:
        """The key that places it in ``__share_group_state`` (FindCoordinator key type 2)."""
        return f"{self.group_id}:{self.topic_id}:{self.partition}"


@dataclass(frozen=True)
class Snapshot:
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    batches: tuple[StateBatch, ...]


@dataclass(frozen=True)
class Update:
    snapshot_epoch: int
    leader_epoch: int
    start_offset: int  # -1: unchanged
    batches: tuple[StateBatch, ...]


def _key(record_type: int, key: StateKey) -> bytes:
    writer = Writer()
    writer.int16(record_type)
    encode(SHARE_SNAPSHOT_KEY if record_type == SNAPSHOT else SHARE_UPDATE_KEY, 0,
           {"group_id": key.group_id, "topic_id": key.topic_id, "partition": key.partition},
           writer)
    return bytes(writer.getvalue())


def snapshot_key(key: StateKey) -> bytes:
    return _key(SNAPSHOT, key)


def update_key(key: StateKey) -> bytes:
    return _key(UPDATE, key)


def parse_key(data) -> tuple[int, StateKey]:
    """(record type, key)."""
    if data is None or len(data) < 2:
        raise ShareStateRecordError("a share state key without a record type")
    reader = Reader(memoryview(data))
    try:
        record_type = reader.int16()
        if record_type not in (SNAPSHOT, UPDATE):
            raise ShareStateRecordError(f"unknown share state record type {record_type}")
        body = decode(SHARE_SNAPSHOT_KEY, 0, reader)
    except ProtocolError as exc:
        raise ShareStateRecordError(f"malformed share state key: {exc}") from None
    return record_type, StateKey(body["group_id"], body["topic_id"], body["partition"])


def _batches(body: dict) -> tuple[StateBatch, ...]:
    return tuple(StateBatch(b["first_offset"], b["last_offset"], b["delivery_state"],
                            b["delivery_count"]) for b in body["state_batches"])


def _batch_bodies(batches) -> list[dict]:
    return [{"first_offset": b.first_offset, "last_offset": b.last_offset,
             "delivery_state": b.delivery_state, "delivery_count": b.delivery_count}
            for b in batches]


def snapshot_value(snapshot: Snapshot) -> bytes:
    return encode_versioned(SHARE_SNAPSHOT_VALUE, VALUE_VERSION, {
        "snapshot_epoch": snapshot.snapshot_epoch, "state_epoch": snapshot.state_epoch,
        "leader_epoch": snapshot.leader_epoch, "start_offset": snapshot.start_offset,
        "create_timestamp": snapshot.create_timestamp,
        "write_timestamp": snapshot.write_timestamp,
        "state_batches": _batch_bodies(snapshot.batches)})


def update_value(update: Update) -> bytes:
    return encode_versioned(SHARE_UPDATE_VALUE, VALUE_VERSION, {
        "snapshot_epoch": update.snapshot_epoch, "leader_epoch": update.leader_epoch,
        "start_offset": update.start_offset, "state_batches": _batch_bodies(update.batches)})


def parse_snapshot_value(data) -> Snapshot | None:
    """The snapshot, or None for a tombstone."""
    if data is None:
        return None
    body = decode_versioned(SHARE_SNAPSHOT_VALUE, data, "share snapshot value",
                            ShareStateRecordError)[1]
    return Snapshot(body["snapshot_epoch"], body["state_epoch"], body["leader_epoch"],
                    body["start_offset"], body["create_timestamp"], body["write_timestamp"],
                    _batches(body))


def parse_update_value(data) -> Update | None:
    if data is None:
        return None
    body = decode_versioned(SHARE_UPDATE_VALUE, data, "share update value",
                            ShareStateRecordError)[1]
    return Update(body["snapshot_epoch"], body["leader_epoch"], body["start_offset"],
                  _batches(body))
