"""The network layer (seeds 5.1): a listening socket, and a thread per connection.

Kafka frames every request and response with a 4-byte big-endian size::

    size     int32   bytes that follow
    payload          request (header + body) or response (header + body)

A connection's thread reads one request, has it handled, writes the response, and only then
reads the next, so responses go back in request order; connections are served concurrently. The
size is checked against ``socket.request.max.bytes`` before any of the body is read, and a
connection silent for ``connections.max.idle.ms`` is closed. Responses are sent as chunks: bytes
with ``sendall``, file regions (record data straight from segment files) with ``os.sendfile``,
so Fetch data is never copied through Python.

Binding and serving are two steps, as in Kafka's ``SocketServer`` (its constructor binds,
``enableRequestProcessing`` starts the acceptors last): :meth:`SocketServer.start` binds and
listens, so the port is known (the broker registers it in ZooKeeper); only
:meth:`SocketServer.enable_request_processing` accepts connections and serves them. Clients
that connect in between wait in the listen backlog, their requests unanswered, until the broker
is ready.
"""

import logging
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable

logger = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
STOP_TIMEOUT_S = 10  # longest stop() waits for requests being handled

# A handler takes a request payload and returns the response chunks, or None when the request
# expects no response (Produce with acks=0). Raising CloseConnection drops the connection.
Handler = Callable[[memoryview, "Connection"], Iterable | None]


class CloseConnection(Exception):
    """Raised by a handler to drop the connection (a malformed request, an unknown API)."""


class Connection:
    """One client connection; handlers see it for the peer address and connection-scoped state."""

    def __init__(self, sock: socket.socket, peer: tuple, server: "SocketServer"):
        self.sock = sock
        self.peer = peer
        self.server = server
        self.closed = False
        self.thread: threading.Thread | None = None  # the thread serving it

    def _recv_exactly(self, n: int) -> bytearray | None:
        buffer = bytearray(n)
        view = memoryview(buffer)
        got = 0
        while got < n:
            count = self.sock.recv_into(view[got:], n - got)
            if count == 0:
                return None  # the peer closed
            got += count
        return buffer

    def serve(self) -> None:
        try:
            self.sock.settimeout(self.server.idle_timeout_s)
            while not self.server.stopping:
                head = self._recv_exactly(_SIZE.size)
                if head is None:
                    return
                (size,) = _SIZE.unpack(head)
                if size < 0 or size > self.server.max_request_bytes:
                    logger.warning("closing %s: request of %d bytes exceeds "
                                   "socket.request.max.bytes %d", self.peer, size,
                                   self.server.max_request_bytes)
                    return
                payload = self._recv_exactly(size)
                if payload is None:
                    return
                response = self.server.handler(memoryview(payload), self)
                if response is not None:
                    self.send(response)
        except TimeoutError:
            logger.debug("closing idle connection %s", self.peer)
        except CloseConnection as exc:
            logger.info("closing %s: %s", self.peer, exc)
        except OSError as exc:
            logger.debug("connection %s failed: %s", self.peer, exc)
        except Exception:
            logger.exception("closing %s after an unexpected error", self.peer)
        finally:
            self.close()

    def send(self, chunks: Iterable) -> None:
        """Write response chunks in order: bytes-like with sendall, regions with sendfile."""
        for chunk in chunks:
            if isinstance(chunk, (bytes, bytearray, memoryview)):
                self.sock.sendall(chunk)
            else:
                self._send_region(chunk)

    def _send_region(self, region) -> None:
        # socket.sendfile uses sendfile(2) and, unlike a bare os.sendfile, waits for the socket
        # to drain when the send buffer is full (a socket with a timeout is non-blocking).
        try:
            with open(region.fd, "rb", buffering=0, closefd=False) as file:
                sent = self.sock.sendfile(file, region.position, region.size)
            if sent < region.size:  # the file is shorter than promised (truncated meanwhile)
                self.sock.sendall(bytes(region.size - sent))
        finally:
            region.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass
            self.server._forget(self)


class SocketServer:
    """Serves Kafka-framed requests on ``host:port`` (port 0 picks a free one)."""

    def __init__(self, host: str, port: int, handler: Handler, *, max_request_bytes: int,
                 idle_timeout_ms: int, name: str = "broker"):
        self.host, self.requested_port = host, port
        self.handler = handler
        self.max_request_bytes = max_request_bytes
        self.idle_timeout_s = None if idle_timeout_ms < 0 else idle_timeout_ms / 1000
        self.name = name
        self.stopping = False
        self._listener: socket.socket | None = None
        self._connections: set[Connection] = set()
        self._lock = threading.Lock()
        self._accept_thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._listener is not None, "not started"
        return self._listener.getsockname()[1]

    def start(self) -> "SocketServer":
        """Bind and listen; nothing is accepted until :meth:`enable_request_processing`."""
        self._listener = socket.create_server((self.host, self.requested_port), backlog=128,
                                              reuse_port=False)
        return self

    def enable_request_processing(self) -> "SocketServer":
        """Accept connections and serve their requests (Kafka's ``enableRequestProcessing``)."""
        assert self._listener is not None, "not started"
        self._accept_thread = threading.Thread(target=self._accept_loop, daemon=True,
                                               name=f"{self.name}-acceptor")
        self._accept_thread.start()
        return self

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self.stopping:
            try:
                sock, peer = self._listener.accept()
            except OSError:
                return  # the listener was closed
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = Connection(sock, peer, self)
            with self._lock:
                if self.stopping:
                    sock.close()
                    return
                self._connections.add(connection)
            connection.thread = threading.Thread(target=connection.serve, daemon=True,
                                                 name=f"{self.name}-connection-{peer[1]}")
            connection.thread.start()

    def _forget(self, connection: Connection) -> None:
        with self._lock:
            self._connections.discard(connection)

    @property
    def connection_count(self) -> int:
        with self._lock:
            return len(self._connections)

    def drop_connections(self) -> int:
        """Cut every current connection (the listener keeps accepting), as a network failure
        would; return how many were cut."""
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return len(connections)

    def stop(self) -> None:
        self.stopping = True
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
        # Handlers still running (a long-polling fetch, say) finish before the broker closes what
        # they use (the logs, ZooKeeper); their responses go nowhere.
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for connection in connections:
            if connection.thread is not None \
                    and connection.thread is not threading.current_thread():
                connection.thread.join(timeout=max(deadline - time.monotonic(), 0))
