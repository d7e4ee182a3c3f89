"""Requests between the processors and the request handlers (Kafka's RequestChannel): one
bounded request queue shared by every processor, and a response queue per processor.

A processor puts each request it reads into the request queue, which holds at most
``queued.max.requests``; when it is full the processor keeps the request, stops reading, and
goes on writing responses (back-pressure: clients' requests wait in their sockets). A handler
thread takes the next request and answers it, now or later, from any thread, with exactly one
of :meth:`Request.send_response`, :meth:`Request.no_response` (Produce with acks=0: nothing is
sent, the connection reads its next request) and :meth:`Request.close_connection`; the answer
goes to the response queue of the request's processor, which is woken to send it.

A request carries the times it passed each stage, in nanoseconds (``time.perf_counter_ns``),
which become Kafka's request metrics once its response is sent (:mod:`.request_metrics`)::

    received    the processor read the whole request
    dequeued    a handler took it from the request queue    (RequestQueueTime since received)
    handled     the handler returned                        (LocalTime since dequeued)
    answered    the response was handed over                (RemoteTime since handled)
    sending     the processor took the response             (ResponseQueueTime since answered)
    sent        the last byte went out                      (ResponseSendTime since sending)
"""

import logging
import queue
import threading
import time
from typing import Any, Protocol

logger = logging.getLogger(__name__)

_perf_ns = time.perf_counter_ns


class CloseConnection(Exception):
    """Raised by a handler to drop the connection (a malformed request, an unknown API)."""


class _RespondsLater:
    def __repr__(self) -> str:
        return "RESPONDS_LATER"


RESPONDS_LATER = _RespondsLater()
"""What a handler returns when the response comes later, through the request's own methods
(a delayed operation completing, a coordinator callback)."""

# What a processor does with an answered request. SENT: its handler sent the response (or
# there was none) and gives the connection back.
SEND, NO_RESPONSE, CLOSE, SENT = 0, 1, 2, 3


class Request:
    """A request read from a connection: its ``payload`` (header and body, without the size),
    where it came from, and the way back."""

    __slots__ = ("processor", "connection_id", "payload", "peer", "listener", "principal",
                 "received", "dequeued", "handled", "answered", "sending", "sent",
                 "action", "chunks", "reason", "connection", "folded", "_channel")

    def __init__(self, processor: int, connection_id: str, payload, peer: tuple,
                 listener: str, principal: str, channel: "RequestChannel", connection=None):
        self.connection = connection  # the processor's KafkaChannel
        self.processor = processor
        self.connection_id = connection_id
        self.payload = payload
        self.peer = peer
        self.listener = listener
        self.principal = principal
        self.received = _perf_ns()
        self.dequeued = self.handled = self.answered = self.sending = self.sent = 0
        self.action = -1  # not answered yet
        # the response's chunks (a list), then the ResponseSend writing them (.channel)
        self.chunks: Any = None
        self.reason = ""
        self.folded = ()  # the payloads of requests answered with this one (take_following)
        self._channel = channel

    @property
    def api_key(self) -> int:
        """The API key in the request header (-1 when the request is too short for one)."""
        payload = self.payload
        return int.from_bytes(payload[:2], "big", signed=True) if len(payload) >= 2 else -1

    def following(self, limit: int) -> list:
        """The payloads of the connection's next requests, ``limit`` at most, when they are
        read already and the handler of this one may answer them with it (see
        :mod:`.processor`); left where they are until :meth:`take_following`."""
        return self._channel.following(self, limit)

    def take_following(self, count: int) -> None:
        """Take the first ``count`` of :meth:`following`: this request's response is theirs
        too, each one's in order after this one's."""
        if count:
            self._channel.take_following(self, count)

    def send_response(self, chunks) -> None:
        """Send the response (a list of bytes-like chunks and file regions)."""
        self._answer(SEND, chunks, "")

    def no_response(self) -> None:
        """Send nothing; the connection reads its next request."""
        self._answer(NO_RESPONSE, None, "")

    def close_connection(self, reason: str) -> None:
        """Close the connection instead of answering."""
        self._answer(CLOSE, None, reason)

    def finish(self, chunks) -> "Request | None":
        """Answer from the handler thread that handled the request, once it returned:
        ``chunks`` to send, or None for no response. Returns the connection's next request
        when this thread is to handle it now (see :meth:`RequestChannel.finish`)."""
        if not self._set_answer(SEND if chunks is not None else NO_RESPONSE, chunks, ""):
            return None
        return self._channel.finish(self)

    def _answer(self, action: int, chunks, reason: str) -> None:
        if self._set_answer(action, chunks, reason):
            self._channel.send_response(self)

    def _set_answer(self, action: int, chunks, reason: str) -> bool:
        if self.action >= 0:
            logger.error("request %s of %s answered twice", self.api_key, self.peer)
            _release(chunks)
            return False
        self.action, self.chunks, self.reason = action, chunks, reason
        self.answered = _perf_ns()
        if not self.handled:  # answered by the handler itself, before it returned
            self.handled = self.answered
        return True

    def release(self) -> None:
        """Drop the response unsent (its connection is gone): close its file regions."""
        _release(self.chunks)
        self.chunks = None


def _release(chunks) -> None:
    close = getattr(chunks, "close", None)  # a response partly sent (a ResponseSend)
    if close is not None:
        close()
        return
    for chunk in chunks or ():
        if hasattr(chunk, "close") and not isinstance(chunk, memoryview):
            chunk.close()


class _Processor(Protocol):
    """What the request channel asks of a processor (:class:`.processor.Processor`)."""

    id: int

    @property
    def response_queue_size(self) -> int: ...

    def enqueue_response(self, request: Request) -> None: ...

    def finish(self, request: Request) -> Request | None: ...

    def following(self, request: Request, limit: int) -> list: ...

    def take_following(self, request: Request, count: int) -> None: ...

    def wakeup(self) -> None: ...


class RequestChannel:
    """The request queue (``queue_size`` requests at most) and the processors' response
    queues."""

    def __init__(self, queue_size: int):
        self.queue_size = queue_size
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._processors: dict[int, _Processor] = {}
        self._blocked: set = set()  # processors waiting for room in the request queue

    def add_processor(self, processor: _Processor) -> None:
        self._processors[processor.id] = processor

    @property
    def request_queue_size(self) -> int:
        return self._requests.qsize()

    def response_queue_sizes(self) -> dict[int, int]:
        return {pid: p.response_queue_size for pid, p in self._processors.items()}

    def try_send_request(self, request: Request, processor) -> bool:
        """Queue ``request`` unless the queue is full; then remember to wake ``processor``
        once there is room."""
        with self._lock:
            if self._requests.qsize() >= self.queue_size:
                self._blocked.add(processor)
                return False
            self._requests.put(request)
            return True

    def has_room(self) -> bool:
        return self._requests.qsize() < self.queue_size

    def receive_request(self, timeout: float | None = None) -> Request | None:
        """The next request (waiting up to ``timeout`` seconds; None when none came)."""
        try:
            request = self._requests.get(timeout=timeout)
        except queue.Empty:
            return None
        if self._blocked:  # a processor stopped reading for want of room: there is some now
            with self._lock:
                blocked, self._blocked = self._blocked, set()
            for processor in blocked:
                processor.wakeup()
        if request is not None:
            request.dequeued = _perf_ns()
        return request

    def send_response(self, request: Request) -> None:
        processor = self._processors.get(request.processor)
        if processor is None:  # not served by a processor (a test's request)
            request.release()
            return
        processor.enqueue_response(request)

    def finish(self, request: Request) -> Request | None:
        """The answer to ``request`` from the handler thread that handled it: sent now when the
        socket takes it (else passed to the processor), and the connection's next request
        returned when that thread may take it at once (see :mod:`.processor`)."""
        processor = self._processors.get(request.processor)
        if processor is None or request.connection is None:
            self.send_response(request)
            return None
        return processor.finish(request)

    def following(self, request: Request, limit: int) -> list:
        processor = self._processors.get(request.processor)
        if processor is None or request.connection is None:
            return []
        return processor.following(request, limit)

    def take_following(self, request: Request, count: int) -> None:
        self._processors[request.processor].take_following(request, count)

    def wake_handlers(self, count: int) -> None:
        """Make ``count`` waiting handlers return from :meth:`receive_request` with None."""
        for _ in range(count):
            self._requests.put(None)
