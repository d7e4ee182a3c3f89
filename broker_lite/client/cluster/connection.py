"""One TCP connection to one broker: connect, negotiate API versions, exchange requests.

Requests on a connection are strictly in order, one at a time: :meth:`BrokerConnection.request`
holds the connection's lock from sending the request until its response is read, so a
connection may be shared by threads. Frames are Kafka's (see :mod:`broker_lite.protocol.framing`):
an int32 size, then the header and body; each response must carry the correlation id of the
request it answers.

The connection opens lazily, on the first request: TCP connect (bounded by
``socket.connection.setup.timeout.ms``), then ApiVersions at the highest version this client
knows. A broker that does not know that version answers UNSUPPORTED_VERSION, and the request is
repeated at a version it serves, as Kafka's client does (:mod:`.versions`: how the answer is
read, and which version comes next). Then :func:`.versions.negotiate` picks the version of
every other API.

Failures leave the connection closed, to be reopened by the next request:

* connect failures -> :class:`BrokerNotAvailableError` (retriable);
* a socket error or end of stream mid-request -> :class:`KafkaConnectionError` (retriable);
* no response in time -> :class:`KafkaTimeoutError` (retriable): a late response would arrive
  out of step, so the connection is dropped rather than reused;
* a response that does not decode or answers another request -> :class:`InvalidResponseError`.

As in Kafka's ``NetworkClient``, the broker is not connected to again at once after a failure:
the next attempt waits ``reconnect.backoff.ms``, doubling with every failed attempt in a row up
to ``reconnect.backoff.max.ms`` (with jitter, :class:`.retry.ExponentialBackoff`), and a
connection that was set up fully (ApiVersions answered) starts the count again. The TCP connect
of each attempt is bounded by ``socket.connection.setup.timeout.ms``, which grows the same way up
to ``socket.connection.setup.timeout.max.ms``. A request that cannot wait that long fails at once
with :class:`BrokerNotAvailableError`.

A response may ask the client to hold back (``throttle_time_ms``, a broker quota): the next
request on this connection goes out only once the throttle time has passed, in the API versions
where Kafka's client throttles itself (:mod:`.throttling`, KIP-219); a request whose deadline
comes first fails at once with :class:`KafkaTimeoutError`, unsent.

A connection unused for ``connections.max.idle.ms`` is closed before the next request and
opened again, as Kafka's clients close idle connections before brokers do; one that the broker
closed while idle is noticed before the next request is sent, and reopened, so idle clients do
not see spurious errors.

Security (``security.protocol``): with SSL and SASL_SSL the socket is wrapped in TLS right after
the TCP connect (the broker's host name checked unless ``ssl.endpoint.identification.algorithm``
is empty); a failed handshake is :class:`SslAuthenticationError` naming the broker and the
reason (certificate verify failed, host name mismatch). With SASL_PLAINTEXT and SASL_SSL,
ApiVersions is followed by SaslHandshake v1 with the mechanism and SaslAuthenticate requests
(v0-v2, as the broker offers) carrying the mechanism's messages (:mod:`broker_lite.security`); a
refusal is :class:`SaslAuthenticationFailedError` with the broker's message, not retriable. When
the broker gives the session a lifetime (SaslAuthenticate v1+, KIP-368), the connection
authenticates again before the next request once 85-95 % of it has passed, as Kafka's client.

"""

from __future__ import annotations

import random
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from importlib import metadata as _package_metadata
from typing import TYPE_CHECKING, cast

from broker_lite.protocol import (
    ApiKey,
    ErrorCode,
    ProtocolError,
    encode_request_parts,
    parse_response,
)
from broker_lite.security import SaslAuthenticationError

from ..config import ClientConfig, _address
from ..errors import (
    BrokerNotAvailableError,
    ClientClosedError,
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    SaslAuthenticationFailedError,
    SslAuthenticationError,
    error_for,
    error_of,
)
from ..retry import Deadline, ExponentialBackoff
from .throttling import client_throttle_ms
from .versions import (
    CLIENT_VERSIONS,
    ApiVersionTable,
    api_name,
    negotiate,
    read_api_versions,
    retry_version,
)

if TYPE_CHECKING:  # ssl is loaded with a TLS context (broker_lite.security.tls), when one is used
    import ssl

_SIZE = struct.Struct(">i")
_RECV_CHUNK = 4 << 20
#: Frames of at least this size are received into Arrow's memory pool (see _frame_buffer).
_POOLED_FRAME_BYTES = 1 << 20
# Requests of this size and more are sent as their parts (_send_request), at most this many.
_GATHERED_REQUEST_BYTES = 1 << 16
_IOV_MAX = 64
SOFTWARE_NAME = "kpy"
try:
    SOFTWARE_VERSION = _package_metadata.version("kpy")
except _package_metadata.PackageNotFoundError:  # running from a source tree
    SOFTWARE_VERSION = "0"

Body = dict | Callable[[int], dict]  # a body, or a function of the version giving it


class BrokerConnection:
    """A connection to the broker at ``host:port`` (``node_id`` when known from metadata)."""

    def __init__(self, host: str, port: int, config: ClientConfig, *, node_id: int | None = None):
        self.host = host
        self.port = port
        self.node_id = node_id
        self.config = config
        self.versions: ApiVersionTable | None = None
        self.last_failure: float | None = None  # monotonic time of the last failure
        self.throttled_until = 0.0  # monotonic: no request before (the broker's quota)
        self.reconnect_at = 0.0  # monotonic: no connection attempt before (after failures)
        self.failed_attempts = 0  # connection attempts failed in a row
        # why the last attempt failed or the last connection was lost, for the backoff's error
        self.connect_error = ""
        self._failed_at = 0.0  # monotonic time of the last failed attempt or lost connection
        self._reconnect_backoff = ExponentialBackoff(config.reconnect_backoff_ms,
                                                     config.reconnect_backoff_max_ms)
        self._setup_timeout = ExponentialBackoff(config.socket_connection_setup_timeout_ms,
                                                 config.socket_connection_setup_timeout_max_ms)
        self._last_used = 0.0  # monotonic time the last exchange ended
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._correlation_id = 0
        self._closed = False
        self._reauthenticate_at: float | None = None  # monotonic time (KIP-368)

    @property
    def address(self) -> str:
        return _address(self.host, self.port)

    @property
    def connected(self) -> bool:
        return self._sock is not None

    @property
    def ready_at(self) -> float:
        """The monotonic time from which a request can go out without waiting: after the
        broker's throttle and, while not connected, after the reconnect backoff."""
        return max(self.throttled_until, 0.0 if self.connected else self.reconnect_at)

    def __repr__(self) -> str:
        node = f" node {self.node_id}" if self.node_id is not None else ""
        return f"<BrokerConnection {self.address}{node}{' open' if self.connected else ''}>"

    # -- the public operation -------------------------------------------------------------------

    def request(self, api_key: ApiKey, body: Body, deadline: Deadline, *,
                max_version: int | None = None) -> tuple[int, dict]:
        """Send one request and return ``(version, response body)``.

        ``body`` may be a function of the negotiated version (bodies differ between versions);
        ``max_version`` caps the version (see :meth:`ApiVersionTable.version`).
        """
        if not self._lock.acquire(timeout=deadline.remaining_s()):
            raise KafkaTimeoutError(f"broker {self.address}: connection busy until the deadline")
        started = time.monotonic()
        try:
            if self._closed:
                raise ClientClosedError(f"connection to {self.address} is closed")
            if self._sock is not None and (self._idle_expired() or self._peer_closed()):
                self._reset(failed=False)
            if self._sock is None:
                self._connect(deadline)
            elif self._reauthenticate_at is not None \
                    and time.monotonic() >= self._reauthenticate_at:
                self._authenticate_or_reset(deadline)
            version = self._negotiated().version(api_key, max_version)
            request_body = body(version) if callable(body) else body
            frame = self._exchange(api_key, version, request_body, deadline)
            return version, self._parse(api_key, version, frame)
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            self.last_failure = time.monotonic()
            if self._failed_at >= started and not self.connect_error:
                self.connect_error = str(exc)  # the connection was lost: say how, next time
            raise
        finally:
            self._lock.release()

    def close(self) -> None:
        """Close for good; a request in progress on another thread fails."""
        self._closed = True
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    # -- connecting -----------------------------------------------------------------------------

    def _connect(self, deadline: Deadline) -> None:
        self._wait_until(self.reconnect_at, deadline, lambda wait_ms: BrokerNotAvailableError(
            f"not connecting to broker {self.address} again for {wait_ms:.0f} ms "
            f"(reconnect.backoff.ms after {self.failed_attempts} failure(s)"
            + (f"; the last: {self.connect_error})" if self.connect_error else ")")))
        setup_s = self._setup_timeout.delay_ms(self.failed_attempts) / 1000
        timeout = min(setup_s, deadline.remaining_s())
        if timeout <= 0:
            raise KafkaTimeoutError(f"no time left to connect to broker {self.address}")
        try:
            sock = socket.create_connection((self.host, self.port), timeout=timeout)
        except TimeoutError:
            raise self._connect_failed(f"no answer within {timeout * 1000:.0f} ms") from None
        except OSError as exc:
            raise self._connect_failed(exc.strerror or str(exc)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.config.ssl_context is not None:
            sock = self._tls_handshake(sock, timeout)
        if self._closed:  # closed meanwhile by another thread
            sock.close()
            raise ClientClosedError(f"connection to {self.address} is closed")
        self._sock = sock
        try:
            self.versions = self._negotiate(deadline)
        except BaseException:
            self._reset()
            raise
        if self.config.sasl is not None:
            self._authenticate_or_reset(deadline)
        self.failed_attempts = 0  # set up: the next failure starts the backoff afresh

    def _negotiated(self) -> ApiVersionTable:
        """The versions negotiated on the open connection (none: it was closed meanwhile)."""
        versions = self.versions
        if versions is None:
            raise ClientClosedError(f"connection to {self.address} is closed")
        return versions

    def _connect_failed(self, why: str) -> BrokerNotAvailableError:
        self._failed()
        self.connect_error = f"cannot connect to broker {self.address}: {why}"
        return BrokerNotAvailableError(self.connect_error)

    def _failed(self) -> None:
        """A connection attempt failed, or an open connection was lost: the next attempt waits
        for the reconnect backoff, which grows with every failure in a row."""
        now = self._failed_at = time.monotonic()
        self.reconnect_at = now + self._reconnect_backoff.delay_ms(self.failed_attempts) / 1000
        self.failed_attempts += 1
        self.connect_error = ""

    def _wait_until(self, moment: float, deadline: Deadline,
                    too_late: Callable[[float], KafkaClientError]) -> None:
        """Sleep until ``moment`` (monotonic); ``too_late(ms to wait)`` is raised at once when
        the deadline comes first."""
        wait_s = moment - time.monotonic()
        if wait_s <= 0:
            return
        if wait_s > deadline.remaining_s():
            raise too_late(wait_s * 1000)
        time.sleep(wait_s)

    def _tls_handshake(self, sock: socket.socket, timeout: float) -> ssl.SSLSocket:
        import ssl

        try:
            return self.config.ssl_context.wrap_socket(sock, server_hostname=self.host)
        except ssl.SSLCertVerificationError as exc:
            sock.close()
            raise SslAuthenticationError(
                f"TLS handshake with broker {self.address} failed: certificate verify failed: "
                f"{exc.verify_message}") from None
        except ssl.SSLError as exc:
            sock.close()
            raise SslAuthenticationError(f"TLS handshake with broker {self.address} failed: "
                                         f"{exc.reason or exc}") from None
        except TimeoutError:
            sock.close()
            raise BrokerNotAvailableError(f"TLS handshake with broker {self.address}: no answer "
                                          f"within {timeout * 1000:.0f} ms") from None
        except OSError as exc:
            sock.close()
            raise BrokerNotAvailableError(
                f"TLS handshake with broker {self.address} failed: the connection was closed "
                f"({exc.strerror or exc}); is it a TLS listener?") from None

    def _authenticate_or_reset(self, deadline: Deadline) -> None:
        try:
            self._authenticate(deadline)
        except BaseException:
            self._reset()
            raise

    def _authenticate(self, deadline: Deadline) -> None:
        """SaslHandshake then SaslAuthenticate until the mechanism's exchange completes."""
        factory = self.config.sasl
        where = f"broker {self.address}"
        version = self._negotiated().version(ApiKey.SASL_HANDSHAKE)
        frame = self._exchange(ApiKey.SASL_HANDSHAKE, version, {"mechanism": factory.mechanism},
                               deadline)
        response = self._parse(ApiKey.SASL_HANDSHAKE, version, frame)
        if response["error_code"]:
            raise error_of(response["error_code"],
                           f"{factory.mechanism} is not enabled; the broker offers "
                           f"{', '.join(response['mechanisms']) or 'none'}", where=where)
        version = self._negotiated().version(ApiKey.SASL_AUTHENTICATE)
        exchange = factory.exchange()
        challenge, lifetime_ms = None, 0
        while True:
            try:
                message = exchange.respond(challenge)
            except SaslAuthenticationError as exc:
                raise SaslAuthenticationFailedError(
                    f"SASL_AUTHENTICATION_FAILED with {where}: {exc}", where=where) from None
            if message is None:
                break
            frame = self._exchange(ApiKey.SASL_AUTHENTICATE, version, {"auth_bytes": message},
                                   deadline)
            response = self._parse(ApiKey.SASL_AUTHENTICATE, version, frame)
            error = error_for(response["error_code"], response.get("error_message"),
                              where=where)
            if error is not None:
                raise error
            challenge = bytes(response["auth_bytes"])
            lifetime_ms = response.get("session_lifetime_ms", 0)
        self._reauthenticate_at = (
            time.monotonic() + lifetime_ms / 1000 * random.uniform(0.85, 0.95)
            if lifetime_ms > 0 else None)

    def _negotiate(self, deadline: Deadline) -> ApiVersionTable:
        """ApiVersions, read and retried as :mod:`.versions` says."""
        version = CLIENT_VERSIONS[ApiKey.API_VERSIONS][1]
        body = {"client_software_name": SOFTWARE_NAME, "client_software_version": SOFTWARE_VERSION}
        while True:
            frame = self._exchange(ApiKey.API_VERSIONS, version, body, deadline)
            try:
                read_as, response = read_api_versions(frame, version)
            except ProtocolError as exc:
                raise self._undecodable(ApiKey.API_VERSIONS, version, exc) from None
            if response["error_code"] == ErrorCode.UNSUPPORTED_VERSION and version > 0:
                # Not served, so its throttle time is not the broker's word (read at the version
                # asked, the mock cluster's answer gives 1,179,648 ms, which Java's client
                # would wait): only a served answer's is kept, below.
                version = retry_version(version, response)
                continue
            error = error_for(response["error_code"], where=f"ApiVersions from {self.address}")
            if error is not None:
                raise error
            self._note_throttle(ApiKey.API_VERSIONS, read_as, response)
            return negotiate(response["api_keys"], self.address)

    def _peer_closed(self) -> bool:
        """Whether the idle connection was closed by the broker (or has unexpected bytes)."""
        sock = self._sock
        if sock is None:
            return True
        if self.config.ssl_context is not None:
            # with a TLS context, the socket is the SSLSocket that _tls_handshake made
            return self._tls_peer_closed(cast("ssl.SSLSocket", sock))
        try:
            sock.settimeout(0.0)
            sock.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            return False  # nothing to read: healthy
        except OSError:
            return True
        return True  # b"": closed; anything else: out of step

    def _idle_expired(self) -> bool:
        idle_ms = self.config.connections_max_idle_ms
        return idle_ms >= 0 and (time.monotonic() - self._last_used) * 1000 > idle_ms

    @staticmethod
    def _tls_peer_closed(sock: ssl.SSLSocket) -> bool:
        """As :meth:`_peer_closed` for TLS, which cannot peek: TLS records that carry no data
        (TLS 1.3 session tickets) are read and leave the connection healthy."""
        import ssl

        if sock.pending():
            return True  # data nobody asked for: out of step
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            if not readable:
                return False
            sock.settimeout(0.0)
            sock.recv(1)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return False
        except (OSError, ValueError):
            return True
        return True

    def _reset(self, *, failed: bool = True) -> None:
        """Drop the socket; after a failure (not an idle close) reconnecting backs off."""
        sock, self._sock = self._sock, None
        self.versions = None
        self._reauthenticate_at = None
        if sock is not None:
            sock.close()
            if failed:
                self._failed()

    # -- one exchange ---------------------------------------------------------------------------

    def _exchange(self, api_key: ApiKey, version: int, body: dict, deadline: Deadline):
        """Send a request, return its response frame (without the size)."""
        self._correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        correlation_id = self._correlation_id
        try:
            request = encode_request_parts(api_key, version, correlation_id,
                                           self.config.client_id, body)
        except ProtocolError as exc:
            raise InvalidArgumentError(f"cannot encode {api_name(api_key)} v{version}: {exc}") \
                from None
        what = f"{api_name(api_key)} v{version}"
        self._wait_until(self.throttled_until, deadline, lambda wait_ms: KafkaTimeoutError(
            f"broker {self.address} throttles this client for {wait_ms:.0f} ms more (quota), "
            f"past the deadline of {what}"))
        started = time.monotonic()
        sock = self._sock  # close() from another thread may clear the attribute meanwhile
        try:
            if sock is None:
                raise ConnectionAbortedError(0, "closed")
            _settimeout(sock, deadline)
            _send_request(sock, request, deadline, gather=self.config.ssl_context is None)
            (size,) = _SIZE.unpack(_recv_exactly(sock, 4, deadline))
            if size < 4:
                raise InvalidResponseError(f"broker {self.address} sent a {size}-byte frame")
            frame = _recv_exactly(sock, size, deadline)
        except TimeoutError:
            self._reset()
            raise KafkaTimeoutError(
                f"broker {self.address} did not answer {what} within "
                f"{(time.monotonic() - started) * 1000:.0f} ms") from None
        except OSError as exc:
            self._reset()
            if self._closed:
                raise ClientClosedError(f"connection to {self.address} was closed") from None
            raise KafkaConnectionError(
                f"connection to broker {self.address} lost during {what}: "
                f"{exc.strerror or exc}") from None
        except InvalidResponseError:
            self._reset()
            raise
        (got,) = _SIZE.unpack_from(frame)
        if got != correlation_id:
            self._reset()
            raise InvalidResponseError(f"broker {self.address} answered correlation id {got} "
                                       f"to {what} with correlation id {correlation_id}")
        self._last_used = time.monotonic()
        return frame

    def _parse(self, api_key: ApiKey, version: int, frame) -> dict:
        try:
            body = parse_response(api_key, version, frame)[1]
        except ProtocolError as exc:
            raise self._undecodable(api_key, version, exc) from None
        self._note_throttle(api_key, version, body)
        return body

    def _undecodable(self, api_key: ApiKey, version: int,
                     exc: ProtocolError) -> InvalidResponseError:
        """The connection is out of step after a response it cannot read: it is dropped."""
        self._reset()
        return InvalidResponseError(f"broker {self.address} sent a {api_name(api_key)} "
                                    f"v{version} response that does not decode: {exc}")

    def _note_throttle(self, api_key: ApiKey, version: int, body: dict) -> None:
        throttle_ms = client_throttle_ms(api_key, version, body)
        if throttle_ms:  # the throttle only ever grows, as in Kafka's ClusterConnectionStates
            self.throttled_until = max(self.throttled_until,
                                       time.monotonic() + throttle_ms / 1000)


def _settimeout(sock: socket.socket, deadline: Deadline) -> None:
    remaining = deadline.remaining_s()
    if remaining <= 0:
        raise TimeoutError
    sock.settimeout(remaining)


def _send_request(sock: socket.socket, parts: list, deadline: Deadline, *, gather: bool) -> None:
    """Send a request's parts (:func:`encode_request_parts`). A large request goes out in
    gathering writes where ``gather`` allows (a plain socket: TLS has no gathering write), so
    a Produce's megabytes of records are not copied into one buffer first; any other request
    is joined."""
    if not gather or len(parts) > _IOV_MAX or sum(map(len, parts)) < _GATHERED_REQUEST_BYTES:
        sock.sendall(b"".join(parts))
        return
    views = [memoryview(part).cast("B") for part in parts]
    while views:
        _settimeout(sock, deadline)
        sent = sock.sendmsg(views)
        while views and sent >= len(views[0]):  # drop what went whole, and empty parts
            sent -= len(views.pop(0))
        if sent:
            views[0] = views[0][sent:]


def _recv_exactly(sock: socket.socket, n: int, deadline: Deadline) -> bytearray | memoryview:
    """Exactly ``n`` bytes, each wait bounded by the deadline."""
    buffer = _frame_buffer(n)
    view = memoryview(buffer)
    got = 0
    while got < n:
        _settimeout(sock, deadline)
        count = sock.recv_into(view[got:], min(n - got, _RECV_CHUNK))
        if count == 0:
            raise ConnectionResetError(0, f"closed by the broker after {got} of {n} bytes")
        got += count
    return buffer


def _frame_buffer(n: int) -> bytearray | memoryview:
    """A writable buffer of ``n`` bytes to receive a frame into.

    A large frame (a Fetch answer of megabytes) takes memory from Arrow's pool, and does not
    zero it first. The pool keeps freed memory mapped for the next frame. A bytearray would
    zero every byte, and the C allocator gives such blocks back to the system, so every
    fetch would fault its megabytes in again page by page: a few milliseconds per 8 MiB, more
    than decoding its records takes. Small frames take a bytearray."""
    if n < _POOLED_FRAME_BYTES:
        return bytearray(n)
    import pyarrow as pa  # loaded when first needed: many clients never get a frame this large

    return memoryview(pa.allocate_buffer(n)).cast("B")  # bytes, as a bytearray's view has them
