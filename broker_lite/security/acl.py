"""Kafka's ACL model, sans I/O: what an access control list says and which requests it concerns
(Kafka's ``org.apache.kafka.common.acl`` and ``org.apache.kafka.common.resource``).

An ACL binds a :class:`ResourcePattern` (a resource type, a name, and how the name matches:
``LITERAL``, the name itself or ``*`` for every name; ``PREFIXED``, every name starting with
it) to an :class:`AccessControlEntry` (a principal ``Type:name`` or ``User:*``, a host address or
``*``, an operation, ALLOW or DENY). Filters (:class:`AclBindingFilter`) select bindings for
DescribeAcls and DeleteAcls: any field may be left open (None, ``ANY``), and the pattern type
``MATCH`` selects every pattern that would apply to a named resource.

The codes are those of the wire (CreateAcls, DescribeAcls, DeleteAcls); the names are Kafka's
(``SecurityUtils``): PascalCase in ZooKeeper and in the tools (``Topic``, ``ClusterAction``,
``Allow``), parsed case-insensitively, upper case in ``toString`` (``TOPIC``, ``CLUSTER_ACTION``).

>>> pattern = ResourcePattern(ResourceType.TOPIC, "events", PatternType.LITERAL)
>>> entry = AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
>>> print(pattern, entry)
ResourcePattern(resourceType=TOPIC, name=events, patternType=LITERAL) \
(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
>>> ResourcePatternFilter(ResourceType.TOPIC, "events-eu", PatternType.MATCH).matches(
...     ResourcePattern(ResourceType.TOPIC, "events", PatternType.PREFIXED))
True
>>> parse_operation("clusteraction"), operation_name(AclOperation.IDEMPOTENT_WRITE)
(<AclOperation.CLUSTER_ACTION: 9>, 'IdempotentWrite')
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import (
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    member_of,
)

WILDCARD_RESOURCE = "*"  # a literal name matching every resource of its type
WILDCARD_HOST = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the one name of the cluster resource


class InvalidAclError(ValueError):
    """An ACL, filter or name that Kafka's model cannot hold (an ANY operation in an ACL, a
    principal without a type, an unknown name); the message says which."""


def resource_type_of(code: int) -> ResourceType:
    return member_of(ResourceType, code)


def pattern_type_of(code: int) -> PatternType:
    return member_of(PatternType, code)


def operation_of(code: int) -> AclOperation:
    return member_of(AclOperation, code)


def permission_type_of(code: int) -> AclPermissionType:
    return member_of(AclPermissionType, code)


# -- names (Kafka's SecurityUtils) ------------------------------------------------------------


def pascal_name(member: enum.Enum) -> str:
    """Kafka's PascalCase name: ``TRANSACTIONAL_ID`` -> ``TransactionalId``."""
    return "".join(part.capitalize() for part in member.name.split("_"))


resource_type_name = operation_name = permission_type_name = pascal_name


def _by_name(kind: type[enum.Enum], text: str):
    """``text`` as Kafka's ``SecurityUtils`` reads a name: PascalCase, in any case; UNKNOWN
    for anything else (``CLUSTER_ACTION`` included, as in Kafka)."""
    wanted = text.upper()
    return next((m for m in kind if pascal_name(m).upper() == wanted), kind.UNKNOWN)


def parse_resource_type(text: str) -> ResourceType:
    return _by_name(ResourceType, text)


def parse_operation(text: str) -> AclOperation:
    return _by_name(AclOperation, text)


def parse_permission_type(text: str) -> AclPermissionType:
    return _by_name(AclPermissionType, text)


def parse_pattern_type(text: str) -> PatternType:
    """A pattern type by its name, in any case (``literal``, ``PREFIXED``, ``match``)."""
    return PatternType.__members__.get(text.upper(), PatternType.UNKNOWN)


def parse_principal(text: str) -> tuple[str, str]:
    """``Type:name`` as (type, name), as Kafka's ``SecurityUtils.parseKafkaPrincipal`` splits
    it (at the first colon); :class:`InvalidAclError` without one."""
    principal_type, sep, name = (text or "").partition(":")
    if not sep:
        raise InvalidAclError(f"expected a string in format principalType:principalName but got "
                              f"{text}")
    return principal_type, name


# -- what each resource type supports (AclEntry) ----------------------------------------------

_O = AclOperation
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER,
                         _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE),
    ResourceType.CLUSTER: (_O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS,
                           _O.IDEMPOTENT_WRITE, _O.ALTER, _O.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE),
    ResourceType.DELEGATION_TOKEN: (_O.DESCRIBE,),
    ResourceType.USER: (_O.CREATE_TOKENS, _O.DESCRIBE_TOKENS),
}

# Allowing one of these implies allowing the key (AclAuthorizer.authorizeAction).
IMPLYING_OPERATIONS: dict[AclOperation, tuple[AclOperation, ...]] = {
    _O.DESCRIBE: (_O.DESCRIBE, _O.READ, _O.WRITE, _O.DELETE, _O.ALTER),
    _O.DESCRIBE_CONFIGS: (_O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
}

AUTHORIZATION_ERRORS: dict[ResourceType, ErrorCode] = {
    ResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ResourceType.DELEGATION_TOKEN: ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
}


def operations_bit_field(operations) -> int:
    """Operations as Kafka reports authorized operations (KIP-430): bit ``code`` set for each
    (``Utils.to32BitField``)."""
    return sum(1 << operation for operation in set(operations))


# -- patterns, entries, bindings, and their filters -------------------------------------------


@dataclass(frozen=True, order=True)
class ResourcePattern:
    """The resources an ACL applies to: ``name`` itself (LITERAL; ``*`` for every resource of
    the type) or every name starting with it (PREFIXED)."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType = PatternType.LITERAL

    def __post_init__(self):
        if self.resource_type == ResourceType.ANY:
            raise InvalidAclError("resourceType must not be ANY")
        if self.pattern_type in (PatternType.MATCH, PatternType.ANY):
            raise InvalidAclError(f"patternType must not be {self.pattern_type.name}")

    @property
    def is_unknown(self) -> bool:
        return self.resource_type == ResourceType.UNKNOWN or \
            self.pattern_type == PatternType.UNKNOWN

    def __str__(self) -> str:
        return (f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
                f"patternType={self.pattern_type.name})")


@dataclass(frozen=True)
class ResourcePatternFilter:
    """Selects resource patterns: ANY resource type, any name (None), and the pattern type
    exactly, ANY (the name exactly) or MATCH (every pattern that applies to the name)."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    def matches(self, pattern: ResourcePattern) -> bool:
        """Kafka's ``ResourcePatternFilter.matches``."""
        if self.resource_type not in (ResourceType.ANY, pattern.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, pattern.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        if pattern.pattern_type == PatternType.LITERAL:
            return pattern.name in (self.name, WILDCARD_RESOURCE)
        return self.name.startswith(pattern.name)

    @property
    def matches_at_most_one(self) -> bool:
        """Whether at most one resource pattern can match (no open field)."""
        return self.resource_type not in (ResourceType.ANY, ResourceType.UNKNOWN) \
            and self.name is not None \
            and self.pattern_type not in (PatternType.MATCH, PatternType.UNKNOWN)

    def __str__(self) -> str:
        name = "<any>" if self.name is None else self.name
        return (f"ResourcePattern(resourceType={self.resource_type.name}, name={name}, "
                f"patternType={self.pattern_type.name})")


@dataclass(frozen=True, order=True)
class AccessControlEntry:
    """Who (``Type:name``, ``User:*`` for everyone) may or may not (ALLOW, DENY) do what from
    where (an address, ``*`` for anywhere)."""

    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __post_init__(self):
        if self.operation == AclOperation.ANY:
            raise InvalidAclError("operation must not be ANY")
        if self.permission_type == AclPermissionType.ANY:
            raise InvalidAclError("permissionType must not be ANY")

    @property
    def is_unknown(self) -> bool:
        return self.operation == AclOperation.UNKNOWN or \
            self.permission_type == AclPermissionType.UNKNOWN

    def __str__(self) -> str:
        return (f"(principal={self.principal}, host={self.host}, "
                f"operation={self.operation.name}, permissionType={self.permission_type.name})")


@dataclass(frozen=True)
class AccessControlEntryFilter:
    """Selects entries: any principal or host (None), ANY operation, ANY permission type."""

    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def matches(self, entry: AccessControlEntry) -> bool:
        return (self.principal is None or self.principal == entry.principal) \
            and (self.host is None or self.host == entry.host) \
            and self.operation in (AclOperation.ANY, entry.operation) \
            and self.permission_type in (AclPermissionType.ANY, entry.permission_type)

    def __str__(self) -> str:
        return (f"(principal={'<any>' if self.principal is None else self.principal}, "
                f"host={'<any>' if self.host is None else self.host}, "
                f"operation={self.operation.name}, permissionType={self.permission_type.name})")


@dataclass(frozen=True, order=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    @property
    def is_unknown(self) -> bool:
        return self.pattern.is_unknown or self.entry.is_unknown

    def __str__(self) -> str:
        return f"(pattern={self.pattern}, entry={self.entry})"


@dataclass(frozen=True)
class AclBindingFilter:
    pattern_filter: ResourcePatternFilter
    entry_filter: AccessControlEntryFilter = AccessControlEntryFilter()

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern_filter.matches(binding.pattern) and \
            self.entry_filter.matches(binding.entry)

    @property
    def is_unknown(self) -> bool:
        return self.pattern_filter.resource_type == ResourceType.UNKNOWN \
            or self.pattern_filter.pattern_type == PatternType.UNKNOWN \
            or self.entry_filter.operation == AclOperation.UNKNOWN \
            or self.entry_filter.permission_type == AclPermissionType.UNKNOWN

    def __str__(self) -> str:
        return f"(patternFilter={self.pattern_filter}, entryFilter={self.entry_filter})"


ANY_BINDING = AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY))
