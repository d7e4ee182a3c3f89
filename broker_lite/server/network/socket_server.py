"""The broker's listeners, their acceptors and processors, and the request channel between the
processors and the request handlers (Kafka's SocketServer).

Two steps start it, as Kafka's broker does: :meth:`SocketServer.start` binds and listens (the
port is known, clients' connections wait in the backlog), and
:meth:`SocketServer.enable_request_processing` starts the processors and acceptors, once the
broker is ready to answer. :meth:`SocketServer.stop` stops accepting and closes every
connection.
"""

import logging
import resource
import socket
from dataclasses import dataclass, field

from .acceptor import Acceptor
from .channel_builders import PLAINTEXT, ChannelBuilder
from .config import NetworkConfig
from .processor import Processor
from .quotas import ConnectionQuotas, parse_overrides
from .request_channel import RequestChannel
from .request_metrics import RequestMetrics

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Listener:
    """Where to listen: ``name`` (``PLAINTEXT``, ...) on ``host:port`` (port 0: a free one),
    and how its connections are built (``channels``: TLS, SASL; see
    :mod:`.channel_builders`)."""

    name: str
    host: str
    port: int
    channels: ChannelBuilder = field(default=PLAINTEXT, compare=False, repr=False)


class SocketServer:
    """Serves Kafka-framed requests on ``listeners``, through ``request_channel`` to whatever
    request handlers take them (:class:`~.request_handler.RequestHandlerPool`)."""

    def __init__(self, listeners: list[Listener], config: NetworkConfig | None = None,
                 name: str = "broker"):
        if not listeners:
            raise ValueError("a socket server needs at least one listener")
        self.config = config = config or NetworkConfig()
        self.listeners = list(listeners)
        self.name = name
        self.request_channel = RequestChannel(config.queued_max_requests)
        self.metrics = RequestMetrics()
        self.quotas = ConnectionQuotas(config.max_connections, config.max_connections_per_ip,
                                       parse_overrides(config.max_connections_per_ip_overrides))
        self.processors: list[Processor] = []
        self._processors_by_listener: dict[Listener, list[Processor]] = {}
        self._acceptors: list[Acceptor] = []
        self._sockets: list[socket.socket] = []
        self._enabled = False
        self.stopping = False

    # -- start ------------------------------------------------------------------------------

    def start(self) -> "SocketServer":
        """Bind and listen on every listener; requests are served once
        :meth:`enable_request_processing` is called."""
        raise_open_files_limit()
        config = self.config
        next_id = 0
        try:
            for listener in self.listeners:
                sock = socket.create_server((listener.host, listener.port),
                                            backlog=config.socket_listen_backlog_size)
                self._sockets.append(sock)
                processors = []
                for _ in range(config.num_network_threads):
                    processor = Processor(next_id, self.request_channel, self.quotas,
                                          self.metrics, config, self.name)
                    next_id += 1
                    self.request_channel.add_processor(processor)
                    processors.append(processor)
                self.processors.extend(processors)
                self._processors_by_listener[listener] = processors
                self._acceptors.append(Acceptor(listener, sock, processors, self.quotas,
                                                config, self.name))
        except BaseException:
            self.stop()
            raise
        return self

    def enable_request_processing(self) -> None:
        """Start the processors, then the acceptors: connections are accepted and served."""
        if self._enabled or self.stopping:
            return
        self._enabled = True
        for processor in self.processors:
            processor.start()
        for acceptor in self._acceptors:
            acceptor.start()

    # -- state ------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self.listeners[0].host

    @property
    def port(self) -> int:
        """The bound port of the first listener."""
        assert self._sockets, "not started"
        return self._sockets[0].getsockname()[1]

    def bound_port(self, listener_name: str) -> int:
        for listener, sock in zip(self.listeners, self._sockets, strict=False):
            if listener.name == listener_name:
                return sock.getsockname()[1]
        raise KeyError(listener_name)

    @property
    def connection_count(self) -> int:
        """Connections accepted and not closed yet."""
        return self.quotas.total

    def drop_connections(self) -> int:
        """Cut every current connection (the listeners keep accepting), as a network failure
        would; how many were cut."""
        return sum(processor.drop_connections() for processor in self.processors)

    def gauges(self) -> dict:
        """The network's state now, for the broker's metrics; per listener too (Kafka tags its
        selector metrics with the listener): connections, and authentications (Kafka's
        successful-authentication-total, successful-reauthentication-total,
        failed-authentication-total)."""
        gauges = {
            "connections": self.quotas.total,
            "connections_per_processor": {p.id: p.connection_count for p in self.processors},
            **_counts(self.processors),
            "request_queue_size": self.request_channel.request_queue_size,
            "response_queue_sizes": self.request_channel.response_queue_sizes(),
        }
        gauges["listeners"] = {
            listener.name: {"connections": sum(p.connection_count for p in processors),
                            **_counts(processors)}
            for listener, processors in self._processors_by_listener.items()}
        return gauges

    # -- stop -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop accepting, then close every connection (requests being handled finish in the
        request handlers; their responses are dropped)."""
        self.stopping = True
        for acceptor in self._acceptors:
            acceptor.stop()
        for sock in self._sockets:
            try:
                sock.close()
            except OSError:
                pass
        for processor in self.processors:
            processor.shutdown()


def _counts(processors: list[Processor]) -> dict[str, int]:
    return {name: sum(getattr(p, name) for p in processors)
            for name in ("connections_created", "connections_closed",
                         "successful_authentications", "successful_reauthentications",
                         "failed_authentications")}


def raise_open_files_limit() -> None:
    """Raise the soft limit of open files to the hard one, as the JVM does for Kafka
    (``-XX:+MaxFDLimit``): every connection is a file descriptor."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard and (hard == resource.RLIM_INFINITY or soft < hard):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as exc:  # a hard limit of "unlimited" the kernel refuses
        logger.debug("could not raise the open files limit: %s", exc)
