"""DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets (KIP-932's
admin APIs, ``kafka-share-groups.sh --describe``, ``--reset-offsets``, ``--delete-offsets``): a
share group's start offsets, as its share coordinators keep them (ReadShareGroupStateSummary,
InitializeShareGroupState, DeleteShareGroupState through the persister).

They are sent to the group's coordinator. Altering and deleting need the group to have no
member (else NON_EMPTY_GROUP), as Kafka requires; altering starts the share-partition again at
the given offset in a new state epoch (the leader's share-partition is fenced and loads it).

Authorization, as Kafka's: describing needs Describe on the group and on each topic, altering
Read on both, deleting Delete on the group and Read on each topic.
"""

from __future__ import annotations

import uuid

from broker_lite.coordinator.share.records import StateKey
from broker_lite.coordinator.share.service import ShareService
from broker_lite.coordinator.share.state import UNINITIALIZED
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..dispatcher import RequestContext
from .share_fetch import enabled_share


def _group_error(context: RequestContext, share: ShareService | None, group_id: str,
                 operation: AclOperation) -> ErrorCode | None:
    if share is None:
        return ErrorCode.GROUP_ID_NOT_FOUND
    if not context.authorize(operation, ResourceType.GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    return share.groups.validate(group_id)


def _topic(context: RequestContext, name: str) -> tuple[uuid.UUID, int] | None:
    info = context.services.cluster.topic(name)
    return (info.topic_id, len(info.partitions)) if info is not None else None


def describe_share_group_offsets(context: RequestContext, body: dict) -> dict:
    share = enabled_share(context)
    groups = []
    for request in body["groups"]:
        group_id = request["group_id"]
        answer = {"group_id": group_id, "topics": [], "error_code": 0, "error_message": None}
        groups.append(answer)
        error = _group_error(context, share, group_id, AclOperation.DESCRIBE)
        if error or share is None:
            answer["error_code"] = error
            continue
        wanted = request["topics"]
        if wanted is None:  # every topic with state: those of the group's members
            _, group = share.groups.describe(group_id)
            names = sorted({t for m in (group.members.values() if group else ())
                            for t in m.subscribed})
            wanted = [{"topic_name": n, "partitions": None} for n in names]
        describable = context.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC,
                                               [t["topic_name"] for t in wanted])
        for topic in wanted:
            name = topic["topic_name"]
            found = _topic(context, name)
            indexes = topic["partitions"] if topic["partitions"] is not None else \
                list(range(found[1] if found else 0))
            partitions = []
            for index in indexes:
                entry = {"partition_index": index, "start_offset": UNINITIALIZED,
                         "leader_epoch": -1, "error_code": 0, "error_message": None}
                if name not in describable:
                    entry["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                elif found is None:
                    entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    result = share.persister.summary(StateKey(group_id, found[0], index))
                    entry.update(error_code=result.error, start_offset=result.start_offset,
                                 leader_epoch=result.leader_epoch)
                partitions.append(entry)
            answer["topics"].append({"topic_name": name,
                                     "topic_id": found[0] if found else uuid.UUID(int=0),
                                     "partitions": partitions})
    return {"throttle_time_ms": 0, "groups": groups}


def _changing(context: RequestContext, body: dict, operation: AclOperation
              ) -> tuple[ShareService, set[str]] | dict:
    """For altering or deleting a group's offsets: the share service and the topics the
    principal may read, or the answer refusing the request (``operation`` on the group
    refused, the group unknown here or not empty)."""
    share = enabled_share(context)
    group_id = body["group_id"]
    error = _group_error(context, share, group_id, operation)
    if not error and share is not None:
        _, group = share.groups.describe(group_id)
        if group is not None and group.members:
            error = ErrorCode.NON_EMPTY_GROUP
    if error or share is None:
        return {"throttle_time_ms": 0, "error_code": error, "error_message": None,
                "responses": []}
    return share, context.authorized_names(AclOperation.READ, ResourceType.TOPIC,
                                           [t["topic_name"] for t in body["topics"]])


def alter_share_group_offsets(context: RequestContext, body: dict) -> dict:
    checked = _changing(context, body, AclOperation.READ)
    if isinstance(checked, dict):
        return checked
    share, readable = checked
    group_id = body["group_id"]
    responses = []
    for topic in body["topics"]:
        name = topic["topic_name"]
        found = _topic(context, name)
        partitions = []
        for partition in topic["partitions"]:
            index = partition["partition_index"]
            entry = {"partition_index": index, "error_code": 0, "error_message": None}
            if name not in readable:
                entry["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif found is None or index >= found[1]:
                entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                key = StateKey(group_id, found[0], index)
                current = share.persister.summary(key)
                entry["error_code"] = share.persister.initialize(
                    key, current.state_epoch + 1, partition["start_offset"])
                share.partitions.reset(key)
            partitions.append(entry)
        responses.append({"topic_name": name, "topic_id": found[0] if found else uuid.UUID(int=0),
                          "partitions": partitions})
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "responses": responses}


def delete_share_group_offsets(context: RequestContext, body: dict) -> dict:
    checked = _changing(context, body, AclOperation.DELETE)
    if isinstance(checked, dict):
        return checked
    share, readable = checked
    group_id = body["group_id"]
    responses = []
    for topic in body["topics"]:
        name = topic["topic_name"]
        found = _topic(context, name)
        entry = {"topic_name": name, "topic_id": found[0] if found else uuid.UUID(int=0),
                 "error_code": 0, "error_message": None}
        if name not in readable:
            entry["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif found is None:
            entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        else:
            for index in range(found[1]):
                key = StateKey(group_id, found[0], index)
                error = share.persister.delete(key)
                share.partitions.reset(key)
                if error and not entry["error_code"]:
                    entry["error_code"] = error
        responses.append(entry)
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "responses": responses}
