"""The coordinator learns from the partition manager when this broker starts and stops leading a
partition of __consumer_offsets: elections (and new leader epochs), resignations, removals, a
broker id learnt late, and other topics ignored."""

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.log.manager import LogManager
from broker_lite.replication.partition_manager import PartitionManager
from broker_lite.zk.layout import PartitionState

OFFSETS = "__consumer_offsets"


class Recorder:
    def __init__(self):
        self.calls = []

    def on_elected(self, partition, leader_epoch):
        self.calls.append(("elected", partition, leader_epoch))

    def on_resigned(self, partition, leader_epoch):
        self.calls.append(("resigned", partition, leader_epoch))


@pytest.fixture
def manager(tmp_path):
    logs = LogManager(BrokerConfig({"log.dirs": str(tmp_path)}))
    yield PartitionManager(logs, lambda topic: {})
    logs.shutdown()


def state(leader: int, epoch: int) -> PartitionState:
    return PartitionState(leader, epoch, (leader,), 1)


def test_elections_and_resignations(manager):
    manager.broker_id = 1
    recorder = Recorder()
    manager.add_leadership_listener(OFFSETS, recorder)
    manager.on_partition_assigned(OFFSETS, 0, state(1, 0), [1, 2])
    manager.on_partition_assigned(OFFSETS, 0, state(1, 0), [1, 2])  # nothing new
    manager.on_partition_assigned(OFFSETS, 0, state(1, 1), [1, 2])  # a new leader epoch
    manager.on_partition_assigned(OFFSETS, 1, state(2, 0), [1, 2])  # another broker leads
    manager.on_partition_assigned(OFFSETS, 0, state(2, 2), [1, 2])  # leadership moves away
    manager.on_partition_assigned(OFFSETS, 1, state(1, 1), [1, 2])
    manager.on_partition_removed(OFFSETS, 1, delete=False)
    manager.on_partition_assigned("events", 0, state(1, 0), [1])  # not the listener's topic
    assert recorder.calls == [("elected", 0, 0), ("elected", 0, 1), ("resigned", 0, 2),
                              ("elected", 1, 1), ("resigned", 1, None)]


def test_a_broker_id_learnt_late_is_applied_to_partitions_already_held(manager):
    recorder = Recorder()
    manager.add_leadership_listener(OFFSETS, recorder)
    manager.on_partition_assigned(OFFSETS, 0, state(7, 3), [7])
    manager.on_partition_assigned(OFFSETS, 1, state(8, 0), [7, 8])
    assert recorder.calls == []  # the id is not known yet
    manager.broker_id = 7
    assert recorder.calls == [("elected", 0, 3)]
    assert manager.is_leader(OFFSETS, 0)


def test_a_listener_added_late_hears_of_partitions_already_led(manager):
    manager.broker_id = 1
    manager.on_partition_assigned(OFFSETS, 2, state(1, 4), [1])
    recorder = Recorder()
    manager.add_leadership_listener(OFFSETS, recorder)
    assert recorder.calls == [("elected", 2, 4)]


def test_a_failing_listener_does_not_stop_the_others(manager, caplog):
    class Failing(Recorder):
        def on_elected(self, partition, leader_epoch):
            raise RuntimeError("boom")

    manager.broker_id = 1
    recorder = Recorder()
    manager.add_leadership_listener(OFFSETS, Failing())
    manager.add_leadership_listener(OFFSETS, recorder)
    manager.on_partition_assigned(OFFSETS, 0, state(1, 0), [1])
    assert recorder.calls == [("elected", 0, 0)] and "leadership listener failed" in caplog.text
