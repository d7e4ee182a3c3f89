"""How a connection's bytes travel (Kafka's TransportLayer): plaintext, or TLS.

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
``pending_write``, ``flush()``           bytes the transport holds that the socket did not take
                                         yet; ``flush()`` sends them, True once none are left
``buffered_read``                        bytes received and held, that no readiness event will
                                         announce (the processor reads them without waiting)
``close()``                              release the socket
``handler_io``                           whether a request handler holding the connection may
                                         read and write it itself (see :mod:`.processor`)
=======================================  ==========================================================

:class:`PlaintextTransport` maps them onto the socket: ``recv_into``, ``sendmsg`` and
``os.sendfile``, so Fetch data goes from the page cache to the socket without passing through
Python. It holds nothing, so a request handler may use it too (``handler_io``).

:class:`TlsTransport` (``SSL`` and ``SASL_SSL`` listeners, Kafka's SslTransportLayer) runs an
``ssl.SSLObject`` between two ``ssl.MemoryBIO``: what arrives on the socket is written to the
incoming BIO and decrypted from it, what is encrypted is read from the outgoing BIO and sent.
Its handshake, one step per readiness event::

    HANDSHAKE --do_handshake() wants to read--> flush the outgoing BIO, read the socket
        |                                       (nothing there: wait for the socket)
        +----handshake done-----------------> READY (the client certificate, if any, known)
        +----alert, EOF, not TLS at all-----> SSLError: the connection is closed

A plaintext client on a TLS port, or random bytes, fail the handshake and close only that
connection; a client that never finishes it is closed once ``connections.max.idle.ms`` has
passed since it connected (see :mod:`.processor`). Once ready, ``read_into`` decrypts and
``send_buffers`` encrypts (at most :data:`TLS_WRITE_CHUNK` bytes at a time, and only once what
was encrypted before is on the socket). ``sendfile`` would bypass the encryption, so
``send_region`` reads the region with ``os.pread`` and encrypts it, as Kafka's
``SslTransportLayer.transferFrom`` does. Bytes encrypted but not yet sent count as
``pending_write``: the processor keeps asking to write until they are out. Decrypted bytes, or
whole records not yet decrypted, count as ``buffered_read``.
"""

import os
import socket
import ssl
from typing import cast

TLS_READ_BYTES = 256 * 1024  # socket bytes read at once into the incoming BIO
TLS_WRITE_CHUNK = 256 * 1024  # plaintext bytes encrypted at once


class PlaintextTransport:
    """A plaintext socket (``PLAINTEXT`` and ``SASL_PLAINTEXT`` listeners): ready at once."""

    __slots__ = ("sock", "read_into", "send_buffers", "_fd")

    ready = True
    pending_write = False
    buffered_read = False
    peer_certificate = None
    handler_io = True

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._fd = sock.fileno()
        self.read_into = sock.recv_into
        self.send_buffers = sock.sendmsg

    def handshake(self) -> None:
        """Nothing to negotiate."""

    def send_region(self, region, position: int, count: int) -> int:
        return os.sendfile(self._fd, region.fd, position, count)

    def flush(self) -> bool:
        return True

    def close(self) -> None:
        self.sock.close()


class TlsTransport:
    """A TLS server connection over a non-blocking socket (see the module docstring)."""

    __slots__ = ("sock", "ready", "_tls", "_incoming", "_outgoing", "_unsent", "_starved")

    handler_io = False  # the TLS state is its processor's alone

    def __init__(self, sock: socket.socket, context: ssl.SSLContext):
        self.sock = sock
        self.ready = False
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._unsent = memoryview(b"")  # ciphertext taken from the outgoing BIO, not sent yet
        self._starved = False  # the incoming BIO holds no whole record; wait for the socket

    # -- handshake ----------------------------------------------------------------------------

    def handshake(self) -> None:
        """Take the handshake as far as the socket allows; raises ``ssl.SSLError`` (an
        ``OSError``) when it fails."""
        while not self.ready:
            try:
                self._tls.do_handshake()
                self.ready = True
            except ssl.SSLWantReadError:
                self.flush()
                if not self._receive():
                    return
            except ssl.SSLError:
                self._send_alert()
                raise
        self.flush()

    def _send_alert(self) -> None:
        """Send the alert OpenSSL wrote for a failed handshake (the client learns why, e.g.
        its certificate was refused), as Kafka's SslTransportLayer flushes it before closing."""
        try:
            self.flush()
        except OSError:  # the client is gone: nothing to tell it
            pass

    @property
    def peer_certificate(self):
        """The client's certificate (:class:`cryptography.x509.Certificate`), None without."""
        der = self._tls.getpeercert(binary_form=True) if self.ready else None
        if der is None:
            return None
        from cryptography import x509

        return x509.load_der_x509_certificate(der)

    # -- reading ------------------------------------------------------------------------------

    def _receive(self) -> bool:
        """Move what the socket holds into the incoming BIO; False when it holds nothing."""
        try:
            data = self.sock.recv(TLS_READ_BYTES)
        except BlockingIOError:
            return False
        if data:
            self._incoming.write(data)
        else:
            self._incoming.write_eof()
        self._starved = False
        return True

    def read_into(self, view) -> int:
        """Decrypt into ``view`` as much as has arrived (a record gives 16 KiB at most, so
        several are read while there is room)."""
        view = memoryview(view)
        filled, size = 0, len(view)
        while filled < size:
            try:
                # with a buffer, read() gives the count of bytes read into it (the stubs: bytes)
                count = cast(int, self._tls.read(size - filled, view[filled:]))
            except ssl.SSLWantReadError:
                if self._receive():
                    continue
                if filled:
                    break
                self._starved = True
                raise BlockingIOError from None
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                if filled:
                    break
                return 0  # close_notify, or the TCP connection closed
            if count == 0:
                break
            filled += count
        if self._outgoing.pending:
            self.flush()  # a post-handshake message (a key update, a session ticket)
        return filled

    @property
    def buffered_read(self) -> bool:
        return self._tls.pending() > 0 or (self._incoming.pending > 0 and not self._starved)

    # -- writing ------------------------------------------------------------------------------

    @property
    def pending_write(self) -> bool:
        return bool(self._unsent) or self._outgoing.pending > 0

    def flush(self) -> bool:
        """Send the ciphertext held; whether none is left."""
        while True:
            if not self._unsent:
                if not self._outgoing.pending:
                    return True
                self._unsent = memoryview(self._outgoing.read())
            try:
                sent = self.sock.send(self._unsent)
            except BlockingIOError:
                return False
            self._unsent = self._unsent[sent:]

    def _encrypt(self, data) -> int:
        self._tls.write(data)
        self.flush()
        return len(data)

    def send_buffers(self, buffers) -> int:
        if not self.flush():
            raise BlockingIOError
        taken, size = [], 0
        for buffer in buffers:
            room = TLS_WRITE_CHUNK - size
            if len(buffer) > room:
                taken.append(memoryview(buffer)[:room])
                size += room
                break
            taken.append(buffer)
            size += len(buffer)
        return self._encrypt(taken[0] if len(taken) == 1 else b"".join(taken))

    def send_region(self, region, position: int, count: int) -> int:
        if not self.flush():
            raise BlockingIOError
        data = os.pread(region.fd, min(count, TLS_WRITE_CHUNK), position)
        return self._encrypt(data) if data else 0

    def close(self) -> None:
        self.sock.close()
