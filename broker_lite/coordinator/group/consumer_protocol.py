"""The topics a consumer subscribes to, read from its JoinGroup metadata.

Groups of protocol type ``consumer`` carry a ConsumerProtocolSubscription per member. Every
version of it starts the same way, which is all the coordinator reads (as Kafka's does), so
later versions parse too::

    version   int16     0 and up
    topics    [string]  int32 count, then int16-length UTF-8 names
    ...                 user data, owned partitions, generation, rack: not read

The coordinator needs the topics for two rules only: a stable consumer group's offsets of
subscribed topics never expire, and OffsetDelete refuses them (GROUP_SUBSCRIBED_TO_TOPIC).
Metadata it cannot read makes the subscription unknown, never an error for the group.

>>> import struct
>>> data = struct.pack(">hih6s", 3, 1, 6, b"events") + b"rest of a v3 subscription"
>>> sorted(subscribed_topics(data))
['events']
"""

from broker_lite.protocol import ProtocolError, Reader

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
