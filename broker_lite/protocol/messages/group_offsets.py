"""Committed group offsets: OffsetCommit (key 8), OffsetFetch (key 9), OffsetDelete (key 47).
"""

from ..schema import BOOL, INT16, INT32, INT64, STRING, A, F, Request, Response

OFFSET_COMMIT_REQUEST = Request("OffsetCommitRequest", 8, "0-9", "8+", [
    F("GroupId", STRING, "0+"),
    F("GenerationIdOrMemberEpoch", INT32, "1+", default=-1, ignorable=True),
    F("MemberId", STRING, "1+", ignorable=True),
    F("GroupInstanceId", STRING, "7+", nullable="7+", default=None),
    F("RetentionTimeMs", INT64, "2-4", default=-1, ignorable=True),
    A("Topics", "OffsetCommitRequestTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "OffsetCommitRequestPartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("CommittedOffset", INT64, "0+"),
            F("CommittedLeaderEpoch", INT32, "6+", default=-1, ignorable=True),
            F("CommitTimestamp", INT64, "1", default=-1),
            F("CommittedMetadata", STRING, "0+", nullable="0+"),
        ]),
    ]),
])

OFFSET_COMMIT_RESPONSE = Response("OffsetCommitResponse", 8, "0-9", "8+", [
    F("ThrottleTimeMs", INT32, "3+", ignorable=True),
    A("Topics", "OffsetCommitResponseTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "OffsetCommitResponsePartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
        ]),
    ]),
])

OFFSET_FETCH_REQUEST = Request("OffsetFetchRequest", 9, "0-9", "6+", [
    F("GroupId", STRING, "0-7"),
    A("Topics", "OffsetFetchRequestTopic", "0-7", [
        F("Name", STRING, "0-7"),
        A("PartitionIndexes", INT32, "0-7"),
    ], nullable="2-7"),
    A("Groups", "OffsetFetchRequestGroup", "8+", [
        F("GroupId", STRING, "8+"),
        F("MemberId", STRING, "9+", nullable="9+", default=None, ignorable=True),
        F("MemberEpoch", INT32, "9+", default=-1, ignorable=True),
        A("Topics", "OffsetFetchRequestTopics", "8+", [
            F("Name", STRING, "8+"),
            A("PartitionIndexes", INT32, "8+"),
        ], nullable="8+"),
    ]),
    F("RequireStable", BOOL, "7+"),
])

OFFSET_FETCH_RESPONSE = Response("OffsetFetchResponse", 9, "0-9", "6+", [
    F("ThrottleTimeMs", INT32, "3+", ignorable=True),
    A("Topics", "OffsetFetchResponseTopic", "0-7", [
        F("Name", STRING, "0-7"),
        A("Partitions", "OffsetFetchResponsePartition", "0-7", [
            F("PartitionIndex", INT32, "0-7"),
            F("CommittedOffset", INT64, "0-7"),
            F("CommittedLeaderEpoch", INT32, "5-7", default=-1, ignorable=True),
            F("Metadata", STRING, "0-7", nullable="0-7"),
            F("ErrorCode", INT16, "0-7"),
        ]),
    ]),
    F("ErrorCode", INT16, "2-7", ignorable=True),
    A("Groups", "OffsetFetchResponseGroup", "8+", [
        F("GroupId", STRING, "8+"),
        A("Topics", "OffsetFetchResponseTopics", "8+", [
            F("Name", STRING, "8+"),
            A("Partitions", "OffsetFetchResponsePartitions", "8+", [
                F("PartitionIndex", INT32, "8+"),
                F("CommittedOffset", INT64, "8+"),
                F("CommittedLeaderEpoch", INT32, "8+", default=-1, ignorable=True),
                F("Metadata", STRING, "8+", nullable="8+"),
                F("ErrorCode", INT16, "8+"),
            ]),
        ]),
        F("ErrorCode", INT16, "8+"),
    ]),
])

OFFSET_DELETE_REQUEST = Request("OffsetDeleteRequest", 47, "0", "none", [
    F("GroupId", STRING, "0+"),
    A("Topics", "OffsetDeleteRequestTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "OffsetDeleteRequestPartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
        ]),
    ]),
])

OFFSET_DELETE_RESPONSE = Response("OffsetDeleteResponse", 47, "0", "none", [
    F("ErrorCode", INT16, "0+"),
    F("ThrottleTimeMs", INT32, "0+", ignorable=True),
    A("Topics", "OffsetDeleteResponseTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "OffsetDeleteResponsePartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
        ]),
    ]),
])


__all__ = [
    "OFFSET_COMMIT_REQUEST",
    "OFFSET_COMMIT_RESPONSE",
    "OFFSET_DELETE_REQUEST",
    "OFFSET_DELETE_RESPONSE",
    "OFFSET_FETCH_REQUEST",
    "OFFSET_FETCH_RESPONSE",
]
