"""Test support: brokers started in-process, and one request at a time over a blocking socket.

``start_brokers`` starts brokers on ephemeral ports against a ZooKeeper; ``bootstrap`` is the
``bootstrap.servers`` string for them; ``call`` sends one request and returns the response body.
"""

from __future__ import annotations

import socket
import struct
from pathlib import Path
from typing import TYPE_CHECKING

from broker_lite.config.broker import BrokerConfig
from broker_lite.protocol import encode_request, parse_response

if TYPE_CHECKING:
    from .releases import KafkaRelease


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return bytes(data)


def call(port: int, api_key: int, version: int, body: dict, *, correlation_id: int = 7,
         host: str = "127.0.0.1", timeout_s: float = 10) -> dict:
    """Send one request on a fresh connection; return the response body."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(encode_request(api_key, version, correlation_id, "kpy-tests", body))
        (size,) = struct.unpack(">i", recv_exactly(sock, 4))
        got_id, response = parse_response(api_key, version, recv_exactly(sock, size))
    if got_id != correlation_id:
        raise ConnectionError(f"response to correlation id {got_id}, expected {correlation_id}")
    return response


def broker_config(zookeeper_connect: str, log_dir: Path, broker_id: int = 1,
                  properties: dict[str, str] | None = None) -> BrokerConfig:
    """A broker on an ephemeral loopback port; ``properties`` override the defaults here."""
    return BrokerConfig({
        "broker.id": str(broker_id), "zookeeper.connect": zookeeper_connect,
        "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(log_dir),
        "num.partitions": "1",
        **(properties or {}),
    })


def start_brokers(zookeeper_connect: str, log_root: Path, count: int = 1,
                  properties: dict[str, str] | None = None,
                  release: KafkaRelease | None = None) -> list:
    """Start brokers 1..count, logs under ``log_root/b<id>``; stop them with ``stop_brokers``.
    With ``release`` (a :class:`broker_lite.server.releases.KafkaRelease`) they serve only
    what that Kafka release serves."""
    from broker_lite.server.broker import (
        Broker,  # the broker imports this package's siblings
    )

    brokers = []
    try:
        for broker_id in range(1, count + 1):
            config = broker_config(zookeeper_connect, log_root / f"b{broker_id}", broker_id,
                                   properties)
            brokers.append(Broker(config, release=release).start())
    except BaseException:
        stop_brokers(brokers)
        raise
    return brokers


def stop_brokers(brokers) -> None:
    for broker in brokers:
        broker.stop()


def bootstrap(brokers) -> str:
    """The ``bootstrap.servers`` of one broker or a list of them."""
    brokers = brokers if isinstance(brokers, (list, tuple)) else [brokers]
    return ",".join(f"127.0.0.1:{b.port}" for b in brokers)
