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

``LocalKafka(brokers=3)`` starts a replicated cluster instead: three brokers, each its own
process, sharing an embedded ZooKeeper (:class:`broker_lite.local.cluster.LocalCluster`), whose
brokers can be killed, stopped and started again (``kafka.cluster.kill(1)``,
``kafka.cluster.start_broker(1)``), so a pipeline's failover can be tried on one machine::

    with LocalKafka(brokers=3) as kafka:
        kafka.bootstrap_servers             # the three brokers' host:port
        kafka.cluster.kill(kafka.cluster.leader("events", 0))

A secured variant listens with ``security`` (``SSL``, ``SASL_PLAINTEXT``, ``SASL_SSL``) only,
with certificates generated at run time and ``users`` who log in with PLAIN or SCRAM (their
SCRAM credentials stored in ZooKeeper as Kafka stores them); ``client_settings()`` gives a
client's settings for one of them (see :mod:`broker_lite.local.security`)::

    with LocalKafka(security="SASL_SSL", users={"alice": "alice-secret"}) as kafka:
        settings = kafka.client_settings("alice", "SCRAM-SHA-512")   # Kafka's names

A secured LocalKafka is one broker; the replicated cluster listens in plain text.

``schema_registry=True`` adds a schema registry (:mod:`broker_lite.registry`, Confluent's REST
API) in this process, on a free port, its schemas in the cluster's ``_schemas``; with
``security``, it serves HTTPS (the broker's certificate) and, with SASL, asks for the users'
Basic logins. ``registry_client_settings()`` gives confluent-kafka's ``SchemaRegistryClient``
settings::

    with LocalKafka(schema_registry=True) as kafka:
        kafka.schema_registry_url                    # http://127.0.0.1:<a free port>
        SchemaRegistryClient(kafka.registry_client_settings())
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Self

from broker_lite.config.broker import BrokerConfig
from broker_lite.local.cluster import LOCAL_PROPERTIES, LocalCluster
from broker_lite.local.security import DEFAULT_MECHANISMS, LocalSecurity
from broker_lite.server.broker import Broker

if TYPE_CHECKING:
    from broker_lite.registry import SchemaRegistry

logger = logging.getLogger(__name__)

__all__ = ["LOCAL_PROPERTIES", "LocalKafka"]


class LocalKafka:
    """broker_lite with an embedded ZooKeeper, started by ``start()`` or ``with``.

    Parameters
    ----------
    directory
        Where the logs (``<directory>/logs``) and ZooKeeper's data (``<directory>/logs/zookeeper``)
        live. Kept after ``stop()`` when given, so a later ``LocalKafka(directory)`` finds the
        same topics; a temporary directory otherwise, removed on ``stop()``.
    properties
        Broker properties (Kafka's names) over :data:`LOCAL_PROPERTIES` and the secured
        listener's (with more than one broker, over
        :func:`broker_lite.local.cluster.cluster_properties`).
    brokers
        How many brokers: one runs in this process; more run as processes of their own
        (:attr:`cluster`).
    security
        The listener's security protocol: ``PLAINTEXT`` (the default), ``SSL``,
        ``SASL_PLAINTEXT`` or ``SASL_SSL`` (one broker only).
    users
        User name -> password, for SASL (PLAIN and SCRAM) and, with ``client_auth``, a client
        certificate each (``CN=<user>``).
    mechanisms
        The SASL mechanisms enabled (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; OAUTHBEARER may be
        added).
    client_auth
        ``ssl.client.auth``: ``none``, ``requested`` or ``required``.
    schema_registry
        Whether to run a schema registry too (:attr:`schema_registry`).
    registry_properties
        The registry's settings (Confluent's names) over those made for the cluster.
    """

    def __init__(self, directory: str | Path | None = None,
                 properties: dict[str, str] | None = None, *, brokers: int = 1,
                 security: str = "PLAINTEXT", users: dict[str, str] | None = None,
                 mechanisms: tuple[str, ...] = DEFAULT_MECHANISMS, client_auth: str = "none",
                 schema_registry: bool = False,
                 registry_properties: dict[str, str] | None = None):
        self.security = LocalSecurity(security, users, mechanisms, client_auth)
        if brokers > 1 and self.security.protocol != "PLAINTEXT":
            raise ValueError(f"a {self.security.protocol} LocalKafka runs one broker "
                             f"(brokers={brokers}); the local cluster listens in plain text")
        self._owns_directory = directory is None
        self.directory = Path(directory) if directory is not None else Path(
            tempfile.mkdtemp(prefix="kpy-local-"))
        secured = self.security.broker_properties() \
            if self.security.protocol != "PLAINTEXT" else {}
        self.properties = {**LOCAL_PROPERTIES, **secured,
                           "log.dirs": str(self.directory / "logs"), **(properties or {})}
        self.broker = None
        self.cluster: LocalCluster | None = None
        self.schema_registry: SchemaRegistry | None = None
        self._registry_wanted = schema_registry
        self._registry_properties = registry_properties or {}
        if brokers > 1:
            self.cluster = LocalCluster(brokers, self.directory, properties)

    def start(self) -> Self:
        if self.broker is not None or (self.cluster is not None and self.cluster.running()):
            raise RuntimeError("this LocalKafka is already started")
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.cluster is not None:
            self.cluster.start()
        else:
            self.broker = Broker(BrokerConfig(self.properties)).start()
            for user in self.security.store_credentials(self.broker.zookeeper.client):
                self.broker.scram_credentials.reload_user(user)  # usable before start() returns
            logger.info("local Kafka on %s, ZooKeeper %s, data in %s", self.bootstrap_servers,
                        self.zookeeper_connect, self.directory)
        if self._registry_wanted:
            self.start_schema_registry()
        return self

    def start_schema_registry(self) -> SchemaRegistry:
        """Start the schema registry (again, after :meth:`stop_schema_registry`)."""
        from broker_lite.registry import RegistryConfig, SchemaRegistry

        if self.schema_registry is not None:
            raise RuntimeError("this LocalKafka's schema registry is already started")
        properties = {**self.security.registry_properties(self.bootstrap_servers,
                                                          self.directory),
                      **self._registry_properties}
        self.schema_registry = SchemaRegistry(RegistryConfig(properties)).start()
        logger.info("schema registry on %s", self.schema_registry.url)
        return self.schema_registry

    def stop_schema_registry(self) -> None:
        if self.schema_registry is not None:
            self.schema_registry.stop()
            self.schema_registry = None

    @property
    def schema_registry_url(self) -> str:
        """The schema registry's URL (``http://127.0.0.1:<port>``, https when secured)."""
        if self.schema_registry is None:
            raise RuntimeError("this LocalKafka runs no schema registry "
                               "(LocalKafka(schema_registry=True))")
        return self.schema_registry.url

    def registry_client_settings(self, user: str | None = None) -> dict[str, str]:
        """confluent-kafka ``SchemaRegistryClient`` settings for the registry (``url``; when
        secured ``ssl.ca.location`` and ``user``'s ``basic.auth.user.info``)."""
        return self.security.registry_client_settings(self.schema_registry_url,
                                                      self.directory, user)

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` of the broker (or brokers), for ``bootstrap.servers``."""
        if self.cluster is not None:
            return self.cluster.bootstrap_servers
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
        if self.cluster is not None:
            return self.cluster.zookeeper_connect
        return self._started().zookeeper.connect_string

    def stop(self) -> None:
        """Stop the registry, the broker (cleanly: the next start skips recovery) and its
        ZooKeeper."""
        self.stop_schema_registry()
        if self.cluster is not None:
            self.cluster.stop()
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
