"""DescribeAcls, CreateAcls and DeleteAcls (versions 0-3), as Kafka 3.9's ``AclApis`` serves
them in ZooKeeper mode.

DescribeAcls needs Describe on the cluster, CreateAcls and DeleteAcls Alter on it; without,
the request is answered CLUSTER_AUTHORIZATION_FAILED (the whole DescribeAcls, each creation or
filter). A broker without an authorizer answers SECURITY_DISABLED, with Kafka's messages.

A request holding a value none of Kafka's types, operations or permission types knows is
closed, as Kafka's broker closes one it cannot parse. A creation is refused INVALID_REQUEST on
its own when it names the cluster other than ``kafka-cluster``, has an empty resource name, or
holds a filter's value (resource type or operation ANY, pattern type MATCH or ANY, permission
type ANY; Kafka's AclAuthorizer answers those UNKNOWN_SERVER_ERROR for the whole request, its
KRaft authorizer INVALID_REQUEST as here); the authorizer refuses the rest
(:mod:`..authorizer.acl_authorizer`). DescribeAcls answers the bindings grouped by resource
pattern; DeleteAcls, for each filter, the bindings it removed.
"""

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.security.acl import CLUSTER_NAME, AclBinding, AclBindingFilter, InvalidAclError
from broker_lite.security.acl_messages import (
    binding_of_creation,
    filter_of,
    matching_acl_body,
    resources_body,
)

from ..authorizer import Authorizer
from ..dispatcher import RequestContext
from ..network import CloseConnection

NOT_AUTHORIZED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
SECURITY_DISABLED = ErrorCode.SECURITY_DISABLED, "No Authorizer is configured."


def _authorizer(context: RequestContext, operation: AclOperation
                ) -> Authorizer | tuple[ErrorCode, str]:
    """The authorizer to ask, or why the request is refused as a whole: no authorization, or
    no authorizer."""
    if not context.authorize(operation, ResourceType.CLUSTER):
        return NOT_AUTHORIZED
    if context.services.authorizer is None:
        return SECURITY_DISABLED
    return context.services.authorizer


def _filter(body: dict) -> AclBindingFilter:
    """A filter of the request; the connection is closed when it holds unknown values."""
    binding_filter = filter_of(body)
    if binding_filter.is_unknown:
        raise CloseConnection(f"ACL filter with unknown elements: {binding_filter}")
    return binding_filter


# -- DescribeAcls -------------------------------------------------------------------------------


def describe_acls(context: RequestContext, body: dict) -> dict:
    binding_filter = _filter(body)
    authorizer = _authorizer(context, AclOperation.DESCRIBE)
    if isinstance(authorizer, tuple):
        code, message = authorizer
        if code == ErrorCode.SECURITY_DISABLED:
            message = "No Authorizer is configured on the broker"
        return {"throttle_time_ms": 0, "error_code": code, "error_message": message,
                "resources": []}
    bindings = authorizer.acls(binding_filter)
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "resources": resources_body(bindings)}


# -- CreateAcls ---------------------------------------------------------------------------------


def _creation(body: dict) -> AclBinding | tuple[ErrorCode, str]:
    """The binding a creation asks for, or why it is refused."""
    try:
        binding = binding_of_creation(body)
    except InvalidAclError as exc:
        return ErrorCode.INVALID_REQUEST, f"Invalid ACL creation: {exc}"
    if binding.is_unknown:
        raise CloseConnection(f"CreatableAcls contain unknown elements: {binding}")
    pattern = binding.pattern
    if pattern.resource_type == ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return ErrorCode.INVALID_REQUEST, \
            f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not pattern.name:
        return ErrorCode.INVALID_REQUEST, "Invalid empty resource name"
    return binding


def create_acls(context: RequestContext, body: dict) -> dict:
    creations = [_creation(c) for c in body["creations"]]
    authorizer = _authorizer(context, AclOperation.ALTER)
    outcomes: list[tuple[ErrorCode, str | None]]
    if isinstance(authorizer, tuple):
        outcomes = [authorizer] * len(creations)
    else:
        errors = iter(authorizer.create_acls(
            [c for c in creations if isinstance(c, AclBinding)]))
        outcomes = [c if not isinstance(c, AclBinding) else _outcome(next(errors))
                    for c in creations]
    return {"throttle_time_ms": 0, "results": [
        {"error_code": code, "error_message": message} for code, message in outcomes]}


def _outcome(error) -> tuple[ErrorCode, str | None]:
    return (error.code, error.message) if error is not None else (ErrorCode.NONE, None)


# -- DeleteAcls ---------------------------------------------------------------------------------


def delete_acls(context: RequestContext, body: dict) -> dict:
    filters = [_filter(f) for f in body["filters"]]
    authorizer = _authorizer(context, AclOperation.ALTER)
    if isinstance(authorizer, tuple):
        code, message = authorizer
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": code, "error_message": message, "matching_acls": []}
            for _ in filters]}
    results = authorizer.delete_acls(filters)
    return {"throttle_time_ms": 0, "filter_results": [
        {"error_code": 0, "error_message": None, "matching_acls": [
            matching_acl_body(binding, *_outcome(error)) for binding, error in result.deleted]}
        for result in results]}
