"""How a connection's bytes travel (Kafka's TransportLayer): plaintext today, TLS to come here.

A processor drives a transport through these calls, all non-blocking (a call that cannot
proceed raises ``BlockingIOError``, and the processor waits for the socket to be ready):

=======================================  ==========================================================
call                                     does
=======================================  ==========================================================
``ready``, ``handshake()``               the transport's own handshake before any request; the
                                         processor calls ``handshake()`` on every readiness event
                                         until ``ready``
``read_into(view) -> int``               bytes received into ``view``; 0 when the peer closed
``send_buffers(buffers) -> int``         bytes sent of ``buffers``, in order (one gathering write)
``send_region(region, position, count)`` bytes sent of a segment file region (record data)
``close()``                              release the socket
=======================================  ==========================================================

:class:`PlaintextTransport` maps them onto the socket: ``recv_into``, ``sendmsg`` and
``os.sendfile``, so Fetch data goes from the page cache to the socket without passing through
Python.

A TLS transport (``SSL`` and ``SASL_SSL`` listeners) implements the same calls around an
``ssl.SSLObject`` with two ``ssl.MemoryBIO`` (or a non-blocking ``ssl.SSLSocket``):
``handshake()`` steps ``do_handshake()``, turning ``SSLWantReadError`` / ``SSLWantWriteError``
into waiting for the socket; ``read_into`` decrypts, ``send_buffers`` encrypts. It cannot use
``sendfile``, which would bypass the encryption: its ``send_region`` reads the region
(``os.pread``) and encrypts it, as Kafka's SslTransportLayer.transferFrom does. Bytes the TLS
layer still holds count as unsent, so the processor keeps asking to write until they are out.
"""

import os
import socket


class PlaintextTransport:
    """A plaintext socket (``PLAINTEXT`` and ``SASL_PLAINTEXT`` listeners): ready at once."""

    __slots__ = ("sock", "read_into", "send_buffers", "_fd")

    ready = True

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._fd = sock.fileno()
        self.read_into = sock.recv_into
        self.send_buffers = sock.sendmsg

    def handshake(self) -> None:
        """Nothing to negotiate."""

    def send_region(self, region, position: int, count: int) -> int:
        return os.sendfile(self._fd, region.fd, position, count)

    def close(self) -> None:
        self.sock.close()
