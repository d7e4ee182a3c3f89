"""DeleteRecords: the log start offset of each partition led here moves forward, readers below
it are refused, and every partition is answered on its own as Kafka answers it."""

import pytest

from broker_lite.log.checkpoints import OffsetCheckpointFile
from broker_lite.log.files import LOG_START_OFFSET_CHECKPOINT
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_batch

from .handler_support import BROKER_ID, OTHER_BROKER
from .test_handler_fetch import answers as fetch_answers
from .test_handler_fetch import fetch_body, values


def delete_records(harness, offsets: dict[tuple[str, int], int], version: int = 2) -> dict:
    by_topic: dict[str, list[dict]] = {}
    for (topic, partition), offset in offsets.items():
        by_topic.setdefault(topic, []).append({"partition_index": partition, "offset": offset})
    response = harness.call(ApiKey.DELETE_RECORDS, version, {
        "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()],
        "timeout_ms": 1000})
    return {(t["name"], p["partition_index"]): (p["error_code"], p["low_watermark"])
            for t in response["topics"] for p in t["partitions"]}


def fill(harness, topic: str, count: int, partition: int = 0) -> None:
    for i in range(count):
        harness.log(topic, partition).append(
            build_batch([(b"k", b"v%d" % i)], timestamp=harness.clock()))


def earliest(harness, topic: str, partition: int = 0) -> int:
    response = harness.call(ApiKey.LIST_OFFSETS, 7, {
        "replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
            {"partition_index": partition, "current_leader_epoch": -1, "timestamp": -2}]}]})
    return response["topics"][0]["partitions"][0]["offset"]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_records_below_the_offset_are_gone_for_readers(harness, version):
    harness.topic("events", [BROKER_ID])
    fill(harness, "events", 10)
    assert delete_records(harness, {("events", 0): 4}, version) == {
        ("events", 0): (ErrorCode.NONE, 4)}
    assert earliest(harness, "events") == 4
    below = fetch_answers(harness.call(ApiKey.FETCH, 11, fetch_body({("events", 0): 3})))
    assert below[("events", 0)]["error_code"] == ErrorCode.OFFSET_OUT_OF_RANGE
    at = fetch_answers(harness.call(ApiKey.FETCH, 11, fetch_body({("events", 0): 4})))
    assert at[("events", 0)]["log_start_offset"] == 4
    assert values(at[("events", 0)])[:1] == [b"v4"]
    log = harness.log("events")
    checkpoint = log.directory.parent / LOG_START_OFFSET_CHECKPOINT
    assert OffsetCheckpointFile(checkpoint).read()[("events", 0)] == 4  # already on disk


def test_offset_minus_one_means_the_high_watermark(harness):
    harness.topic("events", [BROKER_ID, BROKER_ID])
    fill(harness, "events", 7, partition=1)
    assert delete_records(harness, {("events", 0): -1, ("events", 1): -1}) == {
        ("events", 0): (ErrorCode.NONE, 0), ("events", 1): (ErrorCode.NONE, 7)}
    assert earliest(harness, "events", 1) == 7
    assert harness.log("events", 1).log_end_offset == 7  # the log end stays


def test_offsets_out_of_range_and_an_earlier_offset(harness):
    harness.topic("events", [BROKER_ID, BROKER_ID, BROKER_ID])
    for partition in range(3):
        fill(harness, "events", 10, partition=partition)
    delete_records(harness, {("events", 2): 6})
    assert delete_records(harness, {("events", 0): 11, ("events", 1): -1001,
                                    ("events", 2): 3}) == {
        ("events", 0): (ErrorCode.OFFSET_OUT_OF_RANGE, -1),  # beyond the high watermark
        ("events", 1): (ErrorCode.OFFSET_OUT_OF_RANGE, -1),  # librdkafka's "no offset"
        ("events", 2): (ErrorCode.NONE, 6),  # the log start never moves back
    }
    assert [earliest(harness, "events", p) for p in range(3)] == [0, 0, 6]


def test_each_partition_is_answered_on_its_own(harness):
    harness.topic("events", [BROKER_ID, OTHER_BROKER])
    harness.topic("compacted", [BROKER_ID], config={"cleanup.policy": "compact"})
    harness.topic("both", [BROKER_ID], config={"cleanup.policy": "compact,delete"})
    harness.offsets_topic()
    fill(harness, "events", 3)
    fill(harness, "both", 3)
    assert delete_records(harness, {
        ("events", 0): 2, ("events", 1): 0, ("events", 2): 0, ("missing", 0): 0,
        ("compacted", 0): 0, ("both", 0): 1, ("__consumer_offsets", 0): 0,
    }) == {
        ("events", 0): (ErrorCode.NONE, 2),
        ("events", 1): (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1),
        ("events", 2): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
        ("missing", 0): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
        ("compacted", 0): (ErrorCode.POLICY_VIOLATION, -1),
        ("both", 0): (ErrorCode.NONE, 1),
        ("__consumer_offsets", 0): (ErrorCode.INVALID_TOPIC_EXCEPTION, -1),
    }
