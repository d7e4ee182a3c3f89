"""Appends in another message format than the log's: converted as Kafka's LogValidator converts
them (up to v2 by default, down to v0/v1 for a log whose message.format.version keeps an older
format), and the checks every append gets: CRCs (inner messages too), sizes, one magic, one
compressed set per append. A refused append writes nothing."""

import struct
from dataclasses import replace

import crc32c
import pytest
from log_support import LogOpener
from manual_clock import NOW

from broker_lite.config.topic import LogConfig
from broker_lite.log import InvalidRecordError, Log, validator
from broker_lite.log.errors import UnsupportedForMessageFormatError
from broker_lite.log.record_checks import RecordRules
from broker_lite.log.validator import _sound_lone_batch, validate_and_assign_offsets
from broker_lite.records import (
    BatchReader,
    CompressionType,
    CorruptRecordError,
    RecordTooLargeError,
    TimestampType,
    build_batch,
    build_message_set,
    compress,
    iter_records,
)
from broker_lite.records.message_set import encode_message
from broker_lite.records.record_batch import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    HEADER,
    TIMESTAMP_TYPE_FLAG,
)

GZIP, NONE, SNAPPY = CompressionType.GZIP, CompressionType.NONE, CompressionType.SNAPPY


@pytest.fixture
def open_log(tmp_path):
    opener = LogOpener(tmp_path, lambda: NOW, LogConfig(), name=None)
    yield lambda **overrides: opener(replace(LogConfig(), **overrides))
    opener.close_all()


def stored(log: Log) -> list:
    return list(BatchReader(log.read(0, 1 << 20).read(), validate=True))


def records(log: Log) -> list[tuple]:
    return [(r.offset, r.key, r.value, r.timestamp, r.timestamp_type)
            for r in iter_records(log.read(0, 1 << 20).read())]


# -- up-conversion to v2 -------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [NONE, GZIP, SNAPPY])
def test_a_v0_message_set_becomes_one_v2_batch_without_timestamps(open_log, codec):
    log = open_log()
    log.append(build_batch([(b"k", b"first")], timestamp=NOW))
    appended = log.append(build_message_set([(b"a", b"1"), (None, b"2"), (b"c", None)], magic=0,
                                            compression=codec))
    assert (appended.first_offset, appended.last_offset, appended.record_count) == (1, 3, 3)
    (_, converted) = stored(log)
    assert (converted.magic, converted.compression, converted.base_offset,
            converted.record_count, converted.max_timestamp) == (2, codec, 1, 3, -1)
    assert records(log)[1:] == [(1, b"a", b"1", -1, TimestampType.CREATE_TIME),
                                (2, None, b"2", -1, TimestampType.CREATE_TIME),
                                (3, b"c", None, -1, TimestampType.CREATE_TIME)]


@pytest.mark.parametrize("codec", [NONE, GZIP])
def test_v1_messages_keep_their_timestamps_in_v2(open_log, codec):
    log = open_log()
    data = b"".join(build_message_set([(b"k%d" % i, b"v")], magic=1, timestamp=NOW - i)
                    for i in range(3)) if codec is NONE else \
        build_message_set([(b"k0", b"v"), (b"k1", b"v")], magic=1, compression=codec,
                          timestamp=NOW - 5)
    log.append(data)
    (converted,) = stored(log)
    assert converted.magic == 2 and converted.compression is codec
    got = records(log)
    assert all(ts == (NOW - offset if codec is NONE else NOW - 5)
               for offset, _, _, ts, _ in got)
    assert converted.max_timestamp == max(ts for *_, ts, _ in got)


def test_log_append_time_stamps_converted_records(open_log):
    log = open_log(message_timestamp_type="LogAppendTime")
    appended = log.append(build_message_set([(b"a", b"1"), (b"b", b"2")], magic=0,
                                            compression=GZIP))
    (converted,) = stored(log)
    assert (converted.timestamp_type, converted.max_timestamp) == \
        (TimestampType.LOG_APPEND_TIME, NOW)
    assert appended.max_timestamp == NOW
    assert {(ts, kind) for *_, ts, kind in records(log)} == {(NOW, TimestampType.LOG_APPEND_TIME)}


def test_irregular_inner_offsets_are_renumbered(open_log):
    log = open_log()
    log.append(build_batch([(b"k", b"v")] * 5, timestamp=NOW))
    inner = b"".join(encode_message(o, 1, 0, NOW, b"k", b"v%d" % o) for o in (3, 9, 10))
    wrapper = encode_message(0, 1, int(GZIP), NOW, None, compress(GZIP, inner, magic=1))
    log.append(wrapper)
    assert [(o, v) for o, _, v, _, _ in records(log)][5:] == [(5, b"v3"), (6, b"v9"),
                                                            (7, b"v10")]


# -- an older message format ---------------------------------------------------------------------


def test_v0_into_a_v1_log_and_v2_into_a_v0_log(open_log):
    v1_log = open_log(message_format_version="0.10.2")
    v1_log.append(build_message_set([(b"a", b"1")], magic=0))
    (message,) = stored(v1_log)
    assert (message.magic, message.timestamp) == (1, -1)
    v0_log = open_log(message_format_version="0.8.2")
    v0_log.append(build_batch([(b"a", b"1"), (b"b", b"2")], timestamp=NOW, compression=SNAPPY))
    (wrapper,) = stored(v0_log)
    assert (wrapper.magic, wrapper.compression, wrapper.offset) == (0, SNAPPY, 1)
    assert [(o, k) for o, k, *_ in records(v0_log)] == [(0, b"a"), (1, b"b")]


def test_an_uncompressed_v2_batch_becomes_one_message_per_record_in_a_v1_log(open_log):
    log = open_log(message_format_version="0.10.0")
    appended = log.append(build_batch([(b"a", b"1"), (b"b", b"2")], timestamp=NOW))
    assert [(b.magic, b.offset, b.timestamp) for b in stored(log)] == [(1, 0, NOW), (1, 1, NOW)]
    # each message is an entry of its own for the indexes
    assert [(b.last_offset, b.size) for b in appended.batches] == [
        (b.offset, b.size_in_bytes) for b in stored(log)]


@pytest.mark.parametrize("options", [
    {"producer_id": 5, "producer_epoch": 0, "base_sequence": 0},
    {"producer_id": 5, "producer_epoch": 0, "base_sequence": 0, "is_transactional": True},
], ids=["idempotent", "transactional"])
def test_a_v1_log_refuses_idempotent_and_transactional_batches(open_log, options):
    log = open_log(message_format_version="0.10.2")
    with pytest.raises(UnsupportedForMessageFormatError, match="v1"):
        log.append(build_batch([(b"k", b"v")], timestamp=NOW, **options))
    assert log.log_end_offset == 0


def test_a_v1_log_refuses_headers(open_log):
    log = open_log(message_format_version="0.10.2")
    with pytest.raises(UnsupportedForMessageFormatError, match="headers"):
        log.append(build_batch([(b"k", b"v", [("h", b"1")])], timestamp=NOW))
    assert log.log_end_offset == 0


# -- what every append is checked for -------------------------------------------------------------


def test_two_compressed_message_sets_in_one_append_are_refused(open_log):
    log = open_log()
    one = build_message_set([(b"a", b"1")], magic=1, compression=GZIP, timestamp=NOW)
    with pytest.raises(InvalidRecordError, match="alone"):
        log.append(one + one)
    assert log.log_end_offset == 0


def test_batches_of_different_magic_in_one_append_are_refused(open_log):
    log = open_log()
    mixed = build_message_set([(b"a", b"1")], magic=0) + build_batch([(b"b", b"2")],
                                                                     timestamp=NOW)
    with pytest.raises(InvalidRecordError, match="magic 2, not the magic 0"):
        log.append(mixed)
    assert log.log_end_offset == 0


@pytest.mark.parametrize("format_version", ["0.10.2", "3.0"], ids=["kept", "converted"])
def test_a_corrupt_inner_message_is_corrupt(open_log, format_version):
    log = open_log(message_format_version=format_version)
    inner = bytearray(encode_message(0, 1, 0, NOW, b"k", b"v") +
                      encode_message(1, 1, 0, NOW, b"k", b"w"))
    inner[-1] ^= 0xFF  # the second message's value, under its CRC
    wrapper = encode_message(1, 1, int(GZIP), NOW, None, compress(GZIP, bytes(inner), magic=1))
    with pytest.raises(CorruptRecordError) as raised:
        log.append(wrapper)
    assert not isinstance(raised.value, InvalidRecordError)
    assert log.log_end_offset == 0


@pytest.mark.parametrize("damage", ["crc", "truncated"])
def test_a_damaged_v0_message_set_is_corrupt_and_nothing_is_appended(open_log, damage):
    log = open_log()
    data = bytearray(build_message_set([(b"a", b"1"), (b"b", b"2")], magic=0))
    if damage == "crc":
        data[-1] ^= 0x01
    else:
        data = data[:-3]
    with pytest.raises(CorruptRecordError):
        log.append(bytes(data))
    assert (log.log_end_offset, log.active_segment.size) == (0, 0)


def test_the_converted_batch_must_fit_max_message_bytes():
    message = build_message_set([(b"k", b"v" * 100)], magic=0)
    with pytest.raises(RecordTooLargeError, match="converted"):
        validate_and_assign_offsets(message, 0, max_message_bytes=len(message) + 1)
    assert validate_and_assign_offsets(message, 0, max_message_bytes=len(message) + 1,
                                       record_version=0).record_count == 1


def test_compacted_logs_refuse_legacy_records_without_a_key(open_log):
    log = open_log(cleanup_policy=("compact",))
    with pytest.raises(InvalidRecordError, match="key"):
        log.append(build_message_set([(None, b"v")], magic=0))


def test_one_whole_batch_and_the_bytes_around_it():
    # A lone batch (what Produce v3+ carries) is checked without walking the buffer; what the
    # walk finds around it must still count: a torn tail, a second batch, a damaged batch.
    batch = build_batch([(b"k", b"v%d" % i) for i in range(3)], timestamp=NOW)
    second = build_batch([(b"k", b"w")], timestamp=NOW)

    def validate(records):
        return validate_and_assign_offsets(records, 7, max_message_bytes=1 << 20)

    alone = validate(batch)
    assert (alone.first_offset, alone.last_offset, alone.record_count) == (7, 9, 3)
    written = b"".join(bytes(c) for c in alone.chunks)
    assert written[:8] == (7).to_bytes(8, "big") and written[16:] == batch[16:]
    together = validate(batch + second)
    assert (together.first_offset, together.last_offset, len(together.batches)) == (7, 10, 2)
    with pytest.raises(CorruptRecordError, match="partial batch"):
        validate(batch + second[:20])
    with pytest.raises(CorruptRecordError, match="partial batch"):
        validate(batch[:-1])
    damaged = bytearray(batch)
    damaged[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC"):
        validate(bytes(damaged))
    with pytest.raises(RecordTooLargeError):
        validate_and_assign_offsets(batch, 0, max_message_bytes=len(batch) - 1)


# -- a sound lone batch, read at once ------------------------------------------------------------


def rewritten(batch: bytes, **fields) -> bytes:
    """``batch`` with header fields replaced, its CRC made right again."""
    names = ("base_offset", "batch_length", "partition_leader_epoch", "magic", "crc",
             "attributes", "last_offset_delta", "base_timestamp", "max_timestamp",
             "producer_id", "producer_epoch", "base_sequence", "record_count")
    values = dict(zip(names, HEADER.unpack_from(batch), strict=True))
    values.update(fields)
    data = bytearray(batch)
    HEADER.pack_into(data, 0, *values.values())
    struct.pack_into(">I", data, CRC_OFFSET, crc32c.crc32c(bytes(data[ATTRIBUTES_OFFSET:])))
    return bytes(data)


def outcome(records, **options):
    """What validating ``records`` at offset 40 gives: the result's every field, or the error."""
    options = {"max_message_bytes": 1 << 20, "partition_leader_epoch": 3, **options}
    try:
        result = validate_and_assign_offsets(records, 40, **options)
    except Exception as exc:  # compared, whatever it is
        return type(exc), str(exc)
    return (b"".join(bytes(c) for c in result.chunks), result.batches, result.first_offset,
            result.last_offset, result.max_timestamp, result.offset_of_max_timestamp,
            result.record_count,
            [(bytes(batch.raw()), offset, ts) for batch, offset, ts in result.producers])


PLAIN = build_batch([(b"k%d" % i, b"v" * i) for i in range(5)], timestamp=NOW)
COMPACTED = RecordRules("t-0", compacted=True)
BOUNDED = RecordRules("t-0", timestamp_before_max_ms=1000, now_ms=NOW)


@pytest.mark.parametrize("records, options, read_at_once", [
    (PLAIN, {}, True),
    (build_batch([(None, b"v")], timestamp=-1), {}, True),  # no timestamp
    (build_batch([(b"k", b"v")] * 3, timestamp=NOW, producer_id=9, producer_epoch=1,
                 base_sequence=4), {}, True),
    (build_batch([(b"k", b"v")] * 3, timestamp=NOW, producer_id=9, producer_epoch=1,
                 base_sequence=0, is_transactional=True), {}, True),
    (build_batch([(b"k", b"v" * 300)] * 4, timestamp=NOW, compression=GZIP), {}, True),
    (PLAIN, {"record_rules": RecordRules("t-0", now_ms=NOW)}, True),  # rules without checks
    (PLAIN, {"record_rules": COMPACTED}, False),
    (build_batch([(None, b"v")], timestamp=NOW), {"record_rules": COMPACTED}, False),
    (PLAIN, {"record_rules": BOUNDED}, False),
    (rewritten(PLAIN, attributes=TIMESTAMP_TYPE_FLAG),
     {"record_rules": RecordRules("t-0", now_ms=NOW)}, False),
    (PLAIN, {"log_append_time_ms": NOW + 5}, False),
    (PLAIN, {"max_message_bytes": len(PLAIN) - 1}, False),
    (PLAIN[:-1] + bytes([PLAIN[-1] ^ 1]), {}, False),  # damaged
    (rewritten(PLAIN, last_offset_delta=3), {}, False),
    (rewritten(PLAIN, record_count=0, last_offset_delta=-1), {}, False),
    (rewritten(PLAIN, record_count=-2, last_offset_delta=-3), {}, False),
    (rewritten(PLAIN, attributes=6), {}, False),  # an unknown codec
])
def test_a_sound_lone_batch_is_read_at_once_and_given_what_the_long_way_gives(
        monkeypatch, records, options, read_at_once):
    read = []
    monkeypatch.setattr(validator, "_sound_lone_batch",
                        lambda *args: read.append(_sound_lone_batch(*args)) or read[-1])
    at_once = outcome(records, **options)
    assert (read != [] and read[-1] is not None) == read_at_once
    monkeypatch.setattr(validator, "_sound_lone_batch", lambda *args: None)
    assert at_once == outcome(records, **options)
