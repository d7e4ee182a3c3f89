import os
import time

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.log.checkpoints import (
    CorruptCheckpointError,
    LeaderEpochCheckpointFile,
    OffsetCheckpointFile,
)
from broker_lite.log.files import (
    CLEAN_SHUTDOWN_MARKER,
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
)
from broker_lite.log.manager import LogManager
from broker_lite.records import build_batch, iter_records


@pytest.fixture
def dirs(tmp_path):
    return [tmp_path / "a", tmp_path / "b"]


def manager_for(dirs, **extra) -> LogManager:
    return LogManager(BrokerConfig({"log.dirs": ",".join(map(str, dirs)),
                                    "log.segment.bytes": "2000", **extra}))


def fill(manager, partitions=4, batches=20):
    for p in range(partitions):
        log = manager.get_or_create("events", p)
        for i in range(batches):
            log.append(build_batch([(b"k%d" % i, b"v" * 40)], timestamp=1000 + i))


def test_partitions_spread_over_log_dirs_in_kafkas_layout(dirs):
    manager = manager_for(dirs)
    fill(manager)
    assert sorted(os.listdir(dirs[0]) + os.listdir(dirs[1])) == [
        "events-0", "events-1", "events-2", "events-3"]
    assert len(os.listdir(dirs[0])) == len(os.listdir(dirs[1])) == 2
    manager.shutdown()


def test_clean_shutdown_writes_checkpoints_and_markers_and_reloads(dirs):
    manager = manager_for(dirs)
    fill(manager)
    manager.shutdown()
    for d in dirs:
        assert (d / CLEAN_SHUTDOWN_MARKER).exists()
        points = OffsetCheckpointFile(d / RECOVERY_POINT_CHECKPOINT).read()
        assert set(points.values()) == {20} and len(points) == 2
        assert (d / RECOVERY_POINT_CHECKPOINT).read_text().splitlines()[:2] == ["0", "2"]
    reloaded = manager_for(dirs)
    assert reloaded.partitions() == [("events", p) for p in range(4)]
    assert all(reloaded.get("events", p).log_end_offset == 20 for p in range(4))
    assert not any((d / CLEAN_SHUTDOWN_MARKER).exists() for d in dirs)  # a crash now is unclean
    reloaded.shutdown()


def test_after_a_crash_logs_recover_from_their_recovery_point(dirs):
    manager = manager_for(dirs)
    fill(manager, partitions=1)
    log = manager.get("events", 0)
    log.flush()
    manager.checkpoint()
    path = log.active_segment.log_path
    with open(path, "ab") as f:  # the crash left a torn write behind
        f.write(b"\x00\x00\x00\x00\x00\x00\x00\x99\x00\x00")
    reloaded = manager_for(dirs)  # no shutdown(): no marker
    recovered = reloaded.get("events", 0)
    assert recovered.log_end_offset == 20
    assert next(r.offset for r in iter_records(recovered.read(0, 1 << 20).read())) == 0
    reloaded.shutdown()


def test_delete_removes_the_partition_from_disk(dirs):
    manager = manager_for(dirs)
    fill(manager, partitions=2)
    manager.delete("events", 1)
    assert manager.get("events", 1) is None
    assert not any("events-1" in name for d in dirs for name in os.listdir(d))
    manager.shutdown()
    assert manager_for(dirs).partitions() == [("events", 0)]


def test_interrupted_deletion_is_finished_on_start(dirs):
    manager = manager_for(dirs)
    fill(manager, partitions=1)
    manager.shutdown()
    home = next(d for d in dirs if (d / "events-0").exists())
    (home / "events-0").rename(home / "events-0.abc123-delete")
    assert manager_for(dirs).partitions() == []
    assert not (home / "events-0.abc123-delete").exists()


def test_topic_config_overrides_apply_to_every_partition(dirs):
    manager = manager_for(dirs)
    fill(manager, partitions=2, batches=1)
    manager.update_config("events", {"retention.ms": "1000", "cleanup.policy": "compact"})
    assert all(manager.get("events", p).config.retention_ms == 1000 for p in range(2))
    assert manager.get_or_create("other", 0, {"segment.bytes": "5000"}).config.segment_bytes == 5000
    manager.shutdown()


def test_log_start_offsets_are_checkpointed_at_once_and_survive_a_crash(dirs):
    manager = manager_for(dirs)
    fill(manager, partitions=2)
    log = manager.get("events", 1)
    log.increment_log_start_offset(12)
    manager.checkpoint_log_start_offsets()
    log_dir = log.directory.parent
    assert OffsetCheckpointFile(log_dir / LOG_START_OFFSET_CHECKPOINT).read() == {
        ("events", 1): 12}
    for other in manager.partitions():  # a crash: no shutdown, no clean-shutdown marker
        manager.get(*other).flush()
    reopened = manager_for(dirs)
    assert reopened.get("events", 1).log_start_offset == 12
    assert reopened.get("events", 0).log_start_offset == 0
    reopened.shutdown()


def test_compaction_picks_dirty_logs_and_checkpoints_their_clean_points(dirs):
    manager = manager_for(dirs)
    compacted = manager.get_or_create("compacted", 0, {"cleanup.policy": "compact",
                                                       "segment.bytes": "600"})
    for i in range(60):
        compacted.append(build_batch([(b"k%d" % (i % 3), b"v" * 40)], timestamp=1000 + i))
    plain = manager.get_or_create("events", 0)
    plain.append(build_batch([(None, b"v")], timestamp=1000))
    manager.compact()
    end = compacted.segments[-1].base_offset
    cleaned = [r.key for r in iter_records(compacted.read(0, 1 << 20).read()) if r.offset < end]
    assert sorted(cleaned) == [b"k0", b"k1", b"k2"]  # the latest record of each key is left
    checkpoint = compacted.directory.parent / CLEANER_OFFSET_CHECKPOINT
    assert OffsetCheckpointFile(checkpoint).read() == {("compacted", 0): end}
    segments = list(compacted.segments)
    manager.compact()  # nothing dirty: the log is left alone
    assert compacted.segments == segments
    manager.shutdown()
    reopened = manager_for(dirs)
    assert reopened._cleaned_to == {("compacted", 0): end}
    reopened.shutdown()


def test_background_retention_runs(dirs):
    manager = manager_for(dirs, **{"log.retention.ms": "1", "log.retention.check.interval.ms": "20",
                                   "log.segment.delete.delay.ms": "0"})
    fill(manager, partitions=1, batches=60)
    log = manager.get("events", 0)
    before = len(log.segments)
    manager.start_background_tasks()
    deadline = time.monotonic() + 30
    while len(log.segments) > 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(log.segments) == 1 < before
    manager.shutdown()


def test_checkpoint_files_round_trip_and_reject_garbage(tmp_path):
    offsets = OffsetCheckpointFile(tmp_path / "cp")
    offsets.write({("t", 0): 5, ("my-topic", 12): 99})
    assert (tmp_path / "cp").read_text() == "0\n2\nmy-topic 12 99\nt 0 5\n"
    assert offsets.read() == {("t", 0): 5, ("my-topic", 12): 99}
    epochs = LeaderEpochCheckpointFile(tmp_path / "leader-epoch-checkpoint")
    epochs.write([(0, 0), (3, 1200)])
    assert epochs.read() == [(0, 0), (3, 1200)]
    (tmp_path / "bad").write_text("0\n2\nt 0 5\n")
    with pytest.raises(CorruptCheckpointError, match="expected 2 entries"):
        OffsetCheckpointFile(tmp_path / "bad").read()
