"""A coordinator's internal-topic partitions, as its manager tracks them: loading from the
election on (not only once the loader thread reaches the partition), owned once replayed, and
neither after a stale or superseded load."""

import threading
from types import SimpleNamespace

import pytest

from broker_lite.coordinator.common.metadata_manager import MetadataManager, Replayed


class GatedKeys(MetadataManager):
    """One key per partition; replaying partition ``gated`` waits for ``release``."""

    topic = "__gated"

    def __init__(self, gated: int):
        super().__init__(SimpleNamespace(num_partitions=4, load_buffer_size=1024),
                         lambda partition: (f"log-{partition}", 0))
        self.gated, self.replaying, self.release = gated, threading.Event(), threading.Event()

    def _replay(self, log, on_loaded):
        if log == f"log-{self.gated}":
            self.replaying.set()
            assert self.release.wait(10)
        return Replayed(log, "1 key")

    def _drop(self, partition, on_unloaded):
        return 1


@pytest.fixture
def manager():
    manager = GatedKeys(gated=0)
    manager.start()
    yield manager
    manager.release.set()
    manager.shutdown()


def test_a_partition_is_loading_from_its_election_while_the_loader_is_busy(manager):
    manager.schedule_load(0, 1)
    assert manager.replaying.wait(10)
    manager.schedule_load(2, 1)  # queued behind partition 0's load
    assert manager.is_partition_loading(2) and not manager.is_partition_owned(2)
    assert manager.is_loading
    manager.release.set()
    assert manager.wait_for_tasks()
    assert manager.owned_partitions() == {0, 2}
    assert not manager.is_partition_loading(2) and not manager.is_loading


def test_a_superseded_load_leaves_the_partition_loading_until_the_newest_has_run(manager):
    manager.schedule_load(0, 1)
    assert manager.replaying.wait(10)
    manager.schedule_load(1, 1)
    manager.schedule_load(1, 2)  # re-elected in a newer epoch before the first load ran
    manager.schedule_unload(3, 5)  # a resignation of another partition does not count
    assert manager.is_partition_loading(1)
    manager.release.set()
    assert manager.wait_for_tasks()
    # owned as first loaded: a group manager keeps what it cached across its own re-elections
    assert (manager.is_partition_loading(1), manager.coordinator_epoch(1)) == (False, 1)


def test_a_stale_load_is_not_loading_once_skipped(manager):
    manager.release.set()
    manager.schedule_load(1, 3)
    assert manager.wait_for_tasks() and manager.coordinator_epoch(1) == 3
    manager.schedule_load(1, 2)  # an election older than the one loaded
    assert manager.wait_for_tasks()
    assert (manager.is_partition_loading(1), manager.coordinator_epoch(1)) == (False, 3)


def test_unloading_everything_forgets_the_loads_asked_for(manager):
    manager.schedule_load(0, 1)
    assert manager.replaying.wait(10)
    manager.schedule_load(1, 1)
    manager.unload_all()
    assert not manager.is_loading and manager.owned_partitions() == set()
