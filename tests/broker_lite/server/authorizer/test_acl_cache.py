"""Kafka's AclAuthorizer decisions, as tables of ACLs and requests: matching by principal, host,
operation, LITERAL, wildcard and PREFIXED patterns; deny wins; the operations that imply
Describe and DescribeConfigs; super users; allow.everyone.if.no.acl.found; and
authorizeByResourceType (KIP-679), with the cases of Kafka's BaseAuthorizerTest."""

import pytest

from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
    ResourcePatternFilter,
)
from broker_lite.server.authorizer.cache import AclCache, VersionedAcls

Op, T, G = AclOperation, ResourceType.TOPIC, ResourceType.GROUP
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
ALICE, BOB = "User:alice", "User:bob"
HOST = "10.0.0.1"


def acl(principal, operation, permission=ALLOW, host="*"):
    return AccessControlEntry(principal, host, operation, permission)


def cache_with(acls, **settings) -> AclCache:
    """``acls``: {(type, name, pattern type): [entries]}."""
    cache = AclCache(**settings)
    for (kind, name, pattern_type), entries in acls.items():
        cache.update(ResourcePattern(kind, name, pattern_type), VersionedAcls(frozenset(entries)))
    return cache


# (ACLs, principal, host, operation, resource type, name, allowed)
CASES = [
    ({}, ALICE, HOST, Op.READ, T, "events", False),  # no ACL: denied
    ({(T, "events", LIT): [acl(ALICE, Op.READ)]}, ALICE, HOST, Op.READ, T, "events", True),
    ({(T, "events", LIT): [acl(ALICE, Op.READ)]}, BOB, HOST, Op.READ, T, "events", False),
    ({(T, "events", LIT): [acl(ALICE, Op.READ)]}, ALICE, HOST, Op.WRITE, T, "events", False),
    ({(T, "events", LIT): [acl(ALICE, Op.READ)]}, ALICE, HOST, Op.READ, T, "events2", False),
    ({(T, "events", LIT): [acl(ALICE, Op.READ)]}, ALICE, HOST, Op.READ, G, "events", False),
    # hosts
    ({(T, "events", LIT): [acl(ALICE, Op.READ, host=HOST)]}, ALICE, HOST, Op.READ, T, "events",
     True),
    ({(T, "events", LIT): [acl(ALICE, Op.READ, host=HOST)]}, ALICE, "10.0.0.2", Op.READ, T,
     "events", False),
    # everyone, every topic, ALL
    ({(T, "events", LIT): [acl("User:*", Op.READ)]}, BOB, HOST, Op.READ, T, "events", True),
    ({(T, "*", LIT): [acl(ALICE, Op.READ)]}, ALICE, HOST, Op.READ, T, "anything", True),
    ({(T, "events", LIT): [acl(ALICE, Op.ALL)]}, ALICE, HOST, Op.ALTER_CONFIGS, T, "events", True),
    # PREFIXED: names starting with the prefix, the prefix itself too
    ({(T, "events-", PRE): [acl(ALICE, Op.WRITE)]}, ALICE, HOST, Op.WRITE, T, "events-eu", True),
    ({(T, "events-", PRE): [acl(ALICE, Op.WRITE)]}, ALICE, HOST, Op.WRITE, T, "events-", True),
    ({(T, "events-", PRE): [acl(ALICE, Op.WRITE)]}, ALICE, HOST, Op.WRITE, T, "events", False),
    ({(T, "events-", PRE): [acl(ALICE, Op.WRITE)]}, ALICE, HOST, Op.WRITE, T, "xevents-eu", False),
    # deny wins, from any pattern
    ({(T, "events", LIT): [acl("User:*", Op.READ), acl(ALICE, Op.READ, DENY)]}, ALICE, HOST,
     Op.READ, T, "events", False),
    ({(T, "events", LIT): [acl("User:*", Op.READ), acl(ALICE, Op.READ, DENY)]}, BOB, HOST,
     Op.READ, T, "events", True),
    ({(T, "events", LIT): [acl(ALICE, Op.READ)], (T, "ev", PRE): [acl(ALICE, Op.READ, DENY)]},
     ALICE, HOST, Op.READ, T, "events", False),
    ({(T, "events", LIT): [acl(ALICE, Op.READ)], (T, "*", LIT): [acl("User:*", Op.ALL, DENY)]},
     ALICE, HOST, Op.READ, T, "events", False),
    ({(T, "events", LIT): [acl(ALICE, Op.ALL), acl(ALICE, Op.READ, DENY, host=HOST)]}, ALICE,
     "10.0.0.2", Op.READ, T, "events", True),  # the deny is for another host
    # implied operations: Read, Write, Delete, Alter imply Describe; AlterConfigs DescribeConfigs
    *[({(T, "events", LIT): [acl(ALICE, op)]}, ALICE, HOST, Op.DESCRIBE, T, "events", True)
      for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER)],
    ({(T, "events", LIT): [acl(ALICE, Op.CREATE)]}, ALICE, HOST, Op.DESCRIBE, T, "events", False),
    ({(T, "events", LIT): [acl(ALICE, Op.DESCRIBE)]}, ALICE, HOST, Op.READ, T, "events", False),
    ({(T, "events", LIT): [acl(ALICE, Op.ALTER_CONFIGS)]}, ALICE, HOST, Op.DESCRIBE_CONFIGS, T,
     "events", True),
    ({(T, "events", LIT): [acl(ALICE, Op.READ), acl(ALICE, Op.DESCRIBE, DENY)]}, ALICE, HOST,
     Op.DESCRIBE, T, "events", False),  # implication never beats a deny
    ({(T, "events", LIT): [acl(ALICE, Op.ALL), acl(ALICE, Op.READ, DENY)]}, ALICE, HOST,
     Op.DESCRIBE, T, "events", True),  # a denied Read does not deny Describe
]


@pytest.mark.parametrize("acls,principal,host,operation,kind,name,allowed", CASES)
def test_authorize(acls, principal, host, operation, kind, name, allowed):
    assert cache_with(acls).authorize(principal, host, operation, kind, name) is allowed


def test_super_users_are_allowed_everything_denied_or_not():
    cache = cache_with({(T, "*", LIT): [acl("User:*", Op.ALL, DENY)]},
                       super_users={"User:admin"})
    assert cache.authorize("User:admin", HOST, Op.WRITE, T, "events")
    assert cache.authorize("User:admin", HOST, Op.CLUSTER_ACTION, ResourceType.CLUSTER,
                           "kafka-cluster")
    assert not cache.authorize("User:administrator", HOST, Op.WRITE, T, "events")


def test_allow_everyone_if_no_acl_found_only_where_no_acl_applies():
    cache = cache_with({(T, "secret", LIT): [acl(ALICE, Op.READ)]},
                       allow_everyone_if_no_acl_found=True)
    assert cache.authorize(BOB, HOST, Op.WRITE, T, "public")
    assert cache.authorize(BOB, HOST, Op.READ, G, "any-group")
    assert not cache.authorize(BOB, HOST, Op.READ, T, "secret")  # ACLs apply: Bob has none
    assert cache.authorize(ALICE, HOST, Op.READ, T, "secret")


def test_an_update_without_entries_forgets_the_pattern():
    cache = cache_with({(T, "events", LIT): [acl(ALICE, Op.READ)]})
    pattern = ResourcePattern(T, "events", LIT)
    cache.update(pattern, VersionedAcls(frozenset(), 3))
    assert cache.get(pattern) is None and cache.patterns() == []
    assert not cache.authorize(ALICE, HOST, Op.READ, T, "events")


def test_bindings_by_filter():
    cache = cache_with({(T, "events", LIT): [acl(ALICE, Op.READ), acl(BOB, Op.WRITE)],
                        (T, "ev", PRE): [acl(BOB, Op.READ)],
                        (G, "etl", LIT): [acl(ALICE, Op.READ)]})
    applying = AclBindingFilter(ResourcePatternFilter(T, "events", PatternType.MATCH))
    assert [(b.pattern.name, b.entry.principal) for b in cache.bindings(applying)] == \
        [("ev", BOB), ("events", ALICE), ("events", BOB)]  # in pattern order
    alices = AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY),
                              AccessControlEntryFilter(principal=ALICE))
    assert cache.bindings(alices) == [
        AclBinding(ResourcePattern(T, "events", LIT), acl(ALICE, Op.READ)),
        AclBinding(ResourcePattern(G, "etl", LIT), acl(ALICE, Op.READ))]


# -- authorizeByResourceType -----------------------------------------------------------------


def by_type(acls, operation, kind, principal=ALICE, host=HOST, **settings) -> bool:
    return cache_with(acls, **settings).authorize_by_resource_type(principal, host, operation,
                                                                   kind)


def test_by_resource_type_needs_one_allowed_resource():
    assert not by_type({}, Op.WRITE, T)
    assert by_type({}, Op.WRITE, T, allow_everyone_if_no_acl_found=True)
    assert by_type({(T, "events", LIT): [acl(ALICE, Op.WRITE)]}, Op.WRITE, T)
    assert not by_type({(T, "events", LIT): [acl(ALICE, Op.WRITE)]}, Op.READ, T)
    assert not by_type({(T, "events", LIT): [acl(ALICE, Op.WRITE)]}, Op.WRITE, G)
    # no implication here: Write on a topic is no Describe on some topic
    assert not by_type({(T, "events", LIT): [acl(ALICE, Op.WRITE)]}, Op.DESCRIBE, T)


def test_by_resource_type_deny_takes_precedence():
    assert not by_type({(T, "a", LIT): [acl(ALICE, Op.WRITE), acl(ALICE, Op.WRITE, DENY)]},
                       Op.WRITE, T)
    # an unrelated deny elsewhere does not take the allowed resource away
    assert by_type({(T, "a", LIT): [acl(ALICE, Op.WRITE)], (T, "b", LIT): [
        acl(ALICE, Op.WRITE, DENY)]}, Op.WRITE, T)


def test_by_resource_type_prefixed_deny_dominates():
    allow, deny = acl(ALICE, Op.READ), acl(ALICE, Op.READ, DENY)
    acls = {(G, "abcde", PRE): [allow]}
    assert by_type(acls, Op.READ, G)
    acls[(G, "abcd", PRE)] = [deny]
    assert not by_type(acls, Op.READ, G)
    acls[(G, "abc", PRE)] = [allow]
    assert by_type(acls, Op.READ, G)
    acls[(G, "a", PRE)] = [deny]
    assert not by_type(acls, Op.READ, G)
    acls[(G, "ab", PRE)] = [allow]
    assert not by_type(acls, Op.READ, G)


def test_by_resource_type_wildcard_deny_dominates_even_allow_everyone():
    allow, deny = acl(ALICE, Op.WRITE), acl(ALICE, Op.WRITE, DENY)
    acls = {(G, "hello", PRE): [allow]}
    assert by_type(acls, Op.WRITE, G)
    acls[(G, "*", LIT)] = [deny, allow]
    assert not by_type(acls, Op.WRITE, G)
    assert not by_type(acls, Op.WRITE, G, allow_everyone_if_no_acl_found=True)
    assert by_type(acls, Op.WRITE, G, super_users={ALICE})


def test_by_resource_type_all_operations_hosts_and_principals():
    assert by_type({(T, "a", LIT): [acl(ALICE, Op.WRITE, DENY), acl(ALICE, Op.ALL)]}, Op.READ, T)
    assert not by_type({(T, "a", LIT): [acl(ALICE, Op.ALL, DENY), acl(ALICE, Op.ALL)]}, Op.READ, T)
    assert by_type({(T, "a", LIT): [acl("User:*", Op.READ, host=HOST)]}, Op.READ, T)
    assert not by_type({(T, "a", LIT): [acl("User:*", Op.READ, host=HOST)]}, Op.READ, T,
                       host="10.0.0.2")
    assert not by_type({(T, "a", LIT): [acl(ALICE, Op.READ), acl("User:*", Op.READ, DENY)]},
                       Op.READ, T)
