"""One client connection as its processor sees it (Kafka's KafkaChannel): a transport, an
authenticator, the frames coming in and the responses going out.

A channel is ready for requests once its transport finished its handshake and its authenticator
accepted the client (:mod:`.transport`, :mod:`.authenticator`); :meth:`KafkaChannel.prepare`
takes both a step further on every readiness event. An authenticator that refuses the client
answers it first when Kafka does, and marks the channel ``closing``: nothing more is read, and
the connection closes once that answer is written, ``connection.failed.authentication.delay.ms``
after the refusal (``close_at``), as Kafka delays it. It then carries one request at a time: once
a request is read the channel is *muted*, and its next request is not read until the response
to this one is queued on the channel, so responses go back in request order, as Kafka's
processors keep them. It stays muted while more than :data:`MAX_UNSENT_RESPONSES` of its
responses are not written yet, so a client that does not read its responses stops being read
too. A channel is also *paused* while the request queue is full (back-pressure: nothing more is
read).

The processor owns a channel, except while one of its requests is handled on a plaintext
transport: the request handler then owns the channel's frames and may read and write its socket
itself (see :mod:`.processor`); ``lock`` keeps the processor from closing the socket under it.

Responses leave as :class:`ResponseSend` objects: byte chunks (several sent in one gathering
write) and file regions (record data, sent with the transport's ``send_region``), written as far
as the socket takes them; the processor asks to be told when the socket can take more.
"""

import itertools
import threading
from collections import deque

from .authenticator import Authenticator
from .receive import FrameReceive
from .request_channel import Request

IOV_MAX = 64  # buffers in one gathering write
# A connection's next request is read while at most this many of its responses wait to be
# written: the next request is handled while the last response is being written.
MAX_UNSENT_RESPONSES = 1
_BYTES = (bytes, bytearray, memoryview)


def bytes_only(chunks) -> bool:
    """Whether ``chunks`` are bytes-like objects only, few enough for one gathering write (a
    response :func:`send_bytes` takes)."""
    return len(chunks) <= IOV_MAX and all(
        chunk.__class__ in _BYTES or isinstance(chunk, _BYTES) for chunk in chunks)


def send_bytes(transport, chunks) -> tuple[int, int]:
    """Send a response made of bytes-like chunks only (most are), in one gathering write when
    the socket takes it: (the bytes sent, the response's size) (``BlockingIOError``: none
    went), or (-1, 0) when ``chunks`` hold more than bytes or more chunks than one write takes
    (left to a :class:`ResponseSend`)."""
    if not bytes_only(chunks):
        return -1, 0
    return transport.send_buffers(chunks), sum(map(len, chunks))


class ResponseSend:
    """The chunks of one response on their way out (Kafka's NetworkSend): bytes-like objects and
    file regions (``fd``, ``position``, ``size``, ``close()``), in order."""

    __slots__ = ("_chunks", "_offset", "request")

    def __init__(self, chunks, request=None, sent: int = 0):
        self._chunks = deque(chunks)
        self._offset = 0  # bytes of the first chunk already sent
        self.request = request
        if sent:
            self._skip(sent)

    def _skip(self, count: int) -> None:
        """Drop the first ``count`` bytes (of bytes-like chunks, and the empty ones after them):
        they were sent."""
        chunks = self._chunks
        while chunks and isinstance(chunks[0], _BYTES):
            size = len(chunks[0]) - self._offset
            if count < size:
                self._offset += count
                return
            count -= size
            chunks.popleft()
            self._offset = 0

    def write_to(self, transport) -> bool:
        """Send as much as the transport takes now; whether everything is sent."""
        chunks = self._chunks
        while chunks:
            head = chunks[0]
            if isinstance(head, _BYTES):
                if not self._write_buffers(transport):
                    return False
            elif not self._write_region(transport, head):
                return False
        return True

    def _write_buffers(self, transport) -> bool:
        chunks = self._chunks
        first = chunks[0]
        buffers = [memoryview(first)[self._offset:] if self._offset else first]
        for chunk in itertools.islice(chunks, 1, IOV_MAX):
            if not isinstance(chunk, _BYTES):
                break
            buffers.append(chunk)
        wanted = sum(len(b) for b in buffers)
        try:
            sent = transport.send_buffers(buffers) if wanted else 0
        except BlockingIOError:
            return False
        self._skip(sent)
        return sent == wanted  # else the socket is full

    def _write_region(self, transport, region) -> bool:
        while (remaining := region.size - self._offset) > 0:
            try:
                sent = transport.send_region(region, region.position + self._offset, remaining)
            except BlockingIOError:
                return False
            if sent == 0:  # the file is shorter than promised (truncated meanwhile): pad it
                region.close()
                self._chunks[0] = bytes(remaining)
                self._offset = 0
                return True
            self._offset += sent  # short: the socket is full, or the file ends (the next says)
        region.close()
        self._chunks.popleft()
        self._offset = 0
        return True

    def close(self) -> None:
        """Release the file regions not sent."""
        for chunk in self._chunks:
            if not isinstance(chunk, _BYTES):
                chunk.close()
        self._chunks.clear()


class KafkaChannel:
    """A connection: ``id`` (unique in the broker), the peer's ``(host, port)``, its transport,
    its authenticator and its state in the processor."""

    __slots__ = ("id", "peer", "listener", "transport", "authenticator", "receive", "sends",
                 "paused", "pending", "events", "last_active", "in_flight", "closing",
                 "close_at", "closed", "lock", "held")

    def __init__(self, connection_id: str, peer: tuple, listener: str, transport,
                 authenticator: Authenticator, max_request_bytes: int):
        self.id = connection_id
        self.peer = peer
        self.listener = listener
        self.transport = transport
        self.authenticator = authenticator
        self.receive = FrameReceive(max_request_bytes)
        self.sends: deque[ResponseSend] = deque()
        self.paused = False  # the request queue was full
        self.pending: Request | None = None  # a request read while the request queue was full
        self.events: int | None = None  # what the selector watches for; None: not registered
        self.last_active = 0.0
        self.in_flight: Request | None = None  # the request being handled
        self.closing = False  # close once the queued responses are written
        # a refused client: its refusal waits until then (monotonic)
        self.close_at: float | None = None
        self.closed = False
        self.lock = threading.Lock()  # held by whoever uses the socket outside the processor
        self.held: list = []  # answered requests whose responses wait for the next ones

    @property
    def fileno(self) -> int:
        return self.transport.sock.fileno()

    @property
    def ready(self) -> bool:
        """Handshake and authentication done: requests may be dispatched."""
        return self.transport.ready and self.authenticator.complete

    @property
    def unsent(self) -> bool:
        """Responses, or bytes of them the transport holds, are not on the socket yet."""
        return bool(self.sends) or self.transport.pending_write

    @property
    def muted(self) -> bool:
        """Its next request waits: one is being handled, or its responses are not written."""
        return self.in_flight is not None or len(self.sends) > MAX_UNSENT_RESPONSES

    @property
    def principal(self) -> str:
        return self.authenticator.principal

    def prepare(self) -> None:
        """Take the transport's handshake, then the authentication, a step further."""
        if not self.transport.ready:
            self.transport.handshake()
        if self.transport.ready and not self.authenticator.complete:
            self.authenticator.authenticate(self)

    def queue_send(self, chunks, request=None) -> None:
        """Queue a response: its chunks, or a :class:`ResponseSend` begun elsewhere."""
        self.sends.append(chunks if isinstance(chunks, ResponseSend)
                          else ResponseSend(chunks, request))

    def write(self) -> list[ResponseSend]:
        """Write queued responses as far as the socket takes them; those completely sent."""
        done: list[ResponseSend] = []
        if not self.transport.flush():
            return done
        sends = self.sends
        while sends:
            if not sends[0].write_to(self.transport):
                break
            done.append(sends.popleft())
        return done

    def close(self) -> None:
        with self.lock:
            self.closed = True
            try:
                self.transport.close()
            except OSError:
                pass
        for send in self.sends:
            send.close()
        self.sends.clear()
        self.held.clear()
