"""meta.properties: a generated broker id survives restarts; foreign log dirs are refused."""

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.server.broker import Broker
from broker_lite.server.meta_properties import (
    FILE_NAME,
    InconsistentBrokerMetadataError,
)


def config(zookeeper_connect, log_dirs, broker_id: str) -> BrokerConfig:
    return BrokerConfig({"broker.id": broker_id, "zookeeper.connect": zookeeper_connect,
                         "listeners": "PLAINTEXT://127.0.0.1:0",
                         "log.dirs": ",".join(map(str, log_dirs))})


@pytest.mark.broker
@pytest.mark.zookeeper
def test_a_generated_broker_id_is_kept_across_restarts(zookeeper_connect, tmp_path):
    log_dirs = [tmp_path / "a", tmp_path / "b"]
    broker = Broker(config(zookeeper_connect, log_dirs, "-1")).start()
    generated, cluster_id = broker.broker_id, broker.services.cluster_id
    broker.stop()
    assert generated > 1000  # above reserved.broker.max.id, from /brokers/seqid
    for log_dir in log_dirs:
        lines = (log_dir / FILE_NAME).read_text().splitlines()
        assert lines[2:] == ["version=0", f"broker.id={generated}", f"cluster.id={cluster_id}"]
    again = Broker(config(zookeeper_connect, log_dirs, "-1")).start()
    try:
        assert again.broker_id == generated
    finally:
        again.stop()


@pytest.mark.broker
@pytest.mark.zookeeper
def test_log_dirs_of_another_broker_are_refused(zookeeper_connect, tmp_path):
    log_dirs = [tmp_path / "logs"]
    Broker(config(zookeeper_connect, log_dirs, "5")).start().stop()
    with pytest.raises(InconsistentBrokerMetadataError, match=r"broker\.id 6 does not match"):
        Broker(config(zookeeper_connect, log_dirs, "6")).start()


@pytest.mark.broker
@pytest.mark.zookeeper
def test_log_dirs_of_another_cluster_are_refused(zookeeper_connect, tmp_path):
    log_dirs = [tmp_path / "logs"]
    Broker(config(zookeeper_connect, log_dirs, "7")).start().stop()
    text = (log_dirs[0] / FILE_NAME).read_text()
    cluster_line = next(line for line in text.splitlines() if line.startswith("cluster.id="))
    (log_dirs[0] / FILE_NAME).write_text(text.replace(cluster_line, "cluster.id=another"))
    with pytest.raises(InconsistentBrokerMetadataError, match="another cluster"):
        Broker(config(zookeeper_connect, log_dirs, "7")).start()


@pytest.mark.broker
@pytest.mark.zookeeper
def test_log_dirs_that_disagree_are_refused(zookeeper_connect, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / FILE_NAME).write_text("version=0\nbroker.id=1\ncluster.id=x\n")
    (tmp_path / "b" / FILE_NAME).write_text("version=0\nbroker.id=2\ncluster.id=x\n")
    with pytest.raises(InconsistentBrokerMetadataError, match="different brokers"):
        Broker(config(zookeeper_connect, [tmp_path / "a", tmp_path / "b"], "-1")).start()
