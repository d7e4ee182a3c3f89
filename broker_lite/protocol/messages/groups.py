"""The classic group protocol: FindCoordinator (10), JoinGroup (11), Heartbeat (12),
LeaveGroup (13), SyncGroup (14), DescribeGroups (15), ListGroups (16), DeleteGroups (42).
"""

from ..schema import BOOL, BYTES, INT8, INT16, INT32, STRING, A, F, Request, Response

FIND_COORDINATOR_REQUEST = Request("FindCoordinatorRequest", 10, "0-6", "3+", [
    F("Key", STRING, "0-3"),
    F("KeyType", INT8, "1+"),
    A("CoordinatorKeys", STRING, "4+"),
])

FIND_COORDINATOR_RESPONSE = Response("FindCoordinatorResponse", 10, "0-6", "3+", [
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    F("ErrorCode", INT16, "0-3"),
    F("ErrorMessage", STRING, "1-3", nullable="1-3", ignorable=True),
    F("NodeId", INT32, "0-3"),
    F("Host", STRING, "0-3"),
    F("Port", INT32, "0-3"),
    A("Coordinators", "Coordinator", "4+", [
        F("Key", STRING, "4+"),
        F("NodeId", INT32, "4+"),
        F("Host", STRING, "4+"),
        F("Port", INT32, "4+"),
        F("ErrorCode", INT16, "4+"),
        F("ErrorMessage", STRING, "4+", nullable="4+", ignorable=True),
    ]),
])

JOIN_GROUP_REQUEST = Request("JoinGroupRequest", 11, "0-9", "6+", [
    F("GroupId", STRING, "0+"),
    F("SessionTimeoutMs", INT32, "0+"),
    F("RebalanceTimeoutMs", INT32, "1+", default=-1, ignorable=True),
    F("MemberId", STRING, "0+"),
    F("GroupInstanceId", STRING, "5+", nullable="5+", default=None),
    F("ProtocolType", STRING, "0+"),
    A("Protocols", "JoinGroupRequestProtocol", "0+", [
        F("Name", STRING, "0+"),
        F("Metadata", BYTES, "0+"),
    ]),
    F("Reason", STRING, "8+", nullable="8+", default=None, ignorable=True),
])

JOIN_GROUP_RESPONSE = Response("JoinGroupResponse", 11, "0-9", "6+", [
    F("ThrottleTimeMs", INT32, "2+", ignorable=True),
    F("ErrorCode", INT16, "0+"),
    F("GenerationId", INT32, "0+", default=-1),
    F("ProtocolType", STRING, "7+", nullable="7+", default=None, ignorable=True),
    F("ProtocolName", STRING, "0+", nullable="7+"),
    F("Leader", STRING, "0+"),
    F("SkipAssignment", BOOL, "9+"),
    F("MemberId", STRING, "0+"),
    A("Members", "JoinGroupResponseMember", "0+", [
        F("MemberId", STRING, "0+"),
        F("GroupInstanceId", STRING, "5+", nullable="5+", default=None, ignorable=True),
        F("Metadata", BYTES, "0+"),
    ]),
])

SYNC_GROUP_REQUEST = Request("SyncGroupRequest", 14, "0-5", "4+", [
    F("GroupId", STRING, "0+"),
    F("GenerationId", INT32, "0+"),
    F("MemberId", STRING, "0+"),
    F("GroupInstanceId", STRING, "3+", nullable="3+", default=None),
    F("ProtocolType", STRING, "5+", nullable="5+", default=None, ignorable=True),
    F("ProtocolName", STRING, "5+", nullable="5+", default=None, ignorable=True),
    A("Assignments", "SyncGroupRequestAssignment", "0+", [
        F("MemberId", STRING, "0+"),
        F("Assignment", BYTES, "0+"),
    ]),
])

SYNC_GROUP_RESPONSE = Response("SyncGroupResponse", 14, "0-5", "4+", [
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    F("ErrorCode", INT16, "0+"),
    F("ProtocolType", STRING, "5+", nullable="5+", default=None, ignorable=True),
    F("ProtocolName", STRING, "5+", nullable="5+", default=None, ignorable=True),
    F("Assignment", BYTES, "0+"),
])

HEARTBEAT_REQUEST = Request("HeartbeatRequest", 12, "0-4", "4+", [
    F("GroupId", STRING, "0+"),
    F("GenerationId", INT32, "0+"),
    F("MemberId", STRING, "0+"),
    F("GroupInstanceId", STRING, "3+", nullable="3+", default=None),
])

HEARTBEAT_RESPONSE = Response("HeartbeatResponse", 12, "0-4", "4+", [
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    F("ErrorCode", INT16, "0+"),
])

LEAVE_GROUP_REQUEST = Request("LeaveGroupRequest", 13, "0-5", "4+", [
    F("GroupId", STRING, "0+"),
    F("MemberId", STRING, "0-2"),
    A("Members", "MemberIdentity", "3+", [
        F("MemberId", STRING, "3+"),
        F("GroupInstanceId", STRING, "3+", nullable="3+", default=None),
        F("Reason", STRING, "5+", nullable="5+", default=None, ignorable=True),
    ]),
])

LEAVE_GROUP_RESPONSE = Response("LeaveGroupResponse", 13, "0-5", "4+", [
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    F("ErrorCode", INT16, "0+"),
    A("Members", "MemberResponse", "3+", [
        F("MemberId", STRING, "3+"),
        F("GroupInstanceId", STRING, "3+", nullable="3+"),
        F("ErrorCode", INT16, "3+"),
    ]),
])

LIST_GROUPS_REQUEST = Request("ListGroupsRequest", 16, "0-5", "3+", [
    A("StatesFilter", STRING, "4+"),
    A("TypesFilter", STRING, "5+"),
])

LIST_GROUPS_RESPONSE = Response("ListGroupsResponse", 16, "0-5", "3+", [
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    F("ErrorCode", INT16, "0+"),
    A("Groups", "ListedGroup", "0+", [
        F("GroupId", STRING, "0+"),
        F("ProtocolType", STRING, "0+"),
        F("GroupState", STRING, "4+", ignorable=True),
        F("GroupType", STRING, "5+", ignorable=True),
    ]),
])

DESCRIBE_GROUPS_REQUEST = Request("DescribeGroupsRequest", 15, "0-5", "5+", [
    A("Groups", STRING, "0+"),
    F("IncludeAuthorizedOperations", BOOL, "3+"),
])

DESCRIBE_GROUPS_RESPONSE = Response("DescribeGroupsResponse", 15, "0-5", "5+", [
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    A("Groups", "DescribedGroup", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("GroupId", STRING, "0+"),
        F("GroupState", STRING, "0+"),
        F("ProtocolType", STRING, "0+"),
        F("ProtocolData", STRING, "0+"),
        A("Members", "DescribedGroupMember", "0+", [
            F("MemberId", STRING, "0+"),
            F("GroupInstanceId", STRING, "4+", nullable="4+", default=None, ignorable=True),
            F("ClientId", STRING, "0+"),
            F("ClientHost", STRING, "0+"),
            F("MemberMetadata", BYTES, "0+"),
            F("MemberAssignment", BYTES, "0+"),
        ]),
        F("AuthorizedOperations", INT32, "3+", default=-2147483648),
    ]),
])

DELETE_GROUPS_REQUEST = Request("DeleteGroupsRequest", 42, "0-2", "2+", [
    A("GroupsNames", STRING, "0+"),
])

DELETE_GROUPS_RESPONSE = Response("DeleteGroupsResponse", 42, "0-2", "2+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Results", "DeletableGroupResult", "0+", [
        F("GroupId", STRING, "0+"),
        F("ErrorCode", INT16, "0+"),
    ]),
])


__all__ = [
    "DELETE_GROUPS_REQUEST",
    "DELETE_GROUPS_RESPONSE",
    "DESCRIBE_GROUPS_REQUEST",
    "DESCRIBE_GROUPS_RESPONSE",
    "FIND_COORDINATOR_REQUEST",
    "FIND_COORDINATOR_RESPONSE",
    "HEARTBEAT_REQUEST",
    "HEARTBEAT_RESPONSE",
    "JOIN_GROUP_REQUEST",
    "JOIN_GROUP_RESPONSE",
    "LEAVE_GROUP_REQUEST",
    "LEAVE_GROUP_RESPONSE",
    "LIST_GROUPS_REQUEST",
    "LIST_GROUPS_RESPONSE",
    "SYNC_GROUP_REQUEST",
    "SYNC_GROUP_RESPONSE",
]
