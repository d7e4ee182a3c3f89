"""The network layer's TLS and SASL over real sockets, a handler that answers each request with
the listener and principal it came with: principals from client certificates and SASL logins,
TLS reads and writes (file regions read with os.pread), a handshake or an authentication that
never finishes closed after connections.max.idle.ms, failed handshakes closing only their own
connection, expired sessions closed at their next request, and re-authentication on the same
connection; a refused login answered after connection.failed.authentication.delay.ms, then
closed."""

import socket
import ssl
import struct
import time
import types

import pytest

from broker_lite.log.segment import FileRegion
from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_response
from broker_lite.security.plain import plain_client_message
from broker_lite.security.principal import PrincipalMapper
from broker_lite.security.sasl_server import ServerAuthenticator
from broker_lite.security.testing import TestCertificateAuthority
from broker_lite.security.tls import client_context, server_context
from broker_lite.server.apis import handlers
from broker_lite.server.dispatcher import Dispatcher, supported_versions
from broker_lite.server.network import Listener, NetworkConfig, RequestHandlerPool, SocketServer
from broker_lite.server.network.channel_builders import SaslChannelBuilder, SslChannelBuilder
from broker_lite.server.testing import recv_exactly

FILE_SIZE = 3 << 20  # several TLS write chunks


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock) -> bytes:
    return recv_exactly(sock, struct.unpack(">i", recv_exactly(sock, 4))[0])


class SecuredServer:
    """Listeners SSL (client certificates requested), SASL_SSL (PLAIN, a session lifetime on
    REAUTH) and SASL_PLAINTEXT; ``file`` answers a file region, anything else
    ``<listener> <principal> <payload>``."""

    def __init__(self, tmp_path, pki, **settings):
        ca, broker = pki[0], pki[1]
        tls = server_context({"ssl.keystore.certificate.chain": broker.certificate_pem,
                              "ssl.keystore.key": broker.key_pem, "ssl.client.auth": "requested",
                              "ssl.truststore.certificates": ca.certificate_pem})
        api = handlers()
        dispatcher = Dispatcher(api, types.SimpleNamespace(api_versions=supported_versions(api)))

        def sasl(context, reauth_ms=0):
            return SaslChannelBuilder(
                context, lambda: ServerAuthenticator(["PLAIN"], plain_users={
                    "alice": "alice-pw", "bob": "bob-pw"}), dispatcher.api_versions,
                max_receive_size=4096, max_reauth_ms={"PLAIN": reauth_ms})

        path = tmp_path / "data"
        path.write_bytes(bytes(range(256)) * (FILE_SIZE // 256))
        self.file = open(path, "rb")  # noqa: SIM115 (served from until close())
        config = NetworkConfig(**{"connections_max_idle_ms": 1000, "num_network_threads": 1,
                                  "num_io_threads": 2, **settings})
        self.server = SocketServer([
            Listener("SSL", "127.0.0.1", 0, SslChannelBuilder(tls, PrincipalMapper())),
            Listener("SASL_SSL", "127.0.0.1", 0, sasl(tls)),
            Listener("SASL_PLAINTEXT", "127.0.0.1", 0, sasl(None)),
            Listener("REAUTH", "127.0.0.1", 0, sasl(None, reauth_ms=500)),
        ], config).start()
        self.handlers = RequestHandlerPool(self.server.request_channel, self.handle, 2).start()
        self.server.enable_request_processing()

    def port(self, listener: str) -> int:
        return self.server.bound_port(listener)

    def handle(self, request):
        payload = bytes(request.payload)
        if payload == b"file":
            return [struct.pack(">i", FILE_SIZE), FileRegion(self.file.fileno(), 0, FILE_SIZE)]
        return [frame(f"{request.listener} {request.principal} ".encode() + payload)]

    def stop(self):
        self.server.stop()
        self.handlers.stop()
        self.file.close()


@pytest.fixture(scope="module")
def pki():
    ca = TestCertificateAuthority()
    return ca, ca.issue("broker", hosts=["127.0.0.1"]), ca.issue("alice", client=True)


@pytest.fixture
def server(tmp_path, pki):
    server = SecuredServer(tmp_path, pki)
    yield server
    server.stop()


def tls_connect(port, pki, certificate=None):
    settings = {"ssl.truststore.certificates": pki[0].certificate_pem}
    if certificate is not None:
        settings.update({"ssl.keystore.certificate.chain": certificate.certificate_pem,
                         "ssl.keystore.key": certificate.key_pem})
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return client_context(settings).wrap_socket(sock, server_hostname="127.0.0.1")


def call(sock, api_key, version, body, correlation_id=1) -> dict:
    sock.sendall(encode_request(api_key, version, correlation_id, "t", body))
    return parse_response(api_key, version, read_frame(sock))[1]


def login(sock, user, password) -> dict:
    assert call(sock, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 0
    return call(sock, ApiKey.SASL_AUTHENTICATE, 2,
                {"auth_bytes": plain_client_message(user, password)})


def closed(sock, timeout_s=10) -> bool:
    """Whether the server closed ``sock`` (EOF or reset) within ``timeout_s``, after what it
    sent last (a TLS alert, when a handshake failed)."""
    sock.settimeout(timeout_s)
    try:
        while sock.recv(4096):
            pass
        return True
    except (ConnectionResetError, ssl.SSLError):
        return True
    except TimeoutError:
        return False


def test_principals_come_from_certificates_and_logins(server, pki):
    with tls_connect(server.port("SSL"), pki, pki[2]) as sock:
        sock.sendall(frame(b"hello"))
        assert read_frame(sock) == b"SSL User:CN=alice hello"
    with tls_connect(server.port("SSL"), pki) as sock:
        sock.sendall(frame(b"hello"))
        assert read_frame(sock) == b"SSL User:ANONYMOUS hello"
    with tls_connect(server.port("SASL_SSL"), pki, pki[2]) as sock:
        assert login(sock, "bob", "bob-pw")["error_code"] == 0
        sock.sendall(frame(b"hello"))
        assert read_frame(sock) == b"SASL_SSL User:bob hello"  # the login's, not the cert's
    with socket.create_connection(("127.0.0.1", server.port("SASL_PLAINTEXT")),
                                  timeout=10) as sock:
        sock.sendall(encode_request(ApiKey.SASL_HANDSHAKE, 0, 1, "t", {"mechanism": "PLAIN"}))
        assert parse_response(ApiKey.SASL_HANDSHAKE, 0, read_frame(sock))[1]["error_code"] == 0
        sock.sendall(frame(plain_client_message("alice", "alice-pw")))  # v0: a raw token
        assert read_frame(sock) == b""
        sock.sendall(frame(b"hello"))
        assert read_frame(sock) == b"SASL_PLAINTEXT User:alice hello"


def test_tls_carries_large_requests_and_file_regions(server, pki):
    with tls_connect(server.port("SSL"), pki) as sock:
        big = bytes(range(256)) * 4000
        sock.sendall(frame(big))
        assert read_frame(sock) == b"SSL User:ANONYMOUS " + big
        for _ in range(2):
            sock.sendall(frame(b"file"))
            assert read_frame(sock) == bytes(range(256)) * (FILE_SIZE // 256)


def test_unfinished_handshakes_and_logins_are_closed_after_the_idle_time(server, pki):
    silent = socket.create_connection(("127.0.0.1", server.port("SSL")), timeout=10)
    half = socket.create_connection(("127.0.0.1", server.port("SASL_PLAINTEXT")), timeout=10)
    half.sendall(encode_request(ApiKey.SASL_HANDSHAKE, 1, 1, "t", {"mechanism": "PLAIN"}))
    read_frame(half)
    started = time.monotonic()
    try:
        assert closed(silent) and closed(half)
        assert time.monotonic() - started < 5  # connections.max.idle.ms: 1 s
    finally:
        silent.close()
        half.close()


@pytest.mark.parametrize("payload", [b"\x16\x03\x01\x02\x00" + bytes(512), frame(b"plain")],
                         ids=["not a handshake", "a plaintext client"])
def test_a_failed_handshake_closes_only_its_connection(server, pki, payload):
    with tls_connect(server.port("SSL"), pki) as other:
        with socket.create_connection(("127.0.0.1", server.port("SSL")), timeout=10) as bad:
            bad.sendall(payload)
            assert closed(bad)
        other.sendall(frame(b"still here"))
        assert read_frame(other) == b"SSL User:ANONYMOUS still here"


@pytest.fixture
def long_idle_server(tmp_path, pki):
    """As ``server``, with connections idle for 5 s before they are closed (no idle close
    within the sessions' 0.5 s lifetimes, however slow the machine)."""
    server = SecuredServer(tmp_path, pki, connections_max_idle_ms=5000)
    yield server
    server.stop()


def test_an_expired_session_is_closed_at_its_next_request_unless_re_authenticated(
        long_idle_server):
    server = long_idle_server
    with socket.create_connection(("127.0.0.1", server.port("REAUTH")), timeout=10) as sock:
        answer = login(sock, "alice", "alice-pw")
        assert answer["session_lifetime_ms"] == 500
        sock.sendall(frame(b"one"))
        assert read_frame(sock) == b"REAUTH User:alice one"
        time.sleep(0.6)  # the session's lifetime passes (not the idle time, 5 s)
        assert login(sock, "alice", "alice-pw")["error_code"] == 0  # re-authenticated
        sock.sendall(frame(b"two"))
        assert read_frame(sock) == b"REAUTH User:alice two"
        time.sleep(0.6)
        sock.sendall(frame(b"three"))
        assert closed(sock)
    processors = server.server.processors
    assert sum(p.successful_reauthentications for p in processors) == 1


def test_a_sasl_handshake_once_authenticated_without_a_lifetime_reaches_the_handlers(server):
    with socket.create_connection(("127.0.0.1", server.port("SASL_PLAINTEXT")),
                                  timeout=10) as sock:
        login(sock, "alice", "alice-pw")
        sock.sendall(encode_request(ApiKey.SASL_HANDSHAKE, 1, 2, "t", {"mechanism": "PLAIN"}))
        assert read_frame(sock).startswith(b"SASL_PLAINTEXT User:alice ")


def test_a_refused_login_is_answered_after_the_delay_then_the_connection_closes(tmp_path, pki):
    """As Kafka's Selector and SaslServerAuthenticator: the SASL_AUTHENTICATION_FAILED answer
    leaves at the end of connection.failed.authentication.delay.ms, and the connection closes as
    soon as it is written, with nothing more asked of the client."""
    server = SecuredServer(tmp_path, pki, connection_failed_authentication_delay_ms=300)
    try:
        with socket.create_connection(("127.0.0.1", server.port("SASL_PLAINTEXT")),
                                      timeout=10) as sock:
            started = time.monotonic()
            answer = login(sock, "alice", "wrong")
            assert time.monotonic() - started >= 0.3
            assert answer["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
            assert "invalid user name or password" in answer["error_message"]
            assert closed(sock)
    finally:
        server.stop()
