"""The TLS transport over a real socket pair, a blocking ssl client on the other end: the
handshake in non-blocking steps, the client certificate, bytes both ways (gathered buffers and
file regions read with os.pread), what it holds (pending writes, buffered reads), and handshakes
that fail (random bytes, plaintext Kafka requests, an untrusted client certificate, a missing
one: the client gets the alert)."""

import os
import socket
import ssl
import threading
import time

import pytest

from broker_lite.protocol import ApiKey, encode_request
from broker_lite.security.testing import TestCertificateAuthority
from broker_lite.security.tls import client_context, server_context
from broker_lite.server.network.transport import TLS_WRITE_CHUNK, TlsTransport


@pytest.fixture(scope="module")
def pki():
    ca = TestCertificateAuthority()
    return ca, ca.issue("broker", hosts=["127.0.0.1"]), ca.issue("alice", client=True)


def server_settings(pki, client_auth="none"):
    ca, broker, _ = pki
    return {"ssl.keystore.certificate.chain": broker.certificate_pem,
            "ssl.keystore.key": broker.key_pem, "ssl.client.auth": client_auth,
            "ssl.truststore.certificates": ca.certificate_pem}


def client_settings(pki, with_certificate=False):
    ca, _, alice = pki
    settings = {"ssl.truststore.certificates": ca.certificate_pem}
    if with_certificate:
        settings.update({"ssl.keystore.certificate.chain": alice.certificate_pem,
                         "ssl.keystore.key": alice.key_pem})
    return settings


class Pair:
    """A TLS transport on one end of a socket pair, an ssl client on the other."""

    def __init__(self, server: ssl.SSLContext, client: ssl.SSLContext | None):
        self.server_sock, self.client_sock = socket.socketpair()
        self.server_sock.setblocking(False)
        self.client_sock.settimeout(10)
        self.transport = TlsTransport(self.server_sock, server)
        self.client = None
        self.client_error = None
        if client is not None:
            self._thread = threading.Thread(target=self._connect, args=(client,), daemon=True)
            self._thread.start()

    def _connect(self, context):
        try:
            self.client = context.wrap_socket(self.client_sock, server_hostname="127.0.0.1")
        except (OSError, ssl.SSLError) as exc:
            self.client_error = exc

    def handshake(self, steps=10_000):
        """Step the transport until ready, as a processor does on readiness events."""
        for _ in range(steps):
            self.transport.handshake()
            if self.transport.ready:
                self._thread.join(10)
                assert not self._thread.is_alive(), "the client's handshake still on after 10 s"
                return
            self._wait_readable()
        raise AssertionError("the handshake did not finish")

    def _wait_readable(self):
        import select
        select.select([self.server_sock], [], [], 0.05)

    def read(self, size: int, timeout_s: float = 30) -> bytes:
        out = bytearray()
        deadline = time.monotonic() + timeout_s
        while len(out) < size:
            buffer = bytearray(size - len(out))
            try:
                count = self.transport.read_into(memoryview(buffer))
            except BlockingIOError:
                assert time.monotonic() < deadline, \
                    f"{len(out)} of {size} bytes read in {timeout_s} s"
                self._wait_readable()
                continue
            assert count, "closed"
            out += buffer[:count]
        return bytes(out)

    def flush(self, timeout_s: float = 30) -> None:
        """Flush the transport until it holds nothing more to write."""
        deadline = time.monotonic() + timeout_s
        while not self.transport.flush():
            assert time.monotonic() < deadline, f"data still held after {timeout_s} s"

    def close(self):
        self.transport.close()
        self.client_sock.close()


def test_handshake_then_bytes_both_ways(pki):
    pair = Pair(server_context(server_settings(pki)), client_context(client_settings(pki)))
    try:
        pair.handshake()
        assert pair.transport.peer_certificate is None  # ssl.client.auth none
        pair.client.sendall(b"hello from the client")
        assert pair.read(21) == b"hello from the client"
        chunks = [b"a" * 10, memoryview(b"b" * 20), bytearray(b"c" * 30)]
        assert pair.transport.send_buffers(chunks) == 60
        pair.flush()
        got = b""
        while len(got) < 60:
            chunk = pair.client.recv(100)
            assert chunk, f"closed after {len(got)} of 60 bytes"
            got += chunk
        assert got == b"a" * 10 + b"b" * 20 + b"c" * 30
    finally:
        pair.close()


def test_large_writes_are_taken_a_chunk_at_a_time_and_held_until_sent(pki, tmp_path):
    pair = Pair(server_context(server_settings(pki)), client_context(client_settings(pki)))
    data = os.urandom(3 * TLS_WRITE_CHUNK + 1234)
    path = tmp_path / "segment.log"
    path.write_bytes(data)
    received = bytearray()
    held = []

    def drain():
        while len(received) < 2 * len(data) and (chunk := pair.client.recv(1 << 20)):
            received.extend(chunk)

    def send_all(send) -> None:
        sent, deadline = 0, time.monotonic() + 30
        while sent < len(data):
            try:
                count = send(sent)
            except BlockingIOError:  # the socket is full: what was encrypted is held
                held.append(pair.transport.pending_write)
                assert time.monotonic() < deadline, f"{sent} of {len(data)} bytes sent in 30 s"
                continue
            assert 0 < count <= TLS_WRITE_CHUNK
            sent += count

    try:
        pair.handshake()
        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        with open(path, "rb") as file:

            class Region:
                fd = file.fileno()

            send_all(lambda sent: pair.transport.send_region(Region, sent, len(data) - sent))
        send_all(lambda sent: pair.transport.send_buffers([memoryview(data)[sent:]]))
        pair.flush()
        reader.join(30)
        assert not reader.is_alive(), f"the client still reading after 30 s ({len(received)} B)"
        assert bytes(received) == data + data
        assert not pair.transport.pending_write
        assert all(held)
    finally:
        pair.close()


def test_records_decrypted_and_held_are_buffered_reads(pki):
    pair = Pair(server_context(server_settings(pki)), client_context(client_settings(pki)))
    try:
        pair.handshake()
        pair.client.sendall(b"x" * 50_000)  # several TLS records
        first = pair.read(10)
        assert first == b"x" * 10
        assert pair.transport.buffered_read  # the rest arrived; no socket event will say so
        assert pair.read(49_990) == b"x" * 49_990
    finally:
        pair.close()


def test_the_client_certificate_is_known_after_the_handshake(pki):
    pair = Pair(server_context(server_settings(pki, "required")),
                client_context(client_settings(pki, with_certificate=True)))
    try:
        pair.handshake()
        certificate = pair.transport.peer_certificate
        assert certificate.subject.rfc4514_string() == "CN=alice"
    finally:
        pair.close()


def fail_handshake(transport, sock, payload: bytes) -> ssl.SSLError:
    sock.sendall(payload)
    sock.shutdown(socket.SHUT_WR)
    for _ in range(1000):
        try:
            transport.handshake()
        except ssl.SSLError as exc:
            return exc
        import select
        select.select([transport.sock], [], [], 0.05)
    raise AssertionError("the handshake did not fail")


@pytest.mark.parametrize("payload", [
    os.urandom(517),
    b"\x16\x03\x01" + os.urandom(509),  # a TLS record header, then noise
    encode_request(ApiKey.API_VERSIONS, 3, 1, "plaintext", {
        "client_software_name": "x", "client_software_version": "1"}),
], ids=["random bytes", "noise in a TLS record", "a plaintext Kafka request"])
def test_a_handshake_that_is_not_tls_fails(pki, payload):
    pair = Pair(server_context(server_settings(pki)), None)
    try:
        assert fail_handshake(pair.transport, pair.client_sock, payload)
        assert not pair.transport.ready
    finally:
        pair.close()


def test_a_client_certificate_from_another_authority_fails_the_handshake(pki):
    stranger = TestCertificateAuthority("another CA").issue("mallory", client=True)
    ca = pki[0]
    pair = Pair(server_context(server_settings(pki, "required")), client_context({
        "ssl.truststore.certificates": ca.certificate_pem,
        "ssl.keystore.certificate.chain": stranger.certificate_pem,
        "ssl.keystore.key": stranger.key_pem}))
    try:
        with pytest.raises(ssl.SSLError, match="certificate"):
            for _ in range(1000):
                pair.transport.handshake()
                pair._wait_readable()
    finally:
        pair.close()


def test_a_refused_client_is_told_why_with_an_alert(pki):
    """The alert OpenSSL writes for a failed handshake goes out before the connection closes,
    as Kafka's SslTransportLayer flushes it: a client without the required certificate reads
    handshake_failure (TLS 1.2), not an unexpected end of the stream."""
    ca = pki[0]
    pair = Pair(server_context(server_settings(pki, "required")), client_context({
        "ssl.truststore.certificates": ca.certificate_pem, "ssl.enabled.protocols": "TLSv1.2"}))
    try:
        with pytest.raises(ssl.SSLError, match="PEER_DID_NOT_RETURN_A_CERTIFICATE"):
            for _ in range(1000):
                pair.transport.handshake()
                pair._wait_readable()
        pair._thread.join(10)
        assert not pair._thread.is_alive(), "the client's handshake still running after 10 s"
        assert "alert handshake failure" in str(pair.client_error)
    finally:
        pair.close()


def test_ssl_enabled_protocols_refuse_other_versions(pki):
    ca = pki[0]
    server = server_context({**server_settings(pki), "ssl.enabled.protocols": "TLSv1.3"})
    client = client_context({"ssl.truststore.certificates": ca.certificate_pem,
                             "ssl.enabled.protocols": "TLSv1.2"})
    pair = Pair(server, client)
    try:
        with pytest.raises(ssl.SSLError, match=r"(?i)version|protocol"):
            for _ in range(1000):
                pair.transport.handshake()
                pair._wait_readable()
    finally:
        pair.close()
    pair = Pair(server, client_context({"ssl.truststore.certificates": ca.certificate_pem}))
    try:
        pair.handshake()
        assert pair.client.version() == "TLSv1.3"
    finally:
        pair.close()
