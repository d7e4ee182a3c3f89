"""broker_lite brokers for tests, on free loopback ports against a shared ZooKeeper.

A test broker takes the settings of a single-machine cluster (:data:`TEST_BROKER_PROPERTIES`,
those of :class:`broker_lite.local.LocalKafka`): internal topics with one replica and few
partitions, no initial rebalance delay, so the first consumer group or transaction of a test
does not wait for fifty ``__consumer_offsets`` partitions to load. ``LocalKafka`` itself starts
a ZooKeeper per broker, which suits a notebook; tests share one ZooKeeper and give each broker
(or cluster) a chroot of its own instead.

A secured cluster (``security``: a :class:`broker_lite.local.security.LocalSecurity`) listens
with TLS and/or SASL only, between brokers too; its users' SCRAM credentials are written to the
chroot before the brokers start, as ``kafka-configs.sh --zookeeper`` bootstraps them, and
:meth:`KpyBroker.client_settings` gives a user's client settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from broker_lite.local.kafka import LOCAL_PROPERTIES
from broker_lite.local.security import LocalSecurity
from broker_lite.server.releases import KafkaRelease
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers

# broker.id and listeners are given per broker by start_brokers (ids 1..n, ephemeral ports)
TEST_BROKER_PROPERTIES = {name: value for name, value in LOCAL_PROPERTIES.items()
                          if name not in ("broker.id", "listeners")}


class KpyBroker:
    """Running broker_lite brokers (one, or a cluster) sharing a ZooKeeper chroot.

    Attributes
    ----------
    bootstrap_servers
        ``127.0.0.1:port,...``, for ``kafka.bootstrap.servers`` and any Kafka client.
    zookeeper_connect
        Their ``zookeeper.connect`` (with the chroot).
    brokers
        The :class:`broker_lite.server.broker.Broker` objects; ``broker`` is the first.
    security
        The :class:`~broker_lite.local.security.LocalSecurity` of a secured cluster (its
        ``users``, ``ca_pem``, ``mechanisms``), None for a plaintext one.
    """

    def __init__(self, brokers: list, zookeeper_connect: str, log_root: Path,
                 security: LocalSecurity | None = None):
        self.brokers = brokers
        self.zookeeper_connect = zookeeper_connect
        self.log_root = log_root
        self.security = security

    @classmethod
    def start(cls, zookeeper_connect: str, log_root: str | Path, count: int = 1,
              properties: Mapping[str, str] | None = None,
              security: LocalSecurity | None = None,
              release: KafkaRelease | None = None) -> KpyBroker:
        """Start brokers 1..``count``, logs under ``log_root``; ``properties`` (Kafka's names)
        override :data:`TEST_BROKER_PROPERTIES` (and the secured listener's); with ``release``
        they serve only the APIs and versions of that older Kafka release."""
        log_root = Path(log_root)
        secured = {}
        if security is not None and security.protocol != "PLAINTEXT":
            secured = security.broker_properties()
            _store_credentials(zookeeper_connect, security)
        brokers = start_brokers(zookeeper_connect, log_root, count,
                                {**TEST_BROKER_PROPERTIES, **secured, **(properties or {})},
                                release)
        return cls(brokers, zookeeper_connect, log_root, security)

    def client_settings(self, user: str | None = None, mechanism: str | None = None
                        ) -> dict[str, str]:
        """A client's settings (Kafka's names) for ``user`` of a secured cluster (see
        :meth:`broker_lite.local.security.LocalSecurity.client_settings`); only
        ``bootstrap.servers`` for a plaintext one."""
        if self.security is None:
            return {"bootstrap.servers": self.bootstrap_servers}
        return self.security.client_settings(self.bootstrap_servers, user, mechanism)

    @property
    def broker(self):
        return self.brokers[0]

    @property
    def port(self) -> int:
        return self.broker.port

    @property
    def bootstrap_servers(self) -> str:
        return bootstrap(self.brokers)

    def stop(self) -> None:
        """Stop every broker cleanly (their logs stay under ``log_root``)."""
        stop_brokers(self.brokers)

    def __repr__(self) -> str:
        return f"<KpyBroker {self.bootstrap_servers} zookeeper.connect={self.zookeeper_connect}>"


def _store_credentials(zookeeper_connect: str, security: LocalSecurity) -> None:
    from broker_lite.zk.client import connect

    client = connect(zookeeper_connect)
    try:
        security.store_credentials(client)
    finally:
        client.stop()
        client.close()
