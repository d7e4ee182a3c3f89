"""A replicated Kafka cluster on this machine: broker_lite brokers, each its own process, sharing
one ZooKeeper, so that a broker can be killed for real (SIGKILL), stopped cleanly (SIGTERM: a
controlled shutdown) and started again on its own data.

What :class:`broker_lite.local.LocalKafka` starts with ``brokers=3``, and the pytest fixture
``kpy_cluster`` (:mod:`kspark.testing.plugin`), so users can test how their pipelines ride out a
broker failure::

    with LocalCluster(brokers=3) as cluster:
        cluster.bootstrap_servers                  # 127.0.0.1:<p1>,127.0.0.1:<p2>,...
        leader = cluster.leader("events", 0)      # from the partition's state in ZooKeeper
        cluster.kill(leader)                       # SIGKILL
        cluster.wait_for_leader("events", 0, other_than=leader)
        cluster.start_broker(leader)               # on its own data, same port

Each broker runs ``python -m broker_lite start`` with its own ``server.properties`` in
``<directory>/broker-<id>/`` (data in ``logs/`` there, its stderr in ``broker.log``), listening
on a port chosen at its first start (another one if a process took the picked port before the
broker bound it), kept from then on, so clients find a restarted broker where it was.
ZooKeeper is an embedded server in ``<directory>/zookeeper`` unless ``zookeeper.connect`` is
given (the test fixture gives each cluster a chroot of the session's server).

The settings (:func:`cluster_properties`) are those of :data:`LOCAL_PROPERTIES` (LocalKafka's)
with replication where a cluster allows it: internal topics and auto-created topics with
``min(3, brokers)`` replicas, ``__transaction_state`` and ``__share_group_state`` with
``min.insync.replicas`` 2; and
quicker reactions than Kafka's defaults, since a local cluster's brokers are one machine:
a 6 s ZooKeeper session (a killed broker is noticed within it), followers out of sync after
10 s, and 0.5 s between controlled-shutdown attempts. ``properties`` override any of them.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Self

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from broker_lite.zk.admin import get_partition_state
from broker_lite.zk.client import connect
from broker_lite.zk.layout import ControllerZNode, PartitionState
from broker_lite.zk.registration import live_broker_ids
from broker_lite.zk.server import EmbeddedZooKeeper, free_port, log_size, port_taken_since

from .faults import ClusterFaults
from .network import CLIENTS, ZOOKEEPER, Node

logger = logging.getLogger(__name__)

START_TIMEOUT_S = 120.0
PORT_ATTEMPTS = 3  # first starts whose picked port another process took meanwhile
STOP_TIMEOUT_S = 60.0

#: The settings of a Kafka on one machine (:class:`broker_lite.local.LocalKafka`'s, and the base
#: of :func:`cluster_properties`): no initial rebalance delay, few partitions for
#: ``__consumer_offsets`` and ``__transaction_state`` so the first group or transaction does not
#: wait for fifty partitions to load, internal topics with one replica.
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


def cluster_properties(brokers: int) -> dict[str, str]:
    """The settings every broker of a local cluster of ``brokers`` starts with."""
    replicas = str(min(3, brokers))
    return {**{k: v for k, v in LOCAL_PROPERTIES.items() if k not in ("broker.id", "listeners")},
            "default.replication.factor": replicas,
            "offsets.topic.replication.factor": replicas,
            "transaction.state.log.replication.factor": replicas,
            "transaction.state.log.min.isr": str(min(2, brokers)),
            "share.coordinator.state.topic.replication.factor": replicas,
            "share.coordinator.state.topic.min.isr": str(min(2, brokers)),
            "zookeeper.session.timeout.ms": "6000",
            "replica.lag.time.max.ms": "10000",
            "controlled.shutdown.retry.backoff.ms": "500"}


class BrokerStartError(RuntimeError):
    """A broker process ended, or did not say it serves, before its start timeout."""


class BrokerProcess:
    """One broker, ``python -m broker_lite start`` in ``directory``, on a fixed port (and,
    behind ``faults``' proxies, a second one for the other brokers)."""

    def __init__(self, broker_id: int, directory: Path, properties: Mapping[str, str], *,
                 log_dirs: int = 1, faults: ClusterFaults | None = None):
        self.broker_id = broker_id
        self.directory = Path(directory)
        self.log_dirs = [self.directory / "logs"] if log_dirs == 1 else \
            [self.directory / f"logs-{i}" for i in range(log_dirs)]
        self.properties = {**properties, "broker.id": str(broker_id),
                           "log.dirs": ",".join(map(str, self.log_dirs))}
        self.faults = faults
        self._zookeeper_connect: str | None = None  # the cluster's, once wired
        self._use_port(free_port())
        self._served = False  # once it served, clients know its port: it keeps it
        self.process: subprocess.Popen | None = None
        self.log_path = self.directory / "broker.log"

    def _use_port(self, port: int) -> None:
        self.port = port
        if self.faults is None:
            self.properties["listeners"] = f"PLAINTEXT://127.0.0.1:{port}"
        elif self._zookeeper_connect is not None:  # a new port: wired anew
            self.wire(self._zookeeper_connect)

    def wire(self, zookeeper_connect: str) -> None:
        """Set ``zookeeper.connect`` (through this broker's proxy when behind one)."""
        self._zookeeper_connect = zookeeper_connect
        if self.faults is None:
            self.properties["zookeeper.connect"] = zookeeper_connect
            return
        self.properties.update(self.faults.broker_properties(
            self.broker_id, self.port, free_port(), zookeeper_connect))

    @property
    def address(self) -> str:
        """Where clients reach it (its client proxy, behind one)."""
        if self.faults is not None and self.broker_id in self.faults.proxies:
            return self.faults.client_address(self.broker_id)
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout_s: float = START_TIMEOUT_S) -> Self:
        """Start the broker and return once it serves (it printed that it listens). A broker
        that crashed needs its old ZooKeeper session to expire first (up to
        ``zookeeper.session.timeout.ms``)."""
        if self.running:
            raise RuntimeError(f"broker {self.broker_id} is already running")
        self.directory.mkdir(parents=True, exist_ok=True)
        # The port was picked free, but another process can bind it before the broker does.
        # Until the broker has served once, nobody knows the port yet: pick another.
        attempts = 1 if self._served else PORT_ATTEMPTS
        for attempt in range(attempts):
            log_offset = log_size(self.log_path)
            try:
                self._start_once(timeout_s)
                self._served = True
                return self
            except BrokerStartError:
                if attempt + 1 == attempts or not port_taken_since(self.log_path, log_offset):
                    raise
                logger.info("broker %d: port %d was taken before it bound it; trying another",
                            self.broker_id, self.port)
                self._use_port(free_port())
        raise AssertionError("unreachable")  # the loop returns or raises

    def _start_once(self, timeout_s: float) -> None:
        path = self.directory / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in self.properties.items()))
        environment = None
        if self.faults is not None:
            self.faults.mount_disks(self.log_dirs)
            environment = {**os.environ, **self.faults.environment(self.broker_id)}
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "broker_lite", "start", str(path)],
                stdout=subprocess.PIPE, stderr=log, text=True, env=environment,
                cwd=self.directory,  # not the caller's directory, which -m would put on the path
                start_new_session=True)  # Ctrl-C in a notebook or test run is not for it
        ready = threading.Event()

        def read_stdout(stream=self.process.stdout) -> None:
            for line in stream:
                if "listening on" in line:
                    ready.set()
        threading.Thread(target=read_stdout, daemon=True,
                         name=f"broker-{self.broker_id}-stdout").start()
        deadline = time.monotonic() + timeout_s
        while not ready.wait(0.05):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise BrokerStartError(
                    f"broker {self.broker_id} did not start within {timeout_s:.0f} s "
                    f"(exit status {self.process.returncode}); its log: {self.log_path}:\n"
                    f"{_tail(self.log_path)}")

    def kill(self) -> int | None:
        """SIGKILL: the broker ends at once, as in a crash (its data stays). Its exit status
        (None when it never ran)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.kill()  # SIGKILL ends a paused process too
        return self.process.wait()

    def pause(self) -> None:
        """SIGSTOP: the broker hangs (a long garbage collection, a stalled disk); ZooKeeper
        still counts it alive until its session expires."""
        if self.running:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT: a paused broker carries on."""
        if self.running:
            self.process.send_signal(signal.SIGCONT)

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM, as an operator stops a broker: a controlled shutdown, then a clean one. Its
        exit status (killed after ``timeout_s``: None)."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.resume()  # a paused broker would not see the SIGTERM
        self.process.terminate()
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            logger.warning("broker %d did not stop within %.0f s; killing it", self.broker_id,
                           timeout_s)
            self.kill()
            return None


class LocalCluster:
    """Brokers 1..``brokers`` as processes, sharing a ZooKeeper (see the module docstring).

    ``faults=True`` puts every broker behind proxies and loads the failing-I/O library into
    its process, so the network and disk faults below can be injected
    (:mod:`broker_lite.local.faults`); ``disk_bytes`` gives each log directory a filesystem of
    that size of its own (root only), so it can fill up; ``log_dirs`` is how many log
    directories each broker has (``log.dirs``)."""

    def __init__(self, brokers: int = 3, directory: str | Path | None = None,
                 properties: Mapping[str, str] | None = None,
                 zookeeper_connect: str | None = None, *, faults: bool = False,
                 log_dirs: int = 1, disk_bytes: int | None = None):
        if brokers < 1:
            raise ValueError(f"a cluster needs at least one broker, not {brokers}")
        if disk_bytes is not None and not faults:
            raise ValueError("disk_bytes gives log directories filesystems to fill: it needs "
                             "faults=True")
        self._owns_directory = directory is None
        self.directory = Path(directory) if directory is not None else Path(
            tempfile.mkdtemp(prefix="kpy-cluster-"))
        self.properties = {**cluster_properties(brokers), **(properties or {})}
        self._zookeeper_connect = zookeeper_connect or self.properties.get("zookeeper.connect")
        self.zookeeper: EmbeddedZooKeeper | None = None
        self.faults = ClusterFaults(
            self.directory, range(1, brokers + 1),
            lambda: {b: p.process.pid for b, p in self.brokers.items()
                     if p.running and p.process is not None},
            disk_bytes=disk_bytes) if faults else None
        self.brokers = {broker_id: BrokerProcess(broker_id, self.directory / f"broker-{broker_id}",
                                                 self.properties, log_dirs=log_dirs,
                                                 faults=self.faults)
                        for broker_id in range(1, brokers + 1)}
        self._client: KazooClient | None = None

    # -- the whole cluster ------------------------------------------------------------------

    def start(self) -> Self:
        """Start ZooKeeper (unless given) and every broker; returns once all serve."""
        try:
            if self._zookeeper_connect is None:
                self.zookeeper = EmbeddedZooKeeper(self.directory / "zookeeper").start()
                self._zookeeper_connect = self.zookeeper.connect_string
            if self.faults is not None:
                self.faults.start(self._zookeeper_connect)
            for broker in self.brokers.values():
                broker.wire(self._zookeeper_connect)
                broker.start()
            self._client = connect(self._zookeeper_connect)
        except BaseException:
            self.stop()
            raise
        logger.info("local cluster of %d brokers on %s, ZooKeeper %s, data in %s",
                    len(self.brokers), self.bootstrap_servers, self._zookeeper_connect,
                    self.directory)
        return self

    def stop(self) -> None:
        """Stop every broker cleanly, then ZooKeeper; the directory goes unless it was given.
        Faults are healed first, so each broker can hand its leadership over."""
        if self.faults is not None:
            self.heal()
            for broker_id in self.brokers:
                self.faults.repair(broker_id)
        for broker in self.brokers.values():
            broker.stop()
        if self._client is not None:
            self._client.stop()
            self._client.close()
            self._client = None
        if self.zookeeper is not None:
            self.zookeeper.stop()
            self.zookeeper = None
        if self.faults is not None:
            self.faults.stop()
        if self._owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @property
    def bootstrap_servers(self) -> str:
        """Every broker's ``host:port``, running or not."""
        return ",".join(b.address for b in self.brokers.values())

    @property
    def zookeeper_connect(self) -> str:
        if self._zookeeper_connect is None:
            raise RuntimeError("this cluster is not started")
        return self._zookeeper_connect

    # -- single brokers -----------------------------------------------------------------------

    def broker(self, broker_id: int) -> BrokerProcess:
        try:
            return self.brokers[broker_id]
        except KeyError:
            raise KeyError(f"no broker {broker_id} in this cluster (brokers "
                           f"{sorted(self.brokers)})") from None

    def kill(self, broker_id: int) -> None:
        """SIGKILL broker ``broker_id``."""
        self.broker(broker_id).kill()

    def stop_broker(self, broker_id: int) -> int | None:
        """Stop broker ``broker_id`` cleanly (SIGTERM); its exit status."""
        return self.broker(broker_id).stop()

    def start_broker(self, broker_id: int) -> BrokerProcess:
        """Start broker ``broker_id`` again on its data and port."""
        return self.broker(broker_id).start()

    def running(self) -> list[int]:
        return [b for b, process in self.brokers.items() if process.running]

    # -- faults (faults=True: broker_lite.local.faults) ---------------------------------------

    def _faults(self) -> ClusterFaults:
        if self.faults is None:
            raise RuntimeError("this cluster injects no faults: start it with faults=True")
        return self.faults

    def isolate(self, broker_id: int,
                from_: str | Iterable[str] = (ZOOKEEPER, "brokers", CLIENTS)) -> None:
        """Cut broker ``broker_id`` off from ``"zookeeper"``, the other ``"brokers"`` and/or
        ``"clients"`` (all three by default): its links go silent until :meth:`heal`."""
        self.broker(broker_id)
        self._faults().isolate(broker_id, from_)

    def partition(self, side_a: Node | Iterable[Node], side_b: Node | Iterable[Node]) -> None:
        """Cut every link between a node of ``side_a`` and one of ``side_b`` (nodes: broker
        ids, ``"zookeeper"``, ``"clients"``)."""
        self._faults().partition(side_a, side_b)

    def heal(self) -> None:
        """Every link whole again, without delay; what was held goes through."""
        self._faults().network.heal()

    def delay(self, broker_id: int, ms: float) -> None:
        """Hold everything broker ``broker_id`` sends or receives ``ms`` milliseconds more
        (0: no longer)."""
        self.broker(broker_id)
        self._faults().network.delay(broker_id, ms)

    def fill_disk(self, broker_id: int, log_dir: int = 0) -> int:
        """Fill the filesystem of the broker's log directory ``log_dir`` (an index into its
        ``log.dirs``; needs ``disk_bytes``); the bytes written."""
        return self._faults().disk(self.broker(broker_id).log_dirs[log_dir]).fill()

    def free_disk(self, broker_id: int, log_dir: int = 0) -> None:
        """Give back what :meth:`fill_disk` took."""
        self._faults().disk(self.broker(broker_id).log_dirs[log_dir]).free()

    def fail_disk(self, broker_id: int, log_dir: int = 0) -> None:
        """From now on, writes and syncs in the broker's log directory ``log_dir`` fail with
        EIO, as a failing disk's do."""
        self._faults().fail(broker_id, self.broker(broker_id).log_dirs[log_dir])

    def repair_disk(self, broker_id: int) -> None:
        """Every log directory of the broker writes again (it serves a directory it took
        offline only once started again, as Kafka's brokers)."""
        self._faults().repair(broker_id)

    # -- what ZooKeeper says ------------------------------------------------------------------

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        """The partition's leader, leader epoch and ISR, as the controller and leader wrote
        them."""
        if self._client is None:
            raise RuntimeError("this cluster is not started")
        return get_partition_state(self._client, topic, partition)

    def leader(self, topic: str, partition: int) -> int:
        """The partition's leader (-1 while it has none)."""
        state = self.partition_state(topic, partition)
        return state.leader if state is not None else -1

    def registered(self) -> list[int]:
        """The brokers registered in ZooKeeper (``/brokers/ids``): those the controller counts
        alive."""
        if self._client is None:
            raise RuntimeError("this cluster is not started")
        return live_broker_ids(self._client)

    def controller(self) -> int:
        """The controller's broker id, from ``/controller`` (-1 while there is none)."""
        if self._client is None:
            raise RuntimeError("this cluster is not started")
        try:
            data, _ = self._client.get(ControllerZNode.path())
        except NoNodeError:
            return -1
        return ControllerZNode.decode(data).broker_id

    def wait_until(self, condition: Callable[[], object], timeout_s: float = 60.0,
                   what: str = "") -> object:
        """Poll ``condition`` until it holds; TimeoutError naming ``what`` otherwise."""
        deadline = time.monotonic() + timeout_s
        while True:
            result = condition()
            if result:
                return result
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting until "
                                   f"{what or condition}")
            time.sleep(0.05)

    def wait_for_leader(self, topic: str, partition: int, *, other_than: int | None = None,
                        timeout_s: float = 60.0) -> int:
        """Wait until the partition has a leader (other than ``other_than``); that leader."""
        def elected() -> int | None:
            leader = self.leader(topic, partition)
            return leader if leader >= 0 and leader != other_than else None
        return self.wait_until(elected, timeout_s,
                               f"{topic}-{partition} has a leader other than {other_than}")

    def wait_for_isr(self, topic: str, partition: int, brokers: set[int] | None = None,
                     timeout_s: float = 60.0) -> PartitionState:
        """Wait until the partition's ISR holds ``brokers`` (default: every running broker
        among its replicas); its state."""
        def in_sync() -> PartitionState | None:
            state = self.partition_state(topic, partition)
            wanted = brokers if brokers is not None else set(self.running())
            return state if state is not None and state.leader >= 0 and \
                wanted & set(self._replicas(topic, partition)) <= set(state.isr) else None
        return self.wait_until(in_sync, timeout_s,
                               f"{topic}-{partition} has {brokers or 'every running broker'} "
                               f"in its ISR")

    def _replicas(self, topic: str, partition: int) -> tuple[int, ...]:
        from broker_lite.zk.admin import get_topic_assignment

        return get_topic_assignment(self._client, topic).partitions.get(partition, ())


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"

