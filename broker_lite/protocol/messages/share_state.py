"""The share-group state APIs (KIP-932), between brokers: a share-partition leader reads and
writes the state of its share-partitions at their share coordinator (the leader of the key's
partition of ``__share_group_state``), and the group coordinator initializes and deletes it:
InitializeShareGroupState (83), ReadShareGroupState (84), WriteShareGroupState (85),
DeleteShareGroupState (86), ReadShareGroupStateSummary (87).

A state batch is a range of offsets in one delivery state: 0 AVAILABLE, 2 ACKNOWLEDGED,
4 ARCHIVED (acquired records are written as available: a lock does not outlive its leader).
"""

from ..schema import INT8, INT16, INT32, INT64, STRING, UUID, A, F, Message, Request, Response

_STATE_BATCHES = [
    F("FirstOffset", INT64, "0+"),
    F("LastOffset", INT64, "0+"),
    F("DeliveryState", INT8, "0+"),
    F("DeliveryCount", INT16, "0+"),
]


def _results(name: str, api_key: int, result: str, fields: list) -> Message:
    return Response(f"{name}Response", api_key, "0", "0+", [
        A("Results", result, "0+", [
            F("TopicId", UUID, "0+"),
            A("Partitions", "PartitionResult", "0+", [
                F("Partition", INT32, "0+"),
                F("ErrorCode", INT16, "0+"),
                F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
                *fields,
            ]),
        ]),
    ])


def _request(name: str, api_key: int, data: str, fields: list) -> Message:
    return Request(f"{name}Request", api_key, "0", "0+", [
        F("GroupId", STRING, "0+"),
        A("Topics", data, "0+", [
            F("TopicId", UUID, "0+"),
            A("Partitions", "PartitionData", "0+", [F("Partition", INT32, "0+"), *fields]),
        ]),
    ])


INITIALIZE_SHARE_GROUP_STATE_REQUEST = _request(
    "InitializeShareGroupState", 83, "InitializeStateData",
    [F("StateEpoch", INT32, "0+"), F("StartOffset", INT64, "0+")])
INITIALIZE_SHARE_GROUP_STATE_RESPONSE = _results("InitializeShareGroupState", 83,
                                                 "InitializeStateResult", [])

READ_SHARE_GROUP_STATE_REQUEST = _request(
    "ReadShareGroupState", 84, "ReadStateData", [F("LeaderEpoch", INT32, "0+")])
READ_SHARE_GROUP_STATE_RESPONSE = _results("ReadShareGroupState", 84, "ReadStateResult", [
    F("StateEpoch", INT32, "0+"),
    F("StartOffset", INT64, "0+"),  # -1: not initialized
    A("StateBatches", "StateBatch", "0+", _STATE_BATCHES),
])

WRITE_SHARE_GROUP_STATE_REQUEST = _request(
    "WriteShareGroupState", 85, "WriteStateData", [
        F("StateEpoch", INT32, "0+"),
        F("LeaderEpoch", INT32, "0+"),
        F("StartOffset", INT64, "0+"),  # -1: not changed
        A("StateBatches", "StateBatch", "0+", _STATE_BATCHES),
    ])
WRITE_SHARE_GROUP_STATE_RESPONSE = _results("WriteShareGroupState", 85, "WriteStateResult", [])

DELETE_SHARE_GROUP_STATE_REQUEST = _request(
    "DeleteShareGroupState", 86, "DeleteStateData", [])
DELETE_SHARE_GROUP_STATE_RESPONSE = _results("DeleteShareGroupState", 86, "DeleteStateResult", [])

READ_SHARE_GROUP_STATE_SUMMARY_REQUEST = _request(
    "ReadShareGroupStateSummary", 87, "ReadStateSummaryData", [F("LeaderEpoch", INT32, "0+")])
READ_SHARE_GROUP_STATE_SUMMARY_RESPONSE = _results("ReadShareGroupStateSummary", 87,
                                                   "ReadStateSummaryResult", [
    F("StateEpoch", INT32, "0+"),
    F("LeaderEpoch", INT32, "0+"),
    F("StartOffset", INT64, "0+"),
])

__all__ = [
    "DELETE_SHARE_GROUP_STATE_REQUEST",
    "DELETE_SHARE_GROUP_STATE_RESPONSE",
    "INITIALIZE_SHARE_GROUP_STATE_REQUEST",
    "INITIALIZE_SHARE_GROUP_STATE_RESPONSE",
    "READ_SHARE_GROUP_STATE_REQUEST",
    "READ_SHARE_GROUP_STATE_RESPONSE",
    "READ_SHARE_GROUP_STATE_SUMMARY_REQUEST",
    "READ_SHARE_GROUP_STATE_SUMMARY_RESPONSE",
    "WRITE_SHARE_GROUP_STATE_REQUEST",
    "WRITE_SHARE_GROUP_STATE_RESPONSE",
]
