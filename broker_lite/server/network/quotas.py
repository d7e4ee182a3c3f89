"""Connection limits, as Kafka's ConnectionQuotas enforces them.

- ``max.connections``: connections open at once in the broker. When it is reached the acceptor
  waits for one to close before it accepts another (KIP-402): newcomers wait in the listen
  backlog, connected clients keep working.
- ``max.connections.per.ip``, with ``max.connections.per.ip.overrides`` for some hosts or
  addresses (``host:count,address:count``; a host name is resolved once, at start): a
  connection beyond its address's limit is closed as soon as it is accepted, and the client
  sees the connection drop.

>>> quotas = ConnectionQuotas(10, 2, parse_overrides("127.0.0.2:0"))
>>> def connect(address):
...     try:
...         quotas.inc(address)
...     except TooManyConnections as exc:
...         print(exc)
>>> connect("127.0.0.1"); connect("127.0.0.1"); connect("127.0.0.1")
Too many connections from /127.0.0.1 (maximum = 2)
>>> quotas.total, quotas.count("127.0.0.1")
(2, 2)
>>> connect("127.0.0.2")
Too many connections from /127.0.0.2 (maximum = 0)
"""

import socket
import threading

from broker_lite.config.parsers import ConfigError


class TooManyConnections(Exception):
    """An address reached its connection limit (Kafka's TooManyConnectionsException)."""

    def __init__(self, address: str, limit: int):
        super().__init__(f"Too many connections from /{address} (maximum = {limit})")
        self.address, self.limit = address, limit


def parse_overrides(text: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``host:count`` pairs separated by commas (the last
    colon splits, so IPv6 addresses work), each host resolved to its address."""
    overrides: dict[str, int] = {}
    for item in (part.strip() for part in (text or "").split(",")):
        if not item:
            continue
        host, sep, count = item.rpartition(":")
        host = host.strip().strip("[]")
        if not sep or not host or not count.strip().isdigit():
            raise ConfigError(f"invalid value {text!r} for max.connections.per.ip.overrides: "
                              f"expected host:count pairs separated by commas, got {item!r}")
        try:
            address = str(socket.getaddrinfo(host, None)[0][4][0])  # IPv4 or IPv6: a str
        except OSError as exc:
            raise ConfigError(f"invalid value {text!r} for max.connections.per.ip.overrides: "
                              f"cannot resolve {host!r}: {exc}") from None
        overrides[address] = int(count)
    return overrides


class ConnectionQuotas:
    """Open connections per address and in total, against the limits."""

    def __init__(self, max_connections: int, max_per_ip: int,
                 overrides: dict[str, int] | None = None):
        overrides = dict(overrides or {})
        if max_per_ip == 0 and not overrides:
            raise ConfigError("max.connections.per.ip is 0: max.connections.per.ip.overrides "
                              "must name the addresses that may connect")
        self.max_connections = max_connections
        self.max_per_ip = max_per_ip
        self.overrides = overrides
        self._counts: dict[str, int] = {}
        self._total = 0
        self._condition = threading.Condition()

    @property
    def total(self) -> int:
        return self._total

    def count(self, address: str) -> int:
        return self._counts.get(address, 0)

    def limit(self, address: str) -> int:
        return self.overrides.get(address, self.max_per_ip)

    def inc(self, address: str) -> None:
        """Count a new connection from ``address``; raise :class:`TooManyConnections` (and
        count nothing) when the address is at its limit."""
        with self._condition:
            count = self._counts.get(address, 0)
            limit = self.limit(address)
            if count >= limit:
                raise TooManyConnections(address, limit)
            self._counts[address] = count + 1
            self._total += 1

    def dec(self, address: str) -> None:
        with self._condition:
            count = self._counts.get(address, 0)
            if count <= 1:
                self._counts.pop(address, None)
            else:
                self._counts[address] = count - 1
            self._total = max(self._total - 1, 0)
            self._condition.notify_all()

    def wait_for_slot(self, timeout_s: float) -> bool:
        """Wait until the broker is below ``max.connections`` (at most ``timeout_s``); whether
        it is."""
        with self._condition:
            return self._condition.wait_for(lambda: self._total < self.max_connections,
                                            timeout_s)
