"""What brokers and tools ask the controller about replicas: ControlledShutdown (key 7, a
broker moving its leadership away before it stops), ElectLeaders (key 43, preferred or unclean
leader elections, KIP-183/460) and the partition reassignments of KIP-455,
AlterPartitionReassignments (key 45) and ListPartitionReassignments (key 46).
"""

from ..schema import INT8, INT16, INT32, INT64, STRING, A, F, Request, Response

CONTROLLED_SHUTDOWN_REQUEST = Request("ControlledShutdownRequest", 7, "0-3", "3+", [
    F("BrokerId", INT32, "0+"),
    F("BrokerEpoch", INT64, "2+", default=-1, ignorable=True),
])

CONTROLLED_SHUTDOWN_RESPONSE = Response("ControlledShutdownResponse", 7, "0-3", "3+", [
    F("ErrorCode", INT16, "0+"),
    A("RemainingPartitions", "RemainingPartition", "0+", [
        F("TopicName", STRING, "0+"),
        F("PartitionIndex", INT32, "0+"),
    ]),
])

ELECT_LEADERS_REQUEST = Request("ElectLeadersRequest", 43, "0-2", "2+", [
    F("ElectionType", INT8, "1+"),
    A("TopicPartitions", "TopicPartitions", "0+", [
        F("Topic", STRING, "0+"),
        A("Partitions", INT32, "0+"),
    ], nullable="0+"),
    F("TimeoutMs", INT32, "0+", default=60000),
])

ELECT_LEADERS_RESPONSE = Response("ElectLeadersResponse", 43, "0-2", "2+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "1+", ignorable=False),
    A("ReplicaElectionResults", "ReplicaElectionResult", "0+", [
        F("Topic", STRING, "0+"),
        A("PartitionResult", "PartitionResult", "0+", [
            F("PartitionId", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+"),
        ]),
    ]),
])

ALTER_PARTITION_REASSIGNMENTS_REQUEST = Request("AlterPartitionReassignmentsRequest", 45, "0",
                                                "0+", [
    F("TimeoutMs", INT32, "0+", default=60000),
    A("Topics", "ReassignableTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "ReassignablePartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            A("Replicas", INT32, "0+", nullable="0+"),
        ]),
    ]),
])

ALTER_PARTITION_REASSIGNMENTS_RESPONSE = Response("AlterPartitionReassignmentsResponse", 45,
                                                  "0", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+"),
    A("Responses", "ReassignableTopicResponse", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "ReassignablePartitionResponse", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+"),
        ]),
    ]),
])

LIST_PARTITION_REASSIGNMENTS_REQUEST = Request("ListPartitionReassignmentsRequest", 46, "0",
                                               "0+", [
    F("TimeoutMs", INT32, "0+", default=60000),
    A("Topics", "ListPartitionReassignmentsTopics", "0+", [
        F("Name", STRING, "0+"),
        A("PartitionIndexes", INT32, "0+"),
    ], nullable="0+"),
])

LIST_PARTITION_REASSIGNMENTS_RESPONSE = Response("ListPartitionReassignmentsResponse", 46,
                                                 "0", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+"),
    A("Topics", "OngoingTopicReassignment", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "OngoingPartitionReassignment", "0+", [
            F("PartitionIndex", INT32, "0+"),
            A("Replicas", INT32, "0+"),
            A("AddingReplicas", INT32, "0+"),
            A("RemovingReplicas", INT32, "0+"),
        ]),
    ]),
])

__all__ = [
    "ALTER_PARTITION_REASSIGNMENTS_REQUEST",
    "ALTER_PARTITION_REASSIGNMENTS_RESPONSE",
    "CONTROLLED_SHUTDOWN_REQUEST",
    "CONTROLLED_SHUTDOWN_RESPONSE",
    "ELECT_LEADERS_REQUEST",
    "ELECT_LEADERS_RESPONSE",
    "LIST_PARTITION_REASSIGNMENTS_REQUEST",
    "LIST_PARTITION_REASSIGNMENTS_RESPONSE",
]
