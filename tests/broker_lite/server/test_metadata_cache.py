"""The metadata cache on a real ZooKeeper: answers without ZooKeeper reads until a watched
znode changes, then the new state."""

import pytest
from kazoo.exceptions import NoNodeError

from broker_lite.server.metadata import ClusterMetadata
from broker_lite.server.metadata_cache import MetadataCache
from broker_lite.zk.admin import create_topic
from broker_lite.zk.cluster import ensure_persistent_paths
from broker_lite.zk.layout import PartitionState, TopicPartitionStateZNode
from broker_lite.zk.testing import wait_until

pytestmark = [pytest.mark.zookeeper]


class CountingClient:
    """Counts the reads a view makes through the (watching) client it is given."""

    def __init__(self, client):
        self.client, self.reads = client, 0

    def __getattr__(self, name):
        attribute = getattr(self.client, name)
        if name in ("get", "get_children", "exists"):
            def read(*args, **kwargs):
                self.reads += 1
                return attribute(*args, **kwargs)
            return read
        return attribute


@pytest.fixture
def cache(zookeeper_client):
    ensure_persistent_paths(zookeeper_client)
    counted = {}

    def make_view(watching):
        counted["client"] = CountingClient(watching)
        return ClusterMetadata(counted["client"])

    cache = MetadataCache(zookeeper_client, make_view)
    cache.reads = lambda: counted["client"].reads
    return cache


def set_leader(client, topic: str, partition: int, leader: int, epoch: int) -> None:
    path = TopicPartitionStateZNode.path(topic, partition)
    data = TopicPartitionStateZNode.encode(PartitionState(leader, epoch, (leader,), 1))
    if client.exists(path):
        client.set(path, data)
    else:
        client.create(path, data, makepath=True)


def test_answers_are_kept_until_something_changes(cache, zookeeper_client):
    create_topic(zookeeper_client, "events", 2, 1, replica_assignment={0: [1], 1: [1]})
    set_leader(zookeeper_client, "events", 0, 1, 0)
    first = cache.topic("events")
    reads = cache.reads()
    for _ in range(5):
        assert cache.topic("events") == first
        assert cache.topic_names() == ["events"]
    assert cache.reads() == reads + 1  # topic_names read once, topic not again
    assert [p.state for p in first.partitions] == [PartitionState(1, 0, (1,), 1), None]

    set_leader(zookeeper_client, "events", 1, 1, 0)  # an election: a state znode appears
    wait_until(lambda: cache.topic("events").partitions[1].state is not None, 10,
               "the new leader seen")
    set_leader(zookeeper_client, "events", 0, 2, 1)  # a state znode changes
    wait_until(lambda: cache.partition_state("events", 0) == PartitionState(2, 1, (2,), 1), 10,
               "the leader change seen")


def test_a_topic_that_did_not_exist_is_seen_once_created(cache, zookeeper_client):
    assert cache.topic("later") is None and cache.partition_count("later") is None
    create_topic(zookeeper_client, "later", 1, 1, replica_assignment={0: [1]})
    wait_until(lambda: cache.topic("later") is not None, 10, "the topic seen")
    assert cache.partition_count("later") == 1
    assert cache.topic_name(cache.topic("later").topic_id) == "later"


def test_brokers_and_the_controller_follow_their_znodes(cache, zookeeper_client):
    assert cache.brokers() == [] and cache.controller_id() == -1
    zookeeper_client.create("/controller", b'{"version":1,"brokerid":7,"timestamp":"1"}',
                            ephemeral=True)
    wait_until(lambda: cache.controller_id() == 7, 10, "the controller seen")
    zookeeper_client.delete("/controller")
    wait_until(lambda: cache.controller_id() == -1, 10, "the controller gone")


def test_answers_beyond_the_limit_are_read_each_time(cache, zookeeper_client, monkeypatch):
    monkeypatch.setattr("broker_lite.server.metadata_cache.MAX_ANSWERS", 2)
    assert cache.topic("a") is None and cache.topic("b") is None
    reads = cache.reads()
    assert cache.topic("a") is None and cache.topic("b") is None
    assert cache.reads() == reads  # both kept
    assert cache.topic("c") is None
    reads = cache.reads()
    assert cache.topic("c") is None
    assert cache.reads() > reads  # not kept: read again


class Outcome:
    """A kazoo asynchronous result that is already there."""

    def __init__(self, value):
        self.value = value

    def get(self, timeout=None):
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


class CreatedBetweenReads:
    """A client on which a znode appears between a read that missed it and the watch set."""

    connected = True

    def __init__(self):
        self.created = False

    def get_async(self, path, watch=None):
        return Outcome(NoNodeError(path))

    def exists_async(self, path, watch=None):
        self.created = True
        return Outcome(object())  # a stat: it exists now, and its creation will notify no one

    def add_listener(self, listener):
        pass


def test_an_answer_missing_a_znode_created_meanwhile_is_read_again_yet_answers_when_cut_off():
    client = CreatedBetweenReads()
    reads = []

    class View:
        def __init__(self, watching):
            self.client = watching

        def controller_id(self):
            reads.append(1)
            try:
                self.client.get("/controller")
            except NoNodeError:
                return -1

    cache = MetadataCache(client, View)
    assert cache.controller_id() == -1 and cache.controller_id() == -1
    assert len(reads) == 2  # kept as stale: read again
    client.connected = False  # ZooKeeper out of reach: the stale answer, without a read
    assert cache.controller_id() == -1 and len(reads) == 2
