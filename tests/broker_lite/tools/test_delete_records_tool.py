"""``broker-lite delete-records`` as a user runs it: a child process against a live broker, with
Kafka's offset JSON file, checked against the partitions' log start offsets."""

import json

import pyarrow as pa
import pytest

from broker_lite.client import KafkaClient
from broker_lite.common.vocabulary import TopicPartition
from broker_lite.server.testing import bootstrap
from broker_lite.tools.delete_records import parse_offset_json
from broker_lite.tools.testing import run_tool


@pytest.fixture
def servers(broker) -> str:
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        client.admin.create_topics([("events", 2, 1)])
        with client.producer() as producer:
            for partition in (0, 1):
                producer.send_batch("events", partition,
                                    pa.table({"value": [b"v%d" % i for i in range(5)]}))
    return bootstrap(broker)


def delete_records(servers: str, tmp_path, offsets) -> object:
    path = tmp_path / "offsets.json"
    path.write_text(offsets if isinstance(offsets, str) else json.dumps(offsets))
    return run_tool("delete-records", "--bootstrap-server", servers, "--offset-json-file", path)


def test_records_are_deleted_per_partition(servers, broker, tmp_path):
    result = delete_records(servers, tmp_path, {"version": 1, "partitions": [
        {"topic": "events", "partition": 1, "offset": -1},
        {"topic": "events", "partition": 0, "offset": 3},
        {"topic": "missing", "partition": 0, "offset": 1}]})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:4] == ["Executing records delete operation",
                         "Records delete operation completed:",
                         "partition: events-0\tlow_watermark: 3",
                         "partition: events-1\tlow_watermark: 5"]
    assert lines[4].startswith("partition: missing-0\terror: UNKNOWN_TOPIC_OR_PARTITION")
    assert len(lines) == 5
    logs = broker.services.partitions
    assert (logs.leader_log("events", 0).log_start_offset,
            logs.leader_log("events", 1).log_start_offset) == (3, 5)


def test_an_offset_beyond_the_high_watermark_is_out_of_range(servers, broker, tmp_path):
    result = delete_records(servers, tmp_path, {"partitions": [
        {"topic": "events", "partition": 0, "offset": 6}]})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[2].startswith(
        "partition: events-0\terror: OFFSET_OUT_OF_RANGE (1) for events-0")
    assert broker.services.partitions.leader_log("events", 0).log_start_offset == 0


@pytest.mark.parametrize("offsets, message", [
    ("not json", "The input string is not a valid JSON"),
    ({"version": 1}, "Missing partitions field"),
    ({"version": 2, "partitions": []}, "Not supported version field value 2"),
    ({"partitions": [{"topic": "events", "partition": "0", "offset": 1}]},
     "'partition' must be a number"),
    ({"partitions": [{"topic": "events", "partition": 0, "offset": 1},
                     {"topic": "events", "partition": 0, "offset": 2}]},
     "Offset json file contains duplicate topic partitions: events-0"),
])
def test_bad_offset_files_fail(servers, tmp_path, offsets, message):
    result = delete_records(servers, tmp_path, offsets)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("broker-lite delete-records: error: ")
    assert message in result.stderr
    assert result.stdout == ""


def test_offset_json_keeps_file_order():
    text = json.dumps({"partitions": [{"topic": "b", "partition": 1, "offset": 2},
                                      {"topic": "a", "partition": 0, "offset": -1}]})
    assert parse_offset_json(text) == [(TopicPartition("b", 1), 2), (TopicPartition("a", 0), -1)]
