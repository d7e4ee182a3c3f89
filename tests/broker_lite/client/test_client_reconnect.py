"""Connecting again after failures, as Kafka's NetworkClient does: ``reconnect.backoff.ms``
doubling to ``reconnect.backoff.max.ms`` with every failed attempt in a row, back to the start
once a connection is set up; TCP connects bounded by ``socket.connection.setup.timeout.ms``
growing to ``socket.connection.setup.timeout.max.ms``; idle connections closed after
``connections.max.idle.ms``."""

import re
import socket
import time
from itertools import pairwise

import pytest
from scripted_broker import CLOSE, ScriptedBroker, full_listener, sequence

from broker_lite.client import (
    BrokerNotAvailableError,
    ClientConfig,
    KafkaClient,
    KafkaConnectionError,
    KafkaTimeoutError,
)
from broker_lite.client.cluster.connection import BrokerConnection
from broker_lite.client.retry import JITTER, Deadline
from broker_lite.protocol import ApiKey

SLACK_S = 5


def connection(port: int, **settings) -> BrokerConnection:
    config = ClientConfig({"bootstrap.servers": f"127.0.0.1:{port}", **settings})
    return BrokerConnection("127.0.0.1", port, config)


def metadata(conn: BrokerConnection, deadline_ms: int = 10_000) -> dict:
    return conn.request(ApiKey.METADATA, {"topics": None}, Deadline(deadline_ms))[1]


def test_connection_attempts_back_off_longer_each_time_up_to_the_maximum():
    """A broker that drops every connection before answering ApiVersions: the client's
    attempts come reconnect.backoff.ms apart, then twice that, ..., then at most
    reconnect.backoff.max.ms apart, however short retry.backoff.ms is."""
    with ScriptedBroker({ApiKey.API_VERSIONS: lambda header, body: CLOSE}) as broker:
        with KafkaClient({"bootstrap.servers": broker.bootstrap, "request.timeout.ms": "5000",
                          "retry.backoff.ms": "1", "retry.backoff.max.ms": "1",
                          "reconnect.backoff.ms": "50",
                          "reconnect.backoff.max.ms": "400"}) as client:
            with pytest.raises(KafkaTimeoutError):
                client.topics()
        accepted = list(broker.accepted_at)
    gaps = [b - a for a, b in pairwise(accepted)]
    nominal = [min(0.05 * 2 ** n, 0.4) for n in range(len(gaps))]
    assert all(gap >= wait * (1 - JITTER) - 0.002 for gap, wait in zip(gaps, nominal, strict=True))
    assert len(gaps) >= 6
    assert len(gaps) <= 3 + (5.0 - 0.35 * (1 - JITTER)) / (0.4 * (1 - JITTER)) + 1


def test_a_connection_set_up_starts_the_backoff_afresh():
    """Three failed attempts grow the backoff to 4 x 200 ms; a connection that is then set up
    and later lost is tried again after about 200 ms, not 1600."""
    with ScriptedBroker() as broker:
        api_versions = broker._api_versions
        broker.handlers[ApiKey.API_VERSIONS] = sequence(
            CLOSE, CLOSE, CLOSE, lambda header, body: api_versions(header))
        broker.handlers[ApiKey.METADATA] = sequence(CLOSE, broker.metadata({"t": 1}))
        conn = connection(broker.port, **{"reconnect.backoff.ms": "200",
                                          "reconnect.backoff.max.ms": "10000"})
        for _ in range(3):
            with pytest.raises(KafkaConnectionError, match="lost during ApiVersions"):
                metadata(conn)
        assert conn.failed_attempts == 3
        with pytest.raises(KafkaConnectionError, match="lost during Metadata"):
            metadata(conn)
        lost_at = time.monotonic()
        assert conn.failed_attempts == 1
        metadata(conn)
        gap = broker.accepted_at[-1] - lost_at
        assert 0.2 * (1 - JITTER) - 0.002 <= gap < 0.2 * (1 + JITTER) + 0.6


def test_a_request_that_cannot_wait_for_the_reconnect_backoff_fails_at_once():
    """... naming the failure that started the backoff, not only the backoff."""
    port = closed_port()
    conn = connection(port, **{"reconnect.backoff.ms": "10000",
                               "reconnect.backoff.max.ms": "10000"})
    with pytest.raises(BrokerNotAvailableError, match="refused"):
        metadata(conn)
    started = time.monotonic()
    with pytest.raises(BrokerNotAvailableError, match=r"reconnect\.backoff\.ms") as info:
        metadata(conn, deadline_ms=5000)
    assert time.monotonic() - started < 2  # not at the deadline, nor after the 10 s backoff
    assert f"the last: cannot connect to broker 127.0.0.1:{port}: " in str(info.value)
    assert "refused" in str(info.value)


def test_the_backoffs_error_names_a_connection_lost_after_it_was_made():
    """A broker that accepts and then drops the connection (a plaintext client at a TLS
    listener, say): the error of a request that cannot wait for the backoff says how."""
    with ScriptedBroker({ApiKey.API_VERSIONS: lambda header, body: CLOSE}) as broker:
        conn = connection(broker.port, **{"reconnect.backoff.ms": "10000",
                                          "reconnect.backoff.max.ms": "10000"})
        with pytest.raises(KafkaConnectionError, match="lost during ApiVersions"):
            metadata(conn)
        with pytest.raises(BrokerNotAvailableError, match=r"reconnect\.backoff\.ms") as info:
            metadata(conn, deadline_ms=5000)
    assert (f"after 1 failure(s); the last: connection to broker 127.0.0.1:{broker.port} "
            "lost during ApiVersions v") in str(info.value)


def test_the_connection_setup_timeout_grows_with_failed_attempts():
    """socket.connection.setup.timeout.ms at the first attempt, doubling (with jitter) up to
    socket.connection.setup.timeout.max.ms."""
    listener, queued = full_listener()
    try:
        conn = connection(listener.getsockname()[1], **{
            "socket.connection.setup.timeout.ms": "200",
            "socket.connection.setup.timeout.max.ms": "800", "reconnect.backoff.ms": "1",
            "reconnect.backoff.max.ms": "1"})
        timeouts = []
        for _ in range(4):
            with pytest.raises(BrokerNotAvailableError) as info:
                metadata(conn)
            timeouts.append(int(re.search(r"no answer within (\d+) ms", str(info.value))[1]))
    finally:
        for sock in [*queued, listener]:
            sock.close()
    for timeout, nominal in zip(timeouts, [200, 400, 800, 800], strict=True):
        assert nominal * (1 - JITTER) - 1 <= timeout <= min(nominal * (1 + JITTER), 800) + 1


def test_a_connection_idle_longer_than_connections_max_idle_ms_is_replaced():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({"t": 1})
        conn = connection(broker.port, **{"connections.max.idle.ms": "300"})
        metadata(conn)
        metadata(conn)
        assert broker.connections == 1
        time.sleep(0.5)
        metadata(conn)
        assert broker.connections == 2
        assert conn.failed_attempts == 0  # closing an idle connection is no failure


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return sock.getsockname()[1]
