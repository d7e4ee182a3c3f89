"""Where requests wait (Kafka's purgatory, implementation chapter 5.1): a long-poll Fetch until
an append brings data, a request until the broker stops.

Every append to a partition log (Produce, transaction markers, coordinator records) is announced
with :meth:`Purgatory.notify_appended`, which wakes every waiting fetch; each re-reads its
partitions and decides whether it has enough. Once the broker is stopping, waits end at once and
new ones do not start, so a stopping broker answers its waiting requests rather than holding
them until their timeouts.
"""

import threading


class Purgatory:
    def __init__(self) -> None:
        self._appended = threading.Condition()
        self._stopping = False

    @property
    def stopping(self) -> bool:
        """The broker is stopping: requests that wait answer now."""
        return self._stopping

    def notify_appended(self) -> None:
        """Wake the requests waiting for data."""
        with self._appended:
            self._appended.notify_all()

    def wait_for_append(self, timeout_s: float) -> None:
        """Wait until the next append, the broker stops, or ``timeout_s`` passes."""
        with self._appended:
            if not self._stopping:
                self._appended.wait(timeout_s)

    def stop(self) -> None:
        """End every wait now, and any that starts from now on."""
        with self._appended:
            self._stopping = True
            self._appended.notify_all()
