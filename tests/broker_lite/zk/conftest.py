"""Every test using ``zookeeper_ensemble`` runs twice: on the embedded server, and on a server
started as ``python -m broker_lite.zk zookeeper.properties``, reached like an external ensemble.
Either way each test has a chroot of its own."""

import logging

import pytest

from kspark.testing.tiers import needs


@pytest.fixture(scope="session", params=["embedded", "standalone"])
@needs("zookeeper")  # the servers are looked up at run time, out of sight of the closure
def zookeeper_ensemble(request) -> str:
    if request.param == "embedded":
        return request.getfixturevalue("zookeeper_server").connect_string
    return request.getfixturevalue("standalone_zookeeper")


@pytest.fixture(autouse=True)
def no_errors_logged(caplog):
    """Errors on kazoo's or the brokers' threads are logged, not raised: fail on any."""
    yield
    errors = [r for when in ("setup", "call", "teardown") for r in caplog.get_records(when)
              if r.name.startswith("broker_lite") and r.levelno >= logging.ERROR]
    assert not errors, "\n".join(f"{r.name}: {r.getMessage()}" for r in errors)
