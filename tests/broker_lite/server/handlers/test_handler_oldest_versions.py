"""The oldest versions Kafka 3.9 serves of the admin and replication APIs (those Kafka 4
dropped, KIP-896): CreateTopics v0-v1, DeleteTopics v0, DescribeConfigs v0 (``is_default``
instead of a config source), OffsetForLeaderEpoch v0-v1 (no epoch in the answer), WriteTxnMarkers
v0; each answered in its version's fields."""

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_batch
from broker_lite.zk.admin import TopicSpec

from .handler_support import BROKER_ID

TOPIC = 2


def test_create_topics_v0_and_v1(harness):
    def create(version: int, name: str, **fields) -> dict:
        [result] = harness.call(ApiKey.CREATE_TOPICS, version, {"topics": [
            {"name": name, "num_partitions": 2, "replication_factor": 1, "assignments": [],
             "configs": [{"name": "cleanup.policy", "value": "compact"}]}],
            "timeout_ms": 5000, **fields})["topics"]
        return result

    assert create(0, "zero")["error_code"] == 0
    assert create(1, "checked", validate_only=True)["error_code"] == 0
    assert harness.services.admin.created == [
        TopicSpec("zero", 2, 1, [], {"cleanup.policy": "compact"})]  # validate_only: nothing


def test_delete_topics_v0(harness):
    harness.topic("doomed", [BROKER_ID])
    harness.partitions.on_partition_removed("doomed", 0, delete=True)  # as the controller would
    response = harness.call(ApiKey.DELETE_TOPICS, 0, {"topic_names": ["doomed", "never"],
                                                      "timeout_ms": 5000})
    assert [(r["name"], r["error_code"]) for r in response["responses"]] == \
        [("doomed", 0), ("never", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]


def test_describe_configs_v0_tells_defaults_by_is_default(harness):
    harness.topic("events", [BROKER_ID])
    harness.services.admin.configs["events"] = {"cleanup.policy": "compact"}
    [result] = harness.call(ApiKey.DESCRIBE_CONFIGS, 0, {"resources": [
        {"resource_type": TOPIC, "resource_name": "events",
         "configuration_keys": ["cleanup.policy", "segment.bytes"]}]})["results"]
    assert result["error_code"] == 0
    assert [(c["name"], c["value"], c["is_default"], c["synonyms"])
            for c in result["configs"]] == [("cleanup.policy", "compact", False, []),
                                           ("segment.bytes", "1073741824", True, [])]


def test_offset_for_leader_epoch_v0_and_v1(harness):
    harness.topic("events", [BROKER_ID], epoch=3)
    harness.log("events").append(build_batch([(b"k", b"v")] * 4, timestamp=harness.clock()),
                                 partition_leader_epoch=3)
    for version in (0, 1):
        response = harness.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, {"topics": [
            {"topic": "events", "partitions": [{"partition": 0, "leader_epoch": 3}]}]})
        [answer] = response["topics"][0]["partitions"]
        assert (answer["error_code"], answer["end_offset"]) == (0, 4)
        assert answer["leader_epoch"] == 3  # in the body; v0 does not send it


def test_write_txn_markers_v0(harness):
    harness.topic("events", [BROKER_ID])
    harness.log("events").append(build_batch(
        [(b"k", b"v")], timestamp=harness.clock(), producer_id=77, producer_epoch=0,
        base_sequence=0, is_transactional=True))
    response = harness.call(ApiKey.WRITE_TXN_MARKERS, 0, {"markers": [
        {"producer_id": 77, "producer_epoch": 0, "transaction_result": True,
         "topics": [{"name": "events", "partition_indexes": [0]}], "coordinator_epoch": 0}]})
    [marker] = response["markers"]
    assert [(p["partition_index"], p["error_code"]) for p in marker["topics"][0]["partitions"]] \
        == [(0, 0)]
    assert harness.log("events").last_stable_offset == 2
