"""Produce v0-v2: message sets (formats v0/v1), converted to the log's v2 on append, answered
in each version's fields; corrupt or truncated sets are CORRUPT_MESSAGE with nothing appended."""

import pytest

from broker_lite.protocol import ErrorCode
from broker_lite.records import (
    BatchReader,
    CompressionType,
    TimestampType,
    build_batch,
    build_message_set,
    iter_records,
)

from .handler_support import BASE_MS, BROKER_ID
from .test_handler_produce import answers, produce


def stored(harness, topic: str = "events") -> list:
    log = harness.log(topic)
    return list(BatchReader(log.read(0, 1 << 20).read(), validate=True))


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1)])
@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.SNAPPY])
def test_message_sets_are_appended_as_v2_batches(harness, version, magic, codec):
    harness.topic("events", [BROKER_ID])
    for i in range(2):
        data = build_message_set([(b"k", b"v%d" % i), (None, b"w%d" % i)], magic=magic,
                                 compression=codec, timestamp=BASE_MS - 10)
        (answer,) = answers(produce(harness, {("events", 0): data}, version=version)).values()
        assert (answer["error_code"], answer["base_offset"]) == (0, 2 * i)
    assert [(b.magic, b.compression, b.base_offset) for b in stored(harness)] == [
        (2, codec, 0), (2, codec, 2)]
    records = list(iter_records(harness.log("events").read(0, 1 << 20).read()))
    assert [(r.offset, r.key, r.value, r.timestamp) for r in records] == [
        (0, b"k", b"v0", BASE_MS - 10 if magic else -1),
        (1, None, b"w0", BASE_MS - 10 if magic else -1),
        (2, b"k", b"v1", BASE_MS - 10 if magic else -1),
        (3, None, b"w1", BASE_MS - 10 if magic else -1)]


def test_version_2_answers_the_log_append_time(harness):
    harness.topic("events", [BROKER_ID], config={"message.timestamp.type": "LogAppendTime"})
    data = build_message_set([(b"k", b"v")], magic=1, timestamp=5)
    v2 = answers(produce(harness, {("events", 0): data}, version=2))[("events", 0)]
    assert (v2["error_code"], v2["log_append_time_ms"]) == (0, harness.clock())
    (record,) = iter_records(harness.log("events").read(0, 1 << 20).read())
    assert (record.timestamp, record.timestamp_type) == \
        (harness.clock(), TimestampType.LOG_APPEND_TIME)


def test_a_topic_kept_in_message_format_v1_stores_v1(old_protocol_harness):
    harness = old_protocol_harness  # message.format.version is honoured
    harness.topic("events", [BROKER_ID], config={"message.format.version": "0.10.2"})
    produce(harness, {("events", 0): build_message_set([(b"k", b"v")], magic=0)}, version=0)
    produce(harness, {("events", 0): build_message_set([(b"k", b"w")], magic=1, timestamp=7)},
            version=2)
    assert [(b.magic, b.offset, b.timestamp) for b in stored(harness)] == [(1, 0, -1),
                                                                         (1, 1, 7)]


@pytest.mark.parametrize("damage", ["crc", "truncated", "short-header"])
def test_a_corrupt_or_truncated_message_set_is_corrupt_message(harness, damage):
    harness.topic("events", [BROKER_ID])
    data = bytearray(build_message_set([(b"a", b"1"), (b"b", b"2")], magic=0))
    if damage == "crc":
        data[27] ^= 0x40  # the first message's value, under its CRC
    elif damage == "truncated":
        data = data[:-4]
    else:
        data = data + b"\x00" * 9  # a few bytes of a next message: less than its header
    (answer,) = answers(produce(harness, {("events", 0): bytes(data)}, version=0)).values()
    assert (answer["error_code"], answer["base_offset"]) == (ErrorCode.CORRUPT_MESSAGE, -1)
    assert harness.log("events").log_end_offset == 0


def test_version_0_and_1_responses_encode_without_the_newer_fields(harness):
    harness.topic("events", [BROKER_ID])
    data = build_message_set([(b"k", b"v")], magic=0)
    for version in (0, 1):
        response = produce(harness, {("events", 0): data}, version=version)
        (answer,) = answers(response).values()
        assert answer["error_code"] == 0
    assert harness.log("events").log_end_offset == 2


def test_versions_from_3_take_one_record_batch_and_zstd_from_7(harness):
    harness.topic("events", [BROKER_ID])
    message_set = build_message_set([(b"k", b"v")], magic=1, timestamp=5)
    (answer,) = answers(produce(harness, {("events", 0): message_set}, version=3)).values()
    assert answer["error_code"] == ErrorCode.INVALID_RECORD
    zstd = build_batch([(b"k", b"v")], timestamp=5, compression=CompressionType.ZSTD)
    (answer,) = answers(produce(harness, {("events", 0): zstd}, version=6)).values()
    assert answer["error_code"] == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    two_batches = build_batch([(b"k", b"v")], timestamp=5) * 2
    (answer,) = answers(produce(harness, {("events", 0): two_batches}, version=3)).values()
    assert answer["error_code"] == ErrorCode.INVALID_RECORD
    assert harness.log("events").log_end_offset == 0
    for version in (2, 7):  # versions 0-2 take any format, as Kafka's do
        (answer,) = answers(produce(harness, {("events", 0): zstd}, version=version)).values()
        assert answer["error_code"] == 0
