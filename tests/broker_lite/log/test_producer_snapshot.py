"""Producer state snapshots: the file format (Kafka's version 1), corruption detection, and how a
log writes, trusts, ignores and deletes them."""

import logging
import struct

import crc32c
import pytest
from manual_clock import NOW

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log
from broker_lite.log.errors import OutOfOrderSequenceError
from broker_lite.log.files import SNAPSHOT_SUFFIX
from broker_lite.log.producer_snapshot import (
    CorruptSnapshotError,
    SnapshotEntry,
    decode_snapshot,
    encode_snapshot,
    list_snapshots,
    read_snapshot,
    snapshot_path,
    write_snapshot,
)
from broker_lite.log.producer_state import (
    AppendOrigin,
    ProducerBatch,
    ProducerStateManager,
)
from broker_lite.log.retention import enforce_retention
from broker_lite.records import build_batch

ENTRIES = [
    SnapshotEntry(producer_id=1000, epoch=3, last_sequence=41, last_offset=99, offset_delta=4,
                  timestamp=NOW, coordinator_epoch=-1, current_txn_first_offset=-1),
    SnapshotEntry(producer_id=2**63 - 1, epoch=32767, last_sequence=2**31 - 1,
                  last_offset=2**62, offset_delta=0, timestamp=-1, coordinator_epoch=7,
                  current_txn_first_offset=95),
    SnapshotEntry(producer_id=0, epoch=0, last_sequence=-1, last_offset=-1, offset_delta=0,
                  timestamp=5, coordinator_epoch=-1, current_txn_first_offset=-1),
]


# -- the format -----------------------------------------------------------------------------------

def test_the_layout_is_kafkas_version_1():
    data = encode_snapshot(ENTRIES[:1])
    entry = struct.pack(">qhiqiqiq", 1000, 3, 41, 99, 4, NOW, -1, -1)
    assert len(entry) == 46
    body = struct.pack(">i", 1) + entry
    assert data == struct.pack(">hI", 1, crc32c.crc32c(body)) + body


@pytest.mark.parametrize("entries", [[], ENTRIES[:1], ENTRIES], ids=["empty", "one", "three"])
def test_round_trip(tmp_path, entries):
    path = snapshot_path(tmp_path, 1234)
    assert path.name == "00000000000000001234" + SNAPSHOT_SUFFIX
    write_snapshot(path, entries)
    assert read_snapshot(path) == entries
    assert list_snapshots(tmp_path) == [1234]
    assert not list(tmp_path.glob("*.tmp"))


def _flip(data: bytes, position: int) -> bytes:
    return data[:position] + bytes([data[position] ^ 0x40]) + data[position + 1:]


GOOD = encode_snapshot(ENTRIES)
CORRUPTIONS = [
    ("empty file", b""),
    ("header cut short", GOOD[:8]),
    ("an entry cut short", GOOD[:-3]),
    ("a byte more", GOOD + b"\0"),
    ("a flipped bit in an entry", _flip(GOOD, 30)),
    ("a flipped bit in the count", _flip(GOOD, 7)),
    ("a flipped bit in the CRC", _flip(GOOD, 3)),
    ("unknown version", struct.pack(">h", 2) + GOOD[2:]),
    ("count beyond the data",
     GOOD[:2] + struct.pack(">I", crc32c.crc32c(struct.pack(">i", 9) + GOOD[10:]))
     + struct.pack(">i", 9) + GOOD[10:]),
    ("negative count",
     GOOD[:2] + struct.pack(">I", crc32c.crc32c(struct.pack(">i", -1) + GOOD[10:]))
     + struct.pack(">i", -1) + GOOD[10:]),
]


@pytest.mark.parametrize("data", [c[1] for c in CORRUPTIONS], ids=[c[0] for c in CORRUPTIONS])
def test_corruption_is_detected(data):
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(data)


def test_only_snapshot_files_are_listed(tmp_path):
    for name in ["00000000000000000007.snapshot", "00000000000000000003.snapshot",
                 "00000000000000000009.snapshot.tmp", "00000000000000000011.snapshot.deleted",
                 "00000000000000000000.log", "7.snapshot", "leader-epoch-checkpoint"]:
        (tmp_path / name).write_bytes(b"")
    assert list_snapshots(tmp_path) == [3, 7]


# -- the manager's snapshots ----------------------------------------------------------------------

def batch(producer_id, epoch, seq, offset, count=1, transactional=False):
    return ProducerBatch(producer_id, epoch, seq, offset, count - 1, NOW,
                         is_transactional=transactional)


def test_a_snapshot_keeps_each_producers_epoch_and_last_batch(tmp_path):
    state = ProducerStateManager(tmp_path)
    state.check_and_update(batch(1, 0, 0, 0, 2))
    state.check_and_update(batch(1, 0, 2, 2, 3))
    state.check_and_update(batch(2, 4, 10, 5, 1, transactional=True))
    assert state.take_snapshot() == snapshot_path(tmp_path, 6)
    assert state.take_snapshot() is None  # already written at this offset

    loaded = ProducerStateManager(tmp_path)
    assert loaded.load_latest_snapshot(100) == 6
    assert loaded.map_end_offset == 6
    one, two = loaded.last_entry(1), loaded.last_entry(2)
    assert (one.producer_epoch, one.last_seq, one.last_data_offset) == (0, 4, 4)
    assert len(one.batches) == 1
    assert (two.producer_epoch, two.last_seq, two.current_txn_first_offset) == (4, 10, 5)
    assert loaded.check_and_update(batch(1, 0, 2, 6, 3)) is not None  # the last batch: duplicate
    with pytest.raises(OutOfOrderSequenceError):  # the one before is no longer known
        loaded.check_and_update(batch(1, 0, 0, 6, 2))


def test_no_snapshot_of_an_empty_state(tmp_path):
    state = ProducerStateManager(tmp_path)
    state.update_map_end_offset(10)
    assert state.take_snapshot() is None
    assert list_snapshots(tmp_path) == []


def test_a_corrupt_snapshot_is_skipped_for_the_next_older(tmp_path, caplog):
    state = ProducerStateManager(tmp_path)
    state.check_and_update(batch(1, 0, 0, 0))
    state.take_snapshot()
    state.check_and_update(batch(1, 0, 1, 1))
    newest = state.take_snapshot()
    newest.write_bytes(_flip(newest.read_bytes(), 20))
    loaded = ProducerStateManager(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert loaded.load_latest_snapshot(100) == 1
    assert "00000000000000000002.snapshot" in caplog.text and "CRC" in caplog.text
    assert loaded.last_entry(1).last_seq == 0
    assert list_snapshots(tmp_path) == [1]  # the corrupt one is deleted


# -- a log's snapshots ----------------------------------------------------------------------------

PID = 1000


def producer_batch(seq: int, count: int = 1, epoch: int = 0) -> bytes:
    return build_batch([(None, b"x" * 100) for _ in range(count)], timestamp=NOW,
                       producer_id=PID, producer_epoch=epoch, base_sequence=seq)


def fill(log: Log, batches: int, count: int = 2) -> list[int]:
    """Append ``batches`` batches of ``count`` records; return their first offsets."""
    return [log.append(producer_batch(i * count, count)).first_offset for i in range(batches)]


def log_in(directory, clean_shutdown=False, recovery_point=0, **config) -> Log:
    return Log(directory, LogConfig(**config), clock=lambda: NOW, clean_shutdown=clean_shutdown,
               recovery_point=recovery_point)


def test_rolls_and_close_write_snapshots(tmp_path):
    log = log_in(tmp_path / "t-0", segment_bytes=1000)
    fill(log, 20)
    bases = [s.base_offset for s in log.segments]
    assert len(bases) > 3
    assert log.producer_state.snapshot_offsets == bases[1:]
    log.close()
    assert list_snapshots(tmp_path / "t-0") == [*bases[1:], 40]
    assert read_snapshot(snapshot_path(tmp_path / "t-0", 40))[0].last_sequence == 39


def test_a_log_without_producers_writes_no_snapshot(tmp_path):
    log = log_in(tmp_path / "t-0", segment_bytes=1000)
    for _ in range(20):
        log.append(build_batch([(None, b"x" * 100)], timestamp=NOW))
    log.close()
    assert list_snapshots(tmp_path / "t-0") == []


def test_after_a_clean_shutdown_the_snapshot_is_the_state(tmp_path):
    log = log_in(tmp_path / "t-0")
    offsets = fill(log, 6)
    log.close()
    reopened = log_in(tmp_path / "t-0", clean_shutdown=True)
    entry = reopened.producer_state.last_entry(PID)
    assert len(entry.batches) == 1  # from the snapshot alone, not from reading the log
    assert reopened.append(producer_batch(10, 2)).first_offset == offsets[-1]
    assert reopened.log_end_offset == 12
    reopened.close()


def test_after_a_crash_the_state_is_read_from_the_log(tmp_path):
    log = log_in(tmp_path / "t-0")
    offsets = fill(log, 6)
    log.flush()  # no close: no snapshot, as after a crash
    assert list_snapshots(tmp_path / "t-0") == []
    reopened = log_in(tmp_path / "t-0", recovery_point=log.recovery_point)
    entry = reopened.producer_state.last_entry(PID)
    assert [b.first_offset for b in entry.batches] == offsets[1:]  # the last five
    for i, offset in list(enumerate(offsets))[1:]:
        assert reopened.append(producer_batch(i * 2, 2)).first_offset == offset
    assert reopened.log_end_offset == 12
    assert reopened.append(producer_batch(12, 1)).first_offset == 12
    reopened.close()


def test_a_corrupt_snapshot_is_ignored_with_a_warning_and_the_log_read(tmp_path, caplog):
    log = log_in(tmp_path / "t-0")
    offsets = fill(log, 6)
    log.close()
    path = snapshot_path(tmp_path / "t-0", 12)
    path.write_bytes(_flip(path.read_bytes(), 12))
    with caplog.at_level(logging.WARNING):
        reopened = log_in(tmp_path / "t-0", clean_shutdown=True)
    assert "ignoring producer state snapshot 00000000000000000012.snapshot" in caplog.text
    entry = reopened.producer_state.last_entry(PID)
    assert [b.first_offset for b in entry.batches] == offsets[1:]
    assert reopened.append(producer_batch(10, 2)).first_offset == offsets[-1]
    reopened.close()


def test_after_a_crash_a_snapshot_above_the_recovery_point_is_not_trusted(tmp_path):
    log = log_in(tmp_path / "t-0")
    fill(log, 3)
    log.flush()
    # a snapshot at the log end that disagrees with the log (epoch 9)
    write_snapshot(snapshot_path(tmp_path / "t-0", 6),
                   [SnapshotEntry(PID, 9, 0, 5, 0, NOW, -1, -1)])
    reopened = log_in(tmp_path / "t-0", recovery_point=4)
    assert reopened.producer_state.last_entry(PID).producer_epoch == 0
    reopened.close()
    trusted = log_in(tmp_path / "t-0", recovery_point=6)
    assert trusted.producer_state.last_entry(PID).producer_epoch == 9
    trusted.close()


def test_a_snapshot_beside_no_segment_survives_loading(tmp_path):
    log = log_in(tmp_path / "t-0", segment_bytes=1000)
    fill(log, 12)
    end = log.log_end_offset
    log.close()
    assert end not in [s.base_offset for s in log.segments]
    reopened = log_in(tmp_path / "t-0", clean_shutdown=True, segment_bytes=1000)
    assert end in list_snapshots(tmp_path / "t-0")
    reopened.close()


def test_a_clean_shutdown_without_a_snapshot_means_no_producer(tmp_path):
    """What a log written before producer state was kept looks like: not read through."""
    log = log_in(tmp_path / "t-0")
    fill(log, 3)
    log.close()
    snapshot_path(tmp_path / "t-0", 6).unlink()
    reopened = log_in(tmp_path / "t-0", clean_shutdown=True)
    assert reopened.producer_state.producers == {}
    assert reopened.append(producer_batch(57)).first_offset == 6  # an unknown producer: taken
    reopened.close()


def test_truncation_rebuilds_the_state_and_drops_later_snapshots(tmp_path):
    log = log_in(tmp_path / "t-0", segment_bytes=1000)
    fill(log, 20)
    snapshots = log.producer_state.snapshot_offsets
    cut = snapshots[1] + 2
    log.truncate_to(cut)
    assert log.log_end_offset == cut
    assert log.producer_state.snapshot_offsets == [s for s in snapshots if s <= cut]
    assert log.producer_state.last_entry(PID).last_seq == cut - 1
    assert log.append(producer_batch(cut, 2)).first_offset == cut
    with pytest.raises(OutOfOrderSequenceError):
        log.append(producer_batch(40, 2))
    log.close()


def test_retention_deletes_snapshots_below_the_log_start(tmp_path):
    clock = [NOW]
    log = Log(tmp_path / "t-0", LogConfig(segment_bytes=1000, retention_bytes=2500,
                                          retention_ms=-1), clock=lambda: clock[0])
    fill(log, 30)
    enforce_retention(log)
    start = log.segments[0].base_offset
    assert start > 0
    assert log.producer_state.snapshot_offsets == list_snapshots(tmp_path / "t-0")
    assert min(list_snapshots(tmp_path / "t-0")) >= start
    log.close()


def test_the_log_replays_markers_through_the_coordinator_origin(tmp_path):
    from broker_lite.records import (
        ControlRecordType,
        EndTransactionMarker,
        build_control_batch,
    )

    log = log_in(tmp_path / "t-0")
    log.append(build_batch([(None, b"t")], timestamp=NOW, producer_id=PID, producer_epoch=0,
                           base_sequence=0, is_transactional=True))
    assert log.producer_state.last_entry(PID).current_txn_first_offset == 0
    log.append(build_control_batch(EndTransactionMarker(ControlRecordType.COMMIT, 3),
                                   producer_id=PID, producer_epoch=0, timestamp=NOW),
               origin=AppendOrigin.COORDINATOR)
    log.flush()
    reopened = log_in(tmp_path / "t-0", recovery_point=0)
    entry = reopened.producer_state.last_entry(PID)
    assert (entry.current_txn_first_offset, entry.coordinator_epoch) == (None, 3)
    reopened.close()


def test_silent_producers_expire_at_a_roll_and_on_loading(tmp_path):
    clock = [NOW]
    log = Log(tmp_path / "t-0", LogConfig(), clock=lambda: clock[0])
    fill(log, 2)
    log.flush()
    expiry = log.producer_state.expiration_ms
    clock[0] += expiry
    reopened = Log(tmp_path / "t-0", LogConfig(), clock=lambda: clock[0], recovery_point=4)
    assert reopened.producer_state.producers == {}  # read back from the log, then expired
    reopened.close()

    clock[0] = NOW
    log = Log(tmp_path / "t-1", LogConfig(), clock=lambda: clock[0])
    fill(log, 2)
    clock[0] += expiry - 1
    log.roll()
    assert log.producer_state.last_entry(PID) is not None
    log.append(build_batch([(None, b"x")], timestamp=clock[0]))
    clock[0] += 1
    log.roll()
    assert log.producer_state.producers == {}
    assert log.producer_state.snapshot_offsets == [4]  # none written for an empty state
    assert log.append(producer_batch(57)).first_offset == 5  # unknown again: any sequence
    log.close()
