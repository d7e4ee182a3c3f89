"""Share groups (KIP-932, Kafka 4.2): ShareGroupHeartbeat (76), ShareGroupDescribe (77),
ShareFetch (78), ShareAcknowledge (79), and the admin's DescribeShareGroupOffsets (90),
AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92).

Version 0 of the first four was Kafka 4.0's early access and was removed in 4.1; version 1 is
KIP-932's stable version (the only one librdkafka sends); ShareFetch and ShareAcknowledge
version 2 (Kafka 4.2, KIP-1206 and KIP-1222) add the acquire mode and RENEW acknowledgements.
An acknowledgement type is one int8 per offset of a batch, or one for the whole batch:
0 GAP, 1 ACCEPT, 2 RELEASE, 3 REJECT, 4 RENEW.
"""

from ..schema import (
    BOOL,
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

SHARE_GROUP_HEARTBEAT_REQUEST = Request("ShareGroupHeartbeatRequest", 76, "1", "0+", [
    F("GroupId", STRING, "0+"),
    F("MemberId", STRING, "0+"),
    F("MemberEpoch", INT32, "0+"),  # 0: join; -1: leave
    F("RackId", STRING, "0+", nullable="0+", default=None),
    A("SubscribedTopicNames", STRING, "0+", nullable="0+"),  # null: unchanged
])

SHARE_GROUP_HEARTBEAT_RESPONSE = Response("ShareGroupHeartbeatResponse", 76, "1", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    F("MemberId", STRING, "0+", nullable="0+", default=None),
    F("MemberEpoch", INT32, "0+"),
    F("HeartbeatIntervalMs", INT32, "0+"),
    S("Assignment", "Assignment", "0+", [  # null: not changed since the last answer
        A("TopicPartitions", "TopicPartitions", "0+", [
            F("TopicId", UUID, "0+"),
            A("Partitions", INT32, "0+"),
        ]),
    ], nullable="0+", default=None),
])

SHARE_GROUP_DESCRIBE_REQUEST = Request("ShareGroupDescribeRequest", 77, "1", "0+", [
    A("GroupIds", STRING, "0+"),
    F("IncludeAuthorizedOperations", BOOL, "0+"),
])

SHARE_GROUP_DESCRIBE_RESPONSE = Response("ShareGroupDescribeResponse", 77, "1", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Groups", "DescribedGroup", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
        F("GroupId", STRING, "0+"),
        F("GroupState", STRING, "0+"),
        F("GroupEpoch", INT32, "0+"),
        F("AssignmentEpoch", INT32, "0+"),
        F("AssignorName", STRING, "0+"),
        A("Members", "Member", "0+", [
            F("MemberId", STRING, "0+"),
            F("RackId", STRING, "0+", nullable="0+", default=None),
            F("MemberEpoch", INT32, "0+"),
            F("ClientId", STRING, "0+"),
            F("ClientHost", STRING, "0+"),
            A("SubscribedTopicNames", STRING, "0+"),
            S("Assignment", "Assignment", "0+", [
                A("TopicPartitions", "TopicPartitions", "0+", [
                    F("TopicId", UUID, "0+"),
                    F("TopicName", STRING, "0+"),
                    A("Partitions", INT32, "0+"),
                ]),
            ]),
        ]),
        F("AuthorizedOperations", INT32, "0+", default=-2147483648),
    ]),
])

_ACKNOWLEDGEMENT_BATCHES = [
    F("FirstOffset", INT64, "0+"),
    F("LastOffset", INT64, "0+"),
    A("AcknowledgeTypes", INT8, "0+"),
]

SHARE_FETCH_REQUEST = Request("ShareFetchRequest", 78, "1-2", "0+", [
    F("GroupId", STRING, "0+", nullable="0+", default=None),
    F("MemberId", STRING, "0+", nullable="0+"),
    F("ShareSessionEpoch", INT32, "0+"),  # 0: open a session; -1: close it
    F("MaxWaitMs", INT32, "0+"),
    F("MinBytes", INT32, "0+"),
    F("MaxBytes", INT32, "0+", default=0x7FFFFFFF),
    F("MaxRecords", INT32, "1+"),
    F("BatchSize", INT32, "1+"),
    F("ShareAcquireMode", INT8, "2+"),  # 0 batch-optimized, 1 record-limit
    A("Topics", "FetchTopic", "0+", [
        F("TopicId", UUID, "0+"),
        A("Partitions", "FetchPartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            A("AcknowledgementBatches", "AcknowledgementBatch", "0+",
              _ACKNOWLEDGEMENT_BATCHES),
        ]),
    ]),
    A("ForgottenTopicsData", "ForgottenTopic", "0+", [
        F("TopicId", UUID, "0+"),
        A("Partitions", INT32, "0+"),
    ]),
])

_LEADER = [F("LeaderId", INT32, "0+"), F("LeaderEpoch", INT32, "0+")]

_NODE_ENDPOINTS = [
    F("NodeId", INT32, "0+"),
    F("Host", STRING, "0+"),
    F("Port", INT32, "0+"),
    F("Rack", STRING, "0+", nullable="0+", default=None),
]

SHARE_FETCH_RESPONSE = Response("ShareFetchResponse", 78, "1-2", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    F("AcquisitionLockTimeoutMs", INT32, "1+"),
    A("Responses", "ShareFetchableTopicResponse", "0+", [
        F("TopicId", UUID, "0+"),
        A("Partitions", "PartitionData", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
            F("AcknowledgeErrorCode", INT16, "0+"),
            F("AcknowledgeErrorMessage", STRING, "0+", nullable="0+", default=None),
            S("CurrentLeader", "LeaderIdAndEpoch", "0+", _LEADER),
            F("Records", RECORDS, "0+", nullable="0"),
            A("AcquiredRecords", "AcquiredRecords", "0+", [
                F("FirstOffset", INT64, "0+"),
                F("LastOffset", INT64, "0+"),
                F("DeliveryCount", INT16, "0+"),
            ]),
        ]),
    ]),
    A("NodeEndpoints", "NodeEndpoint", "0+", _NODE_ENDPOINTS),
])

SHARE_ACKNOWLEDGE_REQUEST = Request("ShareAcknowledgeRequest", 79, "1-2", "0+", [
    F("GroupId", STRING, "0+", nullable="0+", default=None),
    F("MemberId", STRING, "0+", nullable="0+"),
    F("ShareSessionEpoch", INT32, "0+"),
    F("IsRenewAck", BOOL, "2+", default=False),
    A("Topics", "AcknowledgeTopic", "0+", [
        F("TopicId", UUID, "0+"),
        A("Partitions", "AcknowledgePartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            A("AcknowledgementBatches", "AcknowledgementBatch", "0+",
              _ACKNOWLEDGEMENT_BATCHES),
        ]),
    ]),
])

SHARE_ACKNOWLEDGE_RESPONSE = Response("ShareAcknowledgeResponse", 79, "1-2", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    F("AcquisitionLockTimeoutMs", INT32, "2+", ignorable=True),
    A("Responses", "ShareAcknowledgeTopicResponse", "0+", [
        F("TopicId", UUID, "0+"),
        A("Partitions", "PartitionData", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
            S("CurrentLeader", "LeaderIdAndEpoch", "0+", _LEADER),
        ]),
    ]),
    A("NodeEndpoints", "NodeEndpoint", "0+", _NODE_ENDPOINTS),
])

DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST = Request("DescribeShareGroupOffsetsRequest", 90, "0", "0+", [
    A("Groups", "DescribeShareGroupOffsetsRequestGroup", "0+", [
        F("GroupId", STRING, "0+"),
        A("Topics", "DescribeShareGroupOffsetsRequestTopic", "0+", [  # null: every topic
            F("TopicName", STRING, "0+"),
            A("Partitions", INT32, "0+"),
        ], nullable="0+"),
    ]),
])

DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE = Response("DescribeShareGroupOffsetsResponse", 90, "0",
                                                 "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Groups", "DescribeShareGroupOffsetsResponseGroup", "0+", [
        F("GroupId", STRING, "0+"),
        A("Topics", "DescribeShareGroupOffsetsResponseTopic", "0+", [
            F("TopicName", STRING, "0+"),
            F("TopicId", UUID, "0+"),
            A("Partitions", "DescribeShareGroupOffsetsResponsePartition", "0+", [
                F("PartitionIndex", INT32, "0+"),
                F("StartOffset", INT64, "0+"),
                F("LeaderEpoch", INT32, "0+"),
                F("ErrorCode", INT16, "0+"),
                F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
            ]),
        ]),
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    ]),
])

ALTER_SHARE_GROUP_OFFSETS_REQUEST = Request("AlterShareGroupOffsetsRequest", 91, "0", "0+", [
    F("GroupId", STRING, "0+"),
    A("Topics", "AlterShareGroupOffsetsRequestTopic", "0+", [
        F("TopicName", STRING, "0+"),
        A("Partitions", "AlterShareGroupOffsetsRequestPartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("StartOffset", INT64, "0+"),
        ]),
    ]),
])

ALTER_SHARE_GROUP_OFFSETS_RESPONSE = Response("AlterShareGroupOffsetsResponse", 91, "0", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    A("Responses", "AlterShareGroupOffsetsResponseTopic", "0+", [
        F("TopicName", STRING, "0+"),
        F("TopicId", UUID, "0+"),
        A("Partitions", "AlterShareGroupOffsetsResponsePartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
        ]),
    ]),
])

DELETE_SHARE_GROUP_OFFSETS_REQUEST = Request("DeleteShareGroupOffsetsRequest", 92, "0", "0+", [
    F("GroupId", STRING, "0+"),
    A("Topics", "DeleteShareGroupOffsetsRequestTopic", "0+", [
        F("TopicName", STRING, "0+"),
    ]),
])

DELETE_SHARE_GROUP_OFFSETS_RESPONSE = Response("DeleteShareGroupOffsetsResponse", 92, "0", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    A("Responses", "DeleteShareGroupOffsetsResponseTopic", "0+", [
        F("TopicName", STRING, "0+"),
        F("TopicId", UUID, "0+"),
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    ]),
])

__all__ = [
    "ALTER_SHARE_GROUP_OFFSETS_REQUEST",
    "ALTER_SHARE_GROUP_OFFSETS_RESPONSE",
    "DELETE_SHARE_GROUP_OFFSETS_REQUEST",
    "DELETE_SHARE_GROUP_OFFSETS_RESPONSE",
    "DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST",
    "DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE",
    "SHARE_ACKNOWLEDGE_REQUEST",
    "SHARE_ACKNOWLEDGE_RESPONSE",
    "SHARE_FETCH_REQUEST",
    "SHARE_FETCH_RESPONSE",
    "SHARE_GROUP_DESCRIBE_REQUEST",
    "SHARE_GROUP_DESCRIBE_RESPONSE",
    "SHARE_GROUP_HEARTBEAT_REQUEST",
    "SHARE_GROUP_HEARTBEAT_RESPONSE",
]
