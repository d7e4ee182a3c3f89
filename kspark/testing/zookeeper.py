"""The ZooKeeper of a test session: the embedded server, or an external ensemble, and a fresh
chroot per test so tests sharing the server never see each other's brokers or topics.

Chroots are ``<ensemble>/kpy-tests/<hex>``: under one root, so a look at a shared server tells
test data apart, and created by the first broker that connects (as Kafka's brokers create a
missing chroot).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from broker_lite.zk.client import parse_connect_string
from broker_lite.zk.server import EmbeddedZooKeeper

TEST_ROOT = "/kpy-tests"


@dataclass(frozen=True)
class ZooKeeperEnsemble:
    """Where the test session's ZooKeeper is.

    Attributes
    ----------
    connect_string
        ``host:port[,host:port...][/chroot]`` of the ensemble.
    server
        The embedded server when the session started one; None for an external ensemble.
    """

    connect_string: str
    server: EmbeddedZooKeeper | None = None

    @classmethod
    def external(cls, connect_string: str) -> ZooKeeperEnsemble:
        """An ensemble started elsewhere; raises ``ZooKeeperConfigError`` for a malformed
        connect string."""
        return cls(str(parse_connect_string(connect_string)))

    def chroot(self, name: str | None = None) -> str:
        """A ``zookeeper.connect`` with a chroot of its own: ``<ensemble>/kpy-tests/<name>``,
        a random name unless given."""
        return f"{self.connect_string}{TEST_ROOT}/{name or uuid.uuid4().hex}"


def start_embedded(data_dir: str | Path) -> EmbeddedZooKeeper:
    """Start an embedded ZooKeeper in ``data_dir``; raises ``ZooKeeperUnavailableError`` when
    Java or the ZooKeeper jars are missing."""
    return EmbeddedZooKeeper(data_dir).start()
