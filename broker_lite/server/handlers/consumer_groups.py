"""The consumer group protocol (KIP-848): ConsumerGroupHeartbeat and ConsumerGroupDescribe,
served by the group coordinator (:mod:`broker_lite.coordinator.consumer`).

Both answer at once: a heartbeat never waits for the group (members poll by heartbeating).

Authorization, as Kafka 4's ``KafkaApis``: a heartbeat needs Read on the group
(GROUP_AUTHORIZATION_FAILED) and Describe on every topic it subscribes to by name
(TOPIC_AUTHORIZATION_FAILED); describing needs Describe on the group, and on the topics of its
assignments (TOPIC_AUTHORIZATION_FAILED for the group otherwise), and reports the group's
authorized operations when asked.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from broker_lite.coordinator.consumer.coordinator import DescribedMember
from broker_lite.coordinator.consumer.heartbeat import HeartbeatRequest, assignment_by_topic
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..authorization import NOT_REQUESTED
from ..dispatcher import RequestContext

READ, DESCRIBE = AclOperation.READ, AclOperation.DESCRIBE
GROUP, TOPIC = ResourceType.GROUP, ResourceType.TOPIC
CONSUMER_MEMBER_TYPE, CLASSIC_MEMBER_TYPE = 1, 0  # ConsumerGroupDescribe v1's MemberType


def _owned(topic_partitions: list[dict] | None) -> dict[uuid.UUID, frozenset[int]] | None:
    if topic_partitions is None:
        return None
    return {t["topic_id"]: frozenset(t["partitions"]) for t in topic_partitions}


def consumer_group_heartbeat(context: RequestContext, body: dict) -> dict:
    group_id = body["group_id"]
    if not context.authorize(READ, GROUP, group_id):
        return _heartbeat_error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    names = body["subscribed_topic_names"]
    if names and len(context.authorized_names(DESCRIBE, TOPIC, set(names))) < len(set(names)):
        return _heartbeat_error(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    result = context.services.groups.handle_consumer_group_heartbeat(HeartbeatRequest(
        group_id=group_id, member_id=body["member_id"], member_epoch=body["member_epoch"],
        instance_id=body["instance_id"], rack_id=body["rack_id"],
        rebalance_timeout_ms=body["rebalance_timeout_ms"],
        subscribed_topic_names=None if names is None else tuple(names),
        subscribed_topic_regex=body.get("subscribed_topic_regex"),
        server_assignor=body["server_assignor"], owned=_owned(body["topic_partitions"]),
        client_id=context.header.client_id or "", client_host=context.client_host,
        version=context.version))
    if result.error != ErrorCode.NONE:
        return _heartbeat_error(result.error, result.message)
    assignment = None if result.assignment is None else {"topic_partitions": [
        {"topic_id": t, "partitions": ps} for t, ps in assignment_by_topic(result.assignment)]}
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "member_id": result.member_id, "member_epoch": result.member_epoch,
            "heartbeat_interval_ms": context.services.groups.consumer_config
            .heartbeat_interval_ms, "assignment": assignment}


def _heartbeat_error(error: ErrorCode, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message,
            "member_id": None, "member_epoch": -1, "heartbeat_interval_ms": 0,
            "assignment": None}


def consumer_group_describe(context: RequestContext, body: dict) -> dict:
    coordinator = context.services.groups
    with_operations = body["include_authorized_operations"]
    described = []
    for group_id in body["group_ids"]:
        if not context.authorize(DESCRIBE, GROUP, group_id):
            described.append(_described_error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED))
            continue
        error, message, group = coordinator.handle_consumer_group_describe(group_id)
        if group is None:
            described.append(_described_error(group_id, error, message))
            continue
        members = [_member(m, context) for m in group.members]
        names = {t["topic_name"] for m in members for part in ("assignment", "target_assignment")
                 for t in m[part]["topic_partitions"]}
        if len(context.authorized_names(DESCRIBE, TOPIC, names)) < len(names):
            described.append(_described_error(group_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            continue
        described.append({
            "error_code": 0, "error_message": None, "group_id": group_id,
            "group_state": group.state, "group_epoch": group.epoch,
            "assignment_epoch": group.assignment_epoch, "assignor_name": group.assignor,
            "members": members,
            "authorized_operations": context.authorized_operations(GROUP, group_id)
            if with_operations else NOT_REQUESTED})
    return {"throttle_time_ms": 0, "groups": described}


def _described_error(group_id: str, error: ErrorCode, message: str | None = None) -> dict:
    return {"error_code": error, "error_message": message, "group_id": group_id,
            "group_state": "", "group_epoch": -1, "assignment_epoch": -1, "assignor_name": "",
            "members": [], "authorized_operations": NOT_REQUESTED}


def _member(described: DescribedMember, context: RequestContext) -> dict[str, Any]:
    member, metadata = described.member, described.member.metadata
    return {
        "member_id": member.member_id, "instance_id": metadata.instance_id,
        "rack_id": metadata.rack_id, "member_epoch": member.epoch,
        "client_id": metadata.client_id, "client_host": metadata.client_host,
        "subscribed_topic_names": list(metadata.subscribed_topic_names),
        "subscribed_topic_regex": metadata.subscribed_topic_regex,
        "assignment": _assignment(member.assignment.assigned, context),
        "target_assignment": _assignment(described.target, context),
        "member_type": CLASSIC_MEMBER_TYPE if member.uses_classic_protocol
        else CONSUMER_MEMBER_TYPE,
    }


def _assignment(assignment: Mapping[uuid.UUID, frozenset[int]], context: RequestContext
                ) -> dict:
    cluster = context.services.cluster
    return {"topic_partitions": [
        {"topic_id": t, "topic_name": cluster.topic_name(t) or "", "partitions": ps}
        for t, ps in assignment_by_topic(assignment)]}
