"""The classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ListGroups,
DescribeGroups and DeleteGroups, served by the group coordinator
(:mod:`broker_lite.coordinator`).

JoinGroup and SyncGroup may wait: a JoinGroup until the group's rebalance completes, a
SyncGroup until the leader hands out the assignment. Each waits in the purgatory (under its
group id) for the coordinator's callback, holding no thread; its connection stays muted
meanwhile, as Kafka keeps it, so the connection's responses stay in order. A stopping broker
closes the connections of the requests still waiting. Everything else answers at once.

Version differences are settled here: JoinGroup v0 has no rebalance timeout (the session timeout
serves), v4+ make a new member ask for its id first (MEMBER_ID_REQUIRED), v5+ carry static
membership, v7+ may answer a null protocol name; SyncGroup v5+ must name the protocol type and
name; LeaveGroup v3+ removes a batch of members, before that one member whose error is the
response's.

Authorization, as Kafka's: JoinGroup, SyncGroup, Heartbeat and LeaveGroup need Read on the
group, DescribeGroups Describe (each group on its own), DeleteGroups Delete; each refusal is
GROUP_AUTHORIZATION_FAILED. ListGroups lists every group to a principal that may Describe the
cluster, else only the groups it may Describe. DescribeGroups reports a group's authorized
operations (v3+) when asked.
"""

from collections.abc import Callable
from typing import Any

from broker_lite.coordinator.group.coordinator import LeavingMember
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..authorization import NOT_REQUESTED
from ..dispatcher import RESPONDS_LATER, DelayedResponse, RequestContext
from ..network import CloseConnection

READ, DESCRIBE, DELETE = AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE
GROUP = ResourceType.GROUP
REFUSED = ErrorCode.GROUP_AUTHORIZATION_FAILED


class CoordinatorAnswer(DelayedResponse):
    """A request waiting for the group coordinator's answer: the callback given to the
    coordinator (call it with the result), answered with ``respond_with(result)``."""

    def __init__(self, context: RequestContext, respond_with: Callable[[Any], dict]):
        super().__init__(context, delay_ms=None)  # the coordinator's own timeouts apply
        self._respond_with = respond_with
        self._result = None

    def __call__(self, result) -> None:
        self._result = result
        self.force_complete()

    def try_complete(self) -> bool:
        return self._result is not None and self.force_complete()

    def response(self) -> dict:
        if self._result is None:
            raise CloseConnection("the broker is stopping")
        return self._respond_with(self._result)


def _wait_for_coordinator(context: RequestContext, group_id: str,
                          respond_with: Callable[[Any], dict]) -> CoordinatorAnswer:
    answer = CoordinatorAnswer(context, respond_with)
    context.services.purgatory.groups.try_complete_else_watch(answer, [group_id])
    return answer


# -- JoinGroup -------------------------------------------------------------------------------


def join_group(context: RequestContext, body: dict):
    version = context.version
    if not context.authorize(READ, GROUP, body["group_id"]):
        return _join_response(version, JoinRefused())
    instance_id = body.get("group_instance_id") if version >= 5 else None
    answer = _wait_for_coordinator(context, body["group_id"],
                                   lambda result: _join_response(version, result))
    if answer.is_completed:  # the broker is stopping
        return RESPONDS_LATER
    context.services.groups.handle_join_group(
        body["group_id"], body["member_id"], instance_id,
        require_known_member_id=version >= 4 and instance_id is None,
        support_skipping_assignment=version >= 9,
        client_id=context.header.client_id or "", client_host=context.client_host,
        rebalance_timeout_ms=body["rebalance_timeout_ms"] if version >= 1
        else body["session_timeout_ms"],
        session_timeout_ms=body["session_timeout_ms"], protocol_type=body["protocol_type"],
        protocols=[(p["name"], bytes(p["metadata"])) for p in body["protocols"]],
        callback=answer, reason=body.get("reason") if version >= 8 else None,
    )
    return RESPONDS_LATER


class JoinRefused:
    """JoinGroup's answer to a principal without Read on the group (Kafka's
    ``JoinGroupRequest.getErrorResponse``)."""

    error, generation_id, protocol_type, protocol_name = REFUSED, -1, None, None
    leader_id = member_id = ""
    skip_assignment, members = False, ()


def _join_response(version: int, result) -> dict:
    return {
        "throttle_time_ms": 0, "error_code": result.error,
        "generation_id": result.generation_id, "protocol_type": result.protocol_type,
        "protocol_name": result.protocol_name if version >= 7 else result.protocol_name or "",
        "leader": result.leader_id, "skip_assignment": result.skip_assignment,
        "member_id": result.member_id,
        "members": [{"member_id": member_id, "group_instance_id": instance, "metadata": metadata}
                    for member_id, instance, metadata in result.members],
    }


# -- SyncGroup -------------------------------------------------------------------------------


def sync_group(context: RequestContext, body: dict):
    version = context.version
    protocol_type = body.get("protocol_type") if version >= 5 else None
    protocol_name = body.get("protocol_name") if version >= 5 else None
    if version >= 5 and (protocol_type is None or protocol_name is None):
        return _sync_response(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    if not context.authorize(READ, GROUP, body["group_id"]):
        return _sync_response(REFUSED)
    answer = _wait_for_coordinator(
        context, body["group_id"], lambda result: _sync_response(
            result.error, result.assignment, result.protocol_type, result.protocol_name))
    if answer.is_completed:  # the broker is stopping
        return RESPONDS_LATER
    context.services.groups.handle_sync_group(
        body["group_id"], body["generation_id"], body["member_id"], protocol_type,
        protocol_name, body.get("group_instance_id") if version >= 3 else None,
        {a["member_id"]: bytes(a["assignment"]) for a in body["assignments"]}, answer)
    return RESPONDS_LATER


def _sync_response(error: int, assignment: bytes = b"", protocol_type: str | None = None,
                   protocol_name: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "protocol_type": protocol_type,
            "protocol_name": protocol_name, "assignment": assignment}


# -- Heartbeat -------------------------------------------------------------------------------


def heartbeat(context: RequestContext, body: dict) -> dict:
    if not context.authorize(READ, GROUP, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": REFUSED}
    error = context.services.groups.handle_heartbeat(
        body["group_id"], body["member_id"],
        body.get("group_instance_id") if context.version >= 3 else None, body["generation_id"])
    return {"throttle_time_ms": 0, "error_code": error}


# -- LeaveGroup ------------------------------------------------------------------------------


def leave_group(context: RequestContext, body: dict) -> dict:
    version = context.version
    if not context.authorize(READ, GROUP, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": REFUSED, "members": []}
    if version >= 3:
        leaving = [LeavingMember(m["member_id"], m.get("group_instance_id"),
                                 m.get("reason") if version >= 5 else None)
                   for m in body["members"]]
    else:
        leaving = [LeavingMember(body["member_id"])]
    error, members = context.services.groups.handle_leave_group(body["group_id"],
                                                                           leaving)
    if version < 3:  # one member: its error is the response's
        if error == ErrorCode.NONE and members:
            error = next((e for _, e in members if e != ErrorCode.NONE), ErrorCode.NONE)
        return {"throttle_time_ms": 0, "error_code": error}
    return {"throttle_time_ms": 0, "error_code": error, "members": [
        {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "error_code": e}
        for m, e in members]}


# -- ListGroups, DescribeGroups, DeleteGroups ------------------------------------------------


def list_groups(context: RequestContext, body: dict) -> dict:
    version = context.version
    error, groups = context.services.groups.handle_list_groups(
        (body.get("states_filter") or []) if version >= 4 else [],
        (body.get("types_filter") or []) if version >= 5 else [])
    if not context.authorize(DESCRIBE, ResourceType.CLUSTER, log_denied=False):
        groups = [g for g in groups if context.authorize(DESCRIBE, GROUP, g.group_id,
                                                         log_denied=False)]
    return {"throttle_time_ms": 0, "error_code": error, "groups": [
        {"group_id": g.group_id, "protocol_type": g.protocol_type, "group_state": g.state,
         "group_type": g.group_type} for g in groups]}


def describe_groups(context: RequestContext, body: dict) -> dict:
    coordinator = context.services.groups
    with_operations = context.version >= 3 and body.get("include_authorized_operations")
    described = []
    for group_id in body["groups"]:
        if not context.authorize(DESCRIBE, GROUP, group_id):
            described.append({"error_code": REFUSED, "group_id": group_id, "group_state": "",
                              "protocol_type": "", "protocol_data": "", "members": [],
                              "authorized_operations": NOT_REQUESTED})
            continue
        error, summary = coordinator.handle_describe_group(group_id)
        described.append({
            "error_code": error, "group_id": group_id, "group_state": summary.state,
            "protocol_type": summary.protocol_type, "protocol_data": summary.protocol,
            "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                         "client_id": m.client_id, "client_host": m.client_host,
                         "member_metadata": m.metadata, "member_assignment": m.assignment}
                        for m in summary.members],
            "authorized_operations": context.authorized_operations(GROUP, group_id)
            if with_operations and error == 0 else NOT_REQUESTED,
        })
    return {"throttle_time_ms": 0, "groups": described}


def delete_groups(context: RequestContext, body: dict) -> dict:
    names = list(dict.fromkeys(body["groups_names"]))
    allowed = context.authorized_names(DELETE, GROUP, names)
    errors = context.services.groups.handle_delete_groups([n for n in names if n in allowed])
    errors.update((name, REFUSED) for name in names if name not in allowed)
    return {"throttle_time_ms": 0, "results": [
        {"group_id": name, "error_code": errors[name]} for name in names]}
