"""Pytest fixtures on a real ZooKeeper: one server per test session, a fresh chroot per test.

Load them with ``pytest_plugins = ["broker_lite.zk.testing"]`` in the root conftest, or with
``from broker_lite.zk.testing import *`` in a package's conftest.

Fixtures
--------
zookeeper_server (session)
    An :class:`EmbeddedZooKeeper` in a temporary directory.
standalone_zookeeper (session)
    The connect string of a server run as ``python -m broker_lite.zk <zookeeper.properties>``,
    a separate process, as an external ensemble would be. Stopped with SIGTERM, which must end
    it cleanly.
zookeeper_ensemble (session)
    The connect string tests run against: the embedded server's. Override it (e.g. parametrized
    over both servers) to run the same tests on another ensemble.
zookeeper_connect
    ``<ensemble>/kpy-tests/<uuid>``: a ``zookeeper.connect`` with a chroot of the test's own.
zookeeper_client
    A started kazoo client on ``zookeeper_connect`` (the chroot exists).

A missing Java or missing jars fail the tests that need ZooKeeper, with the reason: nothing is
skipped.
"""

import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from .client import connect, parse_connect_string
from .errors import ZooKeeperUnavailableError
from .layout import PartitionState
from .server import EmbeddedZooKeeper, free_port, wait_until_serving

__all__ = [
    "RecordingListener", "ensemble_hosts", "expire_session", "standalone_zookeeper",
    "wait_until", "zookeeper_client", "zookeeper_connect",
    "zookeeper_ensemble", "zookeeper_server",
]

TEST_ROOT = "/kpy-tests"
SESSION_TIMEOUT_MS = 6000


def wait_until(predicate: Callable[[], object], timeout: float = 30.0, message: str = "") -> object:
    """Poll ``predicate`` until it returns something truthy, which is returned."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout} s waiting until {message or predicate}")
        time.sleep(0.02)


def join_all(threads, timeout: float, message: str) -> None:
    """Join ``threads``, all within ``timeout`` seconds; AssertionError with ``message`` if any
    is still running then."""
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in threads):
        raise AssertionError(message)


class RecordingListener:
    """A ``PartitionListener`` that keeps a directory per partition it holds under ``root``
    (removed on ``delete=True``) and records every call."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.calls: list[tuple] = []
        self.assigned: dict[tuple[str, int], tuple[PartitionState, list[int]]] = {}
        self._lock = threading.Lock()

    def partition_dir(self, topic: str, partition: int) -> Path:
        return self.root / f"{topic}-{partition}"

    def on_partition_assigned(self, topic: str, partition: int, state: PartitionState,
                              replicas: list[int], version: int = -1) -> None:
        self.partition_dir(topic, partition).mkdir(exist_ok=True)
        with self._lock:
            self.calls.append(("assigned", topic, partition, state, replicas))
            self.assigned[(topic, partition)] = (state, replicas)

    def on_assignments_begin(self, topic: str, partitions: list[int]) -> None:
        pass

    def on_assignments_end(self, topic: str, partitions: list[int]) -> None:
        pass

    def on_partition_removed(self, topic: str, partition: int, *, delete: bool) -> None:
        if delete:
            shutil.rmtree(self.partition_dir(topic, partition), ignore_errors=True)
        with self._lock:
            self.calls.append(("removed", topic, partition, delete))
            self.assigned.pop((topic, partition), None)

    def partitions(self, topic: str | None = None) -> set[tuple[str, int]]:
        with self._lock:
            return {tp for tp in self.assigned if topic is None or tp[0] == topic}

    def removals(self, topic: str) -> list[tuple]:
        with self._lock:
            return [c for c in self.calls if c[0] == "removed" and c[1] == topic]


def expire_session(client: KazooClient, hosts: str, timeout: float = 30.0) -> None:
    """Expire ``client``'s session as ZooKeeper's own tests do: open a second connection with the
    same session id and password, then close it. Returns once ``client`` has a new session."""
    session_id, password = client.client_id
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        other = KazooClient(hosts, client_id=(session_id, password))
        other.start(timeout=timeout)
        other.stop()
        other.close()
        try:
            wait_until(lambda: client.connected and client.client_id
                       and client.client_id[0] != session_id, timeout=3)
            return
        except AssertionError:
            continue  # the client took its session back before the close; try again
    raise AssertionError(f"session 0x{session_id:x} did not expire within {timeout} s")


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory) -> Iterator[EmbeddedZooKeeper]:
    server = EmbeddedZooKeeper(tmp_path_factory.mktemp("zookeeper"))
    try:
        server.start()
    except ZooKeeperUnavailableError as exc:
        pytest.fail(f"cannot run the embedded ZooKeeper these tests need: {exc}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def standalone_zookeeper(tmp_path_factory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("standalone-zookeeper")
    port = free_port()
    properties = root / "zookeeper.properties"
    properties.write_text(
        f"dataDir={(root / 'data').as_posix()}\nclientPort={port}\n"
        "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n"
        "tickTime=2000\n", encoding="utf-8")
    process = subprocess.Popen([sys.executable, "-m", "broker_lite.zk", str(properties)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if not wait_until_serving("127.0.0.1", port, 30, alive=lambda: process.poll() is None):
        process.kill()
        pytest.fail(f"python -m broker_lite.zk {properties} did not serve:\n"
                    f"{process.communicate()[0]}", pytrace=False)
    yield f"127.0.0.1:{port}"
    process.send_signal(signal.SIGTERM)
    output = process.communicate(timeout=20)[0]
    assert process.returncode == 0, (
        f"standalone ZooKeeper exited with {process.returncode}:\n{output}")


@pytest.fixture(scope="session")
def zookeeper_ensemble(zookeeper_server) -> str:
    return zookeeper_server.connect_string


@pytest.fixture
def zookeeper_connect(zookeeper_ensemble) -> str:
    return f"{zookeeper_ensemble}{TEST_ROOT}/{uuid.uuid4().hex}"


@pytest.fixture
def zookeeper_client(zookeeper_connect) -> Iterator[KazooClient]:
    client = connect(zookeeper_connect, session_timeout_ms=SESSION_TIMEOUT_MS)
    yield client
    client.stop()
    client.close()


def ensemble_hosts(connect_string: str) -> str:
    """The hosts of a connect string, without its chroot."""
    return parse_connect_string(connect_string).hosts_string
