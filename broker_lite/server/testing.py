"""Talking to a broker one request at a time over a blocking socket, for tests and diagnostics."""

import socket
import struct

from broker_lite.protocol import encode_request, parse_response


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
