"""Suite-wide rules and fixtures: in CI a skipped test is a failure, so nothing passes by not
running; the ZooKeeper fixtures are shared by every test package."""

import os

import pytest

# One real ZooKeeper per test session, and the fixtures built on it, for every test package.
pytest_plugins = ["broker_lite.zk.testing"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which counts as a failure: {report.longrepr}"


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
