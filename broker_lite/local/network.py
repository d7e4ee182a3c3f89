"""The network between a local cluster's brokers, its ZooKeeper and its clients, made of TCP
proxies the cluster controls, so a test can cut links and slow them down for real.

Every connection a broker makes or takes crosses one of three proxies of that broker, each on a
loopback port of its own:

==================  ==================================================  =====================
proxy               in front of                                         the link it carries
==================  ==================================================  =====================
``zookeeper``       the ZooKeeper server (the broker's                  broker -- zookeeper
                    ``zookeeper.connect`` names this proxy)
``clients``         the broker's client listener (advertised:           clients -- broker
                    clients reach the broker only through it)
``brokers``         the broker's inter-broker listener (advertised on   broker -- broker
                    ``inter.broker.listener.name``: fetchers,
                    transaction markers, controlled shutdown)
==================  ==================================================  =====================

On the inter-broker proxy the other end is the broker whose process owns the connecting socket
(found in ``/proc``: the socket's inode in ``/proc/net/tcp``, then the process holding it), so
the link between brokers 1 and 2 is cut in both directions whichever of them connects.

A cut link goes silent, as a partitioned network does, rather than closing: what either side
sends is held (the sender's buffers then fill and its writes block, as they would while TCP
retransmits), a new connection is accepted and held unanswered, and nothing is lost or closed.
Healing the link lets the held bytes through in order, as TCP's retransmissions would; by then
the endpoints may have given up on the connection (a timeout, an expired ZooKeeper session),
and closing their side ends it in the proxy too. A delayed link holds every chunk for the delay
before passing it on, in both directions, without holding back the chunks behind it.

The nodes of the network are broker ids and the two names :data:`ZOOKEEPER` and
:data:`CLIENTS`; links are unordered pairs of them. Proxies run threads (an acceptor, and two
per direction of a connection) and need no privileges; the ``/proc`` lookup is Linux's.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

logger = logging.getLogger(__name__)

ZOOKEEPER = "zookeeper"
CLIENTS = "clients"
BROKERS = "brokers"  # in isolate(): every other broker

Node = int | str
Link = frozenset[Node]

_CHUNK = 1 << 16
_HELD_CHUNKS = 64  # per direction: then the reader stops and the sender's buffers fill


class Network:
    """Which links are cut and which brokers are delayed; the proxies ask it before passing
    anything on."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._cut: set[Link] = set()
        self._delay_s: dict[Node, float] = {}

    def cut(self, a: Node, b: Node) -> None:
        with self._changed:
            self._cut.add(frozenset((a, b)))
            self._changed.notify_all()

    def heal(self) -> None:
        """Every link whole again, and no delay."""
        with self._changed:
            self._cut.clear()
            self._delay_s.clear()
            self._changed.notify_all()

    def delay(self, node: Node, ms: float) -> None:
        with self._changed:
            if ms > 0:
                self._delay_s[node] = ms / 1000
            else:
                self._delay_s.pop(node, None)
            self._changed.notify_all()

    def is_cut(self, a: Node, b: Node) -> bool:
        with self._changed:
            return frozenset((a, b)) in self._cut

    def cut_links(self) -> set[Link]:
        with self._changed:
            return set(self._cut)

    def delay_s(self, a: Node, b: Node) -> float:
        with self._changed:
            return self._delay_s.get(a, 0.0) + self._delay_s.get(b, 0.0)

    def wait_whole(self, a: Node, b: Node, stopped: threading.Event) -> bool:
        """Block while the link is cut; False if ``stopped`` was set meanwhile."""
        link = frozenset((a, b))
        with self._changed:
            while link in self._cut and not stopped.is_set():
                self._changed.wait(0.5)
            return not stopped.is_set()


class FaultProxy:
    """Accepts on a loopback port and relays each connection to ``target``, as long as the
    link between the connecting node (``source_of`` the peer address) and ``node`` is whole
    (see the module docstring)."""

    def __init__(self, network: Network, node: Node, target: tuple[str, int],
                 source_of: Callable[[tuple[str, int], int], Node], name: str):
        self.network = network
        self.node = node
        self.target = target
        self.source_of = source_of
        self.name = name
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> FaultProxy:
        threading.Thread(target=self._accept, daemon=True, name=f"proxy-{self.name}").start()
        return self

    def stop(self) -> None:
        """Stop accepting and close every connection."""
        self._stopped.set()
        self._listener.close()
        with self._lock:
            sockets, self._sockets = list(self._sockets), set()
        for sock in sockets:
            _close(sock)

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                downstream, peer = self._listener.accept()
            except OSError:
                return  # closed
            self._track(downstream)
            threading.Thread(target=self._connect, args=(downstream, peer), daemon=True,
                             name=f"proxy-{self.name}-connect").start()

    def _connect(self, downstream: socket.socket, peer: tuple[str, int]) -> None:
        source = self.source_of(peer, self.port)
        # a new connection across a cut link is held unanswered until the link heals
        if not self.network.wait_whole(source, self.node, self._stopped):
            return
        try:
            upstream = socket.create_connection(self.target, timeout=10)
            upstream.settimeout(None)
        except OSError:
            _close(downstream)  # nothing listens there (the broker is down): refused
            return
        self._track(upstream)
        for reader, writer in ((downstream, upstream), (upstream, downstream)):
            _Direction(self, source, reader, writer).start()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            if self._stopped.is_set():
                _close(sock)
            else:
                self._sockets.add(sock)

    def _forget(self, *socks: socket.socket) -> None:
        with self._lock:
            for sock in socks:
                self._sockets.discard(sock)


class _Direction:
    """One direction of one proxied connection: a reader queueing chunks with the time they
    are due, and a writer passing them on once due and while the link is whole."""

    def __init__(self, proxy: FaultProxy, source: Node, reader: socket.socket,
                 writer: socket.socket):
        self.proxy, self.source, self.reader, self.writer = proxy, source, reader, writer
        self.chunks: queue.Queue[tuple[float, bytes] | None] = queue.Queue(_HELD_CHUNKS)

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True, name=f"proxy-{self.proxy.name}-read"
                         ).start()
        threading.Thread(target=self._write, daemon=True,
                         name=f"proxy-{self.proxy.name}-write").start()

    def _read(self) -> None:
        network, node = self.proxy.network, self.proxy.node
        try:
            while data := self.reader.recv(_CHUNK):
                self.chunks.put((time.monotonic() + network.delay_s(self.source, node), data))
        except OSError:
            pass
        self.chunks.put(None)

    def _write(self) -> None:
        network, node, stopped = self.proxy.network, self.proxy.node, self.proxy._stopped
        try:
            while (item := self.chunks.get()) is not None:
                due, data = item
                if not network.wait_whole(self.source, node, stopped):
                    break
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                self.writer.sendall(data)
        except OSError:
            pass
        # one side closed (or the proxy stopped): the other sees it closed
        for sock in (self.reader, self.writer):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.proxy._forget(self.reader, self.writer)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


# -- who is at the other end of an inter-broker connection ---------------------------------------


def socket_owner(peer: tuple[str, int], local_port: int, pids: dict[int, int]) -> int | None:
    """The broker (of ``pids``: broker id -> process id) whose process holds the socket
    connected from ``peer`` to this machine's ``local_port`` on IPv4 loopback; None when none
    does (the connection is gone, or another process made it)."""
    inode = _socket_inode(peer[1], local_port)
    if inode is None:
        return None
    wanted = f"socket:[{inode}]"
    for broker_id, pid in pids.items():
        fds = Path(f"/proc/{pid}/fd")
        try:
            for fd in fds.iterdir():
                try:
                    if fd.readlink().as_posix() == wanted:
                        return broker_id
                except OSError:
                    continue  # closed meanwhile
        except OSError:
            continue  # the process is gone
    return None


def _socket_inode(peer_port: int, local_port: int) -> int | None:
    """The inode of the socket whose local end is 127.0.0.1:``peer_port`` and remote end
    127.0.0.1:``local_port``, from ``/proc/net/tcp`` (addresses in hexadecimal, the IPv4
    address in host byte order: 127.0.0.1 is ``0100007F``)."""
    local = f"0100007F:{peer_port:04X}"
    remote = f"0100007F:{local_port:04X}"
    try:
        with open("/proc/net/tcp") as table:
            next(table)  # the header
            for line in table:
                fields = line.split()
                if fields[1] == local and fields[2] == remote:
                    return int(fields[9])
    except OSError:
        return None
    return None


def nodes(side: Node | Iterable[Node]) -> set[Node]:
    """One node, or several, as a set."""
    if isinstance(side, int | str):
        return {side}
    return set(side)
