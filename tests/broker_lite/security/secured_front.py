"""A test-only secured front for a plaintext broker_lite broker: it terminates TLS and performs
SaslHandshake / SaslAuthenticate with broker_lite.security's server side, then relays the
connection's other requests to the broker, one at a time.

ApiVersions answers gain SaslHandshake (v0-1) and SaslAuthenticate (v0-2) when SASL is on;
requests other than ApiVersions before authentication close the connection, as Kafka does; a
failed SaslAuthenticate is answered with SASL_AUTHENTICATION_FAILED and the connection closed.
Start the broker with ``advertised.listeners`` pointing at the front, so clients come back
through it for every broker.
"""

from __future__ import annotations

import socket
import ssl
import struct
import threading

from broker_lite.protocol import (
    ApiKey,
    ErrorCode,
    encode_response,
    parse_request,
    parse_response,
)
from broker_lite.security import SaslAuthenticationError
from broker_lite.security.sasl_server import ServerAuthenticator

_SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id
MAX_FRAME = 100 << 20
SASL_APIS = [{"api_key": int(ApiKey.SASL_HANDSHAKE), "min_version": 0, "max_version": 1},
             {"api_key": int(ApiKey.SASL_AUTHENTICATE), "min_version": 0, "max_version": 2}]


def _recv_exactly(sock, n: int) -> bytes | None:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _read_frame(sock) -> bytes | None:
    size = _recv_exactly(sock, 4)
    if size is None:
        return None
    (n,) = _SIZE.unpack(size)
    if not 0 < n <= MAX_FRAME:
        return None
    return _recv_exactly(sock, n)


def _send(sock, chunks) -> None:
    sock.sendall(b"".join(bytes(c) for c in chunks))


class SecuredFront:
    """Listens on 127.0.0.1 (``port``); relays to ``broker_port`` once started."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None,
                 authenticator_factory=None):
        self.ssl_context = ssl_context
        self.authenticator_factory = authenticator_factory  # () -> ServerAuthenticator or None
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.broker_port: int | None = None
        self.failures: list[str] = []  # the server side's messages, to check for secrets
        self.authentications = 0  # completed SASL exchanges (re-authentications included)
        self._threads: list[threading.Thread] = []
        self._stopped = False

    def start(self, broker_port: int) -> SecuredFront:
        self.broker_port = broker_port
        thread = threading.Thread(target=self._accept, daemon=True, name="secured-front")
        thread.start()
        return self

    def stop(self) -> None:
        self._stopped = True
        self.listener.close()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            if self.ssl_context is not None:
                client.settimeout(10)
                client = self.ssl_context.wrap_socket(client, server_side=True)
                client.settimeout(None)
            authenticator = self.authenticator_factory() if self.authenticator_factory else None
            with socket.create_connection(("127.0.0.1", self.broker_port)) as broker:
                self._relay(client, broker, authenticator)
        except (OSError, ssl.SSLError) as exc:
            self.failures.append(f"connection: {exc}")
        finally:
            client.close()

    def _relay(self, client, broker, authenticator: ServerAuthenticator | None) -> None:
        while True:
            frame = _read_frame(client)
            if frame is None:
                return
            api_key, version, correlation_id = _HEADER.unpack_from(frame)
            if authenticator is not None and api_key in (ApiKey.SASL_HANDSHAKE,
                                                         ApiKey.SASL_AUTHENTICATE):
                if not self._authenticate(client, frame, authenticator):
                    return
                continue
            if authenticator is not None and not authenticator.complete \
                    and api_key != ApiKey.API_VERSIONS:
                self.failures.append(f"API {api_key} before authentication")
                return
            _send(broker, [_SIZE.pack(len(frame)), frame])
            answer = _read_frame(broker)
            if answer is None:
                return
            if api_key == ApiKey.API_VERSIONS and authenticator is not None:
                answer = self._with_sasl_apis(answer, version)
            _send(client, [_SIZE.pack(len(answer)), answer])

    @staticmethod
    def _with_sasl_apis(answer: bytes, version: int) -> bytes:
        correlation_id, body = parse_response(ApiKey.API_VERSIONS, version, answer)
        if body["error_code"]:
            return answer
        body["api_keys"] = sorted(body["api_keys"] + SASL_APIS, key=lambda e: e["api_key"])
        return b"".join(bytes(c) for c in encode_response(
            ApiKey.API_VERSIONS, version, correlation_id, body))[4:]

    def _authenticate(self, client, frame: bytes, authenticator: ServerAuthenticator) -> bool:
        header, body = parse_request(frame)
        key, version, correlation_id = header.api_key, header.api_version, header.correlation_id
        if key == ApiKey.SASL_HANDSHAKE:
            error, mechanisms = authenticator.handshake(body["mechanism"])
            _send(client, encode_response(key, version, correlation_id,
                                          {"error_code": error, "mechanisms": mechanisms}))
            return error == ErrorCode.NONE
        try:
            answer = authenticator.authenticate(bytes(body["auth_bytes"]))
        except SaslAuthenticationError as exc:
            self.failures.append(str(exc))
            code = (ErrorCode.ILLEGAL_SASL_STATE if exc.illegal_state
                    else ErrorCode.SASL_AUTHENTICATION_FAILED)
            _send(client, encode_response(key, version, correlation_id, {
                "error_code": code, "error_message": str(exc), "auth_bytes": b"",
                "session_lifetime_ms": 0}))
            return False
        self.authentications += authenticator.complete
        _send(client, encode_response(key, version, correlation_id, {
            "error_code": 0, "error_message": None, "auth_bytes": answer,
            "session_lifetime_ms": authenticator.session_lifetime_ms()
            if authenticator.complete else 0}))
        return True
