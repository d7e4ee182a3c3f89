"""The ACLs a broker holds in memory and Kafka's decisions over them (the in-memory half of
Kafka's ``kafka.security.authorizer.AclAuthorizer``), sans I/O.

The cache maps each resource pattern to its entries and the version of the znode they were
read from (:class:`VersionedAcls`; -1 when there is no znode). A request for operation ``op``
on resource ``name`` of a type, by ``principal`` from ``host``, is decided as Kafka's
``authorizeAction`` decides it:

1. a super user (``super.users``) is allowed everything;
2. the ACLs that apply are those of the LITERAL pattern ``name``, the LITERAL wildcard ``*``,
   and every PREFIXED pattern that ``name`` starts with (the whole name included);
3. none apply: allowed only with ``allow.everyone.if.no.acl.found``;
4. a DENY for the principal (or ``User:*``), the host (or ``*``) and ``op`` (or ``All``)
   denies, whatever else allows: deny wins;
5. else an ALLOW in the same way allows, where allowing Read, Write, Delete or Alter also
   allows Describe, and AlterConfigs also DescribeConfigs; otherwise denied.

:meth:`AclCache.authorize_by_resource_type` is Kafka's ``authorizeByResourceType`` (KIP-679):
whether the principal may do ``op`` on at least one resource of the type (an idempotent
producer may, when it may write some topic).

Updates replace whole dictionaries (copy on write), so a decision always reads one consistent
view while another thread changes the ACLs.

>>> from broker_lite.security.acl import AclOperation as Op, AclPermissionType as P
>>> cache = AclCache(super_users={"User:admin"})
>>> cache.update(ResourcePattern(ResourceType.TOPIC, "events-", PatternType.PREFIXED),
...              VersionedAcls(frozenset({AccessControlEntry("User:*", "*", Op.READ, P.ALLOW)})))
>>> cache.authorize("User:bob", "10.0.0.1", Op.DESCRIBE, ResourceType.TOPIC, "events-eu")
True
>>> cache.authorize("User:bob", "10.0.0.1", Op.WRITE, ResourceType.TOPIC, "events-eu")
False
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import (
    IMPLYING_OPERATIONS,
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
)

NO_ZNODE = -1


class VersionedAcls(NamedTuple):
    """The entries of one resource pattern and the version of its znode (:data:`NO_ZNODE`
    when it has none)."""

    entries: frozenset[AccessControlEntry]
    version: int = NO_ZNODE


NO_ACLS = VersionedAcls(frozenset())
_Key = tuple[ResourceType, str]


def _applies(entry: AccessControlEntry, principal: str, host: str, operation: AclOperation,
             permission: AclPermissionType) -> bool:
    return entry.permission_type == permission \
        and entry.principal in (principal, WILDCARD_PRINCIPAL) \
        and entry.operation in (operation, AclOperation.ALL) \
        and entry.host in (host, WILDCARD_HOST)


def _prefixes(name: str) -> Iterator[str]:
    """Every prefix of ``name``, the whole name included."""
    return (name[:i] for i in range(1, len(name) + 1))


class AclCache:
    """The ACLs by resource pattern, and the decisions of Kafka's AclAuthorizer over them.

    Parameters
    ----------
    super_users : iterable of str
        Principals (``User:admin``) allowed everything (``super.users``).
    allow_everyone_if_no_acl_found : bool
        Allow what no ACL speaks of (``allow.everyone.if.no.acl.found``).
    """

    def __init__(self, super_users: Iterable[str] = (), allow_everyone_if_no_acl_found=False):
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._literal: dict[_Key, VersionedAcls] = {}
        self._prefixed: dict[_Key, VersionedAcls] = {}

    # -- contents --------------------------------------------------------------------------------

    def _store(self, pattern_type: PatternType) -> dict[_Key, VersionedAcls]:
        return self._literal if pattern_type == PatternType.LITERAL else self._prefixed

    def get(self, pattern: ResourcePattern) -> VersionedAcls | None:
        """The pattern's ACLs, None when the cache holds none for it."""
        return self._store(pattern.pattern_type).get((pattern.resource_type, pattern.name))

    def update(self, pattern: ResourcePattern, acls: VersionedAcls) -> None:
        """Hold ``acls`` for ``pattern`` (none: forget the pattern)."""
        key = (pattern.resource_type, pattern.name)
        store = dict(self._store(pattern.pattern_type))
        if acls.entries:
            store[key] = acls
        else:
            store.pop(key, None)
        if pattern.pattern_type == PatternType.LITERAL:
            self._literal = store
        else:
            self._prefixed = store

    def replace_all(self, acls: dict[ResourcePattern, VersionedAcls]) -> None:
        """Hold exactly ``acls`` (a full load)."""
        stores: dict[PatternType, dict[tuple, VersionedAcls]] = {PatternType.LITERAL: {},
                                                                 PatternType.PREFIXED: {}}
        for pattern, versioned in acls.items():
            if versioned.entries:
                stores[pattern.pattern_type][(pattern.resource_type, pattern.name)] = versioned
        self._literal, self._prefixed = stores[PatternType.LITERAL], stores[PatternType.PREFIXED]

    def patterns(self) -> list[ResourcePattern]:
        return [ResourcePattern(kind, name, pattern_type)
                for pattern_type, store in ((PatternType.LITERAL, self._literal),
                                            (PatternType.PREFIXED, self._prefixed))
                for kind, name in store]

    def bindings(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        """Every binding ``binding_filter`` matches, in pattern order."""
        found = []
        for pattern in sorted(self.patterns()):
            acls = self.get(pattern)
            for entry in sorted(acls.entries if acls is not None else ()):
                binding = AclBinding(pattern, entry)
                if binding_filter.matches(binding):
                    found.append(binding)
        return found

    # -- decisions -------------------------------------------------------------------------------

    def is_super_user(self, principal: str) -> bool:
        return principal in self.super_users

    def matching_entries(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        """The entries that apply to the resource: its PREFIXED patterns, the LITERAL
        wildcard, and its LITERAL pattern (Kafka's ``matchingAcls``)."""
        literal, prefixed = self._literal, self._prefixed
        found: list[AccessControlEntry] = []
        for prefix in _prefixes(name):
            acls = prefixed.get((resource_type, prefix))
            if acls is not None:
                found.extend(acls.entries)
        for key in ((resource_type, WILDCARD_RESOURCE), (resource_type, name)):
            acls = literal.get(key)
            if acls is not None:
                found.extend(acls.entries)
        return found

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool:
        """Whether ``principal`` from ``host`` may do ``operation`` on the resource."""
        if self.is_super_user(principal):
            return True
        entries = self.matching_entries(resource_type, name)
        if not entries:
            return self.allow_everyone_if_no_acl_found
        if any(_applies(e, principal, host, operation, AclPermissionType.DENY) for e in entries):
            return False
        allowing = IMPLYING_OPERATIONS.get(operation, (operation,))
        return any(_applies(e, principal, host, op, AclPermissionType.ALLOW)
                   for op in allowing for e in entries)

    def _names(self, pattern_type: PatternType, resource_type: ResourceType, principal: str,
               host: str, operation: AclOperation, permission: AclPermissionType) -> set[str]:
        """The names of ``pattern_type`` patterns of the type with an entry that applies."""
        return {name for (kind, name), acls in self._store(pattern_type).items()
                if kind == resource_type and
                any(_applies(e, principal, host, operation, permission) for e in acls.entries)}

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """Whether ``principal`` may do ``operation`` on at least one resource of the type
        that no DENY takes away (Kafka's ``authorizeByResourceType``; no implied operations)."""
        if self.is_super_user(principal):
            return True
        args = (resource_type, principal, host, operation)
        deny_literals = self._names(PatternType.LITERAL, *args, AclPermissionType.DENY)
        if WILDCARD_RESOURCE in deny_literals:
            return False
        if self.allow_everyone_if_no_acl_found:
            return True
        deny_prefixes = self._names(PatternType.PREFIXED, *args, AclPermissionType.DENY)
        allow_literals = self._names(PatternType.LITERAL, *args, AclPermissionType.ALLOW)
        allow_prefixes = self._names(PatternType.PREFIXED, *args, AclPermissionType.ALLOW)
        if not deny_literals and not deny_prefixes:
            return bool(allow_literals or allow_prefixes)

        def denied_by_prefix(name: str) -> bool:
            return any(prefix in deny_prefixes for prefix in _prefixes(name))

        return any(not denied_by_prefix(p) for p in allow_prefixes) or any(
            name == WILDCARD_RESOURCE or (name not in deny_literals and not denied_by_prefix(name))
            for name in allow_literals)
