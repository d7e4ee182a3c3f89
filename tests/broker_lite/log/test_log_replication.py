"""The log as a replica sees it: a follower appends its leader's batches as they are, its high
watermark follows the leader's, a leader's high watermark waits for its keeper, and a follower
whose log ends below its leader's log start starts afresh."""

from dataclasses import replace
from pathlib import Path

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.topic import LogConfig
from broker_lite.log import InvalidRecordError, Log
from broker_lite.log.checkpoints import OffsetCheckpointFile
from broker_lite.log.files import REPLICATION_OFFSET_CHECKPOINT
from broker_lite.log.manager import LogManager
from broker_lite.log.producer_state import AppendOrigin
from broker_lite.records import (
    BatchReader,
    ControlRecordType,
    CorruptRecordError,
    EndTransactionMarker,
    build_batch,
    build_control_batch,
)


def config(**overrides) -> LogConfig:
    return replace(LogConfig(), **{"segment_bytes": 1024, "index_interval_bytes": 128,
                                   "file_delete_delay_ms": 0, **overrides})


def leader_bytes(log: Log, start: int = 0) -> bytes:
    """What a follower's fetch of ``log`` from ``start`` returns: its batches as stored."""
    region = log.read(start, 1 << 20, max_offset=None)
    if region is None:
        return b""
    with region:
        return region.read()


class Keeper:
    def __init__(self):
        self.told = 0

    def on_leader_append(self, log: Log) -> None:
        self.told += 1


@pytest.fixture
def leader(tmp_path: Path):
    log = Log(tmp_path / "leader" / "events-0", config())
    yield log
    log.close()


@pytest.fixture
def follower(tmp_path: Path):
    log = Log(tmp_path / "follower" / "events-0", config())
    yield log
    log.close()


def test_a_follower_keeps_the_leaders_offsets_epochs_and_bytes(leader, follower):
    for epoch, i in ((0, 0), (0, 1), (3, 2), (5, 3)):
        leader.append(build_batch([(b"k%d" % i, b"v" * 30)] * 3, timestamp=100 + i),
                      partition_leader_epoch=epoch)
    data = leader_bytes(leader)
    written = follower.append_as_follower(data)
    assert (written.first_offset, written.last_offset) == (0, 11)
    assert follower.log_end_offset == leader.log_end_offset == 12
    assert leader_bytes(follower) == data
    assert follower.leader_epochs.entries == leader.leader_epochs.entries == \
        [(0, 0), (3, 6), (5, 9)]
    assert follower.high_watermark == 0  # a follower's moves only with the leader's
    assert follower.update_follower_high_watermark(9) == 9
    assert follower.update_follower_high_watermark(50) == 12  # never past its own log end


def test_a_follower_appends_more_batches_in_one_fetch_than_one_write_takes(tmp_path: Path):
    """A follower 3,000 one-record batches behind gets them in one fetch: more buffers than
    one ``pwritev`` takes (IOV_MAX, 1,024 on Linux), written all the same."""
    big = replace(config(), segment_bytes=1 << 30)
    leader = Log(tmp_path / "leader" / "events-0", big)
    follower = Log(tmp_path / "follower" / "events-0", big)
    try:
        for i in range(3000):
            leader.append(build_batch([(None, b"%d" % i)], timestamp=i), partition_leader_epoch=0)
        data = leader_bytes(leader)
        written = follower.append_as_follower(data)
        assert (written.first_offset, written.last_offset) == (0, 2999)
        assert leader_bytes(follower) == data
    finally:
        leader.close()
        follower.close()


def test_a_follower_appends_only_what_continues_its_log(leader, follower):
    leader.append(build_batch([(b"k", b"v")] * 2, timestamp=1))
    leader.append(build_batch([(b"k", b"v")], timestamp=2))
    follower.append_as_follower(leader_bytes(leader))
    with pytest.raises(InvalidRecordError, match="below the next offset 3"):
        follower.append_as_follower(leader_bytes(leader))  # the same batches again
    assert follower.log_end_offset == 3
    leader.append(build_batch([(b"k", b"v")], timestamp=3))
    with pytest.raises(CorruptRecordError, match="partial batch"):
        follower.append_as_follower(leader_bytes(leader, 3)[:-5])
    assert follower.log_end_offset == 3
    assert follower.append_as_follower(b"") is None


def test_a_follower_tracks_producers_and_transactions_so_it_can_lead(leader, follower):
    first = build_batch([(b"k", b"a")], timestamp=1, producer_id=7, producer_epoch=0,
                        base_sequence=0, is_transactional=True)
    leader.append(first)
    follower.append_as_follower(leader_bytes(leader))
    assert follower.ongoing_transactions == {7: 0}
    marker = build_control_batch(EndTransactionMarker(ControlRecordType.ABORT, 0),
                                 producer_id=7, producer_epoch=0, timestamp=2)
    leader.append(marker, origin=AppendOrigin.COORDINATOR)
    follower.append_as_follower(leader_bytes(leader, 1))
    assert follower.ongoing_transactions == {}
    assert [t.producer_id for t in follower.collect_aborted_transactions(0, 2)] == [7]
    # Now leading, the follower answers a retry of the producer's batch with its offset.
    retried = follower.append(first)
    assert (retried.first_offset, retried.batches) == (0, [])


def test_a_leaders_high_watermark_waits_for_its_keeper(leader):
    keeper = Keeper()
    leader.append(build_batch([(b"k", b"v")], timestamp=1))
    assert leader.high_watermark == 1  # no keeper: one replica, committed at once
    leader.high_watermark_keeper = keeper
    leader.append(build_batch([(b"k", b"v")] * 4, timestamp=2))
    assert (leader.log_end_offset, leader.high_watermark, keeper.told) == (5, 1, 1)
    assert leader.maybe_increment_high_watermark(3) and leader.high_watermark == 3
    assert not leader.maybe_increment_high_watermark(2)  # never back
    assert leader.maybe_increment_high_watermark(99) and leader.high_watermark == 5


def test_truncate_fully_and_start_at_the_leaders_log_start(follower):
    follower.append_as_follower(build_batch([(b"k", b"v")] * 3, timestamp=1))
    follower.truncate_fully_and_start_at(1000)
    assert (follower.log_start_offset, follower.log_end_offset, follower.high_watermark) == \
        (1000, 1000, 1000)
    assert follower.leader_epochs.entries == []
    follower.append_as_follower(build_batch([(b"k", b"v")], timestamp=2, base_offset=1000,
                                            partition_leader_epoch=4))
    assert follower.log_end_offset == 1001
    assert follower.leader_epochs.entries == [(4, 1000)]
    assert [b.base_offset for b in BatchReader(leader_bytes(follower, 1000))] == [1000]


def test_the_high_watermarks_are_checkpointed_and_loaded(tmp_path: Path):
    broker = BrokerConfig({"log.dirs": str(tmp_path)})
    manager = LogManager(broker)
    log = manager.get_or_create("events", 0)
    log.high_watermark_keeper = Keeper()
    log.append(build_batch([(b"k", b"v")] * 5, timestamp=1))
    log.maybe_increment_high_watermark(2)
    manager.get_or_create("events", 1)
    manager.shutdown()
    assert OffsetCheckpointFile(tmp_path / REPLICATION_OFFSET_CHECKPOINT).read() == \
        {("events", 0): 2, ("events", 1): 0}
    reopened = LogManager(broker)
    assert reopened.get("events", 0).high_watermark == 2
    reopened.shutdown()
    (tmp_path / REPLICATION_OFFSET_CHECKPOINT).write_text("0\n0\n")  # events-0 missing
    reopened = LogManager(broker)
    assert reopened.get("events", 0).high_watermark == 0  # Kafka's default
    reopened.shutdown()
    (tmp_path / REPLICATION_OFFSET_CHECKPOINT).unlink()  # a dir that never ran replicated
    reopened = LogManager(broker)
    assert reopened.get("events", 0).high_watermark == 5
    reopened.shutdown()
