"""The consumer group protocol of KIP-848: ConsumerGroupHeartbeat (68) and
ConsumerGroupDescribe (69), at the versions Kafka 4.2 serves.

- ConsumerGroupHeartbeat v0-1: v1 adds ``SubscribedTopicRegex`` (a regular expression matched by
  the broker) and has the member generate its own member id (KIP-1082); the response is the same
  in both.
- ConsumerGroupDescribe v0-1: v1 adds each member's ``MemberType`` (KIP-1099: -1 unknown,
  0 classic, 1 consumer).

Assignments travel by topic id; a null field of the heartbeat request means "unchanged since
the last heartbeat".
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, UUID, A, F, Field, Request, Response, S

CONSUMER_GROUP_HEARTBEAT_REQUEST = Request("ConsumerGroupHeartbeatRequest", 68, "0-1", "0+", [
    F("GroupId", STRING, "0+"),
    F("MemberId", STRING, "0+"),
    F("MemberEpoch", INT32, "0+"),
    F("InstanceId", STRING, "0+", nullable="0+", default=None),
    F("RackId", STRING, "0+", nullable="0+", default=None),
    F("RebalanceTimeoutMs", INT32, "0+", default=-1),
    A("SubscribedTopicNames", STRING, "0+", nullable="0+"),
    F("SubscribedTopicRegex", STRING, "1+", nullable="1+", default=None),
    F("ServerAssignor", STRING, "0+", nullable="0+", default=None),
    A("TopicPartitions", "TopicPartitions", "0+", [
        F("TopicId", UUID, "0+"),
        A("Partitions", INT32, "0+"),
    ], nullable="0+"),
])

CONSUMER_GROUP_HEARTBEAT_RESPONSE = Response("ConsumerGroupHeartbeatResponse", 68, "0-1", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    F("MemberId", STRING, "0+", nullable="0+", default=None),
    F("MemberEpoch", INT32, "0+"),
    F("HeartbeatIntervalMs", INT32, "0+"),
    S("Assignment", "Assignment", "0+", [
        A("TopicPartitions", "TopicPartitions", "0+", [
            F("TopicId", UUID, "0+"),
            A("Partitions", INT32, "0+"),
        ]),
    ], nullable="0+", default=None),
])

CONSUMER_GROUP_DESCRIBE_REQUEST = Request("ConsumerGroupDescribeRequest", 69, "0-1", "0+", [
    A("GroupIds", STRING, "0+"),
    F("IncludeAuthorizedOperations", BOOL, "0+"),
])


def _assignment(name: str) -> Field:
    return S(name, "Assignment", "0+", [
        A("TopicPartitions", "TopicPartitions", "0+", [
            F("TopicId", UUID, "0+"),
            F("TopicName", STRING, "0+"),
            A("Partitions", INT32, "0+"),
        ]),
    ])


CONSUMER_GROUP_DESCRIBE_RESPONSE = Response("ConsumerGroupDescribeResponse", 69, "0-1", "0+", [
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
            F("InstanceId", STRING, "0+", nullable="0+", default=None),
            F("RackId", STRING, "0+", nullable="0+", default=None),
            F("MemberEpoch", INT32, "0+"),
            F("ClientId", STRING, "0+"),
            F("ClientHost", STRING, "0+"),
            A("SubscribedTopicNames", STRING, "0+"),
            F("SubscribedTopicRegex", STRING, "0+", nullable="0+", default=None),
            _assignment("Assignment"),
            _assignment("TargetAssignment"),
            F("MemberType", INT8, "1+", default=-1),
        ]),
        F("AuthorizedOperations", INT32, "0+", default=-2147483648),
    ]),
])


__all__ = [
    "CONSUMER_GROUP_DESCRIBE_REQUEST",
    "CONSUMER_GROUP_DESCRIBE_RESPONSE",
    "CONSUMER_GROUP_HEARTBEAT_REQUEST",
    "CONSUMER_GROUP_HEARTBEAT_RESPONSE",
]
