import os
from dataclasses import replace

import pytest
from manual_clock import ManualClock

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log
from broker_lite.log.cleaner import clean, cleaning_due
from broker_lite.log.errors import OffsetOutOfRangeError
from broker_lite.log.files import parse_segment_file
from broker_lite.log.retention import enforce_retention
from broker_lite.records import (
    BatchReader,
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    RecordBatch,
    build_batch,
    build_control_batch,
    build_message_set,
    iter_records,
)

DAY = 86_400_000


def config(**overrides) -> LogConfig:
    defaults = dict(segment_bytes=600, index_interval_bytes=64, file_delete_delay_ms=0)
    return replace(LogConfig(), **{**defaults, **overrides})


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def log_dir(tmp_path):
    return tmp_path / "compacted-0"


def all_records(log: Log):
    out = []
    for segment in log.segments:
        for batch in BatchReader(segment.read_bytes(0, segment.size), validate=True):
            if not batch.is_control_batch:
                out.extend(batch)
    return out


def files_in(directory) -> set[str]:
    return set(os.listdir(directory))


# -- retention ------------------------------------------------------------------------------------


def test_retention_by_time_judges_each_segment_by_its_largest_timestamp(log_dir, clock):
    log = Log(log_dir, config(retention_ms=DAY), clock=clock)
    for i in range(30):
        log.append(build_batch([(b"k", b"x" * 50)], timestamp=clock.now - 3 * DAY + i * 1000))
    clock_old = [s.largest_timestamp for s in log.segments]
    for i in range(10):  # recent data in later segments
        log.append(build_batch([(b"k", b"y" * 50)], timestamp=clock.now + i))
    expired = sum(1 for ts in clock_old[:-1] if clock.now - ts > DAY)
    segments_before = len(log.segments)
    deleted = enforce_retention(log)
    assert deleted >= expired > 0
    assert len(log.segments) == segments_before - deleted
    assert log.log_start_offset == log.segments[0].base_offset > 0
    assert all(clock.now - s.largest_timestamp <= DAY for s in log.segments[:-1])
    assert not any(name.endswith(".deleted") for name in files_in(log_dir))
    log.close()


def test_retention_by_size_keeps_the_newest_data_within_the_limit(log_dir, clock):
    log = Log(log_dir, config(retention_bytes=1500, retention_ms=-1), clock=clock)
    for _ in range(40):
        log.append(build_batch([(b"k", b"x" * 50)], timestamp=clock.now))
    enforce_retention(log)
    assert log.size >= 1500 - log.segments[0].size
    assert log.size - log.segments[0].size < 1500
    assert [r.offset for r in all_records(log)][-1] == 39
    log.close()


def test_retention_never_deletes_the_active_segment(log_dir, clock):
    log = Log(log_dir, config(retention_ms=0, segment_bytes=1 << 20), clock=clock)
    log.append(build_batch([(b"k", b"v")], timestamp=clock.now - 10 * DAY))
    assert enforce_retention(log) == 0
    assert log.log_end_offset == 1 and log.read(0, 100) is not None
    log.close()


@pytest.mark.parametrize("policy", [("delete",), ("compact",)])
def test_segments_wholly_below_the_log_start_offset_go(log_dir, clock, policy):
    log = Log(log_dir, config(retention_ms=-1, cleanup_policy=policy), clock=clock)
    for i in range(40):
        log.append(build_batch([(b"k%d" % i, b"x" * 50)], timestamp=clock.now))
    second, third = log.segments[1], log.segments[2]
    start = third.base_offset + 1  # inside the third segment: it stays
    assert log.increment_log_start_offset(start)
    assert enforce_retention(log) == 2
    assert log.segments[0] is third
    assert log.log_start_offset == start  # not moved back to the segment's base offset
    assert second.base_offset not in [s.base_offset for s in log.segments]
    log.close()


def test_the_log_start_offset_only_moves_forward_up_to_the_high_watermark(log_dir, clock):
    log = Log(log_dir, config(), clock=clock)
    for i in range(10):
        log.append(build_batch([(b"k", b"v")], timestamp=clock.now), partition_leader_epoch=i // 4)
    assert log.leader_epochs.entries == [(0, 0), (1, 4), (2, 8)]
    assert log.increment_log_start_offset(5)
    assert not log.increment_log_start_offset(3)  # never back
    assert not log.increment_log_start_offset(5)
    assert log.log_start_offset == 5
    assert log.leader_epochs.entries == [(1, 5), (2, 8)]  # epochs that ended below it are gone
    with pytest.raises(OffsetOutOfRangeError, match="larger than the high watermark 10"):
        log.increment_log_start_offset(11)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(4, 1 << 20)
    assert next(iter_records(log.read(5, 1 << 20).read())).offset == 5
    assert log.increment_log_start_offset(10)  # everything: the log is empty, its end stays
    assert log.read(10, 1 << 20) is None and log.log_end_offset == 10
    log.close()


def test_deleted_segment_files_wait_for_file_delete_delay(log_dir, clock):
    log = Log(log_dir, config(retention_ms=DAY, file_delete_delay_ms=60_000), clock=clock)
    for _ in range(20):
        log.append(build_batch([(b"k", b"x" * 50)], timestamp=clock.now - 2 * DAY))
    log.append(build_batch([(b"k", b"x" * 50)], timestamp=clock.now))
    log.roll()
    enforce_retention(log)
    assert any(name.endswith(".log.deleted") for name in files_in(log_dir))
    clock.now += 60_000
    log.remove_deleted_files()
    assert not any(name.endswith(".deleted") for name in files_in(log_dir))
    log.close()


# -- compaction -----------------------------------------------------------------------------------


def compacted_log(log_dir, clock, **overrides) -> Log:
    return Log(log_dir, config(cleanup_policy=("compact",), **overrides), clock=clock)


def fill(log: Log, rounds: int = 6, keys: int = 5, clock=None) -> dict[bytes, tuple[int, bytes]]:
    """Write every key ``rounds`` times; return the latest (offset, value) of each key."""
    latest = {}
    for r in range(rounds):
        for k in range(keys):
            key, value = b"key-%d" % k, b"round-%d-" % r + b"x" * 30
            info = log.append(build_batch([(key, value)], timestamp=clock.now))
            latest[key] = (info.first_offset, value)
    log.roll()
    return latest


def unique_keys(log: Log, count: int, start: int, timestamp: int) -> None:
    for i in range(start, start + count):
        log.append(build_batch([(b"unique-%d" % i, b"x" * 50)], timestamp=timestamp))


def test_the_cleaner_picks_a_log_by_its_dirty_ratio(log_dir, clock):
    log = compacted_log(log_dir, clock)
    unique_keys(log, 40, 0, clock.now)  # nothing to remove: cleaning keeps the size
    assert cleaning_due(log, clean_point=0)
    cleaned_to = clean(log).end_offset
    assert cleaned_to == log.segments[-1].base_offset
    assert not cleaning_due(log, cleaned_to)  # nothing dirty
    unique_keys(log, 4, 40, clock.now)
    log.roll()
    small_share = sum(s.size for s in log.segments[:-1] if s.base_offset >= cleaned_to) \
        / sum(s.size for s in log.segments[:-1])
    assert 0.05 < small_share < 0.5
    assert not cleaning_due(log, cleaned_to)  # below min.cleanable.dirty.ratio 0.5
    log.config = replace(log.config, min_cleanable_dirty_ratio=0.05)
    assert cleaning_due(log, cleaned_to)
    log.close()


def test_the_cleaner_picks_a_log_whose_dirty_records_passed_max_compaction_lag(log_dir, clock):
    log = compacted_log(log_dir, clock)
    unique_keys(log, 40, 0, clock.now)
    cleaned_to = clean(log).end_offset
    unique_keys(log, 4, 40, clock.now - 2000)
    log.roll()
    assert not cleaning_due(log, cleaned_to)  # a small dirty share, lag not set
    log.config = replace(log.config, max_compaction_lag_ms=5000)
    assert not cleaning_due(log, cleaned_to)  # 2 s old: not yet
    log.config = replace(log.config, max_compaction_lag_ms=1000)
    assert cleaning_due(log, cleaned_to)
    log.close()


def test_a_compacted_log_rolls_by_max_compaction_lag(log_dir, clock):
    log = compacted_log(log_dir, clock, segment_bytes=1 << 20, max_compaction_lag_ms=100)
    log.append(build_batch([(b"k", b"v")], timestamp=clock.now))
    log.append(build_batch([(b"k", b"v")], timestamp=clock.now + 50))
    assert len(log.segments) == 1
    log.append(build_batch([(b"k", b"v")], timestamp=clock.now + 150))
    assert len(log.segments) == 2  # segment.ms (7 days) alone would not roll it
    log.close()
    deleting = Log(log_dir.with_name("deleting-0"),
                   config(segment_bytes=1 << 20, max_compaction_lag_ms=100), clock=clock)
    for delay in (0, 150):
        deleting.append(build_batch([(b"k", b"v")], timestamp=clock.now + delay))
    assert len(deleting.segments) == 1
    deleting.close()


def test_compaction_keeps_exactly_the_latest_value_per_key_with_offsets_intact(log_dir, clock):
    log = compacted_log(log_dir, clock)
    latest = fill(log, clock=clock)
    before = log.size
    result = clean(log)
    assert result.records_removed == 25
    assert log.size < before
    assert {r.key: (r.offset, r.value) for r in all_records(log)} == latest
    assert sorted(r.offset for r in all_records(log)) == sorted(o for o, _ in latest.values())
    for offset, value in latest.values():  # the surviving offsets are readable as such
        assert next(r for r in iter_records(log.read(offset, 1 << 20).read())
                    if r.offset == offset).value == value
    assert log.log_end_offset == 30
    log.close()


def test_compaction_keeps_batch_offsets_and_sequence_metadata(log_dir, clock):
    log = compacted_log(log_dir, clock, segment_bytes=1 << 20)
    records = [(b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1")]
    log.append(build_batch(records, timestamp=clock.now, producer_id=7, producer_epoch=3,
                           base_sequence=10, compression=CompressionType.GZIP))
    log.append(build_batch([(b"b", b"2"), (b"c", b"2")], timestamp=clock.now, producer_id=8,
                           producer_epoch=0, base_sequence=0))
    log.append(build_batch([(b"z", b"1")], timestamp=clock.now, producer_id=8, producer_epoch=0,
                           base_sequence=2))
    log.roll()
    clean(log)
    batches = [b for s in log.segments for b in BatchReader(s.read_bytes(0, s.size))]
    first = batches[0]
    assert isinstance(first, RecordBatch)
    assert (first.base_offset, first.last_offset) == (0, 3)  # range kept though offset 3 remains
    assert (first.producer_id, first.producer_epoch, first.base_sequence) == (7, 3, 10)
    assert first.compression is CompressionType.GZIP
    assert [(r.offset, r.key) for r in first] == [(2, b"a")]  # c@3 is superseded by c@5
    # producer 8: b@4 and c@5 are the latest of their keys
    assert [(r.offset, r.key) for r in batches[1]] == [(4, b"b"), (5, b"c")]
    log.close()


def test_an_emptied_batch_survives_only_as_its_producers_last(log_dir, clock):
    log = compacted_log(log_dir, clock, segment_bytes=1 << 20)
    log.append(build_batch([(b"a", b"1")], timestamp=clock.now, producer_id=1, producer_epoch=0,
                           base_sequence=0))
    log.append(build_batch([(b"b", b"1")], timestamp=clock.now, producer_id=2, producer_epoch=0,
                           base_sequence=0))
    log.append(build_batch([(b"a", b"2")], timestamp=clock.now, producer_id=1, producer_epoch=0,
                           base_sequence=1))
    log.append(build_batch([(b"b", b"2")], timestamp=clock.now))  # supersedes producer 2's only
    log.roll()
    clean(log)
    batches = [b for s in log.segments for b in BatchReader(s.read_bytes(0, s.size))]
    summary = [(b.base_offset, b.record_count, b.producer_id) for b in batches]
    assert (0, 1, 1) not in summary  # producer 1's first batch is gone: it has a later one
    assert (1, 0, 2) in summary  # producer 2's last batch stays, empty
    assert (2, 1, 1) in summary and (3, 1, -1) in summary
    log.close()


def test_tombstones_are_removed_after_delete_retention(log_dir, clock):
    log = compacted_log(log_dir, clock, delete_retention_ms=DAY)
    log.append(build_batch([(b"gone", b"v")], timestamp=clock.now))
    log.append(build_batch([(b"gone", None)], timestamp=clock.now))
    log.append(build_batch([(b"kept", b"v")], timestamp=clock.now))
    log.roll()
    clean(log)
    assert [(r.key, r.value) for r in all_records(log)] == [(b"gone", None), (b"kept", b"v")]
    clock.now += DAY + 1
    clean(log)
    assert [(r.key, r.value) for r in all_records(log)] == [(b"kept", b"v")]
    log.close()


def test_min_compaction_lag_protects_recent_segments(log_dir, clock):
    log = compacted_log(log_dir, clock, min_compaction_lag_ms=DAY)
    fill(log, clock=clock)
    assert clean(log).segments_cleaned == 0
    clock.now += DAY
    assert clean(log).segments_cleaned > 0
    log.close()


def test_control_batches_and_legacy_messages_in_a_compacted_log(log_dir, clock):
    log = compacted_log(log_dir, clock, segment_bytes=1 << 20)
    log.append(build_message_set([(b"a", b"old"), (b"b", b"old")], magic=1, timestamp=clock.now,
                                 compression=CompressionType.GZIP))
    log.append(build_control_batch(EndTransactionMarker(ControlRecordType.COMMIT, 0),
                                   producer_id=3, producer_epoch=0, timestamp=clock.now))
    log.append(build_message_set([(b"a", b"new")], magic=0))
    log.roll()
    clean(log)
    batches = [b for s in log.segments for b in BatchReader(s.read_bytes(0, s.size), validate=True)]
    assert any(b.is_control_batch for b in batches)
    assert [(r.offset, r.key, r.value) for r in all_records(log)] == [
        (1, b"b", b"old"), (3, b"a", b"new")]
    log.close()


def test_compaction_survives_reopening(log_dir, clock):
    log = compacted_log(log_dir, clock)
    latest = fill(log, clock=clock)
    clean(log)
    log.close()
    reopened = compacted_log(log_dir, clock)
    assert {r.key: (r.offset, r.value) for r in all_records(reopened)} == latest
    assert reopened.log_end_offset == 30
    reopened.close()


class Crash(Exception):
    pass


@pytest.mark.parametrize("step", ["cleaned", "swap", "deleted"])
@pytest.mark.parametrize("clean_shutdown", [False, True])
def test_a_crash_at_each_step_of_the_swap_recovers(log_dir, clock, step, clean_shutdown):
    log = compacted_log(log_dir, clock)
    latest = fill(log, clock=clock)
    everything = {(r.offset, r.key, r.value) for r in all_records(log)}
    first_group = range(log.segments[0].base_offset, log.segments[0].next_offset)

    def crash(reached):
        if reached == step:
            raise Crash(step)

    with pytest.raises(Crash):
        clean(log, on_step=crash)
    names = files_in(log_dir)
    if step == "cleaned":
        assert any(n.endswith(".cleaned") for n in names)
    else:
        assert any(n.endswith(".swap") for n in names)
    # the process dies here: nothing of the old Log object is used again

    reopened = compacted_log(log_dir, clock) if not clean_shutdown else Log(
        log_dir, config(cleanup_policy=("compact",)), clock=clock, clean_shutdown=True)
    names = files_in(log_dir)
    assert not any(n.endswith((".cleaned", ".swap", ".deleted")) for n in names)
    survivors = {(r.offset, r.key, r.value) for r in all_records(reopened)}
    if step == "cleaned":  # the cleaning never happened
        assert survivors == everything
    else:  # the first group's swap was completed (its records, all superseded, are gone);
        # the crash came before any other group was cleaned
        assert survivors == {r for r in everything if r[0] not in first_group}
    assert reopened.log_end_offset == 30
    assert all(parse_segment_file(n) is not None or not n[0].isdigit() for n in names)
    clean(reopened)  # and the log can be cleaned again
    assert {r.key: (r.offset, r.value) for r in all_records(reopened)} == latest
    reopened.close()
