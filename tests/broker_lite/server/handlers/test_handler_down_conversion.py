"""Fetch v0-v3: the log's v2 batches down-converted to message format v0 (Fetch v0-v1) or v1
(v2-v3) as a Kafka 3.9 broker converts them, within the partition's and the response's limits;
UNSUPPORTED_VERSION when a topic turns down-conversion off, UNSUPPORTED_COMPRESSION_TYPE for
zstd."""

import pytest
from kafka.record import MemoryRecords

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import (
    BatchReader,
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    build_batch,
    build_control_batch,
    build_message_set,
    iter_records,
)

from .handler_support import BROKER_ID, records_of

T0 = 1_700_000_000_000
CLIENT_MAGIC = {0: 0, 1: 0, 2: 1, 3: 1}


def fetch(harness, version: int, partitions: dict, *, partition_max_bytes: int = 1 << 20,
          max_bytes: int = 8 << 20) -> dict:
    """{(topic, partition): answer} of a Fetch of ``partitions`` ({(topic, p): offset})."""
    by_topic: dict[str, list] = {}
    for (topic, index), offset in partitions.items():
        by_topic.setdefault(topic, []).append(
            {"partition": index, "fetch_offset": offset,
             "partition_max_bytes": partition_max_bytes})
    response = harness.call(ApiKey.FETCH, version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes,
        "topics": [{"topic": t, "partitions": p} for t, p in by_topic.items()]})
    return {(t["topic"], p["partition_index"]): p for t in response["responses"]
            for p in t["partitions"]}


def append(harness, *batches: bytes, topic: str = "events") -> None:
    for data in batches:
        harness.log(topic).append(data)


def v2(values, *, base_ts: int = T0, **options) -> bytes:
    return build_batch([(b"k%d" % i, v) for i, v in enumerate(values)], timestamp=base_ts,
                       **options)


def kafka_python(data: bytes) -> list[tuple]:
    """(offset, timestamp, key, value) read by kafka-python's legacy reader, CRCs checked."""
    records = MemoryRecords(data)
    out = []
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        out.extend((r.offset, r.timestamp, r.key, r.value) for r in batch)
    return out


@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP,
                                   CompressionType.LZ4])
def test_each_version_reads_its_message_format(harness, version, codec):
    harness.topic("events", [BROKER_ID])
    append(harness, v2([b"a", b"b"], compression=codec), v2([b"c"], compression=codec))
    answer = fetch(harness, version, {("events", 0): 0})[("events", 0)]
    assert (answer["error_code"], answer["high_watermark"]) == (0, 3)
    data = records_of(answer["records"])
    assert {b.magic for b in BatchReader(data, validate=True)} == {CLIENT_MAGIC[version]}
    timestamp = T0 if CLIENT_MAGIC[version] == 1 else None
    assert kafka_python(data) == [(0, timestamp, b"k0", b"a"), (1, timestamp, b"k1", b"b"),
                                  (2, timestamp, b"k0", b"c")]


def test_an_uncompressed_batch_is_read_from_the_fetch_offset(harness):
    harness.topic("events", [BROKER_ID])
    append(harness, v2([b"a", b"b", b"c"]))
    answer = fetch(harness, 2, {("events", 0): 1})[("events", 0)]
    assert [r.offset for r in iter_records(answer["records"])] == [1, 2]


def test_the_partition_limit_holds_after_conversion_but_the_first_batch_is_whole(harness):
    harness.topic("events", [BROKER_ID])
    first, second = v2([b"x" * 10] * 4), v2([b"y" * 10] * 4)
    append(harness, first, second)
    # The limit holds both v2 batches, not all eight converted messages (v0 takes more room):
    # the second batch's messages come as far as they fit, whole.
    limit = len(first) + len(second)
    answer = fetch(harness, 0, {("events", 0): 0}, partition_max_bytes=limit)[("events", 0)]
    data = records_of(answer["records"])
    assert len(data) <= limit
    offsets = [r.offset for r in iter_records(data)]
    assert offsets[:4] == [0, 1, 2, 3] and 4 < len(offsets) < 8
    assert len(data) == sum(b.size_in_bytes for b in BatchReader(data))  # whole messages
    # Below one batch, the first batch still comes whole (a consumer progresses).
    tiny = fetch(harness, 0, {("events", 0): 0}, partition_max_bytes=10)[("events", 0)]
    assert [r.offset for r in iter_records(tiny["records"])] == [0, 1, 2, 3]


def test_fetch_3_max_bytes_bounds_the_converted_response(harness):
    harness.topic("events", [BROKER_ID, BROKER_ID])
    for partition in (0, 1):
        harness.log("events", partition).append(v2([b"z" * 50] * 3))
    size = len(v2([b"z" * 50] * 3))
    answers = fetch(harness, 3, {("events", 0): 0, ("events", 1): 0}, max_bytes=size)
    assert [r.offset for r in iter_records(answers[("events", 0)]["records"])] == [0, 1, 2]
    assert answers[("events", 1)]["records"] == b""  # nothing left of the response's bytes


def test_turning_down_conversion_off_answers_unsupported_version(harness):
    harness.topic("events", [BROKER_ID], config={"message.downconversion.enable": "false"})
    append(harness, v2([b"a"]))
    for version in (0, 3):
        answer = fetch(harness, version, {("events", 0): 0})[("events", 0)]
        assert (answer["error_code"], answer["high_watermark"], answer["records"]) == \
            (ErrorCode.UNSUPPORTED_VERSION, -1, b"")
    assert fetch(harness, 4, {("events", 0): 0})[("events", 0)]["error_code"] == 0


def test_a_topic_in_the_clients_format_needs_no_conversion(old_protocol_harness):
    harness = old_protocol_harness  # message.format.version is honoured
    harness.topic("events", [BROKER_ID], config={"message.format.version": "0.9.0",
                                                 "message.downconversion.enable": "false"})
    message = build_message_set([(b"k", b"v")], magic=0)
    append(harness, message)
    answer = fetch(harness, 0, {("events", 0): 0})[("events", 0)]
    assert answer["error_code"] == 0
    assert records_of(answer["records"]) == message  # stored as sent, offset 0


def test_zstd_topics_and_batches_are_unsupported_compression_before_fetch_10(harness):
    harness.topic("zstd", [BROKER_ID], config={"compression.type": "zstd"})
    for version in (3, 9):
        answer = fetch(harness, version, {("zstd", 0): 0})[("zstd", 0)]
        assert answer["error_code"] == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert fetch(harness, 10, {("zstd", 0): 0})[("zstd", 0)]["error_code"] == 0
    harness.topic("events", [BROKER_ID])
    append(harness, v2([b"a"], compression=CompressionType.GZIP),
           v2([b"b"], compression=CompressionType.ZSTD))
    answer = fetch(harness, 2, {("events", 0): 0})[("events", 0)]
    assert [r.offset for r in iter_records(answer["records"])] == [0]  # up to the zstd batch
    at_zstd = fetch(harness, 2, {("events", 0): 1})[("events", 0)]
    assert at_zstd["error_code"] == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


def test_markers_are_left_out_and_aborted_records_read(harness):
    harness.topic("events", [BROKER_ID])
    txn = dict(producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
    append(harness, v2([b"aborted"], **txn),
           build_control_batch(EndTransactionMarker(ControlRecordType.ABORT, 0), producer_id=7,
                               producer_epoch=0, timestamp=T0),
           v2([b"after"]))
    answer = fetch(harness, 1, {("events", 0): 0})[("events", 0)]
    assert [(r.offset, r.value) for r in iter_records(answer["records"])] == [
        (0, b"aborted"), (2, b"after")]
    # A fetch at the marker gets what follows it.
    at_marker = fetch(harness, 1, {("events", 0): 1})[("events", 0)]
    assert [r.offset for r in iter_records(at_marker["records"])] == [2]
