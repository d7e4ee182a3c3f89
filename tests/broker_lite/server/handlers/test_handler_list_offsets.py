"""ListOffsets v0: offsets before a time, the old way (Kafka's legacyFetchOffsetsBefore):
segment boundaries by the time their files were written, up to max_num_offsets, largest first,
in ``old_style_offsets``."""

import os

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_batch

from .handler_support import BROKER_ID, OTHER_BROKER

LATEST, EARLIEST = -1, -2


def list_offsets(harness, partitions: dict, *, replica_id: int = -1) -> dict:
    """{(topic, partition): answer} for ``partitions`` ({(topic, p): (timestamp, max)})."""
    by_topic: dict[str, list] = {}
    for (topic, index), (timestamp, max_count) in partitions.items():
        by_topic.setdefault(topic, []).append(
            {"partition_index": index, "timestamp": timestamp, "max_num_offsets": max_count})
    response = harness.call(ApiKey.LIST_OFFSETS, 0, {
        "replica_id": replica_id,
        "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()]})
    return {(t["name"], p["partition_index"]): (p["error_code"], p["old_style_offsets"])
            for t in response["topics"] for p in t["partitions"]}


def three_segments(harness):
    """A log of segments based at 0, 2 and 4 (written at 1000, 2000 and 3000 s), end 5."""
    harness.topic("events", [BROKER_ID])
    log = harness.log("events")
    for base in (0, 2, 4):
        log.roll()
        for _ in range(2 if base < 4 else 1):
            log.append(build_batch([(b"k", b"v")], timestamp=harness.clock()))
    for segment, seconds in zip(log.segments, (1000, 2000, 3000), strict=True):
        os.utime(segment.log_path, (seconds, seconds))
    assert [s.base_offset for s in log.segments] == [0, 2, 4] and log.log_end_offset == 5
    return log


def test_latest_and_earliest(harness):
    three_segments(harness)
    got = list_offsets(harness, {("events", 0): (LATEST, 10)})
    assert got[("events", 0)] == (0, [5, 4, 2, 0])
    assert list_offsets(harness, {("events", 0): (LATEST, 1)})[("events", 0)] == (0, [5])
    assert list_offsets(harness, {("events", 0): (EARLIEST, 10)})[("events", 0)] == (0, [0])


def test_offsets_before_a_time_come_from_the_segments_written_by_then(harness):
    three_segments(harness)
    assert list_offsets(harness, {("events", 0): (2_500_000, 10)})[("events", 0)] == \
        (0, [2, 0])
    assert list_offsets(harness, {("events", 0): (2_000_000, 1)})[("events", 0)] == (0, [2])
    assert list_offsets(harness, {("events", 0): (999_999, 10)})[("events", 0)] == (0, [])


def test_the_log_start_offset_stands_for_the_first_segment(harness):
    log = three_segments(harness)
    log.increment_log_start_offset(1)
    assert list_offsets(harness, {("events", 0): (LATEST, 10)})[("events", 0)] == \
        (0, [5, 4, 2, 1])


def test_an_empty_log_has_its_start_only(harness):
    harness.topic("events", [BROKER_ID])
    assert list_offsets(harness, {("events", 0): (LATEST, 5)})[("events", 0)] == (0, [0])


def test_a_consumer_sees_no_offset_past_the_high_watermark(harness):
    log = three_segments(harness)
    log.high_watermark = 3  # as when followers lag behind the leader
    assert list_offsets(harness, {("events", 0): (LATEST, 10)})[("events", 0)] == \
        (0, [3, 2, 0])
    replica = list_offsets(harness, {("events", 0): (LATEST, 10)}, replica_id=OTHER_BROKER)
    assert replica[("events", 0)] == (0, [5, 4, 2, 0])


def test_errors_per_partition(harness):
    harness.topic("events", [BROKER_ID, OTHER_BROKER])
    got = list_offsets(harness, {("events", 0): (-3, 1), ("events", 1): (LATEST, 1),
                                 ("missing", 0): (LATEST, 1)})
    assert got == {("events", 0): (ErrorCode.UNSUPPORTED_VERSION, []),
                   ("events", 1): (ErrorCode.NOT_LEADER_OR_FOLLOWER, []),
                   ("missing", 0): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])}


def test_a_new_leader_whose_high_watermark_lags_its_epoch_start_answers_offset_not_available(
        harness):
    """KIP-207, as Kafka's Partition.fetchOffsetForTimestamp: until a new leader's high
    watermark reaches the offset its epoch began at, a consumer asking for the latest offset,
    or for a time found no lower, is answered OFFSET_NOT_AVAILABLE; earliest is answered, and
    so is a follower."""
    from broker_lite.zk.layout import PartitionState

    harness.topic("lagging", [BROKER_ID], followers=(OTHER_BROKER,))
    isr = (BROKER_ID, OTHER_BROKER)
    harness.partitions.on_partition_assigned("lagging", 0, PartitionState(BROKER_ID, 1, isr, 1),
                                             [BROKER_ID, OTHER_BROKER])
    log = harness.log("lagging")
    for _ in range(3):  # the follower fetches none of them: the high watermark stays at 0
        log.append(build_batch([(b"k", b"v")], timestamp=harness.clock()))
    harness.partitions.on_partition_assigned("lagging", 0, PartitionState(BROKER_ID, 2, isr, 1),
                                             [BROKER_ID, OTHER_BROKER])  # epoch 2 from 3
    assert (log.high_watermark, log.log_end_offset) == (0, 3)

    def answer(timestamp: int, replica_id: int = -1) -> tuple[int, int]:
        response = harness.call(ApiKey.LIST_OFFSETS, 5, {
            "replica_id": replica_id, "isolation_level": 0, "topics": [{"name": "lagging",
            "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                            "timestamp": timestamp}]}]})
        partition = response["topics"][0]["partitions"][0]
        return partition["error_code"], partition["offset"]

    assert answer(LATEST) == (ErrorCode.OFFSET_NOT_AVAILABLE, -1)
    assert answer(harness.clock()) == (ErrorCode.OFFSET_NOT_AVAILABLE, -1)
    assert answer(EARLIEST) == (ErrorCode.NONE, 0)
    assert answer(LATEST, replica_id=OTHER_BROKER) == (ErrorCode.NONE, 3)
