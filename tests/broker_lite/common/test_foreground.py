"""Signals that stop a foreground server set its event from a thread of their own: a signal
handler that set it directly could wait forever for the lock the main thread holds inside
``Event.wait``."""

import os
import signal
import threading

from broker_lite.common.foreground import signal_safe_setter, termination_requested


def test_the_setter_returns_while_the_main_thread_holds_the_events_lock():
    event = threading.Event()
    request = signal_safe_setter(event)
    with event._cond:  # what Event.wait(timeout) holds between its checks
        request()  # event.set() here would wait for this lock forever
        assert not event.is_set()
    assert event.wait(5)


def test_every_call_sets_the_event_again():
    event = threading.Event()
    request = signal_safe_setter(event)
    for _ in range(3):
        request()
        assert event.wait(5)
        event.clear()


def test_sigint_and_sigterm_set_the_termination_event():
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for signum in previous:
            stop = termination_requested()
            os.kill(os.getpid(), signum)
            assert stop.wait(5), signal.Signals(signum).name
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
