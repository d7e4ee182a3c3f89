"""ShareGroupHeartbeat and ShareGroupDescribe (KIP-932): share group membership, at the group's
coordinator (:mod:`broker_lite.coordinator.share.group_coordinator`).

Authorization, as Kafka's ``KafkaApis``: a heartbeat needs Read on the group (else
GROUP_AUTHORIZATION_FAILED) and Describe on every topic it subscribes to (else
TOPIC_AUTHORIZATION_FAILED); describing needs Describe on each group (else that group's
GROUP_AUTHORIZATION_FAILED), and the assignment lists only the topics the principal may
describe.
"""

from __future__ import annotations

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..dispatcher import RequestContext
from .share_fetch import REFUSED, enabled_share


def share_group_heartbeat(context: RequestContext, body: dict) -> dict:
    share = enabled_share(context)
    response: dict[str, object] = {
        "throttle_time_ms": 0, "error_code": 0, "error_message": None, "member_id": None,
        "member_epoch": -1, "heartbeat_interval_ms": 0, "assignment": None}
    if share is None:
        response.update(error_code=ErrorCode.UNSUPPORTED_VERSION,
                        error_message="Share groups are not enabled")
        return response
    group_id = body["group_id"]
    if not group_id:
        response.update(error_code=ErrorCode.INVALID_REQUEST,
                        error_message="GroupId can't be empty.")
        return response
    if body["member_epoch"] != 0 and not body["member_id"]:
        response.update(error_code=ErrorCode.INVALID_REQUEST,
                        error_message="MemberId can't be empty.")
        return response
    if not context.authorize(AclOperation.READ, ResourceType.GROUP, group_id):
        response["error_code"] = ErrorCode.GROUP_AUTHORIZATION_FAILED
        return response
    subscribed = body["subscribed_topic_names"]
    if subscribed:
        allowed = context.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC,
                                           subscribed)
        if set(subscribed) - allowed:
            response["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            return response
    result, interval = share.groups.heartbeat(
        group_id, body["member_id"], body["member_epoch"], subscribed,
        rack_id=body["rack_id"], client_id=context.header.client_id or "",
        client_host=context.client_host)
    response.update(error_code=result.error, error_message=result.message,
                    heartbeat_interval_ms=interval)
    if result.error:
        return response
    response.update(member_id=result.member_id, member_epoch=result.epoch)
    if result.assignment is not None:
        response["assignment"] = {"topic_partitions": [
            {"topic_id": topic_id, "partitions": list(partitions)}
            for topic_id, partitions in sorted(result.assignment.items(),
                                               key=lambda item: str(item[0]))]}
    return response


def share_group_describe(context: RequestContext, body: dict) -> dict:
    services = context.services
    share = enabled_share(context)
    groups = []
    for group_id in body["group_ids"]:
        described: dict[str, object] = {
            "error_code": 0, "error_message": None, "group_id": group_id,
            "group_state": "Dead", "group_epoch": -1, "assignment_epoch": -1,
            "assignor_name": "", "members": [],
            "authorized_operations": -2147483648}
        groups.append(described)
        if share is None:
            described["error_code"] = ErrorCode.GROUP_ID_NOT_FOUND
            continue
        if not context.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            described["error_code"] = ErrorCode.GROUP_AUTHORIZATION_FAILED
            continue
        error, group = share.groups.describe(group_id)
        if error or group is None:
            described.update(error_code=error, error_message=(
                f"Group {group_id} not found." if error == ErrorCode.GROUP_ID_NOT_FOUND
                else None))
            continue
        names = {}
        for member in group.members.values():
            for topic_id in member.assignment:
                names[topic_id] = services.cluster.topic_name(topic_id)
        describable = context.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC,
                                               [n for n in names.values() if n])
        described.update(
            group_state=group.state.value, group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch, assignor_name="simple",
            members=[{
                "member_id": member.member_id, "rack_id": member.rack_id,
                "member_epoch": member.epoch, "client_id": member.client_id,
                "client_host": member.client_host,
                "subscribed_topic_names": list(member.subscribed),
                "assignment": {"topic_partitions": [
                    {"topic_id": topic_id, "topic_name": names[topic_id],
                     "partitions": list(partitions)}
                    for topic_id, partitions in member.assignment.items()
                    if names.get(topic_id) in describable]},
            } for member in group.members.values()])
        if body["include_authorized_operations"]:
            described["authorized_operations"] = context.authorized_operations(
                ResourceType.GROUP, group_id)
    return {"throttle_time_ms": 0, "groups": groups}


__all__ = ["REFUSED", "share_group_describe", "share_group_heartbeat"]
