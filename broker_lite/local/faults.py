"""Faults a local cluster injects beyond killing brokers: a network that partitions and slows
down (:mod:`.network`: proxies in front of every broker's ZooKeeper session, client listener
and inter-broker listener), and disks that fill up or fail (:mod:`.disks`).

:class:`ClusterFaults` is what :class:`~broker_lite.local.cluster.LocalCluster` builds with
``faults=True``: per broker, its three proxies and how its listeners and ``zookeeper.connect``
are wired through them, the tmpfs of each of its log directories (with ``disk_bytes``), and the
failing-I/O library its process loads. The cluster's ``isolate``, ``partition``, ``heal``,
``delay``, ``fill_disk``, ``free_disk``, ``fail_disk`` and ``repair_disk`` act on it.

A broker behind proxies has two listeners: ``CLIENT`` for clients and ``REPLICATION`` for the
other brokers (``inter.broker.listener.name``), each advertised at its proxy's port, so every
connection to it crosses the proxy of the link it belongs to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from broker_lite.zk.client import parse_connect_string

from .disks import DiskFaultError, FailingIo, LogDisk
from .network import BROKERS, CLIENTS, ZOOKEEPER, FaultProxy, Network, Node, nodes, socket_owner

CLIENT_LISTENER = "CLIENT"
REPLICATION_LISTENER = "REPLICATION"


@dataclass
class BrokerProxies:
    """The proxies in front of one broker."""

    zookeeper: FaultProxy
    clients: FaultProxy
    brokers: FaultProxy

    def all(self) -> tuple[FaultProxy, ...]:
        return self.zookeeper, self.clients, self.brokers


class ClusterFaults:
    """The network and disks of a local cluster's brokers (see the module docstring).

    Parameters
    ----------
    directory
        Where the failing-I/O library and its control files go.
    broker_ids
        The cluster's brokers.
    pids
        Broker id -> its process id, now (for the inter-broker proxies' lookup).
    """

    def __init__(self, directory: Path, broker_ids: Iterable[int],
                 pids: Callable[[], dict[int, int]], *,
                 disk_bytes: int | None = None):
        self.network = Network()
        self.broker_ids = sorted(broker_ids)
        self.pids = pids
        self.disk_bytes = disk_bytes
        self.failing_io = FailingIo(Path(directory) / "failing-io")
        self.proxies: dict[int, BrokerProxies] = {}
        self.disks: dict[Path, LogDisk] = {}
        self._failing: dict[int, list[Path]] = {}

    # -- wiring ---------------------------------------------------------------------------------

    def start(self, zookeeper_connect: str) -> None:
        """Start every broker's proxies, its ZooKeeper proxy in front of ``zookeeper_connect``'s
        first server."""
        zk_host = parse_connect_string(zookeeper_connect).hosts[0]
        for broker_id in self.broker_ids:
            self.proxies[broker_id] = BrokerProxies(
                FaultProxy(self.network, broker_id, zk_host, lambda *_: ZOOKEEPER,
                           f"{broker_id}-zookeeper").start(),
                FaultProxy(self.network, broker_id, ("127.0.0.1", 0), lambda *_: CLIENTS,
                           f"{broker_id}-clients").start(),
                FaultProxy(self.network, broker_id, ("127.0.0.1", 0), self._broker_at,
                           f"{broker_id}-brokers").start())

    def _broker_at(self, peer: tuple[str, int], local_port: int) -> Node:
        owner = socket_owner(peer, local_port, self.pids())
        return owner if owner is not None else CLIENTS

    def broker_properties(self, broker_id: int, client_port: int, replication_port: int,
                          zookeeper_connect: str) -> dict[str, str]:
        """The settings that wire a broker through its proxies (and point them at its
        listeners' ``client_port`` and ``replication_port``)."""
        proxies = self.proxies[broker_id]
        proxies.clients.target = ("127.0.0.1", client_port)
        proxies.brokers.target = ("127.0.0.1", replication_port)
        chroot = parse_connect_string(zookeeper_connect).chroot or ""
        return {
            "listeners": f"{CLIENT_LISTENER}://127.0.0.1:{client_port},"
                         f"{REPLICATION_LISTENER}://127.0.0.1:{replication_port}",
            "advertised.listeners": f"{CLIENT_LISTENER}://{proxies.clients.address},"
                                    f"{REPLICATION_LISTENER}://{proxies.brokers.address}",
            "listener.security.protocol.map": f"{CLIENT_LISTENER}:PLAINTEXT,"
                                              f"{REPLICATION_LISTENER}:PLAINTEXT",
            "inter.broker.listener.name": REPLICATION_LISTENER,
            "zookeeper.connect": proxies.zookeeper.address + chroot,
        }

    def client_address(self, broker_id: int) -> str:
        return self.proxies[broker_id].clients.address

    def environment(self, broker_id: int) -> dict[str, str]:
        """What the broker's process adds to its environment (the failing-I/O library, where a
        C compiler builds it)."""
        try:
            return self.failing_io.environment(broker_id)
        except DiskFaultError:
            return {}  # fail_disk says why, if it is ever asked for

    def mount_disks(self, log_dirs: Iterable[Path]) -> None:
        if self.disk_bytes is None:
            return
        for path in log_dirs:
            disk = self.disks.get(Path(path))
            if disk is None:
                disk = self.disks[Path(path)] = LogDisk(Path(path), self.disk_bytes)
            disk.mount()

    def stop(self) -> None:
        for proxies in self.proxies.values():
            for proxy in proxies.all():
                proxy.stop()
        for disk in self.disks.values():
            disk.unmount()

    # -- the network ----------------------------------------------------------------------------

    def isolate(self, broker_id: int, from_: str | Iterable[str]) -> None:
        others: set[Node] = set()
        for name in nodes(from_):
            if name == BROKERS:
                others.update(b for b in self.broker_ids if b != broker_id)
            elif name in (ZOOKEEPER, CLIENTS):
                others.add(name)
            else:
                raise ValueError(f"isolate a broker from {ZOOKEEPER!r}, {BROKERS!r} or "
                                 f"{CLIENTS!r}, not {name!r}")
        for other in others:
            self.network.cut(broker_id, other)

    def partition(self, side_a: Node | Iterable[Node], side_b: Node | Iterable[Node]) -> None:
        a, b = nodes(side_a), nodes(side_b)
        known = {*self.broker_ids, ZOOKEEPER, CLIENTS}
        if unknown := (a | b) - known:
            raise ValueError(f"no such node in this cluster: {sorted(map(str, unknown))} "
                             f"(broker ids, {ZOOKEEPER!r}, {CLIENTS!r})")
        if a & b:
            raise ValueError(f"{sorted(map(str, a & b))} on both sides of the partition")
        for x in a:
            for y in b:
                self.network.cut(x, y)

    # -- disks ------------------------------------------------------------------------------------

    def disk(self, log_dir: Path) -> LogDisk:
        disk = self.disks.get(Path(log_dir))
        if disk is None:
            raise DiskFaultError(f"{log_dir} is not a filesystem of its own: start the cluster "
                                 f"with disk_bytes to fill its log directories")
        return disk

    def fail(self, broker_id: int, log_dir: Path) -> None:
        self.failing_io.build()
        failing = self._failing.setdefault(broker_id, [])
        if Path(log_dir) not in failing:
            failing.append(Path(log_dir))
        self.failing_io.fail(broker_id, failing)

    def repair(self, broker_id: int) -> None:
        self._failing.pop(broker_id, None)
        if self.failing_io.library is not None:
            self.failing_io.fail(broker_id, [])
