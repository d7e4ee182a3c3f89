"""The broker's metrics, readable without extra dependencies: a JSON document served over HTTP
when ``metrics.listener`` is set (``http://host:port``; unset by default), and printed as tables
by ``broker-lite metrics --metrics-listener http://host:port``.

Kafka exposes the same figures through JMX (``kafka.network:type=RequestMetrics``,
``kafka.network:type=RequestChannel``, ``kafka.server:type=DelayedOperationPurgatory``, ...);
broker_lite serves them as one document, ``GET /metrics`` (``/`` too)::

    {
      "broker_id": 0,
      "time_ms": 1700000000000,
      "process": {"threads": 21, "rss_bytes": 81234944, "open_files": 57},
      "network": {"connections": 3, "connections_per_processor": {"0": 1, ...},
                  "connections_created": 9, "connections_closed": 6,
                  "successful_authentications": 2, "successful_reauthentications": 1,
                  "failed_authentications": 0,
                  "request_queue_size": 0, "response_queue_sizes": {"0": 0, ...},
                  "listeners": {"SASL_SSL": {"connections": 2, "connections_created": 3,
                                             ...}, ...}},
      "requests": {"Produce": {"requests": 7101,
                               "TotalTimeMs": {"p50": 0.21, "p99": 0.93, "p999": 2.1, "max": 4.2},
                               "RequestQueueTimeMs": {...}, "LocalTimeMs": {...},
                               "RemoteTimeMs": {...}, "ResponseQueueTimeMs": {...},
                               "ResponseSendTimeMs": {...}},
                   ...},
      "purgatory": {"Fetch": {"delayed": 2, "watched_keys": 2}, "Produce": {...},
                    "Rebalance": {...}, "DeleteRecords": {...}}
    }

Request figures are per API (Kafka's request names), with the stages of
:mod:`~broker_lite.server.network.request_metrics`: counts since start, latencies in
milliseconds over each API's latest requests.
"""

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlsplit

from broker_lite.config.parsers import ConfigError

from .network import SocketServer
from .purgatory import Purgatory

logger = logging.getLogger(__name__)

PATHS = ("/metrics", "/")


class BrokerMetrics:
    """The metrics document of a broker's network and purgatory."""

    def __init__(self, server: SocketServer, purgatory: Purgatory,
                 broker_id: Callable[[], int] = lambda: -1):
        self.server = server
        self.purgatory = purgatory
        self.broker_id = broker_id

    def snapshot(self) -> dict:
        return {
            "broker_id": self.broker_id(),
            "time_ms": int(time.time() * 1000),
            "process": process_figures(),
            "network": self.server.gauges(),
            "requests": self.server.metrics.snapshot(),
            "purgatory": {p.name: {"delayed": p.delayed, "watched_keys": p.watched_keys}
                          for p in self.purgatory.purgatories},
        }


def process_figures() -> dict:
    """Threads, resident memory and open files of this process (the last two where the OS
    tells them: Linux's /proc)."""
    figures = {"threads": threading.active_count(), "rss_bytes": None, "open_files": None}
    try:
        with open("/proc/self/statm") as statm:
            figures["rss_bytes"] = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        figures["open_files"] = len(os.listdir("/proc/self/fd"))
    except (OSError, ValueError, IndexError):
        pass
    return figures


def parse_listener(url: str) -> tuple[str, int]:
    """``http://host:port`` (``metrics.listener``) as ``(host, port)``; port 0: a free one."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not parts.hostname or port is None or parts.path not in ("", "/"):
        raise ConfigError(f"invalid value {url!r} for metrics.listener: expected "
                          "http://host:port")
    return parts.hostname, port


class MetricsListener:
    """Serves ``metrics.snapshot()`` as JSON on ``http://host:port`` from a thread of its own."""

    def __init__(self, url: str, metrics: BrokerMetrics):
        host, port = parse_listener(url)
        snapshot = metrics.snapshot

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # http.server's name
                if self.path.split("?")[0] not in PATHS:
                    self.send_error(404, "the metrics are at /metrics")
                    return
                body = json.dumps(snapshot(), indent=1).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:  # http.server's parameter name
                logger.debug("metrics listener: " + format, *args)

        self._server = HTTPServer((host, port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="metrics-listener")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        if isinstance(host, bytes):  # a TCP server's host is a str; bytes only by the types
            host = host.decode()
        return f"http://{host}:{port}"

    def start(self) -> "MetricsListener":
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.ident is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
        self._server.server_close()
