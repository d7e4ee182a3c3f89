"""Broker membership: /cluster/id, /brokers/ids, generated ids, duplicate ids, session expiry."""

import json
import re
import time

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.server.zk_broker import ZkBroker
from broker_lite.zk import BrokerIdInUseError, EmbeddedZooKeeper, connect_from_config
from broker_lite.zk.layout import PERSISTENT_PATHS
from broker_lite.zk.testing import (
    RecordingListener,
    ensemble_hosts,
    expire_session,
    wait_until,
)


def _json(client, path):
    return json.loads(client.get(path)[0])


def test_registration_has_kafkas_fields_and_goes_with_the_broker(start_zk_broker, zookeeper_client):
    before = int(time.time() * 1000)
    broker = start_zk_broker(1, listeners="PLAINTEXT://127.0.0.1:9092")
    data, stat = zookeeper_client.get("/brokers/ids/1")
    assert stat.ephemeralOwner == broker.client.client_id[0]
    registration = json.loads(data)
    timestamp = registration.pop("timestamp")
    assert registration == {
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
        "endpoints": ["PLAINTEXT://127.0.0.1:9092"],
        "jmx_port": -1, "host": "127.0.0.1", "port": 9092, "version": 4}
    assert isinstance(timestamp, str) and before <= int(timestamp) <= time.time() * 1000
    assert list(json.loads(data)) == ["listener_security_protocol_map", "endpoints", "jmx_port",
                                      "host", "timestamp", "port", "version"]
    broker.stop()
    assert zookeeper_client.exists("/brokers/ids/1") is None
    assert zookeeper_client.get_children("/brokers/ids") == []


def test_advertised_listeners_and_persistent_paths(start_zk_broker, zookeeper_client):
    advertised = "SSL://kafka.example:9093,PLAINTEXT://kafka.example:9092"
    start_zk_broker(7, listeners="PLAINTEXT://0.0.0.0:9092,SSL://0.0.0.0:9093",
                    **{"advertised.listeners": advertised})
    registration = _json(zookeeper_client, "/brokers/ids/7")
    assert registration["endpoints"] == ["SSL://kafka.example:9093", "PLAINTEXT://kafka.example:9092"]
    assert (registration["host"], registration["port"]) == ("kafka.example", 9092)
    assert registration["listener_security_protocol_map"] \
        == {"SSL": "SSL", "PLAINTEXT": "PLAINTEXT"}
    for path in PERSISTENT_PATHS:
        assert zookeeper_client.exists(path) is not None, path


def test_cluster_id_is_22_url_safe_chars_kept_across_restarts(start_zk_broker, zookeeper_client):
    first = start_zk_broker(1)
    raw = zookeeper_client.get("/cluster/id")[0]
    assert re.fullmatch(rb'\{"version":"1","id":"[A-Za-z0-9_-]{22}"\}', raw)
    assert json.loads(raw)["id"] == first.cluster_id
    first.stop()
    again = start_zk_broker(1)
    other = start_zk_broker(2)
    assert again.cluster_id == other.cluster_id == first.cluster_id
    assert zookeeper_client.get("/cluster/id")[0] == raw


def test_a_live_broker_id_is_refused(start_zk_broker, zookeeper_client):
    first = start_zk_broker(3)
    with pytest.raises(BrokerIdInUseError,
                       match=r"broker id 3 is in use: /brokers/ids/3 belongs to"):
        start_zk_broker(3)
    # the refused broker left the first one's registration alone
    assert zookeeper_client.exists("/brokers/ids/3").ephemeralOwner == first.client.client_id[0]
    first.stop()
    start_zk_broker(3)  # free again once the first is gone


def test_generated_ids_come_from_seqid(start_zk_broker, zookeeper_client):
    brokers = [start_zk_broker(-1) for _ in range(3)]
    ids = [b.broker_id for b in brokers]
    assert ids == [1001, 1002, 1003]
    assert sorted(zookeeper_client.get_children("/brokers/ids")) == ["1001", "1002", "1003"]
    assert zookeeper_client.exists("/brokers/seqid").version == 3


def test_expired_session_registers_again(start_zk_broker, zookeeper_client, zookeeper_connect):
    controller = start_zk_broker(1)
    broker = start_zk_broker(2)
    wait_until(lambda: controller.is_controller, message="broker 1 is the controller")
    old_session = broker.client.client_id[0]
    expire_session(broker.client, ensemble_hosts(zookeeper_connect))
    new_session = broker.client.client_id[0]
    assert new_session != old_session
    stat = wait_until(lambda: zookeeper_client.exists("/brokers/ids/2"), message="re-registration")
    assert stat.ephemeralOwner == new_session
    assert not broker.is_controller and controller.is_controller
    assert _json(zookeeper_client, "/controller")["brokerid"] == 1


def test_expired_session_of_the_controller_moves_the_role(start_zk_broker, zookeeper_client,
                                                        zookeeper_connect):
    first = start_zk_broker(1)
    wait_until(lambda: first.is_controller)
    second = start_zk_broker(2)
    expire_session(first.client, ensemble_hosts(zookeeper_connect))
    wait_until(lambda: second.is_controller, message="broker 2 takes over")
    wait_until(lambda: zookeeper_client.exists("/brokers/ids/1"), message="broker 1 is back")
    assert _json(zookeeper_client, "/controller")["brokerid"] == 2
    assert zookeeper_client.get("/controller_epoch")[0] == b"2"
    assert not first.is_controller


@pytest.mark.broker
@pytest.mark.zookeeper
def test_lost_connection_does_not_crash_the_broker(tmp_path):
    """Restarting the server drops every connection; the broker carries on once it is back."""
    server = EmbeddedZooKeeper(tmp_path / "zk").start()
    config = BrokerConfig({"broker.id": "1", "zookeeper.connect": server.connect_string + "/c",
                           "zookeeper.session.timeout.ms": "20000"})
    client = connect_from_config(config)
    broker = ZkBroker(client, config, RecordingListener(tmp_path / "data")).start()
    try:
        wait_until(lambda: broker.is_controller)
        server.stop()
        wait_until(lambda: not client.connected, message="the client notices")
        server.start()  # same port and data: the session is still valid
        wait_until(lambda: client.connected, timeout=15, message="the client reconnects")
        assert client.exists("/brokers/ids/1").ephemeralOwner == client.client_id[0]
        assert broker.is_controller and broker.controller._loop._thread.is_alive()
        assert broker._loop._thread.is_alive()
    finally:
        broker.stop()
        client.stop()
        client.close()
        server.stop()
