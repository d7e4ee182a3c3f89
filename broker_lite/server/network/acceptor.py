"""The thread that accepts a listener's connections (Kafka's Acceptor) and hands each to a
processor, in turn.

Before accepting it waits for a slot under ``max.connections``; a connection from an address at
its ``max.connections.per.ip`` limit is closed as soon as it is accepted (see :mod:`.quotas`).
Accepted sockets are made non-blocking, with ``TCP_NODELAY``, keep-alive and the buffer sizes
of ``socket.send.buffer.bytes`` / ``socket.receive.buffer.bytes`` (-1 leaves the OS's).
"""

import logging
import selectors
import socket
import threading

from .config import NetworkConfig
from .quotas import ConnectionQuotas, TooManyConnections

logger = logging.getLogger(__name__)

SLOT_WAIT_S = 0.5  # how often a waiting acceptor checks whether it is stopping
ACCEPTS_PER_TURN = 64


class Acceptor:
    """Accepts connections on ``listen_socket`` (bound and listening) for ``processors``."""

    def __init__(self, listener, listen_socket: socket.socket, processors: list,
                 quotas: ConnectionQuotas, config: NetworkConfig, name: str = "broker"):
        self.listener = listener  # a socket_server.Listener
        self._socket = listen_socket
        self._processors = processors
        self._quotas = quotas
        self._config = config
        self._next = 0
        self._stopping = False
        self._selector = selectors.DefaultSelector()
        self._wake_in, self._wake_out = socket.socketpair()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"{name}-acceptor-{listener.name}")

    def start(self) -> None:
        self._socket.setblocking(False)
        self._selector.register(self._socket, selectors.EVENT_READ)
        self._selector.register(self._wake_in, selectors.EVENT_READ)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stopping:
                if not self._quotas.wait_for_slot(SLOT_WAIT_S):
                    continue  # at max.connections: newcomers wait in the backlog
                for key, _ in self._selector.select(SLOT_WAIT_S):
                    if key.fileobj is self._socket:
                        self._accept_waiting()
                    else:
                        self._wake_in.recv(64)
        except Exception:
            logger.exception("the acceptor of %s failed", self.listener.name)

    def _accept_waiting(self) -> None:
        """Accept the connections waiting, as long as there are slots for them."""
        for _ in range(ACCEPTS_PER_TURN):
            if self._stopping or self._quotas.total >= self._quotas.max_connections:
                return
            if not self._accept():
                return

    def _accept(self) -> bool:
        """Accept one connection; False when none was waiting."""
        try:
            sock, peer = self._socket.accept()
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as exc:
            if not self._stopping:
                logger.warning("accepting a connection on %s failed: %s", self.listener.name, exc)
            return False
        address = peer[0]
        try:
            self._quotas.inc(address)
        except TooManyConnections as exc:
            logger.info("rejected connection from %s: %s", address, exc)
            _close(sock)
            return True
        try:
            self._configure(sock)
        except OSError as exc:
            logger.debug("configuring the connection from %s failed: %s", address, exc)
            self._quotas.dec(address)
            _close(sock)
            return True
        processor = self._processors[self._next % len(self._processors)]
        self._next += 1
        processor.accept(sock, peer, self.listener)
        return True

    def _configure(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if self._config.socket_send_buffer_bytes != -1:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF,
                            self._config.socket_send_buffer_bytes)
        if self._config.socket_receive_buffer_bytes != -1:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                            self._config.socket_receive_buffer_bytes)

    def stop(self) -> None:
        """Stop accepting and close the listening socket."""
        self._stopping = True
        try:
            self._wake_out.send(b"\0")
        except OSError:
            pass
        if self._thread.ident is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        self._selector.close()
        self._wake_in.close()
        self._wake_out.close()
        _close(self._socket)


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass
