"""zookeeper.connect: parsing, chroot creation, failures, and the embedded-or-external choice."""

import time

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.zk import (
    ZooKeeperConfigError,
    ZooKeeperConnectionError,
    connect,
    open_zookeeper,
    parse_connect_string,
)
from broker_lite.zk.cluster import get_or_create_cluster_id
from broker_lite.zk.server import free_port, is_serving
from broker_lite.zk.testing import ensemble_hosts


@pytest.mark.parametrize("text,hosts,chroot", [
    ("127.0.0.1:2181", (("127.0.0.1", 2181),), None),
    ("zk1,zk2:2182", (("zk1", 2181), ("zk2", 2182)), None),
    ("zk1:1,zk2:2/kafka", (("zk1", 1), ("zk2", 2)), "/kafka"),
    ("[::1]:2181/a/b", (("::1", 2181),), "/a/b"),
    ("h:1/", (("h", 1),), None),
])
def test_parse(text, hosts, chroot):
    parsed = parse_connect_string(text)
    assert (parsed.hosts, parsed.chroot) == (hosts, chroot)


@pytest.mark.parametrize("text", ["", "h:1,", "h:x", "h:70000", "h:1/a/", "h:1/a//b", "h:1/a/../b"])
def test_parse_refuses(text):
    with pytest.raises(ZooKeeperConfigError, match=r"invalid zookeeper\.connect"):
        parse_connect_string(text)


def test_connect_creates_the_chroot(zookeeper_connect):
    parsed = parse_connect_string(zookeeper_connect)
    root = connect(parsed.hosts_string)
    try:
        assert root.exists(parsed.chroot) is None
        client = connect(zookeeper_connect)
        client.create("/hello", b"world")
        client.stop()
        client.close()
        assert root.get(parsed.chroot + "/hello")[0] == b"world"
    finally:
        root.stop()
        root.close()


def test_unreachable_ensemble_fails_naming_it():
    connect_string = f"127.0.0.1:{free_port()}/kafka"
    began = time.monotonic()
    with pytest.raises(ZooKeeperConnectionError, match=f"at {connect_string} within 1 s"):
        connect(connect_string, session_timeout_ms=6000, connection_timeout_ms=1000)
    assert time.monotonic() - began < 5


@pytest.mark.zookeeper
def test_without_zookeeper_connect_the_broker_runs_its_own(tmp_path):
    config = BrokerConfig({"log.dirs": f"{tmp_path}/a,{tmp_path}/b"})
    with open_zookeeper(config) as zookeeper:
        assert zookeeper.server.data_dir == tmp_path / "a" / "zookeeper"
        assert zookeeper.connect_string == zookeeper.server.connect_string
        cluster_id = get_or_create_cluster_id(zookeeper.client)
        port = zookeeper.server.port
    assert not is_serving("127.0.0.1", port)
    # the same log dir: the same ZooKeeper data, so the same cluster
    with open_zookeeper(config) as zookeeper:
        assert get_or_create_cluster_id(zookeeper.client) == cluster_id


def test_with_zookeeper_connect_the_broker_uses_that_ensemble(zookeeper_connect, tmp_path):
    config = BrokerConfig({"zookeeper.connect": zookeeper_connect, "log.dirs": str(tmp_path)})
    with open_zookeeper(config) as zookeeper:
        assert zookeeper.server is None
        zookeeper.client.create("/mine", b"")
    assert not (tmp_path / "zookeeper").exists()
    root = connect(ensemble_hosts(zookeeper_connect))
    try:
        assert root.exists(parse_connect_string(zookeeper_connect).chroot + "/mine")
    finally:
        root.stop()
        root.close()
