"""The request handler threads (Kafka's KafkaRequestHandlerPool): ``num.io.threads`` threads
take requests from the request queue, in turn, and run the broker's handler on each.

The handler (:class:`~broker_lite.server.dispatcher.Dispatcher` in a broker) gets the
:class:`~.request_channel.Request` and returns the response chunks, ``None`` (no response:
Produce with acks=0), or :data:`~.request_channel.RESPONDS_LATER` when it arranged for the
answer to come later (a delayed operation in the purgatory, a coordinator callback); raising
:class:`~.request_channel.CloseConnection` closes the connection. A handler thread never waits
for anything but the request queue and the work of the request in hand.
"""

import logging
import threading
import time
from collections.abc import Callable, Iterable

from .request_channel import RESPONDS_LATER, CloseConnection, Request, RequestChannel

logger = logging.getLogger(__name__)

STOP_TIMEOUT_S = 10  # longest stop() waits for requests being handled
_perf_ns = time.perf_counter_ns

Handler = Callable[[Request], "Iterable | object | None"]


class RequestHandlerPool:
    """``num_threads`` threads serving the requests of ``request_channel`` with ``handler``."""

    def __init__(self, request_channel: RequestChannel, handler: Handler, num_threads: int,
                 name: str = "broker"):
        self._channel = request_channel
        self._handler = handler
        self._stopping = False
        self._threads = [threading.Thread(target=self._run, daemon=True,
                                          name=f"{name}-request-handler-{i}")
                         for i in range(num_threads)]

    def start(self) -> "RequestHandlerPool":
        for thread in self._threads:
            thread.start()
        return self

    def _run(self) -> None:
        while True:
            request = self._channel.receive_request()
            if request is None:
                if self._stopping:
                    return
                continue
            self.handle(request)

    def handle(self, request: Request | None) -> None:
        """Run the handler on ``request`` and pass its answer on; then on the connection's
        next request, when it is already there and no other connection waits for a handler
        (:meth:`Request.finish`)."""
        while request is not None:
            try:
                result = self._handler(request)
            except CloseConnection as exc:
                _handled(request)
                request.close_connection(str(exc))
                return
            except Exception:
                logger.exception("closing %s after an unexpected error", request.peer)
                _handled(request)
                request.close_connection("unexpected error")
                return
            if result is RESPONDS_LATER:
                _handled(request)
                return
            request = request.finish(result)  # handled now, as answered

    def stop(self) -> None:
        """Let the requests being handled finish (up to :data:`STOP_TIMEOUT_S`), then end the
        threads."""
        self._stopping = True
        self._channel.wake_handlers(len(self._threads))
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for thread in self._threads:
            if thread.ident is not None and thread is not threading.current_thread():
                thread.join(timeout=max(deadline - time.monotonic(), 0))


def _handled(request: Request) -> None:
    if not request.handled:  # a response sent from inside the handler set it already
        request.handled = _perf_ns()
