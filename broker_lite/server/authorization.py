"""What request handlers ask the authorizer (Kafka's ``AuthHelper``), each a one-line call on
the request context, which carries the connection's principal and client address::

    if not context.authorize(READ, GROUP, body["group_id"]):
        return error_response(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    allowed = context.authorized_names(WRITE, TOPIC, (t["name"] for t in body["topic_data"]))

Resources are LITERAL names (the cluster's is ``kafka-cluster``); without an authorizer
(``authorizer.class.name`` empty) everything is allowed, as in Kafka.

Authorized operations (KIP-430: Metadata, DescribeCluster, DescribeGroups) are a 32-bit field
with bit ``code`` set for each ``AclOperation`` the principal may do among those the resource
type supports (``AclEntry.supportedOperations``; without an authorizer, all of them), and
:data:`NOT_REQUESTED` (-2**31) when the request did not ask for them.

The SCRAM credential APIs check the cluster as Kafka does: DescribeUserScramCredentials
``context.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER)``, AlterUserScramCredentials
``AclOperation.ALTER``, each refusal CLUSTER_AUTHORIZATION_FAILED.

Every decision is written to the ``broker_lite.authorizer`` log as Kafka's authorizer logger
writes it: a denial of what the request asked for at INFO, an allowed request at DEBUG, and
the checks that only shape an answer (which topics Metadata lists, authorized operations) at
DEBUG as well::

    Principal = User:bob is Denied Operation = Write from host = 10.0.0.7 on resource =
    Topic:LITERAL:events for request = Produce with resourceRefCount = 1
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from broker_lite.protocol import ApiKey, RequestHeader
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.security.acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    operation_name,
    operations_bit_field,
    resource_type_name,
)

from .authorizer import Authorizer

audit = logging.getLogger("broker_lite.authorizer")

NOT_REQUESTED = -(2**31)  # an authorized operations field the request did not ask for


class _Services(Protocol):
    @property
    def authorizer(self) -> Authorizer | None: ...


class Requester(Protocol):
    """What a decision needs of a request: who sent it (``principal``), from where
    (``client_address``), which API (``header``), and the broker's authorizer (``services``).
    The dispatcher's ``RequestContext`` is one."""

    @property
    def header(self) -> RequestHeader: ...

    @property
    def services(self) -> _Services: ...

    @property
    def principal(self) -> str: ...

    @property
    def client_address(self) -> str: ...


def _log(context: Requester, operation: AclOperation, resource: str, allowed: bool,
         log_denied: bool, count: int) -> None:
    level = logging.DEBUG if allowed or not log_denied else logging.INFO
    if audit.isEnabledFor(level):
        try:
            api = ApiKey(context.header.api_key).name.title().replace("_", "")
        except ValueError:
            api = str(context.header.api_key)
        audit.log(level, "Principal = %s is %s Operation = %s from host = %s on resource = %s "
                  "for request = %s with resourceRefCount = %d", context.principal,
                  "Allowed" if allowed else "Denied", operation_name(operation),
                  context.client_address, resource, api, count)


def authorize(context: Requester, operation: AclOperation, resource_type: ResourceType,
              name: str = CLUSTER_NAME, *, log_denied: bool = True, count: int = 1) -> bool:
    """Whether the request's principal may do ``operation`` on the resource."""
    authorizer = context.services.authorizer
    if authorizer is None:
        return True
    allowed = authorizer.authorize(context.principal, context.client_address, operation,
                                   resource_type, name)
    _log(context, operation, f"{resource_type_name(resource_type)}:LITERAL:{name}", allowed,
         log_denied, count)
    return allowed


def authorized_names(context: Requester, operation: AclOperation,
                     resource_type: ResourceType, names: Iterable[str], *,
                     log_denied: bool = True) -> set[str]:
    """The names among ``names`` the principal may do ``operation`` on, each decided once
    (Kafka's ``filterByAuthorized``)."""
    if context.services.authorizer is None:
        return set(names)
    counts = Counter(names)
    return {name for name, count in counts.items()
            if authorize(context, operation, resource_type, name, log_denied=log_denied,
                         count=count)}


def authorized_operations(context: Requester, resource_type: ResourceType,
                          name: str = CLUSTER_NAME) -> int:
    """The operations the principal may do on the resource, as the bit field of KIP-430;
    every operation the type supports without an authorizer."""
    return operations_bit_field(
        op for op in SUPPORTED_OPERATIONS[resource_type]
        if authorize(context, op, resource_type, name, log_denied=False))


def authorize_by_resource_type(context: Requester, operation: AclOperation,
                               resource_type: ResourceType) -> bool:
    """Whether the principal may do ``operation`` on some resource of the type (KIP-679)."""
    authorizer = context.services.authorizer
    if authorizer is None:
        return True
    allowed = authorizer.authorize_by_resource_type(context.principal, context.client_address,
                                                    operation, resource_type)
    _log(context, operation, f"{resource_type_name(resource_type)}:UNKNOWN:NONE", allowed, True,
         0)  # Kafka's placeholder resource for a decision on a whole type
    return allowed
