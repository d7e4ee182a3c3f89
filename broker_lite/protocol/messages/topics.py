"""Topic administration: CreateTopics (key 19), DeleteTopics (key 20), CreatePartitions (key 37).
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, UUID, A, F, Request, Response

CREATE_TOPICS_REQUEST = Request("CreateTopicsRequest", 19, "0-7", "5+", [
    A("Topics", "CreatableTopic", "0+", [
        F("Name", STRING, "0+"),
        F("NumPartitions", INT32, "0+"),
        F("ReplicationFactor", INT16, "0+"),
        A("Assignments", "CreatableReplicaAssignment", "0+", [
            F("PartitionIndex", INT32, "0+"),
            A("BrokerIds", INT32, "0+"),
        ]),
        A("Configs", "CreatableTopicConfig", "0+", [
            F("Name", STRING, "0+"),
            F("Value", STRING, "0+", nullable="0+"),
        ]),
    ]),
    F("timeoutMs", INT32, "0+", default=60000),
    F("validateOnly", BOOL, "1+"),
])

CREATE_TOPICS_RESPONSE = Response("CreateTopicsResponse", 19, "0-7", "5+", [
    F("ThrottleTimeMs", INT32, "2+", ignorable=True),
    A("Topics", "CreatableTopicResult", "0+", [
        F("Name", STRING, "0+"),
        F("TopicId", UUID, "7+", ignorable=True),
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "1+", nullable="0+", ignorable=True),
        F("TopicConfigErrorCode", INT16, "5+", ignorable=True, tag=0, tagged="5+"),
        F("NumPartitions", INT32, "5+", default=-1, ignorable=True),
        F("ReplicationFactor", INT16, "5+", default=-1, ignorable=True),
        A("Configs", "CreatableTopicConfigs", "5+", [
            F("Name", STRING, "5+"),
            F("Value", STRING, "5+", nullable="5+"),
            F("ReadOnly", BOOL, "5+"),
            F("ConfigSource", INT8, "5+", default=-1, ignorable=True),
            F("IsSensitive", BOOL, "5+"),
        ], nullable="5+", ignorable=True),
    ]),
])

DELETE_TOPICS_REQUEST = Request("DeleteTopicsRequest", 20, "0-6", "4+", [
    A("Topics", "DeleteTopicState", "6+", [
        F("Name", STRING, "6+", nullable="6+", default=None),
        F("TopicId", UUID, "6+"),
    ]),
    A("TopicNames", STRING, "0-5", ignorable=True),
    F("TimeoutMs", INT32, "0+"),
])

DELETE_TOPICS_RESPONSE = Response("DeleteTopicsResponse", 20, "0-6", "4+", [
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    A("Responses", "DeletableTopicResult", "0+", [
        F("Name", STRING, "0+", nullable="6+"),
        F("TopicId", UUID, "6+", ignorable=True),
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "5+", nullable="5+", default=None, ignorable=True),
    ]),
])

CREATE_PARTITIONS_REQUEST = Request("CreatePartitionsRequest", 37, "0-3", "2+", [
    A("Topics", "CreatePartitionsTopic", "0+", [
        F("Name", STRING, "0+"),
        F("Count", INT32, "0+"),
        A("Assignments", "CreatePartitionsAssignment", "0+", [
            A("BrokerIds", INT32, "0+"),
        ], nullable="0+"),
    ]),
    F("TimeoutMs", INT32, "0+"),
    F("ValidateOnly", BOOL, "0+"),
])

CREATE_PARTITIONS_RESPONSE = Response("CreatePartitionsResponse", 37, "0-3", "2+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Results", "CreatePartitionsTopicResult", "0+", [
        F("Name", STRING, "0+"),
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    ]),
])


__all__ = [
    "CREATE_PARTITIONS_REQUEST",
    "CREATE_PARTITIONS_RESPONSE",
    "CREATE_TOPICS_REQUEST",
    "CREATE_TOPICS_RESPONSE",
    "DELETE_TOPICS_REQUEST",
    "DELETE_TOPICS_RESPONSE",
]
