"""TxnOffsetCommit and WriteTxnMarkers: offsets committed inside a transaction count once its
COMMIT marker reaches ``__consumer_offsets``; markers for partitions not led here are refused."""

import pytest

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import iter_batches

from .handler_support import BROKER_ID, OTHER_BROKER

PRODUCER_ID, EPOCH = 4000, 0


@pytest.fixture
def groups(harness):
    harness.offsets_topic()
    harness.topic("events", [BROKER_ID, OTHER_BROKER])
    harness.group = next(g for g in (f"g{i}" for i in range(20))
                         if harness.groups.partition_for(g) == 0)
    return harness


def txn_commit(harness, offsets: dict, version: int = 3, **fields) -> dict:
    by_topic: dict[str, list[dict]] = {}
    for (topic, partition), offset in offsets.items():
        by_topic.setdefault(topic, []).append(
            {"partition_index": partition, "committed_offset": offset,
             "committed_leader_epoch": -1, "committed_metadata": None})
    response = harness.call(ApiKey.TXN_OFFSET_COMMIT, version, {
        "transactional_id": "txn", "group_id": harness.group, "producer_id": PRODUCER_ID,
        "producer_epoch": EPOCH, "generation_id": -1, "member_id": "",
        "group_instance_id": None,
        "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()], **fields})
    return {(t["name"], p["partition_index"]): p["error_code"] for t in response["topics"]
            for p in t["partitions"]}


def markers(harness, committed: bool, targets: dict[str, list[int]]) -> dict:
    response = harness.call(ApiKey.WRITE_TXN_MARKERS, 1, {"markers": [
        {"producer_id": PRODUCER_ID, "producer_epoch": EPOCH, "transaction_result": committed,
         "topics": [{"name": t, "partition_indexes": p} for t, p in targets.items()],
         "coordinator_epoch": 0}]})
    [marker] = response["markers"]
    return {(t["name"], p["partition_index"]): p["error_code"] for t in marker["topics"]
            for p in t["partitions"]}


def committed_offset(harness, require_stable: bool = False):
    response = harness.call(ApiKey.OFFSET_FETCH, 7, {
        "group_id": harness.group, "topics": [{"name": "events", "partition_indexes": [0]}],
        "require_stable": require_stable})
    partition = response["topics"][0]["partitions"][0]
    return partition["error_code"], partition["committed_offset"]


def test_offsets_committed_in_a_transaction_count_once_it_commits(groups):
    assert txn_commit(groups, {("events", 0): 42, ("events", 9): 1}) == {
        ("events", 0): ErrorCode.NONE, ("events", 9): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert committed_offset(groups) == (0, -1)  # pending until the marker
    assert committed_offset(groups, require_stable=True)[0] == ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert markers(groups, True, {"__consumer_offsets": [0]}) == \
        {("__consumer_offsets", 0): ErrorCode.NONE}
    assert committed_offset(groups) == (0, 42)


def test_an_aborted_transaction_drops_its_offsets(groups):
    txn_commit(groups, {("events", 0): 42})
    markers(groups, False, {"__consumer_offsets": [0]})
    assert committed_offset(groups, require_stable=True) == (0, -1)


def test_a_commit_naming_a_member_is_checked_like_offset_commit(groups):
    assert txn_commit(groups, {("events", 0): 1}, member_id="stranger", generation_id=1) == \
        {("events", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    assert txn_commit(groups, {("events", 0): 1}, version=2, member_id="ignored before v3") == \
        {("events", 0): ErrorCode.NONE}


def test_markers_for_partitions_not_led_here(groups):
    assert markers(groups, True, {"events": [0, 1, 5], "missing": [0]}) == {
        ("events", 0): ErrorCode.NONE,
        ("events", 1): ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ("events", 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    [marker] = iter_batches(groups.log("events", 0).read(0, 1 << 20).read())
    assert marker.is_control_batch and marker.producer_id == PRODUCER_ID
