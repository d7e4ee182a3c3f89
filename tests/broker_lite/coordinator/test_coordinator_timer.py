"""Deadlines: the manual timer runs callbacks in deadline order and never a cancelled one; the
threaded timer does the same in real time."""

import threading

from broker_lite.coordinator.common.timer import ManualTimer, Timer


def test_manual_timer_runs_due_tasks_in_deadline_order():
    timer, fired = ManualTimer(), []
    timer.schedule(30, lambda: fired.append("c"))
    timer.schedule(10, lambda: fired.append("a"))
    cancelled = timer.schedule(15, lambda: fired.append("cancelled"))
    timer.schedule(20, lambda: (fired.append("b"), timer.schedule(5, lambda: fired.append("b+5"))))
    cancelled.cancel()
    timer.advance(25)
    assert fired == ["a", "b", "b+5"] and timer.now_ms == 25
    timer.advance(5)
    assert fired == ["a", "b", "b+5", "c"]


def test_manual_timer_zero_delay_runs_on_the_next_advance():
    timer, fired = ManualTimer(), []
    timer.schedule(0, lambda: fired.append(1))
    assert fired == []
    timer.advance(0)
    assert fired == [1]


def test_a_failing_callback_does_not_stop_the_others(caplog):
    timer, fired = ManualTimer(), []
    timer.schedule(1, lambda: 1 / 0)
    timer.schedule(2, lambda: fired.append("still runs"))
    timer.advance(5)
    assert fired == ["still runs"] and "timer task failed" in caplog.text


def test_threaded_timer_fires_and_skips_cancelled():
    timer = Timer("test-timer").start()
    try:
        fired, done = [], threading.Event()
        timer.schedule(50, lambda: fired.append("cancelled")).cancel()
        timer.schedule(20, lambda: fired.append("first"))
        timer.schedule(60, lambda: (fired.append("second"), done.set()))
        assert done.wait(5)
        assert fired == ["first", "second"]
    finally:
        timer.stop()
