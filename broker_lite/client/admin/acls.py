"""ACLs: CreateAcls, DescribeAcls and DeleteAcls, as Kafka's admin client sends them (to any
broker; ZooKeeper holds the ACLs, and every broker follows them).

Bindings and filters are :mod:`broker_lite.security.acl`'s. The broker checks each creation
and each filter on its own: :meth:`AclsAdmin.create_acls` raises the error of the first
binding refused (the others may have been created, as with Kafka's ``all()``), and so does
:meth:`AclsAdmin.delete_acls` for a filter. A broker without an authorizer answers
:class:`~.errors.SecurityDisabledError`; one whose authorizer refuses the principal Alter (or
Describe) on the cluster, :class:`~.errors.ClusterAuthorizationFailedError`. Version 0 of the
three knows only LITERAL patterns: a PREFIXED binding or a MATCH filter for a broker that
speaks nothing newer is refused before it is sent.

>>> from broker_lite.security.acl import (AccessControlEntry, AclBinding, AclOperation,
...     AclPermissionType, PatternType, ResourcePattern, ResourceType)
>>> binding = AclBinding(ResourcePattern(ResourceType.TOPIC, "events", PatternType.PREFIXED),
...     AccessControlEntry("User:etl", "*", AclOperation.WRITE, AclPermissionType.ALLOW))
>>> create_acls_request([binding], 3)["creations"][0]["resource_pattern_type"]
4
"""

from __future__ import annotations

from collections.abc import Iterable

from broker_lite.protocol import ApiKey
from broker_lite.protocol.enums import PatternType
from broker_lite.security.acl import ANY_BINDING, AclBinding, AclBindingFilter
from broker_lite.security.acl_messages import (
    binding_of_matching_acl,
    bindings_of_resources,
    creation_body,
    filter_body,
)

from ..cluster.cluster import Cluster
from ..errors import InvalidArgumentError, UnsupportedVersionError, error_for
from ..retry import retry

FIRST_PATTERN_TYPES_VERSION = 1  # KIP-290: PREFIXED patterns, ANY and MATCH filters


def _only_literal(version: int, pattern_types: Iterable[PatternType], what: str) -> None:
    if version < FIRST_PATTERN_TYPES_VERSION and \
            any(t not in (PatternType.LITERAL, PatternType.ANY) for t in pattern_types):
        raise UnsupportedVersionError(f"{what} version 0, all the broker speaks, knows only "
                                      "LITERAL resource patterns")


def create_acls_request(bindings: list[AclBinding], version: int) -> dict:
    _only_literal(version, (b.pattern.pattern_type for b in bindings), "CreateAcls")
    return {"creations": [creation_body(b) for b in bindings]}


def filter_request(binding_filter: AclBindingFilter, version: int, what: str) -> dict:
    _only_literal(version, (binding_filter.pattern_filter.pattern_type,), what)
    body = filter_body(binding_filter)
    if version < FIRST_PATTERN_TYPES_VERSION:  # ANY means LITERAL there (DescribeAclsRequest)
        body["pattern_type_filter"] = PatternType.LITERAL
    return body


class AclsAdmin:
    """Create, describe and delete ACLs; get one from :attr:`Admin.acls`."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def _request(self, what: str, api_key: ApiKey, body):
        deadline = self.cluster.deadline()
        return retry(what, deadline, self.cluster.backoff(),
                     lambda: self.cluster.request_any(api_key, body, deadline)[1],
                     self.cluster.on_retriable)

    def create_acls(self, bindings: Iterable[AclBinding]) -> None:
        """Add ``bindings`` (adding one that exists changes nothing)."""
        bindings = list(bindings)
        if not all(isinstance(b, AclBinding) for b in bindings):
            raise InvalidArgumentError("create_acls takes AclBindings")
        if not bindings:
            return
        response = self._request("create_acls", ApiKey.CREATE_ACLS,
                                 lambda version: create_acls_request(bindings, version))
        for binding, result in zip(bindings, response["results"], strict=True):
            error = error_for(result["error_code"], result["error_message"],
                              where=f"ACL {binding}")
            if error is not None:
                raise error

    def describe_acls(self, binding_filter: AclBindingFilter = ANY_BINDING) -> list[AclBinding]:
        """The bindings ``binding_filter`` matches (by default every one)."""
        response = self._request("describe_acls", ApiKey.DESCRIBE_ACLS,
                                 lambda v: filter_request(binding_filter, v, "DescribeAcls"))
        error = error_for(response["error_code"], response["error_message"])
        if error is not None:
            raise error
        return bindings_of_resources(response["resources"])

    def delete_acls(self, filters: Iterable[AclBindingFilter]) -> list[list[AclBinding]]:
        """Remove the bindings each filter matches; for each filter, those it removed."""
        filters = list(filters)
        if not filters:
            return []
        response = self._request(
            "delete_acls", ApiKey.DELETE_ACLS,
            lambda version: {"filters": [filter_request(f, version, "DeleteAcls")
                                         for f in filters]})
        deleted = []
        for binding_filter, result in zip(filters, response["filter_results"], strict=True):
            error = error_for(result["error_code"], result["error_message"],
                              where=f"ACL filter {binding_filter}")
            if error is not None:
                raise error
            for matching in result["matching_acls"]:
                error = error_for(matching["error_code"], matching["error_message"],
                                  where=f"ACL {binding_of_matching_acl(matching)}")
                if error is not None:
                    raise error
            deleted.append([binding_of_matching_acl(m) for m in result["matching_acls"]])
        return deleted
