"""One broker_lite broker: its logs, its place in the ZooKeeper cluster, and its listeners.

Start-up order, as a Kafka broker's: the listeners' settings checked (TLS stores read, SASL
login modules parsed: :mod:`.listeners`), ZooKeeper (an embedded server when
``zookeeper.connect`` is unset), the dynamic broker configs stored there, the logs (recovered if
the last shutdown was not clean), the users' SCRAM credentials, the listeners bound (so the
ports are known when registering every advertised endpoint: ``SocketServer.start``),
registration and the controller election in ZooKeeper, and last, once ZooKeeper shows this broker
and a controller, request processing (Kafka's ``SocketServer.enableRequestProcessing``: until
then clients' connections wait in the listen backlog). So the first answer any client gets
already names the cluster id, this broker and the controller. ``start()`` returns only then.
Config changes made anywhere in the cluster reach the broker through ``/config/changes``
(:mod:`.config_changes`); with ``authorizer.class.name`` set, the ACLs are loaded from
ZooKeeper before any request is served, and changes follow through ``/kafka-acl-changes``
(:mod:`.authorizer`). Partitions replicate as :mod:`broker_lite.replication.partition_manager` and
:mod:`broker_lite.replication` describe: ISR changes go to ZooKeeper (:mod:`..replication.isr`),
followers fetch from their leaders' endpoints of the inter-broker listener, with its
security settings. Shutdown first moves leadership
away (a controlled shutdown, :mod:`.controlled_shutdown`), then answers the requests waiting in
the purgatory, stops the network, lets the requests being handled finish, then closes the rest
in reverse order (the replica fetchers before the logs) and leaves the clean-shutdown marker
and the high watermark checkpoint, so the next start skips recovery. The network's threads are
described in :mod:`broker_lite.server.network`.
"""

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException

from broker_lite.config.broker import BrokerConfig
from broker_lite.coordinator.consumer.coordinator import ConsumerGroupCoordinator
from broker_lite.coordinator.consumer.service import start_coordinator
from broker_lite.coordinator.share.service import ShareService, start_zk_share_service
from broker_lite.coordinator.transaction.service import (
    TransactionService,
    start_transaction_coordinator,
)
from broker_lite.log.manager import LogManager
from broker_lite.replication.fetcher import FetcherSettings
from broker_lite.replication.isr import ZkIsrWriter
from broker_lite.replication.partition_manager import PartitionManager
from broker_lite.zk.admin import get_broker_config, get_topic_config
from broker_lite.zk.client import ZooKeeperConnection
from broker_lite.zk.consumer_offsets import ZkConsumerOffsets
from broker_lite.zk.endpoints import EndPoint
from broker_lite.zk.layout import BrokerIdZNode, LogDirEventNotificationSequenceZNode
from broker_lite.zk.producer_ids import ZkProducerIdManager

from . import meta_properties, offline_replicas
from .admin import ZkTopicAdmin
from .apis import handlers
from .authorizer import AclAuthorizer, create_authorizer
from .config_changes import ConfigChangeListener, DynamicBrokerConfigs
from .controlled_shutdown import controlled_shutdown
from .dispatcher import Dispatcher, supported_versions
from .features import features
from .listeners import (
    ListenerConfig,
    advertised_endpoints,
    channel_builder,
    inter_broker_client_settings,
    inter_broker_listener_name,
    listener_configs,
)
from .metadata import BrokerInfo, ClusterMetadata
from .metadata_cache import MetadataCache, RememberingListener
from .metrics import BrokerMetrics, MetricsListener
from .network import Listener, NetworkConfig, RequestHandlerPool, SocketServer
from .network.channel_builders import ChannelBuilder
from .purgatory import Purgatory
from .releases import KafkaRelease
from .scram_credentials import ScramCredentialCache
from .services import HandlerServices
from .zk_broker import ZkBroker

if TYPE_CHECKING:
    from broker_lite.registry.server import SchemaRegistry

logger = logging.getLogger(__name__)


class BrokerNotReadyError(Exception):
    """ZooKeeper did not show this broker registered and a controller elected in time."""


class Broker:
    """A broker: ``Broker(config).start()`` returns once it serves requests, and it serves until
    ``stop()``; ``port`` is where it listens (useful with ``listeners=PLAINTEXT://127.0.0.1:0``)."""

    def __init__(self, config: BrokerConfig, *, release: KafkaRelease | None = None):
        self.config = config
        self.release = release  # tests: serve only what this older Kafka release serves
        self.zookeeper: ZooKeeperConnection | None = None
        self.logs: LogManager | None = None
        self.server: SocketServer | None = None
        self.request_handlers: RequestHandlerPool | None = None
        self.metrics: BrokerMetrics | None = None
        self.metrics_listener: MetricsListener | None = None
        self.schema_registry: SchemaRegistry | None = None
        self.zk_broker: ZkBroker | None = None
        self.services: HandlerServices | None = None
        self.purgatory: Purgatory | None = None
        self.groups: ConsumerGroupCoordinator | None = None
        self.transactions: TransactionService | None = None
        self.shares: ShareService | None = None
        self.config_changes: ConfigChangeListener | None = None
        self.dynamic_configs: DynamicBrokerConfigs | None = None
        self.authorizer: AclAuthorizer | None = None
        self.partitions: PartitionManager | None = None
        self.isr_writer: ZkIsrWriter | None = None
        self.cluster: MetadataCache | None = None
        self._serving = False
        self.scram_credentials: ScramCredentialCache | None = None
        self.listeners: list[ListenerConfig] = []
        self.channel_builders: list[ChannelBuilder] = []
        self.advertised: tuple[EndPoint, ...] = ()
        # what ends the broker when it cannot go on (every log dir offline): by default a stop
        # on a thread of its own; ``broker-lite start`` ends its process the same way as on
        # SIGTERM
        self.on_fatal: Callable[[], None] = lambda: threading.Thread(
            target=self.stop, name="fatal-stop", daemon=True).start()

    def start(self) -> "Broker":
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        log_dirs = [Path(d) for d in self.config.log_dirs]
        recorded = meta_properties.read(log_dirs)
        broker_id = meta_properties.check(recorded, self.config["broker.id"])
        if broker_id != self.config["broker.id"]:  # broker.id=-1: the id generated earlier
            self.config = BrokerConfig({**self.config.originals, "broker.id": str(broker_id)})
        config = self.config
        self.listeners = listeners = listener_configs(config)  # checked before anything starts
        inter_broker = inter_broker_listener_name(config)
        inter_broker_security = inter_broker_client_settings(config)
        self.zookeeper = ZooKeeperConnection(config).open()
        client = self.zookeeper.client
        # Dynamic broker configs are in force before the logs load, as in Kafka.
        self.config_changes = ConfigChangeListener(client, {})
        self.config_changes.mark_existing()
        self.dynamic_configs = dynamic = DynamicBrokerConfigs(
            config, lambda entity: get_broker_config(client, entity),
            broker_id=lambda: self.config["broker.id"])
        dynamic.reload()
        self.logs = logs = dynamic.logs = LogManager(config)
        logs.on_offline = self._on_log_dir_offline
        self.partitions = partitions = PartitionManager(
            logs, lambda topic: get_topic_config(client, topic), config["broker.id"],
            lag_time_max_ms=config["replica.lag.time.max.ms"])
        self.purgatory = purgatory = Purgatory()
        self.cluster = cluster = MetadataCache(
            client, lambda watching: ClusterMetadata(watching, listeners[0].name),
            on_change=purgatory.notify_metadata_changed,
            read_timeout_s=config["zookeeper.session.timeout.ms"] / 1000)
        self.isr_writer = ZkIsrWriter(client).start()
        partitions.start_replication(
            isr_writer=self.isr_writer,
            is_alive=lambda broker: _address(cluster, broker, inter_broker) is not None,
            on_high_watermark=lambda tp: purgatory.notify_appended((tp,)),
            address_of=lambda broker: _address(cluster, broker, inter_broker),
            fetcher_settings=FetcherSettings.from_broker_config(config, inter_broker_security))
        producer_ids = ZkProducerIdManager(client, lambda: partitions.broker_id)
        self.groups = start_coordinator(config, partitions, client, cluster,
                                        purgatory.notify_appended)
        self.transactions = start_transaction_coordinator(
            config, partitions, client, broker_id=lambda: partitions.broker_id,
            brokers=lambda: cluster.brokers(inter_broker),
            generate_producer_id=producer_ids.generate,
            on_offsets_completed=self.groups.on_transaction_completed,
            on_appended=purgatory.notify_appended,
            inter_broker_security=inter_broker_security)
        self.shares = start_zk_share_service(
            config, partitions, client, self.groups, broker_id=lambda: partitions.broker_id,
            leader_of=lambda topic, index: _leader_of(cluster, topic, index),
            address_of=lambda broker: _address(cluster, broker, inter_broker),
            topics=lambda names: _topic_ids(cluster, names),
            on_available=purgatory.fetch.check_and_complete,
            on_appended=purgatory.notify_appended, inter_broker_security=inter_broker_security)
        # SCRAM credentials are read before any client may authenticate, then followed.
        self.scram_credentials = scram = ScramCredentialCache(client)
        scram.load()
        api_handlers = handlers(share_groups=config["group.share.enable"])
        if self.release is not None:
            api_handlers = self.release.handlers(api_handlers)
        self.authorizer = create_authorizer(config, client)  # ACLs loaded before any request
        self.services = services = HandlerServices(
            config=config, logs=logs, partitions=partitions, cluster=cluster,
            admin=ZkTopicAdmin(client, config, on_config_changed=logs.update_config,
                               on_broker_config_changed=dynamic.reload,
                               on_user_config_changed=scram.reload_user,
                               on_group_config_changed=self.shares.group_configs.invalidate),
            groups=self.groups, transactions=self.transactions.coordinator,
            markers=self.transactions.markers, producer_ids=producer_ids, purgatory=purgatory,
            zk_offsets=ZkConsumerOffsets(client),
            api_versions=supported_versions(api_handlers), authorizer=self.authorizer,
            share=self.shares,  # a capped release finalizes no feature, as ZooKeeper-mode Kafka
            features=features(config) if self.release is None else ())
        # The listener is bound now (the port is registered below) and serves requests once
        # the broker is registered: Kafka's SocketServer.startup, then enableRequestProcessing.
        dispatcher = Dispatcher(api_handlers, services, refusal_names_versions=(
            self.release is None or self.release.names_api_versions_in_refusal))
        for listener in listeners:  # closed at stop, even if a later one fails
            self.channel_builders.append(
                channel_builder(listener, scram.get, dispatcher.api_versions))
        self.server = SocketServer([
            Listener(listener.name, listener.endpoint.host, listener.endpoint.port, builder)
            for listener, builder in zip(listeners, self.channel_builders, strict=True)],
            NetworkConfig.of(config)).start()
        self.request_handlers = RequestHandlerPool(
            self.server.request_channel, dispatcher, config["num.io.threads"]).start()
        self.metrics = BrokerMetrics(self.server, purgatory, lambda: services.broker_id)
        if config["metrics.listener"]:
            self.metrics_listener = MetricsListener(config["metrics.listener"],
                                                    self.metrics).start()
        self.advertised = advertised = advertised_endpoints(
            config, {listener.name: self.server.bound_port(listener.name)
                     for listener in listeners})
        self._wait_for_previous_session(client, config["broker.id"])
        self.zk_broker = ZkBroker(
            client, config, RememberingListener(partitions, cluster), endpoints=advertised,
            offline_replicas_of=offline_replicas.asker(
                lambda broker: _address(cluster, broker, inter_broker),
                security=inter_broker_security, controller_id=lambda: partitions.broker_id))
        self.zk_broker.start()
        registered_id, cluster_id = self.zk_broker.broker_id, self.zk_broker.cluster_id
        assert registered_id is not None and cluster_id is not None  # known once it started
        partitions.broker_id = registered_id
        dynamic.broker_id = lambda: partitions.broker_id  # a generated id is known now
        services.cluster_id = cluster_id
        services.controller = self.zk_broker.controller
        local = {e.listener_name: BrokerInfo(services.broker_id, e.host, e.port,
                                             config["broker.rack"]) for e in advertised}
        cluster.set_local_endpoints(local)
        cluster.local_broker = local.get(listeners[0].name) or next(iter(local.values()))
        meta_properties.check_cluster(recorded, cluster_id)
        meta_properties.write(log_dirs, meta_properties.BrokerMetadata(services.broker_id,
                                                                       cluster_id))
        dynamic.reload()
        self.config_changes.handlers.update(topics=self._on_topic_config_change,
                                            brokers=dynamic.reload, users=scram.on_change,
                                            groups=self.shares.group_configs.invalidate)
        self.config_changes.start()
        self.logs.start_background_tasks()
        self._wait_until_shown(cluster)
        for name in (None, *(listener.name for listener in listeners)):  # in memory before
            cluster.brokers(name)  # the first request, as Kafka's cache is
        cluster.controller_id()
        cluster.topic_names()
        self.server.enable_request_processing()
        self._serving = True
        logger.info("broker %d listening on %s (ZooKeeper %s)", services.broker_id,
                    ", ".join(e.connection_string for e in advertised),
                    self.zookeeper.connect_string)
        if config["schema.registry.listeners"]:
            self._start_schema_registry(inter_broker, inter_broker_security)

    def _start_schema_registry(self, listener: str, security: dict[str, str]) -> None:
        """A schema registry in this process (``schema.registry.listeners``), its store this
        broker's cluster, reached on the inter-broker listener as brokers reach each other."""
        from broker_lite.registry.config import RegistryConfig, embedded_properties
        from broker_lite.registry.server import SchemaRegistry

        endpoint = next(e for e in self.advertised if e.listener_name == listener)
        properties = embedded_properties(self.config.originals, f"{endpoint.host}:{endpoint.port}",
                                         security)
        self.schema_registry = SchemaRegistry(RegistryConfig(properties)).start()

    def _on_log_dir_offline(self, log_dir: Path) -> None:
        """A log dir failed (KIP-112): tell the controller through
        ``/log_dir_event_notification``, as Kafka's ``LogDirFailureHandler`` does, once its
        partitions are no longer fetched; with every dir offline, shut down (cleanly, so
        leadership moves first: ``on_fatal``)."""
        zookeeper, logs = self.zookeeper, self.logs
        if self.partitions is not None:
            self.partitions.stop_fetching_offline()
        if zookeeper is not None and zookeeper.client is not None and self.zk_broker is not None:
            try:
                zookeeper.client.create(
                    LogDirEventNotificationSequenceZNode.PATH_PREFIX,
                    LogDirEventNotificationSequenceZNode.encode(self.broker_id),
                    sequence=True, makepath=True)
            except KazooException:
                logger.warning("broker %d: could not announce that %s is offline", self.broker_id,
                               log_dir, exc_info=True)
        if logs is not None and set(logs.log_dirs) <= logs.offline_dirs:
            logger.error("every log dir of broker %s is offline (%s): shutting down",
                         self.config["broker.id"], ", ".join(map(str, logs.log_dirs)))
            self.on_fatal()

    def _on_topic_config_change(self, topic: str) -> None:
        """A topic's overrides changed somewhere in the cluster: apply them to the partitions
        of it held here."""
        logs, zookeeper = self.logs, self.zookeeper
        if logs is None or zookeeper is None or zookeeper.client is None:
            return
        if any(t == topic for t, _ in logs.partitions()):
            logs.update_config(topic, get_topic_config(zookeeper.client, topic))

    def _wait_until_shown(self, cluster: MetadataCache) -> None:
        """Wait until ZooKeeper lists this broker and names a controller (normally a few
        milliseconds after registration; longer on a loaded machine), at most the ZooKeeper
        connection timeout."""
        timeout_ms = (self.config["zookeeper.connection.timeout.ms"]
                      or self.config["zookeeper.session.timeout.ms"])
        deadline = time.monotonic() + timeout_ms / 1000
        pause = 0.005
        while not cluster.shows_itself():
            if time.monotonic() > deadline:
                raise BrokerNotReadyError(
                    f"ZooKeeper did not show broker {self.broker_id} registered with a "
                    f"controller elected within {timeout_ms} ms "
                    f"(controller: {cluster.controller_id()})")
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def _wait_for_previous_session(self, client: KazooClient, broker_id: int) -> None:
        """After a crash, this broker's id is still registered by its dead session until that
        session times out: wait for it (a live broker with the same id never goes away, and
        registration then refuses the duplicate)."""
        if broker_id < 0:
            return
        path = BrokerIdZNode.path(broker_id)
        deadline = time.monotonic() + self.config["zookeeper.session.timeout.ms"] / 1000 + 2
        waited = False
        while time.monotonic() < deadline:
            stat = client.exists(path)
            if stat is None or stat.ephemeralOwner == client.client_id[0]:
                return
            if not waited:
                logger.info("broker id %d is still registered by an earlier session; waiting "
                            "for it to expire", broker_id)
                waited = True
            time.sleep(0.2)

    def _controlled_shutdown(self) -> None:
        config, cluster, zookeeper = self.config, self.cluster, self.zookeeper
        if cluster is None or zookeeper is None or zookeeper.client is None:
            return
        # the cached answer, kept current by ZooKeeper watches: a lone broker stops at once
        if not any(b.broker_id != self.broker_id for b in cluster.brokers()):
            return  # alone in the cluster: no other broker could take any leadership

        inter_broker = inter_broker_listener_name(config)

        def controller() -> tuple[int, tuple[str, int] | None]:
            cluster.invalidate()  # the controller may have moved since the last read
            controller_id = cluster.controller_id()
            return controller_id, _address(cluster, controller_id, inter_broker) \
                if controller_id >= 0 else None

        try:
            controlled_shutdown(zookeeper.client, self.broker_id, controller,
                                max_retries=config["controlled.shutdown.max.retries"],
                                backoff_ms=config["controlled.shutdown.retry.backoff.ms"],
                                timeout_ms=config["request.timeout.ms"],
                                security=inter_broker_client_settings(config))
        except Exception:  # a failed handover must not stop the shutdown itself
            logger.exception("broker %d: controlled shutdown failed", self.broker_id)

    @property
    def port(self) -> int:
        """The bound port of the first listener."""
        assert self.server is not None
        return self.server.port

    def bound_port(self, listener_name: str) -> int:
        """The bound port of a listener (``SASL_SSL``, a custom name)."""
        assert self.server is not None
        return self.server.bound_port(listener_name.upper())

    @property
    def broker_id(self) -> int:
        assert self.services is not None
        return self.services.broker_id

    def stop(self) -> None:
        """Stop serving, leave the cluster, close the logs cleanly; with
        ``controlled.shutdown.enable``, first move leadership away (:mod:`.controlled_shutdown`;
        skipped by a broker alone in its cluster)."""
        if self._serving and self.config["controlled.shutdown.enable"]:
            self._controlled_shutdown()
        self._serving = False
        if self.schema_registry is not None:  # a client of this broker: stopped first
            self.schema_registry.stop()
            self.schema_registry = None
        if self.config_changes is not None:
            self.config_changes.stop()
        if self.metrics_listener is not None:
            self.metrics_listener.stop()
            self.metrics_listener = None
        # The network first, as Kafka's shutdown stops its socket server before anything else:
        # a request waiting in the purgatory loses its connection rather than getting an
        # answer (an empty Fetch would tell its client that nothing came, not that the broker
        # went away). Its operation then completes at once, so no handler waits on it.
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.purgatory is not None:
            self.purgatory.stop()
        while self.channel_builders:
            self.channel_builders.pop().close()
        if self.request_handlers is not None:  # the requests being handled finish first
            self.request_handlers.stop()
            self.request_handlers = None
        if self.transactions is not None:
            self.transactions.shutdown()
            self.transactions = None
        if self.shares is not None:
            self.shares.shutdown()
            self.shares = None
        if self.groups is not None:
            self.groups.shutdown()
            self.groups = None
        if self.partitions is not None:  # no fetch writes to the logs from here on
            self.partitions.stop_replication()
            self.partitions = None
        if self.isr_writer is not None:
            self.isr_writer.stop()
            self.isr_writer = None
        if self.authorizer is not None:
            self.authorizer.stop()
            self.authorizer = None
        if self.zk_broker is not None:
            self.zk_broker.stop()
            self.zk_broker = None
        if self.logs is not None:
            self.logs.shutdown()
            self.logs = None
        if self.zookeeper is not None:
            self.zookeeper.close()
            self.zookeeper = None


def _address(cluster: MetadataCache, broker_id: int, listener: str | None = None
             ) -> tuple[str, int] | None:
    """Where a registered broker listens on ``listener`` (None: the first listener's name;
    the result is None when the broker is not registered)."""
    return next(((b.host, b.port) for b in cluster.brokers(listener)
                 if b.broker_id == broker_id), None)


def _leader_of(cluster: MetadataCache, topic: str, partition: int) -> int | None:
    """The partition's leader (-1: none yet), or None when the topic does not exist."""
    if cluster.partition_count(topic) is None:
        return None
    state = cluster.partition_state(topic, partition)
    return state.leader if state is not None else -1


def _topic_ids(cluster: MetadataCache, names) -> dict:
    """Topic name -> (topic id, partition count), for those of ``names`` that exist."""
    found = {}
    for name in names:
        info = cluster.topic(name)
        if info is not None:
            found[name] = (info.topic_id, len(info.partitions))
    return found
