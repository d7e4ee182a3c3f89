import os
import random
import struct
from dataclasses import replace
from pathlib import Path

import pytest
from log_support import LogOpener
from manual_clock import ManualClock

from broker_lite.config.topic import LogConfig
from broker_lite.log import InvalidRecordError, Log, OffsetOutOfRangeError
from broker_lite.log.files import parse_segment_file
from broker_lite.records import (
    BatchReader,
    CompressionType,
    CorruptRecordError,
    RecordBatchBuilder,
    RecordTooLargeError,
    TimestampType,
    build_batch,
    build_message_set,
    iter_records,
)


def small_config(**overrides) -> LogConfig:
    defaults = dict(segment_bytes=1024, index_interval_bytes=128, file_delete_delay_ms=0)
    return replace(LogConfig(), **{**defaults, **overrides})


def batch(i: int, *, n: int = 1, ts: int | None = None, size: int = 20, **options) -> bytes:
    return build_batch([(b"key-%d" % (i * n + j), b"v" * size) for j in range(n)],
                       timestamp=ts if ts is not None else 1000 + i, **options)


def read_all(log: Log, start: int = 0) -> list:
    records, offset = [], start
    while offset < log.log_end_offset:
        region = log.read(offset, 1 << 20)
        if region is None:
            break
        for record in iter_records(region.read()):
            if record.offset >= offset:
                records.append(record)
        offset = records[-1].offset + 1
    return records


def segment_bases(directory: Path) -> list[int]:
    return sorted(p[0] for name in os.listdir(directory)
                  if (p := parse_segment_file(name)) and p[1] == ".log" and not p[2])


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def open_log(tmp_path, clock):
    opener = LogOpener(tmp_path, clock, small_config())
    yield opener
    opener.close_all()


def test_offsets_are_assigned_consecutively_and_reads_return_what_was_appended(open_log):
    log = open_log()
    infos = [log.append(batch(i, n=3)) for i in range(5)]
    assert [(i.first_offset, i.last_offset) for i in infos] == [
        (3 * i, 3 * i + 2) for i in range(5)]
    assert log.log_end_offset == 15
    assert [r.key for r in read_all(log)] == [b"key-%d" % i for i in range(15)]


def test_reads_are_byte_identical_to_the_appended_batches_after_offset_assignment(open_log):
    log = open_log()
    appended = [batch(i, n=2, compression=CompressionType.ZSTD) for i in range(3)]
    for data in appended:
        log.append(data)
    stored = log.read(0, 1 << 20).read()
    expected = b"".join(
        struct.pack(">qii", 2 * i, len(data) - 12, 0) + data[16:]
        for i, data in enumerate(appended))
    assert stored == expected


def test_roll_by_size_and_read_across_segments(open_log, tmp_path):
    log = open_log()
    for i in range(60):
        log.append(batch(i))
    assert len(log.segments) > 3
    assert segment_bases(tmp_path / "topic-0") == [s.base_offset for s in log.segments]
    assert all(s.size <= 1024 for s in log.segments)
    assert [r.offset for r in read_all(log)] == list(range(60))
    for offset in (0, 17, 33, 59):  # every offset is found from its segment's index
        assert next(iter_records(log.read(offset, 1).read())).offset <= offset


def test_roll_by_time(open_log, clock):
    log = open_log(small_config(segment_ms=1000, segment_bytes=1 << 20))
    log.append(batch(0, ts=clock.now))
    clock.now += 500
    log.append(batch(1, ts=clock.now))
    assert len(log.segments) == 1
    clock.now += 1000
    log.append(batch(2, ts=clock.now))
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_roll_when_the_offset_index_is_full(open_log):
    log = open_log(small_config(segment_bytes=1 << 20, segment_index_bytes=8 * 3,
                                index_interval_bytes=1))
    for i in range(10):
        log.append(batch(i))
    assert len(log.segments) >= 3
    assert all(len(s.offset_index) <= 3 for s in log.segments)
    assert [r.offset for r in read_all(log)] == list(range(10))


def test_reading_outside_the_log_is_offset_out_of_range(open_log):
    log = open_log()
    log.append(batch(0))
    assert log.read(1, 100) is None  # at the log end: nothing yet
    with pytest.raises(OffsetOutOfRangeError, match="offset 2"):
        log.read(2, 100)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 100)


def test_max_bytes_returns_whole_batches_and_at_least_one(open_log):
    log = open_log(small_config(segment_bytes=1 << 20))
    sizes = [len(batch(i)) for i in range(5)]
    for i in range(5):
        log.append(batch(i))
    region = log.read(0, sizes[0] + sizes[1] + 5)
    assert region.size == sizes[0] + sizes[1] + 5  # a partial batch at the end, as Kafka sends
    reader = BatchReader(region.read())
    assert len(list(reader)) == 2 and reader.incomplete
    assert log.read(0, 1).size == sizes[0]  # the first batch whole, however small max_bytes is


def test_max_offset_bounds_reads(open_log):
    log = open_log()
    for i in range(5):
        log.append(batch(i))
    records = list(iter_records(log.read(0, 1 << 20, max_offset=3).read()))
    assert [r.offset for r in records] == [0, 1, 2]
    assert log.read(3, 1 << 20, max_offset=3) is None


def test_timestamp_lookup(open_log):
    log = open_log()
    for i in range(40):
        log.append(batch(i, ts=10_000 + 10 * i))
    assert log.find_by_timestamp(0) == (10_000, 0)
    assert log.find_by_timestamp(10_000 + 10 * 25) == (10_000 + 10 * 25, 25)
    assert log.find_by_timestamp(10_000 + 10 * 25 - 3) == (10_000 + 10 * 25, 25)
    assert log.find_by_timestamp(10_000 + 10 * 39 + 1) is None


def test_record_with_max_timestamp_is_found_inside_its_batch(open_log):
    log = open_log()
    log.append(batch(0, ts=500))
    builder = RecordBatchBuilder()
    for key, ts in ((b"a", 700), (b"b", 900), (b"c", 800)):
        builder.append(b"v", key=key, timestamp=ts)
    log.append(builder.build())
    log.append(batch(9, ts=600))
    assert log.record_with_max_timestamp() == (900, 2)
    assert log.epoch_for_offset(2) == 0


def test_message_max_bytes_is_enforced(open_log):
    log = open_log(small_config(max_message_bytes=200))
    with pytest.raises(RecordTooLargeError, match=r"max\.message\.bytes 200"):
        log.append(batch(0, size=500))
    assert log.log_end_offset == 0


def test_a_corrupt_or_partial_append_writes_nothing(open_log):
    log = open_log()
    data = bytearray(batch(0))
    data[-1] ^= 1
    with pytest.raises(CorruptRecordError):
        log.append(bytes(data))
    with pytest.raises(CorruptRecordError, match="partial batch"):
        log.append(batch(0)[:-3])
    assert log.log_end_offset == 0 and log.size == 0


def test_batches_whose_last_offset_delta_disagrees_with_their_count_are_refused(open_log):
    data = bytearray(batch(0, n=3))
    struct.pack_into(">i", data, 57, 2)  # count 2, lastOffsetDelta 2
    import crc32c
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    with pytest.raises(InvalidRecordError, match="lastOffsetDelta"):
        open_log().append(bytes(data))


def test_compacted_topics_refuse_records_without_keys(open_log):
    log = open_log(small_config(cleanup_policy=("compact",)))
    with pytest.raises(InvalidRecordError, match="key"):
        log.append(build_batch([(None, b"v")], timestamp=1))


@pytest.mark.parametrize(("magic", "format_version"), [(0, "0.9.0"), (1, "0.10.2")])
@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
def test_legacy_formats_are_stored_as_sent_in_a_log_of_their_format(open_log, magic,
                                                                     format_version, codec):
    log = open_log(small_config(message_format_version=format_version))
    for key in (b"a", b"c"):
        log.append(build_message_set([(key, b"1"), (key + b"'", b"2")], magic=magic,
                                     compression=codec, timestamp=5))
    records = read_all(log)
    assert [(r.offset, r.key) for r in records] == [
        (0, b"a"), (1, b"a'"), (2, b"c"), (3, b"c'")]
    stored = list(BatchReader(log.read(0, 1 << 20).read(), validate=True))
    assert {b.magic for b in stored} == {magic}
    assert len(stored) == (4 if codec is CompressionType.NONE else 2)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
def test_legacy_formats_are_converted_to_the_logs_v2_with_assigned_offsets(open_log, magic,
                                                                          codec):
    log = open_log()
    log.append(batch(0, n=2))
    log.append(build_message_set([(b"a", b"1"), (b"b", b"2")], magic=magic, compression=codec,
                                 timestamp=5))
    log.append(batch(1, n=1))
    records = read_all(log)
    assert [(r.offset, r.key) for r in records] == [
        (0, b"key-0"), (1, b"key-1"), (2, b"a"), (3, b"b"), (4, b"key-1")]
    stored = list(BatchReader(log.read(0, 1 << 20).read(), validate=True))
    assert [b.magic for b in stored] == [2, 2, 2]
    assert (stored[1].compression, stored[1].base_offset, stored[1].record_count) == \
        (codec, 2, 2)


def test_log_append_time_replaces_timestamps(open_log, clock):
    log = open_log(small_config(message_timestamp_type="LogAppendTime"))
    log.append(batch(0, n=2, ts=5))
    log.append(build_message_set([(b"a", b"1")], magic=1, timestamp=5))
    records = read_all(log)
    assert {(r.timestamp, r.timestamp_type) for r in records} == {
        (clock.now, TimestampType.LOG_APPEND_TIME)}


def test_flush_every_n_messages_moves_the_recovery_point(open_log):
    log = open_log(small_config(flush_messages=3))
    for i in range(4):
        log.append(batch(i))
    assert log.recovery_point == 3
    for i in range(4, 6):
        log.append(batch(i))
    assert log.recovery_point == 6


def test_flush_by_time(open_log, clock):
    log = open_log(small_config(flush_ms=1000))
    log.append(batch(0))
    assert log.recovery_point == 0
    clock.now += 999
    log.maybe_flush_by_time()
    assert log.recovery_point == 0
    clock.now += 1
    log.maybe_flush_by_time()
    assert log.recovery_point == 1


def test_clean_reopen_keeps_everything(open_log, tmp_path):
    log = open_log()
    for i in range(30):
        log.append(batch(i))
    bases = [s.base_offset for s in log.segments]
    log.close()
    reopened = open_log(clean_shutdown=True)
    assert [s.base_offset for s in reopened.segments] == bases
    assert reopened.log_end_offset == 30
    assert [r.offset for r in read_all(reopened)] == list(range(30))
    reopened.append(batch(30))
    assert reopened.log_end_offset == 31


def test_garbage_appended_to_the_tail_is_truncated_and_nothing_before_is_lost(open_log, tmp_path):
    log = open_log()
    for i in range(30):
        log.append(batch(i))
    active = log.active_segment.log_path
    good_size = active.stat().st_size
    log.close()
    with open(active, "ab") as f:
        f.write(os.urandom(100))
    reopened = open_log()  # unclean: no marker, recovery point 0
    assert active.stat().st_size == good_size
    assert [r.offset for r in read_all(reopened)] == list(range(30))


@pytest.mark.parametrize("seed", range(20))
def test_random_corruption_truncates_at_the_first_bad_batch(open_log, seed):
    rng = random.Random(seed)
    log = open_log(small_config(segment_bytes=1 << 20))
    starts = []
    for i in range(40):
        starts.append(log.active_segment.size)
        log.append(batch(i, size=rng.randrange(1, 200)))
    path = log.active_segment.log_path
    log.close()
    data = bytearray(path.read_bytes())
    position = rng.randrange(len(data))
    data[position] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))

    reopened = open_log()
    damaged = max(i for i, start in enumerate(starts) if start <= position)
    field_offset = position - starts[damaged]
    survivors = [r.offset for r in read_all(reopened)]
    assert survivors[:damaged] == list(range(damaged))  # nothing before the damage is lost
    if field_offset >= 16:  # magic, CRC or CRC-covered bytes: the batch and all after it go
        assert survivors == list(range(damaged))
    elif field_offset >= 12:  # partitionLeaderEpoch: outside the CRC, harmless
        assert survivors == list(range(40))
    # baseOffset or batchLength: whatever survives is well-formed and in order
    assert survivors == sorted(set(survivors))
    assert reopened.log_end_offset == (survivors[-1] + 1 if survivors else 0)
    list(BatchReader(path.read_bytes(), validate=True))


def test_a_torn_last_batch_is_cut(open_log):
    log = open_log()
    for i in range(5):
        log.append(batch(i))
    path = log.active_segment.log_path
    log.close()
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 7)
    reopened = open_log()
    assert reopened.log_end_offset == 4
    reopened.append(batch(9))
    assert [r.offset for r in read_all(reopened)] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage"])
def test_a_damaged_index_is_rebuilt_and_reads_stay_right(open_log, damage):
    log = open_log(small_config(segment_bytes=1 << 20, index_interval_bytes=64))
    for i in range(50):
        log.append(batch(i))
    index_path = log.active_segment.offset_index.path
    log.close()
    assert index_path.stat().st_size > 0
    if damage == "delete":
        index_path.unlink()
    elif damage == "truncate":
        with open(index_path, "r+b") as f:
            f.truncate(5)
    else:
        index_path.write_bytes(struct.pack(">ii", 40, 10) + struct.pack(">ii", 3, 99999))
    reopened = open_log(clean_shutdown=True)
    assert len(reopened.active_segment.offset_index) > 0
    for offset in (0, 13, 37, 49):
        assert next(iter_records(reopened.read(offset, 1).read())).offset == offset
    assert [r.offset for r in read_all(reopened)] == list(range(50))


def test_truncate_to(open_log):
    log = open_log()
    for i in range(40):
        log.append(batch(i))
    log.truncate_to(13)
    assert log.log_end_offset == 13
    assert [r.offset for r in read_all(log)] == list(range(13))
    log.append(batch(99))
    assert log.log_end_offset == 14


def test_truncated_partial_batch_after_crash_keeps_appending_at_the_right_offset(open_log):
    log = open_log()
    log.append(batch(0, n=5))
    path = log.active_segment.log_path
    log.close()
    with open(path, "ab") as f:
        f.write(batch(1, n=3)[:30])
    reopened = open_log()
    assert reopened.log_end_offset == 5
    assert reopened.append(batch(2)).first_offset == 5


def test_file_regions_survive_segment_deletion(open_log):
    log = open_log()
    for i in range(40):
        log.append(batch(i))
    region = log.read(0, 1 << 20)
    log.delete_segments(log.segments[:1], "test")
    assert next(iter_records(region.read())).offset == 0


def test_leader_epochs_are_checkpointed_and_truncated_with_the_log(open_log, tmp_path):
    log = open_log()
    for i in range(3):
        log.append(batch(i), partition_leader_epoch=0)
    for i in range(3, 6):
        log.append(batch(i), partition_leader_epoch=2)
    log.append(batch(6), partition_leader_epoch=1)  # a stale epoch adds nothing
    checkpoint = tmp_path / "topic-0" / "leader-epoch-checkpoint"
    assert checkpoint.read_text() == "0\n2\n0 0\n2 3\n"
    assert log.leader_epochs.end_offset_for(0, log.log_end_offset) == (0, 3)
    assert log.leader_epochs.end_offset_for(1, log.log_end_offset) == (0, 3)
    assert log.leader_epochs.end_offset_for(2, log.log_end_offset) == (2, 7)
    stored = list(BatchReader(log.read(3, 1 << 20).read()))
    assert {b.partition_leader_epoch for b in stored} == {2, 1}
    log.truncate_to(2)
    assert checkpoint.read_text() == "0\n1\n0 0\n"
    log.close()
    assert open_log(clean_shutdown=True).leader_epochs.entries == [(0, 0)]


def test_end_offset_for_follows_kafkas_edges(open_log):
    log = open_log()
    log.append(batch(0), partition_leader_epoch=2)
    log.append(batch(1), partition_leader_epoch=5)
    cache = log.leader_epochs
    assert cache.end_offset_for(-1, 2) == (-1, -1)
    assert cache.end_offset_for(1, 2) == (1, 0)  # older than every cached epoch
    assert cache.end_offset_for(3, 2) == (2, 1)  # between: the floor epoch, the next start
    assert cache.end_offset_for(5, 2) == (5, 2)  # the latest ends at the log end
    assert cache.end_offset_for(6, 2) == (-1, -1)  # newer than every cached epoch
