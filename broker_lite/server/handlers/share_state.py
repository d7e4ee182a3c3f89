"""The share-group state APIs at the share coordinator (KIP-932): InitializeShareGroupState,
ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState and
ReadShareGroupStateSummary, sent by share-partition leaders and group coordinators
(:mod:`broker_lite.coordinator.share.persister`). Each partition is answered on its own;
NOT_COORDINATOR when this broker does not lead the key's partition of ``__share_group_state``.
They are inter-broker requests: ClusterAction on the cluster (else
CLUSTER_AUTHORIZATION_FAILED for every partition), as Kafka checks them.
"""

from __future__ import annotations

from collections.abc import Callable

from broker_lite.coordinator.share.coordinator import ShareCoordinator
from broker_lite.coordinator.share.records import StateKey
from broker_lite.coordinator.share.share_partition import StateBatch
from broker_lite.coordinator.share.state import UNINITIALIZED
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..dispatcher import RequestContext


def _each(context: RequestContext, body: dict,
          answer: Callable[[ShareCoordinator, StateKey, dict], dict], failed: dict) -> dict:
    share = context.services.share
    allowed = context.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    results = []
    for topic in body["topics"]:
        partitions = []
        for partition in topic["partitions"]:
            key = StateKey(body["group_id"], topic["topic_id"], partition["partition"])
            if not allowed:
                result = {**failed, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED}
            elif share is None or not share.enabled:
                result = {**failed, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}
            else:
                result = answer(share.coordinator, key, partition)
            partitions.append({"partition": partition["partition"], "error_message": None,
                               **result})
        results.append({"topic_id": topic["topic_id"], "partitions": partitions})
    return {"results": results}


def _batches(state) -> list[dict]:
    return [{"first_offset": b.first_offset, "last_offset": b.last_offset,
             "delivery_state": b.delivery_state, "delivery_count": b.delivery_count}
            for b in state.batches] if state is not None else []


def read_share_group_state(context: RequestContext, body: dict) -> dict:
    def answer(coordinator: ShareCoordinator, key: StateKey, partition: dict) -> dict:
        error, state = coordinator.read(key, partition["leader_epoch"])
        return {"error_code": error, "state_epoch": state.state_epoch if state else 0,
                "start_offset": state.start_offset if state else UNINITIALIZED,
                "state_batches": _batches(state)}

    return _each(context, body, answer, {"state_epoch": 0, "start_offset": UNINITIALIZED,
                                         "state_batches": []})


def read_share_group_state_summary(context: RequestContext, body: dict) -> dict:
    def answer(coordinator: ShareCoordinator, key: StateKey, partition: dict) -> dict:
        error, state = coordinator.summary(key)
        return {"error_code": error, "state_epoch": state.state_epoch if state else 0,
                "leader_epoch": state.leader_epoch if state else -1,
                "start_offset": state.start_offset if state else UNINITIALIZED}

    return _each(context, body, answer, {"state_epoch": 0, "leader_epoch": -1,
                                         "start_offset": UNINITIALIZED})


def write_share_group_state(context: RequestContext, body: dict) -> dict:
    def answer(coordinator: ShareCoordinator, key: StateKey, partition: dict) -> dict:
        return {"error_code": coordinator.write(
            key, partition["state_epoch"], partition["leader_epoch"], partition["start_offset"],
            [StateBatch(b["first_offset"], b["last_offset"], b["delivery_state"],
                        b["delivery_count"]) for b in partition["state_batches"]])}

    return _each(context, body, answer, {})


def initialize_share_group_state(context: RequestContext, body: dict) -> dict:
    def answer(coordinator: ShareCoordinator, key: StateKey, partition: dict) -> dict:
        return {"error_code": coordinator.initialize(
            key, partition["state_epoch"], partition["start_offset"])}

    return _each(context, body, answer, {})


def delete_share_group_state(context: RequestContext, body: dict) -> dict:
    def answer(coordinator: ShareCoordinator, key: StateKey, partition: dict) -> dict:
        return {"error_code": coordinator.delete(key)}

    return _each(context, body, answer, {})
