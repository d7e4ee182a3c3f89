"""Every test using ``zookeeper_ensemble`` here runs twice: on the embedded server, and on a server
started as ``python -m broker_lite.zk zookeeper.properties``, reached like an external ensemble.
Either way each test has a chroot of its own, and fails on any error logged."""

import pytest


@pytest.fixture(scope="session")
def zookeeper_ensemble(zookeeper_on_both_servers) -> str:
    return zookeeper_on_both_servers


@pytest.fixture(autouse=True)
def no_errors_logged(no_broker_errors_logged):
    """See ``no_broker_errors_logged``."""
