"""Cluster metadata: Metadata (key 3) and DescribeCluster (key 60).
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, UUID, A, F, Request, Response

METADATA_REQUEST = Request("MetadataRequest", 3, "0-12", "9+", [
    A("Topics", "MetadataRequestTopic", "0+", [
        F("TopicId", UUID, "10+", ignorable=True),
        F("Name", STRING, "0+", nullable="10+"),
    ], nullable="1+"),
    F("AllowAutoTopicCreation", BOOL, "4+", default=True),
    F("IncludeClusterAuthorizedOperations", BOOL, "8-10"),
    F("IncludeTopicAuthorizedOperations", BOOL, "8+"),
])

METADATA_RESPONSE = Response("MetadataResponse", 3, "0-12", "9+", [
    F("ThrottleTimeMs", INT32, "3+", ignorable=True),
    A("Brokers", "MetadataResponseBroker", "0+", [
        F("NodeId", INT32, "0+"),
        F("Host", STRING, "0+"),
        F("Port", INT32, "0+"),
        F("Rack", STRING, "1+", nullable="1+", default=None, ignorable=True),
    ]),
    F("ClusterId", STRING, "2+", nullable="2+", default=None, ignorable=True),
    F("ControllerId", INT32, "1+", default=-1, ignorable=True),
    A("Topics", "MetadataResponseTopic", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("Name", STRING, "0+", nullable="12+"),
        F("TopicId", UUID, "10+", ignorable=True),
        F("IsInternal", BOOL, "1+", ignorable=True),
        A("Partitions", "MetadataResponsePartition", "0+", [
            F("ErrorCode", INT16, "0+"),
            F("PartitionIndex", INT32, "0+"),
            F("LeaderId", INT32, "0+"),
            F("LeaderEpoch", INT32, "7+", default=-1, ignorable=True),
            A("ReplicaNodes", INT32, "0+"),
            A("IsrNodes", INT32, "0+"),
            A("OfflineReplicas", INT32, "5+", ignorable=True),
        ]),
        F("TopicAuthorizedOperations", INT32, "8+", default=-2147483648),
    ]),
    F("ClusterAuthorizedOperations", INT32, "8-10", default=-2147483648),
])

DESCRIBE_CLUSTER_REQUEST = Request("DescribeClusterRequest", 60, "0-1", "0+", [
    F("IncludeClusterAuthorizedOperations", BOOL, "0+"),
    F("EndpointType", INT8, "1+", default=1),
])

DESCRIBE_CLUSTER_RESPONSE = Response("DescribeClusterResponse", 60, "0-1", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    F("EndpointType", INT8, "1+", default=1),
    F("ClusterId", STRING, "0+"),
    F("ControllerId", INT32, "0+", default=-1),
    A("Brokers", "DescribeClusterBroker", "0+", [
        F("BrokerId", INT32, "0+"),
        F("Host", STRING, "0+"),
        F("Port", INT32, "0+"),
        F("Rack", STRING, "0+", nullable="0+", default=None),
    ]),
    F("ClusterAuthorizedOperations", INT32, "0+", default=-2147483648),
])


__all__ = [
    "DESCRIBE_CLUSTER_REQUEST",
    "DESCRIBE_CLUSTER_RESPONSE",
    "METADATA_REQUEST",
    "METADATA_RESPONSE",
]
