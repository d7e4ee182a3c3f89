"""A hung test fails with the stack of every thread, and the run goes on.

pytest-timeout (``timeout`` in pyproject.toml) stops a test that runs too long. Its own signal
method prints the stacks, and its thread method prints them and ends the process; under xdist
what a worker prints is lost, so either way the run would say only that a test timed out. Here
the test's failure itself carries the stacks (the broker's threads too, when the test runs a
broker in its own process), so the report names where each thread waited.

The timeout covers the test's setup, call and teardown, the teardown of a test that failed
included. Should the teardown hang as well after the timeout, the worker exits a fifth of the
timeout later (at least a second): xdist reports it crashed and starts another.
"""

import os
import signal
import sys
import threading
import traceback

import pytest


def every_thread_stack() -> str:
    """The stack of every thread of this process, each headed by the thread's name."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    return "\n".join(f"--- thread {names.get(ident, '?')} ({ident})\n"
                     + "".join(traceback.format_stack(frame))
                     for ident, frame in sys._current_frames().items())


HARD_STOP = pytest.StashKey[threading.Timer]()
CANCEL = pytest.StashKey[object]()


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item, settings):
    if settings.method != "signal" or threading.current_thread() is not threading.main_thread():
        return None  # pytest-timeout's own way

    def on_timeout(signum, frame):
        hard_stop = item.stash[HARD_STOP] = threading.Timer(max(settings.timeout / 5, 1),
                                                            os._exit, (1,))
        hard_stop.name, hard_stop.daemon = "hang_report: hard stop", True
        hard_stop.start()
        pytest.fail(f"Timeout: the test ran over {settings.timeout:g} s; every thread's stack "
                    f"follows\n{every_thread_stack()}", pytrace=False)

    def cancel():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    item.stash[CANCEL] = cancel
    signal.signal(signal.SIGALRM, on_timeout)
    signal.setitimer(signal.ITIMER_REAL, settings.timeout)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_cancel_timer(item):
    """pytest-timeout also stops the timer as a failure is reported (for a debugger), which
    would leave the teardown unguarded: here it runs until the test's teardown has ended, unless
    a debugger is in use (``--pdb``)."""
    if CANCEL in item.stash and item.config.getoption("usepdb", False):
        item.stash.pop(CANCEL)()
    return True if CANCEL in item.stash else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item):
    """The timer and the hard stop are called off once the test's teardown has ended."""
    try:
        return (yield)
    finally:
        cancel = item.stash.get(CANCEL, None)
        if cancel is not None:
            cancel()
        hard_stop = item.stash.get(HARD_STOP, None)
        if hard_stop is not None:
            hard_stop.cancel()
