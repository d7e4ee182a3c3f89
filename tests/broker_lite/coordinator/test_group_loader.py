"""Rebuilding groups and offsets from a real partition log: replay order, tombstones,
transactions, garbage skipped with a warning, small read buffers, and a compacted log loading to
the same state."""

import logging
import struct

import pytest

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.topic import LogConfig
from broker_lite.coordinator.common.append import append_records
from broker_lite.coordinator.group.loader import load_partition
from broker_lite.coordinator.group.offsets import OffsetAndMetadata
from broker_lite.coordinator.group.records import (
    GroupRecord,
    MemberRecord,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
)
from broker_lite.log import Log
from broker_lite.log.cleaner import clean
from broker_lite.records import (
    ControlRecordType,
    EndTransactionMarker,
    build_batch,
    build_control_batch,
)

NOW = 1_700_000_000_000


@pytest.fixture
def log(tmp_path):
    log = Log(tmp_path / "__consumer_offsets-0",
              LogConfig(cleanup_policy=("compact",), segment_bytes=1024 * 1024,
                        delete_retention_ms=0, min_cleanable_dirty_ratio=0.0),
              clock=lambda: NOW)
    yield log
    log.close()


def commit(group: str, topic: str, partition: int, offset: int | None):
    value = None if offset is None else offset_commit_value(
        OffsetAndMetadata(offset, 3, f"meta-{offset}", NOW))
    return offset_commit_key(group, topic, partition), value


def group_record(generation: int, *members: str) -> GroupRecord:
    return GroupRecord("consumer", generation, "range" if members else None,
                       members[0] if members else None, NOW,
                       tuple(MemberRecord(m, None, "client", "/127.0.0.1", 30000, 10000, b"s",
                                          b"a") for m in members))


def append(log: Log, *records, **options) -> int:
    return append_records(log, 0, list(records), timestamp_ms=NOW, **options)


def offsets_of(loaded) -> dict:
    return {(group, tp.topic, tp.partition): c.value.offset
            for (group, tp), c in loaded.offsets.items()}


def test_replay_keeps_the_last_record_of_each_key(log):
    append(log, commit("g", "t", 0, 1), commit("g", "t", 1, 10))
    append(log, commit("g", "t", 0, 2), commit("h", "t", 0, 7))
    append(log, commit("g", "t", 1, None))  # a deleted offset
    append(log, (group_metadata_key("g"), group_metadata_value(group_record(1, "m1"))))
    append(log, (group_metadata_key("g"), group_metadata_value(group_record(2, "m1", "m2"))))
    append(log, (group_metadata_key("gone"), group_metadata_value(group_record(1, "x"))))
    append(log, (group_metadata_key("gone"), None))
    loaded = load_partition(log, buffer_size=1 << 20)
    assert offsets_of(loaded) == {("g", "t", 0): 2, ("h", "t", 0): 7}
    assert loaded.offsets[("g", TopicPartition("t", 0))].value == \
        OffsetAndMetadata(2, 3, "meta-2", NOW)
    assert set(loaded.groups) == {"g"} and loaded.groups["g"].generation == 2
    assert loaded.removed_groups == {"gone"}
    assert loaded.offsets_by_group()["h"] == {TopicPartition("t", 0):
                                              loaded.offsets[("h", TopicPartition("t", 0))]}


def test_small_buffers_load_everything(log):
    for i in range(50):
        append(log, commit("g", "t", i % 5, i))
    big = [commit("g", "big", p, p) for p in range(200)]  # one batch larger than the buffer
    append(log, *big)
    loaded = load_partition(log, buffer_size=64)
    assert offsets_of(loaded) == {**{("g", "t", p): 45 + p for p in range(5)},
                                  **{("g", "big", p): p for p in range(200)}}


def test_transactional_commits_count_only_once_committed(log):
    def txn_commit(producer_id: int, offset: int):
        append(log, commit("g", f"t{producer_id}", 0, offset), producer_id=producer_id,
               producer_epoch=0, base_sequence=0, transactional=True)

    def marker(producer_id: int, kind: ControlRecordType):
        log.append(build_control_batch(EndTransactionMarker(kind, 0), producer_id=producer_id,
                                       producer_epoch=0, timestamp=NOW))

    txn_commit(1, 100)
    txn_commit(2, 200)
    txn_commit(3, 300)
    marker(1, ControlRecordType.COMMIT)
    marker(2, ControlRecordType.ABORT)
    loaded = load_partition(log, buffer_size=1 << 20)
    assert offsets_of(loaded) == {("g", "t1", 0): 100}
    assert list(loaded.pending_transactional) == [3]  # still open at the log end


def test_garbage_is_skipped_with_a_warning(tmp_path, caplog):
    directory = tmp_path / "__consumer_offsets-1"
    log = Log(directory, LogConfig(), clock=lambda: NOW)
    append(log, commit("g", "t", 0, 1))
    log.append(build_batch([
        (struct.pack(">h", 9) + b"junk", b"value"),  # an unknown key version
        (offset_commit_key("g", "t", 1), struct.pack(">hq", 3, 5)),  # truncated value
        (None, b"no key at all"),
        (group_metadata_key("g"), b"\x00\x03\x00"),  # truncated group metadata
    ], timestamp=NOW))
    # A batch whose CRC does not match, written behind the log's back (it refuses such).
    corrupt = bytearray(build_batch([commit("g", "t", 2, 99)], timestamp=NOW,
                                    base_offset=log.log_end_offset))
    corrupt[-1] ^= 0xFF
    segment_file = log.active_segment.log_path
    log.close()
    with open(segment_file, "ab") as f:
        f.write(corrupt)
    log = Log(directory, LogConfig(), clock=lambda: NOW, clean_shutdown=True)
    try:
        append(log, commit("g", "t", 3, 3))
        with caplog.at_level(logging.WARNING, logger="broker_lite.coordinator.group.loader"):
            loaded = load_partition(log, buffer_size=1 << 20)
    finally:
        log.close()
    assert offsets_of(loaded) == {("g", "t", 0): 1, ("g", "t", 3): 3}
    assert loaded.groups == {}
    assert "unknown key version 9" in caplog.text
    assert "malformed offset commit value" in caplog.text
    assert "a record without a key" in caplog.text
    assert "malformed group metadata value" in caplog.text
    assert "skipping the batch" in caplog.text
    assert loaded.skipped_records == 5


def test_a_compacted_log_loads_to_the_same_state(log):
    for round_ in range(30):
        append(log, *(commit("g", "t", p, round_ * 10 + p) for p in range(4)))
        append(log, (group_metadata_key("g"), group_metadata_value(group_record(round_, "m"))))
        if round_ % 3 == 2:
            log.roll()
    append(log, commit("g", "t", 3, None))
    log.roll()
    before = load_partition(log, buffer_size=1 << 20)
    size_before = log.size
    clean(log, now_ms=NOW + 10)
    after = load_partition(log, buffer_size=1 << 20)
    assert log.size < size_before / 5
    assert offsets_of(after) == offsets_of(before) == {("g", "t", p): 290 + p for p in range(3)}
    assert after.groups == before.groups
