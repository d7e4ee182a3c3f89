"""One connection from a coordinator to another broker, for the requests coordinators send each
other: WriteTxnMarkers (the transaction coordinator to partition leaders), the share-group state
APIs (a share-partition leader to the share coordinator)."""

import socket
import struct
from collections.abc import Mapping

from broker_lite.protocol import ApiKey, ProtocolError, encode_request, parse_response


class BrokerChannel:
    """One connection to another broker, one request at a time: a plain socket, or, when the
    inter-broker listener is secured, a client connection with ``security`` (its
    ``security.protocol``, TLS and SASL settings: TLS, SaslHandshake, SaslAuthenticate and
    re-authentication are the client's)."""

    def __init__(self, host: str, port: int, timeout_s: float,
                 security: Mapping[str, str] | None = None, *, client_id: str):
        self.address = (host, port)
        self.client_id = client_id
        self.timeout_s = timeout_s
        self._sock: socket.socket | None = None
        self._correlation_id = 0
        self._connection = None
        if security and security.get("security.protocol", "PLAINTEXT") != "PLAINTEXT":
            from broker_lite.client.cluster.connection import BrokerConnection
            from broker_lite.client.config import ClientConfig

            self._connection = BrokerConnection(host, port, ClientConfig({
                **security, "bootstrap.servers": f"{host}:{port}",
                "client.id": client_id}))

    def request(self, api_key: ApiKey, version: int, body: dict) -> dict:
        """The response body; ConnectionError when the broker cannot be reached or answers
        something unreadable (the connection is closed then)."""
        if self._connection is not None:
            return self._client_request(api_key, version, body)
        try:
            if self._sock is None:
                self._sock = socket.create_connection(self.address, timeout=self.timeout_s)
            self._correlation_id += 1
            self._sock.sendall(encode_request(api_key, version, self._correlation_id,
                                              self.client_id, body))
            (size,) = struct.unpack(">i", self._recv(4))
            correlation_id, response = parse_response(api_key, version, self._recv(size))
            if correlation_id != self._correlation_id:
                raise ProtocolError(f"response to {correlation_id}, expected "
                                    f"{self._correlation_id}")
            return response
        except (OSError, ProtocolError, struct.error) as exc:
            self.close()
            raise ConnectionError(f"broker at {self.address}: {exc}") from exc

    def _client_request(self, api_key: ApiKey, version: int, body: dict) -> dict:
        from broker_lite.client.errors import KafkaClientError
        from broker_lite.client.retry import Deadline

        assert self._connection is not None
        try:
            _, response = self._connection.request(api_key, body,
                                                   Deadline(self.timeout_s * 1000),
                                                   max_version=version)
        except KafkaClientError as exc:
            raise ConnectionError(f"broker at {self.address}: {exc}") from exc
        return response

    def _recv(self, n: int) -> bytes:
        assert self._sock is not None
        data = bytearray()
        while len(data) < n:
            chunk = self._sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("connection closed")
            data += chunk
        return bytes(data)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
