"""A leader's replica of a partition, without sockets or ZooKeeper: the high watermark follows
the ISR's slowest log end, followers join the ISR once caught up to the high watermark and the
leader epoch's start, lagging ones leave it after replica.lag.time.max.ms, acks=all appends
wait for the ISR and respect min.insync.replicas, and the follower side applies what the
fetcher brings only in the leader epoch it fetched in."""

import threading
from dataclasses import replace

import pytest
from manual_clock import ManualClock

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.topic import LogConfig
from broker_lite.log import Log
from broker_lite.protocol import ErrorCode
from broker_lite.records import build_batch
from broker_lite.replication.errors import NotEnoughReplicasError, NotLeaderError
from broker_lite.replication.partition import Partition
from broker_lite.zk.layout import PartitionState

TP = TopicPartition("events", 0)
LAG_MS = 10_000


class RecordingWriter:
    """An IsrWriter that accepts every version it is given (or refuses, when told)."""

    def __init__(self):
        self.writes: list[tuple[PartitionState, int]] = []
        self.refuse = False

    def write(self, partition, state, version):
        self.writes.append((state, version))
        return None if self.refuse else version + 1


@pytest.fixture
def clock():
    return ManualClock(1_000_000)


@pytest.fixture
def writer():
    return RecordingWriter()


@pytest.fixture
def leader(tmp_path, clock, writer):
    log = Log(tmp_path / "events-0", replace(LogConfig(), min_insync_replicas=2), clock=clock)
    moved = []
    partition = Partition(TP, log, 1, lag_time_max_ms=LAG_MS, isr_writer=writer,
                          is_alive=lambda broker: broker != 9, on_high_watermark=moved.append,
                          clock=clock)
    partition.moved = moved
    partition.make_leader(PartitionState(1, 5, (1, 2, 3), 7), (1, 2, 3), version=4)
    yield partition
    log.close()


def append(partition: Partition, n: int = 1, acks: int = -1):
    return partition.append_as_leader(build_batch([(b"k", b"v")] * n, timestamp=1),
                                      required_acks=acks)


def fetch(partition: Partition, replica: int, offset: int, clock: ManualClock) -> bool:
    return partition.update_follower_fetch_state(
        replica, fetch_offset=offset, log_start_offset=0,
        leader_end_offset=partition.log.log_end_offset, now=clock.now)


def test_the_high_watermark_is_the_smallest_log_end_in_the_isr(leader, clock):
    append(leader, 10)
    assert leader.log.high_watermark == 0  # followers have fetched nothing yet
    fetch(leader, 2, 10, clock)
    assert leader.log.high_watermark == 0  # 3 is in the ISR and still behind
    fetch(leader, 3, 4, clock)
    assert leader.log.high_watermark == 4
    assert leader.moved == [TP]  # requests waiting on it are told
    fetch(leader, 3, 10, clock)
    assert leader.log.high_watermark == 10
    assert leader.log.leader_epochs.entries == [(5, 0)]  # the epoch starts at the log end


def test_acks_all_completes_once_the_isr_has_the_records(leader, clock):
    append(leader, 3)
    assert leader.check_enough_replicas_reach_offset(3) == (False, ErrorCode.NONE)
    fetch(leader, 2, 3, clock)
    fetch(leader, 3, 3, clock)
    assert leader.check_enough_replicas_reach_offset(3) == (True, ErrorCode.NONE)


def test_a_waiting_coordinator_write_wakes_when_the_isr_catches_up(leader, clock):
    append(leader, 2)
    outcome = []
    waiter = threading.Thread(target=lambda: outcome.append(leader.wait_for_replication(2, 10)),
                              daemon=True)
    waiter.start()
    fetch(leader, 2, 2, clock)
    fetch(leader, 3, 2, clock)
    waiter.join(30)
    assert not waiter.is_alive(), "wait_for_replication(2, 10) still waiting after 30 s"
    assert outcome == [ErrorCode.NONE]
    assert leader.wait_for_replication(3, 0.05) == ErrorCode.REQUEST_TIMED_OUT


def test_min_insync_replicas_refuses_acks_all_when_the_isr_is_too_small(tmp_path, clock):
    log = Log(tmp_path / "small-0", replace(LogConfig(), min_insync_replicas=2), clock=clock)
    partition = Partition(TP, log, 1, clock=clock)
    partition.make_leader(PartitionState(1, 0, (1,), 1), (1, 2, 3), version=0)
    with pytest.raises(NotEnoughReplicasError, match=r"min\.isr requirement of 2"):
        append(partition)
    assert log.log_end_offset == 0  # nothing appended
    assert append(partition, acks=1).first_offset == 0  # acks=1 is not held to it
    assert log.high_watermark == 1  # the leader alone in the ISR
    log.close()


def test_an_isr_shrunk_below_min_insync_answers_not_enough_replicas_after_append(leader, clock,
                                                                                writer):
    append(leader, 1)
    fetch(leader, 2, 0, clock)
    clock.now += LAG_MS + 1
    assert leader.maybe_shrink_isr()
    assert leader.isr == (1,)
    assert leader.log.high_watermark == 1  # the leader alone: committed
    assert leader.check_enough_replicas_reach_offset(1) == \
        (True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
    assert writer.writes[-1] == (PartitionState(1, 5, (1,), 7), 4)  # same epochs, znode v4


def test_a_follower_joins_once_caught_up_to_the_high_watermark_and_the_epoch_start(
        tmp_path, clock, writer):
    log = Log(tmp_path / "join-0", LogConfig(), clock=clock)
    log.append(build_batch([(b"k", b"v")] * 5, timestamp=1))  # written under an older leader
    partition = Partition(TP, log, 1, lag_time_max_ms=LAG_MS, isr_writer=writer, clock=clock)
    partition.make_leader(PartitionState(1, 2, (1,), 1), (1, 2), version=9)
    assert log.high_watermark == 5
    fetch(partition, 2, 3, clock)
    assert partition.isr == (1,)  # below the high watermark
    fetch(partition, 2, 5, clock)
    assert partition.isr == (1, 2)
    assert writer.writes == [(PartitionState(1, 2, (1, 2), 1), 9)]
    assert partition.zk_version == 10
    log.close()


def test_dead_brokers_and_non_replicas_never_join(leader, clock, writer):
    leader.make_leader(PartitionState(1, 6, (1,), 7), (1, 2, 9), version=5)
    fetch(leader, 9, 0, clock)  # not alive
    assert not fetch(leader, 4, 0, clock)  # not a replica: its fetch is refused
    assert leader.isr == (1,) and writer.writes == []


def test_an_isr_write_refused_for_a_stale_version_changes_nothing(leader, clock, writer):
    writer.refuse = True
    append(leader, 1)
    clock.now += LAG_MS + 1
    assert not leader.maybe_shrink_isr()
    assert leader.isr == (1, 2, 3) and leader.zk_version == 4


def test_a_follower_one_fetch_behind_a_steady_stream_stays_in_sync(leader, clock):
    append(leader, 5)
    fetch(leader, 2, 5, clock)
    fetch(leader, 3, 5, clock)
    for _ in range(2):  # 2 always reaches the log end the leader had at its previous fetch
        clock.now += 6000
        append(leader, 5)
        fetch(leader, 2, leader.log.log_end_offset - 5, clock)
    assert leader.maybe_shrink_isr()
    assert leader.isr == (1, 2)  # 3 did not fetch for 12 s


def test_stale_states_are_ignored(leader):
    assert not leader.make_leader(PartitionState(1, 5, (1,), 7), (1, 2, 3), version=3)
    assert leader.isr == (1, 2, 3)


def test_leadership_moving_away_answers_waiting_appends_not_leader(leader, clock):
    append(leader, 1)
    assert leader.make_follower(PartitionState(2, 6, (2, 3), 7), (1, 2, 3), version=5)
    assert leader.check_enough_replicas_reach_offset(1) == \
        (True, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    with pytest.raises(NotLeaderError):
        append(leader)


def test_the_follower_side_acts_only_in_the_epoch_it_fetched_in(tmp_path, clock):
    source = Log(tmp_path / "source-0", LogConfig(), clock=clock)
    source.append(build_batch([(b"k", b"v")] * 4, timestamp=1), partition_leader_epoch=3)
    records = source.read(0, 1 << 20).read()
    log = Log(tmp_path / "follower-0", LogConfig(), clock=clock)
    follower = Partition(TP, log, 2, clock=clock)
    follower.make_follower(PartitionState(1, 3, (1, 2), 1), (1, 2), version=0)
    assert not follower.follower_append(1, 2, 0, records, 4, 0)  # an older epoch
    assert not follower.follower_append(3, 3, 0, records, 4, 0)  # another leader
    assert follower.follower_append(1, 3, 0, records, 2, 0)
    assert (log.log_end_offset, log.high_watermark) == (4, 2)
    assert not follower.follower_append(1, 3, 0, records, 4, 0)  # the log moved meanwhile
    assert follower.follower_truncate(1, 3, 1) and log.log_end_offset == 0  # whole batch
    source.close()
    log.close()


@pytest.mark.parametrize("append_as", ["append_as_leader", "append_all_as_leader"])
def test_a_moved_high_watermark_is_told_once_the_partition_is_unlocked(tmp_path, clock,
                                                                       append_as):
    """The requests waiting on the high watermark are tried by the callback, which takes other
    locks (the partition manager's, a waiting fetch's); a thread holding one of them may be
    reading this partition's state meanwhile, so the callback must not run under its lock."""
    log = Log(tmp_path / "alone-0", LogConfig(), clock=clock)
    read_in_callback = []

    def on_high_watermark(tp):  # reads the state from another thread, as Metadata would
        reader = threading.Thread(target=lambda: read_in_callback.append(partition.state),
                                  daemon=True)
        reader.start()
        reader.join(5)
        read_in_callback.append(not reader.is_alive())

    partition = Partition(TP, log, 1, on_high_watermark=on_high_watermark, clock=clock)
    partition.make_leader(PartitionState(1, 0, (1,), 1), (1,), version=0)
    read_in_callback.clear()  # make_leader's own telling
    batch = build_batch([(b"k", b"v")], timestamp=1)
    if append_as == "append_as_leader":
        partition.append_as_leader(batch, required_acks=1)
    else:
        partition.append_all_as_leader([batch], required_acks=1)
    assert log.high_watermark == 1  # the leader alone in the ISR: moved by the append
    assert read_in_callback == [partition.state, True]  # told once, the state readable
    log.close()
