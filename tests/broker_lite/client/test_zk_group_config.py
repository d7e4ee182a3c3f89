"""Settings of the ZooKeeper-based group consumer: Kafka 0.8's names and defaults, and errors
that name the setting."""

import re
import socket

import pytest

from broker_lite.client import ConfigError
from broker_lite.client.zkgroup import ZooKeeperConsumerConfig, ZooKeeperGroupConsumer
from broker_lite.client.zkgroup.config import SETTINGS

BASE = {"zookeeper.connect": "127.0.0.1:2181/kafka", "group.id": "g"}


def test_defaults_are_the_scala_consumers():
    config = ZooKeeperConsumerConfig(BASE)
    assert (config.offsets_storage, config.dual_commit_enabled, config.auto_offset_reset,
            config.rebalance_max_retries, config.rebalance_backoff_ms,
            config.zookeeper_session_timeout_ms, config.bootstrap_servers) == \
        ("zookeeper", False, "largest", 4, 2000, 6000, None)


def test_the_member_id_is_the_group_and_the_consumer_id():
    assert ZooKeeperConsumerConfig({**BASE, "consumer.id": "worker-1"}).consumer_id == "g_worker-1"
    generated = ZooKeeperConsumerConfig(BASE).consumer_id
    host = re.escape(socket.gethostname())
    assert re.fullmatch(rf"g_{host}-\d{{13}}-[0-9a-f]{{8}}", generated), generated
    assert ZooKeeperConsumerConfig(BASE).consumer_id != generated  # unique per instance


def test_values_arrive_as_strings_or_python_values():
    config = ZooKeeperConsumerConfig({**BASE, "offsets.storage": "KAFKA",
                                      "dual.commit.enabled": True, "rebalance.max.retries": 7,
                                      "auto.offset.reset": "smallest",
                                      "rebalance.backoff.ms": "250"})
    assert (config.offsets_storage, config.dual_commit_enabled, config.rebalance_max_retries,
            config.auto_offset_reset, config.rebalance_backoff_ms) == \
        ("kafka", True, 7, "smallest", 250)


@pytest.mark.parametrize("settings, key, message", [
    ({"group.id": "g"}, "zookeeper.connect", "required"),
    ({"zookeeper.connect": "zk"}, "group.id", "required"),
    ({**BASE, "zookeeper.connect": "zk:99999"}, "zookeeper.connect", "not host"),
    ({**BASE, "group.id": ""}, "group.id", "cannot be empty"),
    ({**BASE, "consumer.id": "a/b"}, "consumer.id", "cannot contain '/'"),
    ({**BASE, "offsets.storage": "redis"}, "offsets.storage", "zookeeper, kafka"),
    ({**BASE, "dual.commit.enabled": "yes"}, "dual.commit.enabled", "true or false"),
    ({**BASE, "auto.offset.reset": "earliest"}, "auto.offset.reset", "smallest, largest"),
    # matched exactly, as Kafka 0.8 does (only offsets.storage is lower-cased there)
    ({**BASE, "auto.offset.reset": "SMALLEST"}, "auto.offset.reset", "smallest, largest"),
    ({**BASE, "rebalance.backoff.ms": "3000000000"}, "rebalance.backoff.ms", "integer in"),
    ({**BASE, "rebalance.max.retries": "0"}, "rebalance.max.retries", "integer in"),
    ({**BASE, "rebalance.backoff.ms": "soon"}, "rebalance.backoff.ms", "an integer"),
    ({**BASE, "bootstrap.servers": "h:0"}, "bootstrap.servers", "host:port"),
    # anything else is the fetching client's, and checked by it
    ({**BASE, "fetch.max.wait": "1"}, "fetch.max.wait", "did you mean fetch.max.wait.ms"),
    ({**BASE, "auto.commit.enable": "true"}, "auto.commit.enable", "unknown Kafka client"),
])
def test_bad_settings_name_the_setting(settings, key, message):
    with pytest.raises(ConfigError, match=re.escape(key) + ": .*" + re.escape(message)) as info:
        ZooKeeperConsumerConfig(settings)
    assert info.value.key == key


def test_client_settings_go_to_the_fetching_client():
    config = ZooKeeperConsumerConfig({**BASE, "fetch.max.wait.ms": "50",
                                      "request.timeout.ms": "900"})
    client = config.client_config("b1:9092")
    assert (client.fetch_max_wait_ms, client.request_timeout_ms, client.group_id,
            client.bootstrap_servers) == (50, 900, "g", [("b1", 9092)])


def test_read_committed_is_refused_before_connecting_anywhere():
    with pytest.raises(ConfigError, match=r"isolation\.level: .*Kafka 0\.8"):
        ZooKeeperGroupConsumer({**BASE, "zookeeper.connect": "127.0.0.1:9",
                                "isolation.level": "read_committed"})


def test_the_declared_attributes_are_the_settings():
    """The attributes the class declares (for the type check) are its settings, all of them;
    consumer.id's is the id as registered, declared where it is set."""
    settings = {name.replace(".", "_") for name in SETTINGS}
    assert set(ZooKeeperConsumerConfig.__annotations__) == settings - {"consumer_id"}
