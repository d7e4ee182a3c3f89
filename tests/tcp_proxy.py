"""A TCP proxy on a loopback port in front of a broker, for tests that need to see or break the
connections between a client and the broker: each connection accepted is relayed to the target
on a connection of its own, one thread per direction, and :meth:`TcpProxy.relay` says what goes
through (by default, everything). The broker advertises the proxy's port
(``advertised.listeners``), so clients reach it only through the proxy."""

import socket
import threading


class TcpProxy:
    """Accepts on ``port`` (chosen by the system) once :meth:`start` gives the target's port;
    ``accepted`` counts the connections; :meth:`close` ends them all."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self._sockets: list[socket.socket] = []

    def start(self, target_port: int):
        threading.Thread(target=self._accept, args=(target_port,), daemon=True).start()
        return self

    def _accept(self, target_port: int) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return  # closed
            self.accepted += 1
            upstream = socket.create_connection(("127.0.0.1", target_port))
            self._sockets += [downstream, upstream]
            self.relay(downstream, upstream)

    def relay(self, client: socket.socket, broker: socket.socket) -> None:
        """Start the two directions of one connection; here, every byte goes through."""
        for source, sink in ((client, broker), (broker, client)):
            threading.Thread(target=pump, args=(source, sink), daemon=True).start()

    def close(self) -> None:
        self.listener.close()
        for sock in self._sockets:
            sock.close()


def pump(source: socket.socket, sink: socket.socket) -> None:
    """Forward everything from ``source`` to ``sink`` until either side closes, then shut
    both."""
    try:
        while data := source.recv(1 << 20):
            sink.sendall(data)
    except OSError:
        pass
    shut(source, sink)


def shut(*socks: socket.socket) -> None:
    """End both directions of each connection (the other side sees it closed at once)."""
    for sock in socks:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
