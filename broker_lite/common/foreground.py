"""Running a server in the foreground, as Kafka's bin/ scripts do: until SIGINT or SIGTERM."""

import signal
import threading


def termination_requested() -> threading.Event:
    """An event set by the first SIGINT or SIGTERM (install from the main thread)."""
    event = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: event.set())
    return event
