"""The registry process: HTTP(S) listeners in front of the REST API, the store, the election.

:class:`SchemaRegistry` puts the pieces together and runs them::

    registry = SchemaRegistry(RegistryConfig({"kafkastore.bootstrap.servers": "127.0.0.1:9092",
                                              "listeners": "http://127.0.0.1:0"})).start()
    registry.url            # http://127.0.0.1:<port>
    registry.stop()

``start()`` binds the listeners (so the election knows the port), reads ``_schemas`` to its
end, joins the election, and only then serves: a client's first answer already reflects every
write made before the start. The HTTP server is the standard library's (HTTP/1.1 with
keep-alive, a thread per connection); with an ``https://`` listener each connection's TLS
handshake runs in its own thread, with the ``ssl.*`` settings (PEM or PKCS12 stores, client
certificates per ``ssl.client.authentication``). With ``authentication.method=BASIC`` every
request is authenticated before it is routed (:mod:`.auth`). Nothing that a request carries
(bodies, the ``Authorization`` header) is logged.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from broker_lite.security.tls import client_context, server_context

from .auth import BasicAuthenticator
from .config import RegistryConfig
from .election import Identity, PrimaryElector
from .errors import RegistryError
from .forwarding import Forwarder
from .rest import Request, Response, RestApi
from .service import SchemaRegistryService
from .store import KafkaStore

logger = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 300.0  # a keep-alive connection idle this long is closed


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 registry: SchemaRegistry, tls: ssl.SSLContext | None):
        self.registry = registry
        self.tls = tls
        super().__init__(address, handler)
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True,
                                          do_handshake_on_connect=False)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HttpServer
    timeout = IDLE_TIMEOUT_S

    def setup(self) -> None:
        super().setup()
        # an answer is one write; without this, a keep-alive client's next request could
        # wait for a delayed ACK (Nagle's algorithm)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.settimeout(HANDSHAKE_TIMEOUT_S)
            try:
                self.connection.do_handshake()
            except (ssl.SSLError, OSError) as exc:
                logger.info("TLS handshake with %s failed: %s", self.client_address[0], exc)
                self.close_connection = True
                raise ConnectionAbortedError from exc
            self.connection.settimeout(IDLE_TIMEOUT_S)

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionError, TimeoutError, ssl.SSLError):
            pass

    def _serve(self) -> None:
        registry = self.server.registry
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        request = Request(self.command, path, query, dict(self.headers.items()), body)
        try:
            if registry.authenticator is not None:
                registry.authenticator.authenticate(request.header("Authorization"))
            response = registry.api.handle(request)
        except RegistryError as error:
            response = Response.error(error)
            if error.status == 401 and registry.authenticator is not None:
                response.headers["WWW-Authenticate"] = registry.authenticator.challenge()
        self.log_request(response.status)
        head = [f"{self.protocol_version} {response.status} {_reason(response.status)}",
                f"Server: {self.version_string()}", f"Date: {self.date_time_string()}",
                f"Content-Type: {response.content_type}",
                f"Content-Length: {len(response.body)}"]
        head.extend(f"{name}: {value}" for name, value in response.headers.items())
        if self.close_connection:
            head.append("Connection: close")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body)

    do_GET = do_POST = do_PUT = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.client_address[0], *args)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class SchemaRegistry:
    """A registry process; see the module docstring."""

    def __init__(self, config: RegistryConfig):
        self.config = config
        self.authenticator: BasicAuthenticator | None = None
        if config["authentication.method"] == "BASIC":
            self.authenticator = BasicAuthenticator.from_files(
                config["java.security.auth.login.config"], config["authentication.realm"],
                tuple(config["authentication.roles"]))
        self.store = KafkaStore(config.client_settings(), config["kafkastore.topic"],
                                config["kafkastore.topic.replication.factor"],
                                config["kafkastore.init.timeout.ms"],
                                config["kafkastore.timeout.ms"])
        self.service = SchemaRegistryService(self.store, config["schema.compatibility.level"])
        self.elector: PrimaryElector | None = None
        self.api = RestApi(self.service)
        self._servers: list[_HttpServer] = []
        self._threads: list[threading.Thread] = []

    @property
    def urls(self) -> list[str]:
        """Where it serves, each listener with its bound port."""
        found = []
        for server in self._servers:
            host, port = str(server.server_address[0]), int(server.server_address[1])
            found.append(f"{'https' if server.tls else 'http'}://{host}:{port}")
        return found

    @property
    def url(self) -> str:
        return self.urls[0]

    def start(self) -> SchemaRegistry:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        config = self.config
        tls = None
        for listener in config.listeners:
            parts = urlsplit(listener)
            if parts.scheme == "https" and tls is None:
                tls = server_context(config.tls_settings())
            server = _HttpServer((parts.hostname or "127.0.0.1", parts.port or 0), _Handler,
                                 self, tls if parts.scheme == "https" else None)
            self._servers.append(server)
        self.store.start()
        first = self._servers[0]
        scheme = config["inter.instance.protocol"] or ("https" if first.tls else "http")
        host = config["host.name"] or str(first.server_address[0])
        if host in ("0.0.0.0", "::"):
            host = socket.gethostname()
        identity = Identity(host, int(first.server_address[1]), scheme.lower(),
                            config["leader.eligibility"])
        self.elector = PrimaryElector(config.client_settings(), identity,
                                      config["schema.registry.group.id"]).start()
        forward_tls = client_context({**config.tls_settings(),
                                      "ssl.endpoint.identification.algorithm": ""}) \
            if scheme.lower() == "https" else None
        self.api.forward = Forwarder(self.elector, self.store.catch_up,
                                     config["kafkastore.timeout.ms"] / 1000, forward_tls)
        for server in self._servers:
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                      daemon=True, name=f"registry-http-{server.server_port}")
            thread.start()
            self._threads.append(thread)
        logger.info("schema registry serving on %s (store %s on %s)", ", ".join(self.urls),
                    config["kafkastore.topic"], config.client_settings()["bootstrap.servers"])

    def wait_for_primary(self, timeout_s: float = 30.0) -> Identity | None:
        """The primary, once one is elected (None after ``timeout_s``)."""
        return self.elector.wait_for_primary(timeout_s) if self.elector else None

    def stop(self) -> None:
        for server, thread in zip(self._servers, self._threads, strict=False):
            server.shutdown()
            thread.join(timeout=10)
        for server in self._servers:
            server.server_close()
        self._servers.clear()
        self._threads.clear()
        if self.elector is not None:
            self.elector.stop()
            self.elector = None
        self.store.stop()
