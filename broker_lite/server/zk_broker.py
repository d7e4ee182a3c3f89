"""A broker's membership of the cluster through ZooKeeper: the ZooKeeper half of a Kafka 2.x
``KafkaServer`` startup.

``start()``, in Kafka's order: create the persistent paths, read or create ``/cluster/id``, take
the configured ``broker.id`` (or generate one from ``/brokers/seqid`` when it is -1), refuse an id
held by another live session, load the partitions assigned to this broker (reporting them to the
listener), register the ephemeral ``/brokers/ids/[id]``, and campaign for ``/controller``.
Registering after loading keeps the controller from deleting a topic before a returning replica
has seen the deletion marker.

The broker survives connection trouble: a dropped connection within the session needs nothing
but fresh watches; a session that expired lost its ephemeral znodes, so once kazoo has a new
session the broker registers again and campaigns again. Errors on kazoo's threads are logged,
never raised.

``stop()`` deletes this broker's ephemeral znodes (registration, and ``/controller`` if held) and
stops the watches; closing the kazoo client, which the caller created, is left to the caller.
"""

import logging
from functools import partial
from typing import Self

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from broker_lite.config.broker import BrokerConfig
from broker_lite.controller.controller import Controller, ControllerSettings, OfflineReplicasOf
from broker_lite.zk.cluster import ensure_persistent_paths, get_or_create_cluster_id
from broker_lite.zk.endpoints import EndPoint
from broker_lite.zk.errors import BrokerIdInUseError
from broker_lite.zk.events import EventLoop, EventLoopStoppedError
from broker_lite.zk.registration import (
    broker_registration,
    check_broker_id_free,
    generate_broker_id,
    register_broker,
    unregister_broker,
)
from broker_lite.zk.replicas import PartitionListener, ReplicaWatcher

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 10.0


class ZkBroker:
    """One broker's registration, controller candidacy and assigned partitions.

    Parameters
    ----------
    client : KazooClient
        A started client, chrooted to the cluster's ``zookeeper.connect`` chroot.
    config : BrokerConfig
        ``broker.id``, ``listeners``/``advertised.listeners``, ``delete.topic.enable``.
    listener : PartitionListener
        Told about the partitions this broker replicates, on one thread, in order.
    endpoints : tuple of EndPoint, optional
        The endpoints to advertise, once bound (default: from ``config``).
    offline_replicas_of : callable, optional
        The controller's question to a broker whose log dir failed (:mod:`.offline_replicas`).
    """

    def __init__(self, client: KazooClient, config: BrokerConfig, listener: PartitionListener, *,
                 endpoints: tuple[EndPoint, ...] | None = None,
                 offline_replicas_of: OfflineReplicasOf | None = None):
        self.client = client
        self.offline_replicas_of = offline_replicas_of
        self.config = config
        self.listener = listener
        self.endpoints = endpoints
        self.broker_id: int | None = None
        self.cluster_id: str | None = None
        self.controller: Controller | None = None
        self.replicas: ReplicaWatcher | None = None
        self._loop: EventLoop | None = None
        self._session_lost = False
        self._stopped = False

    @property
    def is_controller(self) -> bool:
        return self.controller is not None and self.controller.active

    def start(self) -> Self:
        """Join the cluster; raises :class:`BrokerIdInUseError` if the id is taken."""
        configured_id = self.config["broker.id"]
        loop_name = f"zk-broker-{configured_id}" if configured_id >= 0 else "zk-broker"
        self._loop = loop = EventLoop(loop_name, log)
        loop.start()
        self.client.add_listener(self._on_state)
        try:
            timeout = (self.config["zookeeper.connection.timeout.ms"]
                       or self.config["zookeeper.session.timeout.ms"]) / 1000
            loop.call(partial(self._startup, loop), timeout)
        except BaseException:
            self.client.remove_listener(self._on_state)
            if self.replicas is not None:
                self.replicas.close()
            self._loop.stop()
            raise
        assert self.broker_id is not None
        self.controller = Controller(
            self.client, self.broker_id,
            settings=ControllerSettings.from_broker_config(self.config),
            unclean_default=lambda: self.config["unclean.leader.election.enable"],
            offline_replicas_of=self.offline_replicas_of)
        self.controller.start()
        return self

    def _startup(self, loop: EventLoop) -> None:
        ensure_persistent_paths(self.client)
        self.cluster_id = get_or_create_cluster_id(self.client)
        broker_id = self.config["broker.id"]
        if broker_id < 0:
            broker_id = generate_broker_id(self.client, self.config["reserved.broker.max.id"])
        check_broker_id_free(self.client, broker_id)
        self.broker_id = broker_id
        self.replicas = ReplicaWatcher(self.client, broker_id, self.listener, loop,
                                       delete_topic_enable=self.config["delete.topic.enable"],
                                       logger=log)
        self.replicas.refresh_all()
        register_broker(self.client, broker_registration(self.config, broker_id, self.endpoints))
        log.info("broker %d registered in cluster %s", broker_id, self.cluster_id)

    def stop(self) -> None:
        """Leave the cluster: delete this broker's ephemeral znodes, stop watching."""
        if self._stopped or self._loop is None:
            return
        self._stopped = True
        self.client.remove_listener(self._on_state)
        if self.replicas is not None:
            self.replicas.close()
        if self.controller is not None:
            self.controller.stop(STOP_TIMEOUT_S)
        # without a connection there is nobody to tell: the session's end removes the znode
        # (nor, without an id, anything to delete: the start failed before registering)
        broker_id = self.broker_id
        if self.client.connected and broker_id is not None:
            try:
                self._loop.call(lambda: unregister_broker(self.client, broker_id),
                                STOP_TIMEOUT_S)
            except (EventLoopStoppedError, TimeoutError):
                pass
            except Exception:
                log.info("broker %s: could not unregister; the session end removes it",
                         self.broker_id, exc_info=True)
        self._loop.stop(STOP_TIMEOUT_S)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- session changes (kazoo's thread: only flags and queued work) ------------------------------

    def _on_state(self, state: str) -> None:
        if self._stopped:
            return
        if state == KazooState.LOST:
            self._session_lost = True
            if self.controller is not None:
                self.controller.session_lost()
        elif state == KazooState.CONNECTED:
            if self._loop is not None:  # set before this listener is added
                self._loop.put(self._on_connected)
            if self.controller is not None:
                self.controller.reconnected()

    def _on_connected(self) -> None:
        if self._session_lost and self.broker_id is not None:  # registered once already
            log.info("broker %d: new ZooKeeper session, registering again", self.broker_id)
            try:
                register_broker(self.client,
                                broker_registration(self.config, self.broker_id, self.endpoints))
            except BrokerIdInUseError:
                log.exception("broker %d: another broker took this id while the session was down",
                              self.broker_id)
            # not reached on a connection loss, so the next reconnection registers again
            self._session_lost = False
        if self.replicas is not None:
            self.replicas.refresh_all()
