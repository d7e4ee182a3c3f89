"""Offset lookups: ListOffsets (key 2) and OffsetForLeaderEpoch (key 23).
"""

from ..schema import INT8, INT16, INT32, INT64, STRING, A, F, Request, Response

LIST_OFFSETS_REQUEST = Request("ListOffsetsRequest", 2, "0-10", "6+", [
    F("ReplicaId", INT32, "0+"),
    F("IsolationLevel", INT8, "2+"),
    A("Topics", "ListOffsetsTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "ListOffsetsPartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("CurrentLeaderEpoch", INT32, "4+", default=-1, ignorable=True),
            F("Timestamp", INT64, "0+"),
            F("MaxNumOffsets", INT32, "0", default=1),
        ]),
    ]),
    F("TimeoutMs", INT32, "10+", ignorable=True),
])

LIST_OFFSETS_RESPONSE = Response("ListOffsetsResponse", 2, "0-10", "6+", [
    F("ThrottleTimeMs", INT32, "2+", ignorable=True),
    A("Topics", "ListOffsetsTopicResponse", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "ListOffsetsPartitionResponse", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            A("OldStyleOffsets", INT64, "0"),
            F("Timestamp", INT64, "1+", default=-1),
            F("Offset", INT64, "1+", default=-1),
            F("LeaderEpoch", INT32, "4+", default=-1),
        ]),
    ]),
])

OFFSET_FOR_LEADER_EPOCH_REQUEST = Request("OffsetForLeaderEpochRequest", 23, "0-4", "4+", [
    F("ReplicaId", INT32, "3+", default=-2, ignorable=True),
    A("Topics", "OffsetForLeaderTopic", "0+", [
        F("Topic", STRING, "0+"),
        A("Partitions", "OffsetForLeaderPartition", "0+", [
            F("Partition", INT32, "0+"),
            F("CurrentLeaderEpoch", INT32, "2+", default=-1, ignorable=True),
            F("LeaderEpoch", INT32, "0+"),
        ]),
    ]),
])

OFFSET_FOR_LEADER_EPOCH_RESPONSE = Response("OffsetForLeaderEpochResponse", 23, "0-4", "4+", [
    F("ThrottleTimeMs", INT32, "2+", ignorable=True),
    A("Topics", "OffsetForLeaderTopicResult", "0+", [
        F("Topic", STRING, "0+"),
        A("Partitions", "EpochEndOffset", "0+", [
            F("ErrorCode", INT16, "0+"),
            F("Partition", INT32, "0+"),
            F("LeaderEpoch", INT32, "1+", default=-1, ignorable=True),
            F("EndOffset", INT64, "0+", default=-1),
        ]),
    ]),
])


__all__ = [
    "LIST_OFFSETS_REQUEST",
    "LIST_OFFSETS_RESPONSE",
    "OFFSET_FOR_LEADER_EPOCH_REQUEST",
    "OFFSET_FOR_LEADER_EPOCH_RESPONSE",
]
