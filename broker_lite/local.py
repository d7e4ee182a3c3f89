"""A whole local Kafka stack in this process: broker_lite and its embedded ZooKeeper.

What notebooks, the ``kpy demo`` job and test fixtures start: one broker on a free loopback port,
its ZooKeeper a child process of this one, everything under one data directory (a temporary one
unless given, removed on stop)::

    with LocalKafka() as kafka:
        print(kafka.bootstrap_servers)      # 127.0.0.1:<a free port>

``start()`` returns once the broker serves requests: it is registered in ZooKeeper and a
controller has been elected, so a client's first Metadata answer lists both.

The settings are a single-broker cluster's (internal topics with one replica, no initial rebalance
delay, few partitions for ``__consumer_offsets`` and ``__transaction_state`` so the first group or
transaction does not wait for fifty partitions to load); ``properties`` overrides any of them,
with Kafka's names.

A secured variant listens with ``security`` (``SSL``, ``SASL_PLAINTEXT``, ``SASL_SSL``) only,
with certificates generated at run time and ``users`` who log in with PLAIN or SCRAM (their
SCRAM credentials stored in ZooKeeper as Kafka stores them); ``client_settings()`` gives a
client's settings for one of them (see :mod:`broker_lite.local_security`)::

    with LocalKafka(security="SASL_SSL", users={"alice": "alice-secret"}) as kafka:
        settings = kafka.client_settings("alice", "SCRAM-SHA-512")   # Kafka's names
"""

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Self

from broker_lite.config import BrokerConfig
from broker_lite.local_security import DEFAULT_MECHANISMS, LocalSecurity
from broker_lite.server.broker import Broker

logger = logging.getLogger(__name__)

LOCAL_PROPERTIES = {
    "broker.id": "0",
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "num.partitions": "1",
    "auto.create.topics.enable": "true",
    "offsets.topic.num.partitions": "5",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.num.partitions": "5",
    "transaction.state.log.replication.factor": "1",
    "group.initial.rebalance.delay.ms": "0",
}


class LocalKafka:
    """broker_lite with an embedded ZooKeeper, started by ``start()`` or ``with``.

    Parameters
    ----------
    directory
        Where the logs (``<directory>/logs``) and ZooKeeper's data (``<directory>/logs/zookeeper``)
        live. Kept after ``stop()`` when given, so a later ``LocalKafka(directory)`` finds the
        same topics; a temporary directory otherwise, removed on ``stop()``.
    properties
        Broker properties (Kafka's names) over :data:`LOCAL_PROPERTIES` (and the secured
        listener's).
    security
        The listener's security protocol: ``PLAINTEXT`` (the default), ``SSL``,
        ``SASL_PLAINTEXT`` or ``SASL_SSL``.
    users
        User name -> password, for SASL (PLAIN and SCRAM) and, with ``client_auth``, a client
        certificate each (``CN=<user>``).
    mechanisms
        The SASL mechanisms enabled (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; OAUTHBEARER may be
        added).
    client_auth
        ``ssl.client.auth``: ``none``, ``requested`` or ``required``.
    """

    def __init__(self, directory: str | Path | None = None,
                 properties: dict[str, str] | None = None, *, security: str = "PLAINTEXT",
                 users: dict[str, str] | None = None,
                 mechanisms: tuple[str, ...] = DEFAULT_MECHANISMS, client_auth: str = "none"):
        self.security = LocalSecurity(security, users, mechanisms, client_auth)
        self._owns_directory = directory is None
        self.directory = Path(directory) if directory is not None else Path(
            tempfile.mkdtemp(prefix="kpy-local-"))
        secured = self.security.broker_properties() \
            if self.security.protocol != "PLAINTEXT" else {}
        self.properties = {**LOCAL_PROPERTIES, **secured,
                           "log.dirs": str(self.directory / "logs"), **(properties or {})}
        self.broker = None

    def start(self) -> Self:
        if self.broker is not None:
            raise RuntimeError("this LocalKafka is already started")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.broker = Broker(BrokerConfig(self.properties)).start()
        for user in self.security.store_credentials(self.broker.zookeeper.client):
            self.broker.scram_credentials.reload_user(user)  # usable before start() returns
        logger.info("local Kafka on %s, ZooKeeper %s, data in %s", self.bootstrap_servers,
                    self.zookeeper_connect, self.directory)
        return self

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` of the broker, for ``bootstrap.servers``."""
        return f"127.0.0.1:{self._started().port}"

    def client_settings(self, user: str | None = None, mechanism: str | None = None
                        ) -> dict[str, str]:
        """A client's settings (Kafka's names: ``bootstrap.servers``, ``security.protocol``,
        the truststore inline, ``sasl.mechanism`` and ``sasl.jaas.config`` for ``user``; in
        Spark, prefix them with ``kafka.``)."""
        return self.security.client_settings(self.bootstrap_servers, user, mechanism)

    @property
    def zookeeper_connect(self) -> str:
        """The embedded ZooKeeper's connect string (``host:port``)."""
        return self._started().zookeeper.connect_string

    def stop(self) -> None:
        """Stop the broker (cleanly: the next start skips recovery) and its ZooKeeper."""
        if self.broker is not None:
            self.broker.stop()
            self.broker = None
        if self._owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def _started(self):
        if self.broker is None:
            raise RuntimeError("this LocalKafka is not started")
        return self.broker

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
