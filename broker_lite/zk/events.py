"""A single thread running queued events in order, as Kafka's ``ControllerEventManager``.

ZooKeeper watches and session changes arrive on kazoo's threads, which must not block and must
not die; they only queue work here. An event that raises is logged and dropped: a connection
loss is expected (the reconnect queues a full refresh), anything else is a bug worth a traceback.
"""

import logging
import queue
import threading
from collections.abc import Callable

from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, SessionExpiredError

_STOP = object()
_DISCONNECTED = (ConnectionLoss, SessionExpiredError, ConnectionClosedError)


class EventLoopStoppedError(RuntimeError):
    """Work handed to a loop that no longer runs."""


class EventLoop:
    def __init__(self, name: str, logger: logging.Logger):
        self.name = name
        self._log = logger
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def put(self, event: Callable[[], object]) -> None:
        """Queue ``event``; ignored once the loop is stopping."""
        if not self._stopped.is_set():
            self._queue.put(event)

    def call(self, event: Callable[[], object], timeout: float | None = None) -> object:
        """Run ``event`` on the loop and return its result (or raise its exception)."""
        if self._stopped.is_set():
            raise EventLoopStoppedError(f"{self.name} is stopped")
        done = threading.Event()
        outcome: dict = {}

        def wrapper() -> None:
            try:
                outcome["result"] = event()
            except BaseException as exc:  # handed back to the caller below
                outcome["error"] = exc
            finally:
                done.set()

        self._queue.put(wrapper)
        if not done.wait(timeout):
            raise TimeoutError(f"{self.name}: event did not finish within {timeout} s")
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("result")

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the running event, drop the queued ones, end the thread."""
        self._stopped.set()
        self._queue.put(_STOP)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is _STOP or self._stopped.is_set():
                return
            try:
                event()
            except _DISCONNECTED as exc:
                self._log.info("%s: ZooKeeper unavailable (%s); retrying after reconnection",
                               self.name, type(exc).__name__)
            except Exception:  # the loop must outlive any one event
                self._log.exception("%s: event %r failed", self.name, event)
