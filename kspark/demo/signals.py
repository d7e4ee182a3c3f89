"""Ctrl-C and SIGTERM while Spark runs: a request to stop, taken at the next safe point.

A KeyboardInterrupt raised in the middle of a Py4J call leaves that call's connection to the
JVM half-read, and the calls that shut Spark down then fail with a screen of tracebacks
(PySpark's own SIGINT handler even calls into the JVM from inside the interrupted call). So once
Spark runs, the first SIGINT or SIGTERM only records the request, and the demo's loops check
it between calls (:meth:`StopRequest.check`), within a fraction of a second. A second one
raises KeyboardInterrupt at once, for when the first is not taken soon enough.

PySpark installs a SIGINT handler of its own when it creates the SparkContext (from the main
thread): :meth:`StopRequest.install` takes SIGINT back after the session is built.
"""

from __future__ import annotations

import signal
import sys
import threading

from broker_lite.common.foreground import signal_safe_setter

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Records SIGINT / SIGTERM between :meth:`install` and :meth:`restore`."""

    def __init__(self):
        self.requested = threading.Event()
        self._request = signal_safe_setter(self.requested)
        self._signals = 0
        self._previous: dict[int, object] = {}

    def install(self) -> None:
        """Take over SIGINT and SIGTERM (signals reach only the main thread: from any other,
        nothing changes and the process's handlers stay)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in SIGNALS:
            self._previous.setdefault(signum, signal.getsignal(signum))
            signal.signal(signum, self._handle)

    def restore(self) -> None:
        """Give SIGINT and SIGTERM back to the handlers they had before :meth:`install`."""
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum, frame) -> None:
        self._signals += 1
        self._request()
        if self._signals > 1:
            raise KeyboardInterrupt
        print("\nkpy demo: stopping...", file=sys.stderr, flush=True)

    def check(self) -> None:
        """Raise KeyboardInterrupt if a stop was requested."""
        if self.requested.is_set():
            raise KeyboardInterrupt

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or less when a stop is requested meanwhile (then raise)."""
        self.requested.wait(seconds)
        self.check()
