"""Running a server in the foreground, as Kafka's bin/ scripts do: until SIGINT or SIGTERM."""

import os
import signal
import threading
from collections.abc import Callable


def signal_safe_setter(event: threading.Event) -> Callable[[], None]:
    """A function that sets ``event`` and may be called from a signal handler.

    A Python signal handler runs in the main thread between two bytecodes, maybe while that
    thread holds the event's own lock inside ``event.wait(timeout)``: ``event.set()`` there
    waits for that lock forever. The function returned only writes a byte to a pipe, which
    takes no lock; a thread of its own reads it and sets the event."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)

    def relay() -> None:
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            while pipe.read(1):
                event.set()

    threading.Thread(target=relay, name="signal-relay", daemon=True).start()

    def request() -> None:
        try:
            os.write(write_fd, b"\0")
        except BlockingIOError:  # bytes are already waiting: the event is being set
            pass

    return request


def termination_requested() -> threading.Event:
    """An event set by the first SIGINT or SIGTERM (install from the main thread)."""
    event = threading.Event()
    request = signal_safe_setter(event)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: request())
    return event
