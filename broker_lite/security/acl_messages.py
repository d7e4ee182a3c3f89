"""ACL bindings and filters as DescribeAcls, CreateAcls and DeleteAcls carry them (the bodies of
:mod:`broker_lite.protocol.messages.acls`), both ways, for the broker and the client alike.

Codes this model does not know become UNKNOWN (as Kafka's ``fromCode``); whoever receives them
decides what that means (the broker refuses the request, as Kafka does).

>>> from broker_lite.security.acl import PatternType, ResourceType
>>> body = filter_body(AclBindingFilter(ResourcePatternFilter(ResourceType.GROUP, "etl",
...                                                           PatternType.MATCH)))
>>> body["resource_type_filter"], body["pattern_type_filter"], body["principal_filter"]
(3, 2, None)
>>> str(filter_of(body).pattern_filter)
'ResourcePattern(resourceType=GROUP, name=etl, patternType=MATCH)'
"""

from __future__ import annotations

from collections.abc import Iterable

from .acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
    ResourcePatternFilter,
    operation_of,
    pattern_type_of,
    permission_type_of,
    resource_type_of,
)


def _entry_body(entry: AccessControlEntry) -> dict:
    return {"principal": entry.principal, "host": entry.host, "operation": int(entry.operation),
            "permission_type": int(entry.permission_type)}


def _binding_of(resource: dict, entry: dict, pattern_key: str = "pattern_type") -> AclBinding:
    return AclBinding(
        ResourcePattern(resource_type_of(resource["resource_type"]), resource["resource_name"],
                        pattern_type_of(resource[pattern_key])),
        AccessControlEntry(entry["principal"], entry["host"], operation_of(entry["operation"]),
                           permission_type_of(entry["permission_type"])))


# -- CreateAcls ---------------------------------------------------------------------------------


def creation_body(binding: AclBinding) -> dict:
    pattern = binding.pattern
    return {"resource_type": int(pattern.resource_type), "resource_name": pattern.name,
            "resource_pattern_type": int(pattern.pattern_type), **_entry_body(binding.entry)}


def binding_of_creation(body: dict) -> AclBinding:
    """The binding a creation asks for; :class:`~.acl.InvalidAclError` when it holds a
    filter's value (ANY, MATCH)."""
    return _binding_of(body, body, "resource_pattern_type")


# -- DescribeAcls and DeleteAcls filters --------------------------------------------------------


def filter_body(binding_filter: AclBindingFilter) -> dict:
    patterns, entries = binding_filter.pattern_filter, binding_filter.entry_filter
    return {"resource_type_filter": int(patterns.resource_type),
            "resource_name_filter": patterns.name,
            "pattern_type_filter": int(patterns.pattern_type),
            "principal_filter": entries.principal, "host_filter": entries.host,
            "operation": int(entries.operation),
            "permission_type": int(entries.permission_type)}


def filter_of(body: dict) -> AclBindingFilter:
    return AclBindingFilter(
        ResourcePatternFilter(resource_type_of(body["resource_type_filter"]),
                              body["resource_name_filter"],
                              pattern_type_of(body["pattern_type_filter"])),
        AccessControlEntryFilter(body["principal_filter"], body["host_filter"],
                                 operation_of(body["operation"]),
                                 permission_type_of(body["permission_type"])))


# -- DescribeAcls' resources --------------------------------------------------------------------


def resources_body(bindings: Iterable[AclBinding]) -> list[dict]:
    """Bindings grouped by resource pattern, in pattern order."""
    by_pattern: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for binding in bindings:
        by_pattern.setdefault(binding.pattern, []).append(binding.entry)
    return [{"resource_type": int(pattern.resource_type), "resource_name": pattern.name,
             "pattern_type": int(pattern.pattern_type),
             "acls": [_entry_body(entry) for entry in sorted(entries)]}
            for pattern, entries in sorted(by_pattern.items())]


def bindings_of_resources(resources: list[dict]) -> list[AclBinding]:
    return [_binding_of(resource, acl) for resource in resources for acl in resource["acls"]]


# -- DeleteAcls' matching ACLs ------------------------------------------------------------------


def matching_acl_body(binding: AclBinding, error_code: int = 0,
                      error_message: str | None = None) -> dict:
    pattern = binding.pattern
    return {"error_code": error_code, "error_message": error_message,
            "resource_type": int(pattern.resource_type), "resource_name": pattern.name,
            "pattern_type": int(pattern.pattern_type), **_entry_body(binding.entry)}


def binding_of_matching_acl(body: dict) -> AclBinding:
    return _binding_of(body, body)
