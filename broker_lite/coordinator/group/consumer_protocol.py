"""The topics a consumer subscribes to, read from its JoinGroup metadata.

Groups of protocol type ``consumer`` carry a ConsumerProtocolSubscription per member. Every
version of it starts the same way, which is all the coordinator reads (as Kafka's does), so
later versions parse too::

    version   int16     0 and up
    topics    [string]  int32 count, then int16-length UTF-8 names
    ...                 user data, owned partitions, generation, rack: not read

The classic coordinator needs the topics for two rules only: a stable consumer group's offsets of
subscribed topics never expire, and OffsetDelete refuses them (GROUP_SUBSCRIBED_TO_TOPIC).
Metadata it cannot read makes the subscription unknown, never an error for the group.

A member moving between a classic group and a consumer group (KIP-848's online migration) is
read whole: its subscription's owned partitions (v1+) and rack (v3+), and its assignment
(ConsumerProtocolAssignment), which the coordinator then writes for it too.

>>> import struct
>>> data = struct.pack(">hih6s", 3, 1, 6, b"events") + b"rest of a v3 subscription"
>>> sorted(subscribed_topics(data))
['events']
"""

from broker_lite.protocol import ProtocolError, Reader
from broker_lite.protocol.schema import BYTES, INT32, STRING, A, F

from ..common.record_codec import data_schema, decode_versioned, encode_versioned

CONSUMER_PROTOCOL_TYPE = "consumer"


class MalformedSubscriptionError(ValueError):
    """Member metadata that is not a ConsumerProtocolSubscription."""


def subscribed_topics(metadata) -> frozenset[str]:
    reader = Reader(memoryview(metadata))
    try:
        version = reader.int16()
        if version < 0:
            raise MalformedSubscriptionError(f"subscription version {version}")
        count = reader.int32()
        if count < 0 or count > reader.end - reader.pos:
            raise MalformedSubscriptionError(f"{count} topics in {len(metadata)} bytes")
        return frozenset(reader.string() for _ in range(count))
    except ProtocolError as exc:
        raise MalformedSubscriptionError(str(exc)) from None


# -- the whole embedded protocol, for members moving between group protocols (KIP-848) ----------


#: ConsumerProtocolSubscription (clients' consumer/ConsumerProtocolSubscription.json)
SUBSCRIPTION = data_schema("ConsumerProtocolSubscription", "0-3", "none", [
    A("Topics", STRING, "0+"),
    F("UserData", BYTES, "0+", nullable="0+", default=None),
    A("OwnedPartitions", "TopicPartition", "1+", [
        F("Topic", STRING, "1+"),
        A("Partitions", INT32, "1+"),
    ]),
    F("GenerationId", INT32, "2+", default=-1),
    F("RackId", STRING, "3+", nullable="3+", default=None),
])

#: ConsumerProtocolAssignment (clients' consumer/ConsumerProtocolAssignment.json)
ASSIGNMENT = data_schema("ConsumerProtocolAssignment", "0-3", "none", [
    A("AssignedPartitions", "TopicPartition", "0+", [
        F("Topic", STRING, "0+"),
        A("Partitions", INT32, "0+"),
    ]),
    F("UserData", BYTES, "0+", nullable="0+", default=None),
])

PartitionsByTopic = dict[str, frozenset[int]]


def subscription_version(metadata: bytes) -> int:
    return int.from_bytes(metadata[:2], "big", signed=True) if len(metadata) >= 2 else 0


def parse_subscription(metadata) -> tuple[tuple[str, ...], PartitionsByTopic, str | None]:
    """The topics, owned partitions (v1+) and rack (v3+) of a member's subscription; raises
    :class:`MalformedSubscriptionError`. A version above 3 is read as 3 (later versions only
    add fields at the end, as Kafka reads them)."""
    data = bytes(metadata)
    version = min(subscription_version(data), 3)
    try:
        _, body = decode_versioned(SUBSCRIPTION, version.to_bytes(2, "big") + data[2:],
                                   "consumer protocol subscription",
                                   MalformedSubscriptionError)
    except MalformedSubscriptionError:
        return tuple(sorted(subscribed_topics(data))), {}, None
    owned = {p["topic"]: frozenset(p["partitions"]) for p in body["owned_partitions"]}
    return tuple(body["topics"]), owned, body["rack_id"]


def parse_assignment(data) -> PartitionsByTopic:
    """The partitions of a ConsumerProtocolAssignment (an empty one for no bytes)."""
    data = bytes(data)
    if not data:
        return {}
    version = min(subscription_version(data), 3)
    _, body = decode_versioned(ASSIGNMENT, version.to_bytes(2, "big") + data[2:],
                               "consumer protocol assignment", MalformedSubscriptionError)
    return {p["topic"]: frozenset(p["partitions"]) for p in body["assigned_partitions"]}


def assignment_bytes(partitions: PartitionsByTopic, version: int = 0) -> bytes:
    """A ConsumerProtocolAssignment of ``partitions`` in ``version`` (at most 3)."""
    return encode_versioned(ASSIGNMENT, max(0, min(version, 3)), {
        "assigned_partitions": [{"topic": t, "partitions": sorted(ps)}
                                for t, ps in sorted(partitions.items()) if ps],
        "user_data": None})


__all__ = ["ASSIGNMENT", "CONSUMER_PROTOCOL_TYPE", "SUBSCRIPTION", "MalformedSubscriptionError",
           "assignment_bytes", "parse_assignment", "parse_subscription", "subscribed_topics"]
