"""ZooKeeper assignments become logs on disk, and topic deletion removes them, with a real
ZooKeeper, real brokers' sessions and the real log manager."""

import os

import pytest

from broker_lite.common.tiers import needs
from broker_lite.config.broker import BrokerConfig
from broker_lite.log.manager import LogManager
from broker_lite.records import build_batch
from broker_lite.replication.partition_manager import PartitionManager
from broker_lite.server.zk_broker import ZkBroker
from broker_lite.zk import create_topic, delete_topic, get_topic_config
from broker_lite.zk.client import connect_from_config
from broker_lite.zk.testing import wait_until


@pytest.fixture(scope="session", params=["embedded", "standalone"])
@needs("zookeeper")  # the servers are looked up at run time, out of sight of the closure
def zookeeper_ensemble(request) -> str:
    """The embedded server, and a separate one reached like an external ensemble (with the
    chroot every test gets)."""
    if request.param == "embedded":
        return request.getfixturevalue("zookeeper_server").connect_string
    return request.getfixturevalue("standalone_zookeeper")


@pytest.fixture
def brokers(zookeeper_connect, tmp_path):
    started = []

    def start(broker_id: int):
        config = BrokerConfig({
            "broker.id": str(broker_id), "zookeeper.connect": zookeeper_connect,
            "listeners": f"PLAINTEXT://127.0.0.1:{9192 + broker_id}",
            "log.dirs": str(tmp_path / f"broker-{broker_id}"),
        })
        client = connect_from_config(config)
        manager = PartitionManager(LogManager(config), lambda t: get_topic_config(client, t),
                                   broker_id)
        broker = ZkBroker(client, config, manager).start()
        started.append((broker, client, manager))
        return manager

    yield start
    for broker, client, manager in started:
        broker.stop()
        client.stop()
        client.close()
        manager.log_manager.shutdown()


def partition_dirs(manager: PartitionManager) -> set[str]:
    return {name for d in manager.log_manager.log_dirs for name in os.listdir(d)
            if not name.startswith(".") and (d / name).is_dir()}


def test_assigned_partitions_get_logs_and_deleted_topics_leave_the_disk(brokers,
                                                                       zookeeper_client):
    managers = [brokers(1), brokers(2)]
    create_topic(zookeeper_client, "views", partitions=4, replication_factor=1,
                 config={"segment.bytes": "100000"})
    wait_until(lambda: sum(len(partition_dirs(m)) for m in managers) == 4, message="4 logs")
    # a log exists on disk a moment before its broker records the partition's state
    wait_until(lambda: all(m.leader_log(t, p) is not None for m in managers
                           for t, p in m.log_manager.partitions()), message="4 leaders")
    assert set().union(*map(partition_dirs, managers)) == {f"views-{p}" for p in range(4)}
    for manager in managers:
        for topic, partition in manager.log_manager.partitions():
            log = manager.leader_log(topic, partition)
            assert log is not None and log.config.segment_bytes == 100000
            log.append(build_batch([(b"k", b"v")], timestamp=1))

    delete_topic(zookeeper_client, "views")
    wait_until(lambda: not any(partition_dirs(m) for m in managers), message="logs deleted")
    # the controller removes the deletion marker last
    wait_until(lambda: not zookeeper_client.exists("/brokers/topics/views")
               and not zookeeper_client.exists("/admin/delete_topics/views"),
               message="topic and its deletion marker gone from ZooKeeper")
    assert all(m.log_manager.partitions() == [] for m in managers)
