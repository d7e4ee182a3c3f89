"""Fetch (key 1): record sets read from partitions.

On the response side each partition's ``records`` may be a file region that the network layer
sends with ``sendfile``; the codec only writes its length and emits it as a chunk of its own.
"""

from broker_lite.common.vocabulary import INT32_MAX

from ..schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    A,
    F,
    Request,
    Response,
    S,
)

FETCH_REQUEST = Request("FetchRequest", 1, "0-17", "12+", [
    F("ClusterId", STRING, "12+", nullable="12+", default=None, ignorable=True,
      tag=0, tagged="12+"),
    F("ReplicaId", INT32, "0-14", default=-1),
    S("ReplicaState", "ReplicaState", "15+", [
        F("ReplicaId", INT32, "15+", default=-1),
        F("ReplicaEpoch", INT64, "15+", default=-1),
    ], tag=1, tagged="15+"),
    F("MaxWaitMs", INT32, "0+"),
    F("MinBytes", INT32, "0+"),
    F("MaxBytes", INT32, "3+", default=INT32_MAX, ignorable=True),
    F("IsolationLevel", INT8, "4+", ignorable=True),
    F("SessionId", INT32, "7+", ignorable=True),
    F("SessionEpoch", INT32, "7+", default=-1, ignorable=True),
    A("Topics", "FetchTopic", "0+", [
        F("Topic", STRING, "0-12", ignorable=True),
        F("TopicId", UUID, "13+", ignorable=True),
        A("Partitions", "FetchPartition", "0+", [
            F("Partition", INT32, "0+"),
            F("CurrentLeaderEpoch", INT32, "9+", default=-1, ignorable=True),
            F("FetchOffset", INT64, "0+"),
            F("LastFetchedEpoch", INT32, "12+", default=-1),
            F("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
            F("PartitionMaxBytes", INT32, "0+"),
            F("ReplicaDirectoryId", UUID, "17+", ignorable=True, tag=0, tagged="17+"),
        ]),
    ]),
    A("ForgottenTopicsData", "ForgottenTopic", "7+", [
        F("Topic", STRING, "7-12", ignorable=True),
        F("TopicId", UUID, "13+", ignorable=True),
        A("Partitions", INT32, "7+"),
    ]),
    F("RackId", STRING, "11+", ignorable=True),
])

FETCH_RESPONSE = Response("FetchResponse", 1, "0-17", "12+", [
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    F("ErrorCode", INT16, "7+", ignorable=True),
    F("SessionId", INT32, "7+"),
    A("Responses", "FetchableTopicResponse", "0+", [
        F("Topic", STRING, "0-12", ignorable=True),
        F("TopicId", UUID, "13+", ignorable=True),
        A("Partitions", "PartitionData", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("HighWatermark", INT64, "0+"),
            F("LastStableOffset", INT64, "4+", default=-1, ignorable=True),
            F("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
            S("DivergingEpoch", "EpochEndOffset", "12+", [
                F("Epoch", INT32, "12+", default=-1),
                F("EndOffset", INT64, "12+", default=-1),
            ], tag=0, tagged="12+"),
            S("CurrentLeader", "LeaderIdAndEpoch", "12+", [
                F("LeaderId", INT32, "12+", default=-1),
                F("LeaderEpoch", INT32, "12+", default=-1),
            ], tag=1, tagged="12+"),
            S("SnapshotId", "SnapshotId", "12+", [
                F("EndOffset", INT64, "0+", default=-1),
                F("Epoch", INT32, "0+", default=-1),
            ], tag=2, tagged="12+"),
            A("AbortedTransactions", "AbortedTransaction", "4+", [
                F("ProducerId", INT64, "4+"),
                F("FirstOffset", INT64, "4+"),
            ], nullable="4+", ignorable=True),
            F("PreferredReadReplica", INT32, "11+", default=-1),
            F("Records", RECORDS, "0+", nullable="0+"),
        ]),
    ]),
    A("NodeEndpoints", "NodeEndpoint", "16+", [
        F("NodeId", INT32, "16+"),
        F("Host", STRING, "16+"),
        F("Port", INT32, "16+"),
        F("Rack", STRING, "16+", nullable="16+", default=None),
    ], tag=0, tagged="16+"),
])


__all__ = [
    "FETCH_REQUEST",
    "FETCH_RESPONSE",
]
