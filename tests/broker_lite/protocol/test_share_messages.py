"""The share groups' messages (KIP-932) byte for byte where they are new to the codec: a
nullable struct (ShareGroupHeartbeat's Assignment: an int8 -1 for null, 1 before the struct, as
Kafka's generated code writes it and librdkafka reads it), and ShareFetch v2's field."""

import uuid

import pytest

from broker_lite.protocol import ApiKey, ProtocolError, Reader, Writer, decode, encode
from broker_lite.protocol.apis import API_SCHEMAS

HEARTBEAT = API_SCHEMAS[ApiKey.SHARE_GROUP_HEARTBEAT].response
TOPIC = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


def encoded(body: dict) -> bytes:
    writer = Writer()
    encode(HEARTBEAT, 1, body, writer)
    return bytes(writer.getvalue())


BASE = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "member_id": "m",
        "member_epoch": 3, "heartbeat_interval_ms": 5000}
# throttle, error, null message (compact: 0), "m" (compact: 2, "m"), epoch, interval
PREFIX = (b"\x00\x00\x00\x00" + b"\x00\x00" + b"\x00" + b"\x02m" + b"\x00\x00\x00\x03"
          + b"\x00\x00\x13\x88")


def test_a_null_assignment_is_one_byte_minus_one():
    assert encoded({**BASE, "assignment": None}) == PREFIX + b"\xff" + b"\x00"
    assert decode(HEARTBEAT, 1, Reader(memoryview(PREFIX + b"\xff\x00")))["assignment"] is None


def test_an_assignment_is_marked_1_then_its_fields():
    body = {**BASE, "assignment": {"topic_partitions": [{"topic_id": TOPIC,
                                                         "partitions": [0, 2]}]}}
    data = encoded(body)
    assert data == (PREFIX + b"\x01" + b"\x02" + TOPIC.bytes + b"\x03"
                    + b"\x00\x00\x00\x00\x00\x00\x00\x02" + b"\x00" + b"\x00" + b"\x00")
    again = decode(HEARTBEAT, 1, Reader(memoryview(data)))
    assert again["assignment"]["topic_partitions"][0]["partitions"] == [0, 2]


def test_a_truncated_assignment_is_a_protocol_error():
    with pytest.raises(ProtocolError):
        decode(HEARTBEAT, 1, Reader(memoryview(PREFIX + b"\x01\x02")))


def test_share_fetch_v2_carries_the_acquire_mode_and_v1_does_not():
    request = API_SCHEMAS[ApiKey.SHARE_FETCH].request
    body = {"group_id": "g", "member_id": "m", "share_session_epoch": 0, "max_wait_ms": 0,
            "min_bytes": 1, "max_bytes": 1, "max_records": 1, "batch_size": 1,
            "share_acquire_mode": 1, "topics": [], "forgotten_topics_data": []}
    sizes = {}
    for version in (1, 2):
        writer = Writer()
        encode(request, version, body, writer)
        data = bytes(writer.getvalue())
        sizes[version] = len(data)
        assert decode(request, version, Reader(memoryview(data)))["share_acquire_mode"] == \
            (1 if version == 2 else 0)
    assert sizes[2] == sizes[1] + 1
