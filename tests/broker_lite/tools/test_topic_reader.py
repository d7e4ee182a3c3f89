"""The tools' topic reader against a real broker_lite: positions the log does not hold are reset
as ``auto.offset.reset`` says, and a record changed on disk stops it with an error naming the
topic, partition and offset unless ``check.crcs=false``."""

import uuid

import pyarrow as pa
import pytest

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.client.errors import CorruptMessageError
from broker_lite.server.testing import bootstrap
from broker_lite.tools.common import ToolError
from broker_lite.tools.topic_reader import TopicReader


@pytest.fixture
def topic(broker):
    """A one-partition topic holding values ``v-0`` to ``v-4``."""
    name = f"reader-{uuid.uuid4().hex[:6]}"
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        client.admin.create_topics([(name, 1, 1)])
        with client.producer() as producer:
            producer.send_batch(name, 0, pa.record_batch(
                {"value": [b"v-%d-xxxx" % i for i in range(5)]}))
    return name


def read_all(reader: TopicReader, rounds: int = 3) -> list[bytes]:
    return [r.value for _ in range(rounds) for c in reader.poll(0) for r in c.records()]


@pytest.mark.parametrize("reset, position", [("earliest", 0), ("latest", 5)])
def test_an_out_of_range_position_is_reset(broker, topic, reset, position):
    tp = TopicPartition(topic, 0)
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        reader = TopicReader(client, {tp: 50}, isolation_level="read_uncommitted", reset=reset)
        assert reader.poll(0) == [] and reader.positions == {tp: position}
        assert len(read_all(reader)) == 5 - position


def test_without_a_reset_policy_an_out_of_range_position_is_an_error(broker, topic):
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        reader = TopicReader(client, {TopicPartition(topic, 0): 50},
                             isolation_level="read_uncommitted", reset="none")
        with pytest.raises(ToolError, match=f"offset 50 is out of range for {topic}-0 and "
                                            "auto.offset.reset is none"):
            reader.poll(0)
        with pytest.raises(ToolError, match=r"auto\.offset\.reset must be one of"):
            TopicReader(client, {}, isolation_level="read_uncommitted", reset="smallest")


def test_a_record_changed_on_disk_stops_the_reader_unless_crcs_are_not_checked(broker, topic):
    path = broker.logs.get(topic, 0).segments[0].log_path
    with open(path, "r+b") as segment:  # the broker serves the file's bytes as they are
        segment.seek(path.read_bytes().index(b"v-3-xxxx") + 7)
        segment.write(b"y")
    tp = TopicPartition(topic, 0)
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        reader = TopicReader(client, {tp: 0}, isolation_level="read_uncommitted")
        with pytest.raises(CorruptMessageError,
                           match=f"corrupt record batch in {topic}-0 at offset 0: .*CRC"):
            reader.poll(0)
        assert reader.positions == {tp: 0}
    with KafkaClient({"bootstrap.servers": bootstrap(broker), "check.crcs": "false"}) as client:
        reader = TopicReader(client, {tp: 0}, isolation_level="read_uncommitted")
        assert read_all(reader)[3] == b"v-3-xxxy"
