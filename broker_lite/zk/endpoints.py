"""Listener endpoints as Kafka writes them: ``LISTENER_NAME://host:port``.

``listeners`` and ``advertised.listeners`` are comma-separated lists of these; an IPv6 host is
written in brackets, an empty host means "all interfaces" when binding and "this machine's
canonical name" when advertising. Each listener name maps to a security protocol through
``listener.security.protocol.map`` (``NAME:PROTOCOL,...``), which defaults to the protocol names
themselves.

>>> parse_endpoints("PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9093")
(EndPoint(listener_name='PLAINTEXT', host='127.0.0.1', port=9092, security_protocol='PLAINTEXT'), \
EndPoint(listener_name='SSL', host='::1', port=9093, security_protocol='SSL'))
>>> parse_endpoints("SSL://[::1]:9093")[0].connection_string
'SSL://[::1]:9093'
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import ZooKeeperConfigError

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_PROTOCOL_MAP = {name: name for name in SECURITY_PROTOCOLS}

# Kafka's EndPoint.uriParseExp: the host may be bracketed (IPv6) or empty.
_ENDPOINT = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class EndPoint:
    listener_name: str
    host: str
    port: int
    security_protocol: str

    @property
    def connection_string(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener_name}://{host}:{self.port}"


def parse_protocol_map(text: str | None) -> dict[str, str]:
    """``listener.security.protocol.map`` (``NAME:PROTOCOL,...``); None gives the default."""
    if not text:
        return dict(DEFAULT_PROTOCOL_MAP)
    result = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, protocol = item.partition(":")
        if not sep or protocol.strip().upper() not in SECURITY_PROTOCOLS:
            raise ZooKeeperConfigError(
                f"invalid listener.security.protocol.map entry {item!r}: expected NAME:PROTOCOL "
                f"with PROTOCOL among {', '.join(SECURITY_PROTOCOLS)}")
        result[name.strip().upper()] = protocol.strip().upper()
    return result


def parse_endpoints(text: str,
                    protocol_map: Mapping[str, str] | None = None) -> tuple[EndPoint, ...]:
    """Parse a ``listeners``-style list; listener names are case-insensitive (kept upper case)."""
    protocols = DEFAULT_PROTOCOL_MAP if protocol_map is None else protocol_map
    endpoints = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        match = _ENDPOINT.match(item)
        if match is None:
            raise ZooKeeperConfigError(f"invalid endpoint {item!r}: expected NAME://host:port")
        name, host, port = match.group(1).upper(), match.group(2), int(match.group(3))
        if name not in protocols:
            raise ZooKeeperConfigError(f"no security protocol defined for listener {name} "
                                       f"(endpoint {item!r})")
        endpoints.append(EndPoint(name, host, port, protocols[name]))
    if len({e.listener_name for e in endpoints}) != len(endpoints):
        raise ZooKeeperConfigError(f"each listener name may appear once: {text!r}")
    return tuple(endpoints)
