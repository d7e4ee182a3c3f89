"""Kafka's ACL model: names as SecurityUtils reads and writes them, principals, the rules of
patterns and entries, and how filters select bindings (ResourcePatternFilter.matches and
AccessControlEntryFilter.matches, case by case)."""

import pytest

from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import (
    ANY_BINDING,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    InvalidAclError,
    ResourcePattern,
    ResourcePatternFilter,
    operation_name,
    parse_operation,
    parse_pattern_type,
    parse_permission_type,
    parse_principal,
    parse_resource_type,
    resource_type_name,
)

T, G = ResourceType.TOPIC, ResourceType.GROUP
LIT, PRE, ANY, MATCH = PatternType.LITERAL, PatternType.PREFIXED, PatternType.ANY, PatternType.MATCH
READ, ALLOW, DENY = AclOperation.READ, AclPermissionType.ALLOW, AclPermissionType.DENY


@pytest.mark.parametrize("text,expected", [
    ("Read", AclOperation.READ), ("read", AclOperation.READ), ("READ", AclOperation.READ),
    ("ClusterAction", AclOperation.CLUSTER_ACTION), ("CLUSTERACTION", AclOperation.CLUSTER_ACTION),
    ("CLUSTER_ACTION", AclOperation.UNKNOWN),  # Kafka's SecurityUtils reads no underscores
    ("IdempotentWrite", AclOperation.IDEMPOTENT_WRITE), ("All", AclOperation.ALL),
    ("Reed", AclOperation.UNKNOWN),
])
def test_operation_names(text, expected):
    assert parse_operation(text) == expected


def test_names_round_trip_in_pascal_case():
    for resource_type in ResourceType:
        assert parse_resource_type(resource_type_name(resource_type)) == resource_type
    for operation in AclOperation:
        assert parse_operation(operation_name(operation)) == operation
    assert resource_type_name(ResourceType.TRANSACTIONAL_ID) == "TransactionalId"
    assert parse_permission_type("deny") == DENY
    assert parse_permission_type("Maybe") == AclPermissionType.UNKNOWN
    assert parse_pattern_type("prefixed") == PRE
    assert parse_pattern_type("Suffixed") == PatternType.UNKNOWN


def test_principals_split_at_the_first_colon():
    assert parse_principal("User:CN=broker,O=kpy:x") == ("User", "CN=broker,O=kpy:x")
    assert parse_principal("Group:") == ("Group", "")
    with pytest.raises(InvalidAclError, match="principalType:principalName but got alice"):
        parse_principal("alice")


def test_filter_values_are_not_acls():
    with pytest.raises(InvalidAclError, match="resourceType must not be ANY"):
        ResourcePattern(ResourceType.ANY, "x", LIT)
    with pytest.raises(InvalidAclError, match="patternType must not be MATCH"):
        ResourcePattern(T, "x", MATCH)
    with pytest.raises(InvalidAclError, match="operation must not be ANY"):
        AccessControlEntry("User:a", "*", AclOperation.ANY, ALLOW)
    with pytest.raises(InvalidAclError, match="permissionType must not be ANY"):
        AccessControlEntry("User:a", "*", READ, AclPermissionType.ANY)


def test_strings_are_kafkas():
    binding = AclBinding(ResourcePattern(G, "etl-", PRE),
                         AccessControlEntry("User:*", "10.0.0.1", AclOperation.DESCRIBE, DENY))
    assert str(binding) == (
        "(pattern=ResourcePattern(resourceType=GROUP, name=etl-, patternType=PREFIXED), "
        "entry=(principal=User:*, host=10.0.0.1, operation=DESCRIBE, permissionType=DENY))")
    assert str(ANY_BINDING) == (
        "(patternFilter=ResourcePattern(resourceType=ANY, name=<any>, patternType=ANY), "
        "entryFilter=(principal=<any>, host=<any>, operation=ANY, permissionType=ANY))")


# (filter type, filter name, filter pattern type, pattern type, pattern name, matches)
PATTERN_CASES = [
    (T, "events", LIT, T, "events", LIT, True),
    (T, "events", LIT, T, "*", LIT, False),        # LITERAL filters match exactly
    (T, "events", ANY, T, "events", PRE, True),    # ANY: any pattern type, the exact name
    (T, "events", ANY, T, "event", PRE, False),
    (T, "events", MATCH, T, "*", LIT, True),       # MATCH: what applies to "events"
    (T, "events", MATCH, T, "ev", PRE, True),
    (T, "events", MATCH, T, "events", PRE, True),
    (T, "events", MATCH, T, "events-eu", PRE, False),
    (T, "events", MATCH, T, "other", LIT, False),
    (T, None, MATCH, G, "events", LIT, False),     # another resource type
    (ResourceType.ANY, None, ANY, G, "x", PRE, True),
    (T, None, PRE, T, "x", LIT, False),            # a specific pattern type, another one
]


@pytest.mark.parametrize("ftype,fname,fpattern,ptype,pname,ppattern,matches", PATTERN_CASES)
def test_resource_pattern_filters(ftype, fname, fpattern, ptype, pname, ppattern, matches):
    assert ResourcePatternFilter(ftype, fname, fpattern).matches(
        ResourcePattern(ptype, pname, ppattern)) is matches


def test_entry_filters_and_matches_at_most_one():
    entry = AccessControlEntry("User:alice", "*", READ, ALLOW)
    assert AccessControlEntryFilter().matches(entry)
    assert AccessControlEntryFilter("User:alice", "*", READ, ALLOW).matches(entry)
    assert not AccessControlEntryFilter(principal="User:bob").matches(entry)
    assert not AccessControlEntryFilter(permission_type=DENY).matches(entry)
    assert ResourcePatternFilter(T, "a", ANY).matches_at_most_one
    assert not ResourcePatternFilter(T, "a", MATCH).matches_at_most_one
    assert not ResourcePatternFilter(T, None, LIT).matches_at_most_one
    assert AclBindingFilter(ResourcePatternFilter(ResourceType.UNKNOWN, None, ANY)).is_unknown
