"""Fixtures of the broker's tests on ZooKeeper (a plugin of the root conftest): a broker's
membership of the cluster without the rest of a broker
(:class:`broker_lite.server.zk_broker.ZkBroker`), and, for the tests of what is built right on
ZooKeeper (``zk/``, ``controller/``), both kinds of ZooKeeper server and no error logged."""

import logging
from collections.abc import Callable, Iterator

import pytest

from broker_lite.common.tiers import needs
from broker_lite.config.broker import BrokerConfig
from broker_lite.server.zk_broker import ZkBroker
from broker_lite.zk.client import connect_from_config
from broker_lite.zk.testing import SESSION_TIMEOUT_MS, RecordingListener


@pytest.fixture
def start_zk_broker(zookeeper_connect, tmp_path) -> Iterator[Callable[..., ZkBroker]]:
    started: list[ZkBroker] = []

    def start(broker_id: int = 1, **overrides: str) -> ZkBroker:
        """Start a broker with its own session; ``overrides`` are broker properties."""
        number = len(started)
        config = BrokerConfig({
            "broker.id": str(broker_id),
            "zookeeper.connect": zookeeper_connect,
            "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "listeners": f"PLAINTEXT://127.0.0.1:{9092 + number}",
            "log.dirs": str(tmp_path / f"broker-{number}"),
            **overrides,
        })
        listener = RecordingListener(tmp_path / f"broker-{number}")
        broker = ZkBroker(connect_from_config(config), config, listener)
        started.append(broker)
        broker.start()
        return broker

    yield start
    for broker in reversed(started):
        broker.stop()
        broker.client.stop()
        broker.client.close()


@pytest.fixture(scope="session", params=["embedded", "standalone"])
@needs("zookeeper")  # the servers are looked up at run time, out of sight of the closure
def zookeeper_on_both_servers(request) -> str:
    """The embedded server's connect string, then that of a server started as ``python -m
    broker_lite.zk zookeeper.properties``, reached like an external ensemble. A folder's conftest
    makes it its ``zookeeper_ensemble`` to run each test on both."""
    if request.param == "embedded":
        return request.getfixturevalue("zookeeper_server").connect_string
    return request.getfixturevalue("standalone_zookeeper")


@pytest.fixture
def no_broker_errors_logged(caplog):
    """Errors on kazoo's or the brokers' threads are logged, not raised: fail on any."""
    yield
    errors = [r for when in ("setup", "call", "teardown") for r in caplog.get_records(when)
              if r.name.startswith("broker_lite") and r.levelno >= logging.ERROR]
    assert not errors, "\n".join(f"{r.name}: {r.getMessage()}" for r in errors)
