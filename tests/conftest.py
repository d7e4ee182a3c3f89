"""Suite-wide fixtures; the ZooKeeper fixtures are shared by every test package. In CI a skipped
test is a failure, so nothing passes by not running: the kpy plugin's ``kpy_ci_skips_fail``,
set in pyproject.toml, so that it covers the doctests outside tests/ too."""


import pytest

# One real ZooKeeper per test session, and the fixtures built on it, for every test package.
pytest_plugins = ["broker_lite.zk.testing"]


@pytest.fixture(scope="session")
def zookeeper_server(kpy_zookeeper_server):
    """The embedded ZooKeeper is the kpy pytest plugin's (kspark.testing), so the suite's
    fixtures and the plugin's share one server."""
    return kpy_zookeeper_server


@pytest.fixture
def kafka_call():
    """``call(port, api_key, version, body) -> response body``: one request over a fresh
    connection, encoded and decoded with broker_lite.protocol."""
    from broker_lite.server.testing import call

    return call


@pytest.fixture
def broker(zookeeper_connect, tmp_path):
    """One broker_lite broker on an ephemeral port (``bootstrap(broker)`` for clients)."""
    from broker_lite.server.testing import start_brokers, stop_brokers

    brokers = start_brokers(zookeeper_connect, tmp_path)
    yield brokers[0]
    stop_brokers(brokers)


@pytest.fixture
def three_brokers(zookeeper_connect, tmp_path):
    """A three-broker cluster sharing one ZooKeeper."""
    from broker_lite.server.testing import start_brokers, stop_brokers

    brokers = start_brokers(zookeeper_connect, tmp_path, 3)
    yield brokers
    stop_brokers(brokers)
