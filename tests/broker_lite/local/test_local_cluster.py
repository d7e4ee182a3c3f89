"""A local cluster's broker process and its port: picked free, yet another process can bind it
before the broker does. A first start then moves to another port; a restart keeps its own."""

import socket

import pytest

from broker_lite.local.cluster import BrokerProcess, BrokerStartError, cluster_properties

pytestmark = [pytest.mark.broker, pytest.mark.zookeeper]


def listening_on(port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def answers(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        return True


@pytest.fixture
def broker(tmp_path, kpy_zookeeper_connect):
    process = BrokerProcess(1, tmp_path / "broker-1",
                            {**cluster_properties(1), "zookeeper.connect": kpy_zookeeper_connect})
    yield process
    process.kill()


def test_a_first_start_whose_port_was_taken_moves_to_another_port(broker):
    picked = broker.port
    with listening_on(picked):
        broker.start(timeout_s=60)
        assert broker.port != picked
        assert broker.address == f"127.0.0.1:{broker.port}"
        assert answers(broker.port)
    assert "Address already in use" in broker.log_path.read_text()


def test_a_restart_keeps_the_port_clients_know(broker):
    broker.start(timeout_s=60)
    known = broker.port
    broker.stop()
    with listening_on(known):
        with pytest.raises(BrokerStartError, match="Address already in use"):
            broker.start(timeout_s=60)
        assert broker.port == known
    broker.start(timeout_s=60)
    assert broker.port == known and answers(known)
