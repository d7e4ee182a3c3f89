"""Record-level rules of an append with per-record errors (KIP-467): keys on compacted topics,
timestamp bounds, producer batches marked LogAppendTime; the whole batch is refused and nothing
is written."""

from dataclasses import replace

import pytest
from manual_clock import NOW

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log
from broker_lite.log.record_checks import (
    InvalidRecordsError,
    InvalidTimestampsError,
    RecordError,
    RecordRules,
    check_records,
)
from broker_lite.records import (
    BatchReader,
    CompressionType,
    RecordBatchBuilder,
    TimestampType,
    build_batch,
    build_message_set,
)

HOUR = 3_600_000


def timed_batch(records: list[tuple]) -> bytes:
    """A batch of ``(key, timestamp)`` records."""
    builder = RecordBatchBuilder()
    for key, timestamp in records:
        builder.append(b"v", key=key, timestamp=timestamp)
    return builder.build()


def only_batch(data: bytes):
    (batch,) = list(BatchReader(data))
    return batch


def failures(batch, rules: RecordRules) -> tuple[type, list[int]]:
    with pytest.raises((InvalidRecordsError, InvalidTimestampsError)) as caught:
        check_records(batch, rules)
    return type(caught.value), [e.batch_index for e in caught.value.record_errors]


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.ZSTD])
def test_records_without_a_key_on_a_compacted_topic_are_named_by_index(codec):
    records = [(None if i % 10 == 0 else b"k%d" % i, b"v") for i in range(25)]
    batch = only_batch(build_batch(records, timestamp=NOW, compression=codec))
    rules = RecordRules(partition="events-3", compacted=True)
    assert failures(batch, rules) == (InvalidRecordsError, [0, 10, 20])
    with pytest.raises(InvalidRecordsError) as caught:
        check_records(batch, rules)
    assert caught.value.record_errors[1] == RecordError(
        10, "Compacted topic cannot accept message without key in topic partition events-3.")
    assert str(caught.value) == (
        "One or more records have been rejected due to 3 record errors in total, and only "
        "showing the first three errors at most: [RecordError(batchIndex=0, message='Compacted "
        "topic cannot accept message without key in topic partition events-3.'), "
        "RecordError(batchIndex=10, message='Compacted topic cannot accept message without key "
        "in topic partition events-3.'), RecordError(batchIndex=20, message='Compacted topic "
        "cannot accept message without key in topic partition events-3.')]")
    check_records(batch, RecordRules(partition="events-3"))  # not compacted: fine


def test_legacy_messages_are_checked_too():
    keyless = build_message_set([(None, b"v")], magic=1, timestamp=NOW)
    assert failures(only_batch(keyless), RecordRules("t-0", compacted=True)) == (
        InvalidRecordsError, [0])


def test_create_times_out_of_the_topic_bounds():
    times = [NOW - 3 * HOUR, NOW, NOW + 2 * HOUR, NOW - HOUR]
    batch = only_batch(timed_batch([(b"k", t) for t in times]))
    rules = RecordRules("t-0", timestamp_before_max_ms=2 * HOUR,
                        timestamp_after_max_ms=HOUR, now_ms=NOW)
    assert failures(batch, rules) == (InvalidTimestampsError, [0, 2])
    with pytest.raises(InvalidTimestampsError) as caught:
        check_records(batch, rules)
    assert str(caught.value) == "One or more records have been rejected due to invalid timestamp"
    assert caught.value.record_errors[1].message == (
        f"Timestamp {NOW + 2 * HOUR} of message with offset 2 is out of range. The timestamp "
        f"should be within [{NOW - 2 * HOUR}, {NOW + HOUR}]")
    check_records(batch, replace(rules, timestamp_type="LogAppendTime"))  # the broker's clock
    check_records(batch, RecordRules("t-0", now_ms=NOW))  # no bounds: anything goes


def test_timestamp_errors_win_over_key_errors_in_the_error_code():
    batch = only_batch(timed_batch([(None, NOW), (b"k", 0)]))
    rules = RecordRules("t-0", compacted=True, timestamp_before_max_ms=HOUR, now_ms=NOW)
    assert failures(batch, rules) == (InvalidTimestampsError, [0, 1])


def test_a_producer_batch_marked_log_append_time():
    batch = only_batch(build_batch([(b"k", b"v"), (b"k2", b"v")], timestamp=NOW,
                                   timestamp_type=TimestampType.LOG_APPEND_TIME))
    assert failures(batch, RecordRules("t-0", timestamp_type="LogAppendTime")) == (
        InvalidTimestampsError, [0, 1])
    with pytest.raises(InvalidTimestampsError) as caught:
        check_records(batch, RecordRules("t-0", timestamp_type="LogAppendTime"))
    assert caught.value.record_errors[0].message == (
        f"Invalid timestamp type in message DefaultRecord(offset=0, timestamp={NOW}, key=1 bytes, "
        "value=1 bytes). Producer should not set timestamp type to LogAppendTime.")
    # a CreateTime topic judges such records by their time, as Kafka does
    check_records(batch, RecordRules("t-0", now_ms=NOW))


def test_the_log_refuses_the_whole_append_and_writes_nothing(tmp_path):
    log = Log(tmp_path / "compacted-0", replace(LogConfig(), cleanup_policy=("compact",)))
    log.append(build_batch([(b"k", b"first")], timestamp=NOW))
    with pytest.raises(InvalidRecordsError) as caught:
        log.append(build_batch([(b"k", b"a"), (None, b"b"), (b"k", b"c")], timestamp=NOW))
    assert [e.batch_index for e in caught.value.record_errors] == [1]
    assert "topic partition compacted-0." in caught.value.record_errors[0].message
    assert log.log_end_offset == 1
    log.close()


def test_the_log_checks_a_batch_marked_log_append_time_on_a_topic_without_other_rules(tmp_path):
    # No key or timestamp rule applies to this topic, so only the batch's own marking sends
    # its records to the record checks; they must still run.
    marked = build_batch([(b"k", b"v")], timestamp=NOW,
                         timestamp_type=TimestampType.LOG_APPEND_TIME)
    log = Log(tmp_path / "stamped-0", replace(LogConfig(), message_timestamp_type="LogAppendTime"))
    with pytest.raises(InvalidTimestampsError):
        log.append(marked)
    assert log.log_end_offset == 0
    log.close()
