"""Authorization: who may do what, as Kafka's pluggable ``Authorizer`` decides it.

``authorizer.class.name`` picks the authorizer: empty (the default) for none, so every request
is allowed, as in Kafka; ``kafka.security.authorizer.AclAuthorizer`` (or its name before Kafka
2.4, ``kafka.security.auth.SimpleAclAuthorizer``) for ACLs kept in ZooKeeper
(:class:`.acl_authorizer.AclAuthorizer`), configured by ``super.users`` and
``allow.everyone.if.no.acl.found``. Request handlers ask through their request context
(:mod:`..authorization`), which carries the principal and client address of the connection.

=========================  ======================================================================
module                     concept
=========================  ======================================================================
:mod:`.cache`              the ACLs in memory and Kafka's decisions over them (sans I/O)
:mod:`.acl_authorizer`     ACLs stored in ZooKeeper, changed with conditional updates, followed
                           through change notifications by every broker
=========================  ======================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kazoo.client import KazooClient

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.definitions import ACL_AUTHORIZERS, super_users
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.security.acl import AclBinding, AclBindingFilter

from .acl_authorizer import AclAuthorizer, AclDeleteResult, AclError

__all__ = ["AclAuthorizer", "AclDeleteResult", "AclError", "Authorizer", "create_authorizer"]


class Authorizer(Protocol):
    """What the broker asks an authorizer (Kafka's ``org.apache.kafka.server.authorizer
    .Authorizer``); principals are ``Type:name``, hosts the client's address."""

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool: ...

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType) -> bool: ...

    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]: ...

    def create_acls(self, bindings: Sequence[AclBinding]) -> list[AclError | None]: ...

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]: ...


def create_authorizer(config: BrokerConfig, client: KazooClient) -> AclAuthorizer | None:
    """The authorizer ``authorizer.class.name`` names, started; None when it names none."""
    if config["authorizer.class.name"] not in ACL_AUTHORIZERS:
        return None
    return AclAuthorizer(client, super_users(config["super.users"]),
                         config["allow.everyone.if.no.acl.found"]).start()
