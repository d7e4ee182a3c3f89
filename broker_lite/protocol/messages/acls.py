"""ACLs: DescribeAcls (key 29), CreateAcls (30) and DeleteAcls (31), versions 0-3 (KIP-140; v1
adds resource pattern types, KIP-290; v2 is flexible; v3 allows the User resource type).

Resource types, pattern types, operations and permission types travel as the int8 codes of
Kafka's ``ResourceType``, ``PatternType``, ``AclOperation`` and ``AclPermissionType``
(:mod:`broker_lite.security.acl`). Filters leave a field open with null (names, principals,
hosts) or the code ANY (1).
"""

from ..schema import INT8, INT16, INT32, STRING, A, F, Request, Response

# An ACL filter: DescribeAcls' request, each of DeleteAcls' filters.
_FILTER_FIELDS = [
    F("ResourceTypeFilter", INT8, "0+"),
    F("ResourceNameFilter", STRING, "0+", nullable="0+"),
    F("PatternTypeFilter", INT8, "1+", default=3),
    F("PrincipalFilter", STRING, "0+", nullable="0+"),
    F("HostFilter", STRING, "0+", nullable="0+"),
    F("Operation", INT8, "0+"),
    F("PermissionType", INT8, "0+"),
]

DESCRIBE_ACLS_REQUEST = Request("DescribeAclsRequest", 29, "0-3", "2+", _FILTER_FIELDS)

DESCRIBE_ACLS_RESPONSE = Response("DescribeAclsResponse", 29, "0-3", "2+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+"),
    A("Resources", "DescribeAclsResource", "0+", [
        F("ResourceType", INT8, "0+"),
        F("ResourceName", STRING, "0+"),
        F("PatternType", INT8, "1+", default=3),
        A("Acls", "AclDescription", "0+", [
            F("Principal", STRING, "0+"),
            F("Host", STRING, "0+"),
            F("Operation", INT8, "0+"),
            F("PermissionType", INT8, "0+"),
        ]),
    ]),
])

CREATE_ACLS_REQUEST = Request("CreateAclsRequest", 30, "0-3", "2+", [
    A("Creations", "AclCreation", "0+", [
        F("ResourceType", INT8, "0+"),
        F("ResourceName", STRING, "0+"),
        F("ResourcePatternType", INT8, "1+", default=3),
        F("Principal", STRING, "0+"),
        F("Host", STRING, "0+"),
        F("Operation", INT8, "0+"),
        F("PermissionType", INT8, "0+"),
    ]),
])

CREATE_ACLS_RESPONSE = Response("CreateAclsResponse", 30, "0-3", "2+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Results", "AclCreationResult", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+"),
    ]),
])

DELETE_ACLS_REQUEST = Request("DeleteAclsRequest", 31, "0-3", "2+", [
    A("Filters", "DeleteAclsFilter", "0+", _FILTER_FIELDS),
])

DELETE_ACLS_RESPONSE = Response("DeleteAclsResponse", 31, "0-3", "2+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("FilterResults", "DeleteAclsFilterResult", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+"),
        A("MatchingAcls", "DeleteAclsMatchingAcl", "0+", [
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+"),
            F("ResourceType", INT8, "0+"),
            F("ResourceName", STRING, "0+"),
            F("PatternType", INT8, "1+", default=3),
            F("Principal", STRING, "0+"),
            F("Host", STRING, "0+"),
            F("Operation", INT8, "0+"),
            F("PermissionType", INT8, "0+"),
        ]),
    ]),
])


__all__ = [
    "DESCRIBE_ACLS_REQUEST",
    "DESCRIBE_ACLS_RESPONSE",
    "CREATE_ACLS_REQUEST",
    "CREATE_ACLS_RESPONSE",
    "DELETE_ACLS_REQUEST",
    "DELETE_ACLS_RESPONSE",
]
