"""The consumer group records of ``__consumer_offsets``: Kafka's key and value layouts (golden
bytes), every record read back as written, and a group rebuilt from its records by the loader
as the heartbeats left it, tombstones included."""

import uuid

import pytest

from broker_lite.coordinator.consumer import records as r
from broker_lite.coordinator.consumer.config import ConsumerGroupConfig
from broker_lite.coordinator.consumer.coordinator import replay
from broker_lite.coordinator.consumer.group import ConsumerGroup
from broker_lite.coordinator.consumer.heartbeat import HeartbeatRequest, heartbeat
from broker_lite.coordinator.consumer.loader import ConsumerGroupReplay
from broker_lite.coordinator.group.records import CoordinatorRecordError

T = uuid.UUID("00000000-0000-0000-0000-00000000000a")


def test_key_layouts():
    # int16 record type, then the key's fields (not flexible)
    assert r.group_metadata_key("g").hex() == "0003" + "0001" + "67"
    assert r.member_metadata_key("g", "m").hex() == "0005" + "000167" + "00016d"
    assert r.target_assignment_member_record("g", "m", {})[0].hex() == "0007000167" + "00016d"
    assert r.current_assignment_record("g", "m", r.CurrentAssignment(1, 0, 0, {}, {}))[0] \
        .hex() == "0008000167" + "00016d"


def test_value_layouts():
    # int16 version 0, then the flexible body: int32 epoch, no tagged fields
    assert r.group_metadata_record("g", 5)[1].hex() == "0000" + "00000005" + "00"
    _, value = r.target_assignment_member_record("g", "m", {T: frozenset({2, 1})})
    # one topic: compact array length 2, uuid, compact array of 2 int32, tags; then tags
    assert value.hex() == "0000" + "02" + T.hex + "03" + "00000001" + "00000002" + "00" + "00"


@pytest.mark.parametrize("record, expected", [
    (r.group_metadata_record("g", 7), 7),
    (r.target_assignment_metadata_record("g", 3), 3),
    (r.partition_metadata_record("g", {"t": r.TopicMetadata(T, "t", 4)}),
     {"t": r.TopicMetadata(T, "t", 4)}),
    (r.target_assignment_member_record("g", "m", {T: frozenset({0, 3})}),
     {T: frozenset({0, 3})}),
    (r.current_assignment_record("g", "m", r.CurrentAssignment(
        4, 3, 1, {T: frozenset({1})}, {T: frozenset({2})})),
     r.CurrentAssignment(4, 3, 1, {T: frozenset({1})}, {T: frozenset({2})})),
    (r.member_metadata_record("g", "m", r.MemberMetadata(
        "i", "rack", "c", "/h", ("t",), "t.*", 300000, "range")),
     r.MemberMetadata("i", "rack", "c", "/h", ("t",), "t.*", 300000, "range")),
    (r.member_metadata_record("g", "m", r.MemberMetadata(
        None, None, "c", "/h", ("t",), None, 5000, None,
        r.ClassicProtocols(10000, (("range", b"\x00\x01"),)))),
     r.MemberMetadata(None, None, "c", "/h", ("t",), None, 5000, None,
                      r.ClassicProtocols(10000, (("range", b"\x00\x01"),)))),
])
def test_records_read_back(record, expected):
    key = r.parse_key(record[0])
    assert key.group == "g"
    assert r.parse_value(key.record_type, record[1]) == expected


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x09\x00\x01g", b"\x00\x05\x00\x05g"])
def test_garbage_keys_are_refused(data):
    with pytest.raises(CoordinatorRecordError):
        r.parse_key(data)


class Record:
    def __init__(self, key, value):
        self.key, self.value, self.offset = key, value, 0


class Topics:
    def topic_names(self):
        return ["t"]

    def topic(self, name):
        return (T, 4) if name == "t" else None

    def topic_name(self, topic_id):
        return "t"


def test_the_loader_rebuilds_the_group_the_heartbeats_left():
    live, written = ConsumerGroup("g"), []
    config, image = ConsumerGroupConfig(), Topics()
    for request in (
            HeartbeatRequest("g", "a", 0, rebalance_timeout_ms=1000,
                             subscribed_topic_names=("t",), owned={}),
            HeartbeatRequest("g", "b", 0, rebalance_timeout_ms=1000,
                             subscribed_topic_names=("t",), owned={}),
            HeartbeatRequest("g", "a", 1),
            HeartbeatRequest("g", "c", 0, rebalance_timeout_ms=1000,
                             subscribed_topic_names=("t",), owned={}),
            HeartbeatRequest("g", "c", -1)):
        result = heartbeat(live, request, config, image)
        written += result.records
        replay(live, result.records)
    loaded = ConsumerGroupReplay()
    assert all(loaded.replay(Record(k, v)) for k, v in written)
    assert not loaded.replay(Record(b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x00", b""))
    rebuilt = loaded.live_groups()["g"]
    assert (rebuilt.epoch, rebuilt.assignment_epoch, rebuilt.state) == \
        (live.epoch, live.assignment_epoch, live.state)
    assert rebuilt.members == live.members and set(rebuilt.members) == {"a", "b"}
    assert rebuilt.target == live.target and rebuilt.partition_epochs == live.partition_epochs
    assert rebuilt.subscription_metadata == live.subscription_metadata


def test_a_deleted_group_is_not_loaded():
    loaded = ConsumerGroupReplay()
    for key, value in [r.group_metadata_record("g", 1), *r.group_tombstones("g")]:
        loaded.replay(Record(key, value))
    assert loaded.live_groups() == {}
