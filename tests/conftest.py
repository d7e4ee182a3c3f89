"""Suite-wide rules and fixtures: in CI a skipped test is a failure, so nothing passes by not
running; the ZooKeeper fixtures are shared by every test package."""

import os

import pytest

# One real ZooKeeper per test session, and the fixtures built on it, for every test package.
pytest_plugins = ["broker_lite.zk.testing"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which counts as a failure: {report.longrepr}"


def _recv_exactly(sock, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return bytes(data)


@pytest.fixture
def kafka_call():
    """``call(port, api_key, version, body) -> response body``: one request over a fresh
    connection, encoded and decoded with broker_lite.protocol."""
    import socket
    import struct

    from broker_lite.protocol import encode_request, parse_response

    def call(port: int, api_key: int, version: int, body: dict, correlation_id: int = 7) -> dict:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(encode_request(api_key, version, correlation_id, "kpy-tests", body))
            (size,) = struct.unpack(">i", _recv_exactly(sock, 4))
            got_id, response = parse_response(api_key, version, _recv_exactly(sock, size))
        assert got_id == correlation_id
        return response

    return call
