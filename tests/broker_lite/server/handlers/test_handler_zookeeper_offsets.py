"""OffsetCommit v0 and OffsetFetch v0: offsets kept in ZooKeeper (``services.zk_offsets``,
here a fake), apart from the group coordinator's; OffsetCommit v1's commit timestamps."""

import pytest

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey, ErrorCode

from .handler_support import BROKER_ID, OTHER_BROKER
from .test_handler_groups import commit_body, errors_of

EVENTS_0, EVENTS_1 = TopicPartition("events", 0), TopicPartition("events", 1)


@pytest.fixture
def coordinated(harness):
    """The harness with ``__consumer_offsets`` loaded and ``group``, a group it coordinates."""
    harness.offsets_topic()
    harness.topic("events", [BROKER_ID, OTHER_BROKER])
    harness.group = harness.group_led_here()
    return harness


def commit_v0(harness, group: str, offsets: dict, metadata: str = "") -> dict:
    by_topic: dict[str, list[dict]] = {}
    for (topic, partition), offset in offsets.items():
        by_topic.setdefault(topic, []).append(
            {"partition_index": partition, "committed_offset": offset,
             "committed_metadata": metadata})
    return errors_of(harness.call(ApiKey.OFFSET_COMMIT, 0, {
        "group_id": group, "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()]}))


def fetch_v0(harness, group: str, partitions: dict) -> dict:
    response = harness.call(ApiKey.OFFSET_FETCH, 0, {"group_id": group, "topics": [
        {"name": topic, "partition_indexes": indexes} for topic, indexes in partitions.items()]})
    return {(t["name"], p["partition_index"]): (p["committed_offset"], p["metadata"],
                                                 p["error_code"])
            for t in response["topics"] for p in t["partitions"]}


def test_version_0_commits_go_to_zookeeper_and_are_read_back(harness):
    harness.topic("events", [BROKER_ID, OTHER_BROKER])  # any broker serves version 0
    assert commit_v0(harness, "old-app", {("events", 0): 42, ("events", 1): 7},
                     metadata="m") == {("events", 0): 0, ("events", 1): 0}
    assert harness.services.zk_offsets.offsets == {("old-app", EVENTS_0): 42,
                                                   ("old-app", EVENTS_1): 7}
    assert fetch_v0(harness, "old-app", {"events": [0, 1]}) == {
        ("events", 0): (42, "", 0), ("events", 1): (7, "", 0)}  # no metadata is kept


def test_version_0_unknown_partitions_and_missing_commits(harness):
    harness.topic("events", [BROKER_ID])
    assert commit_v0(harness, "old-app", {("events", 0): 1, ("events", 5): 1, ("nope", 0): 1}) \
        == {("events", 0): 0, ("events", 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert fetch_v0(harness, "other-app", {"events": [0], "nope": [0]}) == {
        ("events", 0): (-1, "", 0), ("nope", 0): (-1, "", 0)}


def test_version_0_metadata_too_large(harness):
    harness.topic("events", [BROKER_ID])
    limit = harness.config["offset.metadata.max.bytes"]
    assert commit_v0(harness, "old-app", {("events", 0): 1}, metadata="x" * (limit + 1)) == {
        ("events", 0): ErrorCode.OFFSET_METADATA_TOO_LARGE}
    assert harness.services.zk_offsets.offsets == {}


def test_version_0_zookeeper_failures_are_unknown_server_errors(harness):
    harness.topic("events", [BROKER_ID])
    harness.services.zk_offsets.failure = ConnectionError("session expired")
    assert commit_v0(harness, "old-app", {("events", 0): 1}) == {
        ("events", 0): ErrorCode.UNKNOWN_SERVER_ERROR}
    assert fetch_v0(harness, "old-app", {"events": [0]}) == {
        ("events", 0): (-1, "", ErrorCode.UNKNOWN_SERVER_ERROR)}


def test_zookeeper_and_the_coordinator_keep_their_own_offsets(coordinated):
    group = coordinated.group
    commit_v0(coordinated, group, {("events", 0): 5})
    coordinated.call(ApiKey.OFFSET_COMMIT, 2, commit_body(group, "", -1, {("events", 0): 9}))
    assert fetch_v0(coordinated, group, {"events": [0]}) == {("events", 0): (5, "", 0)}
    v1 = coordinated.call(ApiKey.OFFSET_FETCH, 1, {"group_id": group, "topics": [
        {"name": "events", "partition_indexes": [0]}]})
    assert v1["topics"][0]["partitions"][0]["committed_offset"] == 9


def test_version_1_commit_timestamps(coordinated):
    group = coordinated.group
    body = commit_body(group, "", -1, {("events", 0): 3, ("events", 1): 4})
    body["topics"][0]["partitions"][0]["commit_timestamp"] = 1_234
    assert errors_of(coordinated.call(ApiKey.OFFSET_COMMIT, 1, body)) == {
        ("events", 0): 0, ("events", 1): 0}
    _, offsets = coordinated.groups.handle_fetch_offsets(group, [EVENTS_0, EVENTS_1])
    assert (offsets[EVENTS_0].offset, offsets[EVENTS_0].commit_timestamp) == (3, 1_234)
    assert (offsets[EVENTS_1].offset, offsets[EVENTS_1].commit_timestamp) == \
        (4, coordinated.clock())  # -1: the broker's clock
