"""Deadlines for the coordinator: session timeouts, rebalance timeouts, periodic expiry.

:class:`Timer` runs each callback once its delay has passed, on one thread of its own, in
deadline order; a cancelled task never runs. Callbacks must not block for long (they take a
group's lock and change its state). :class:`ManualTimer` has the same interface with time that
only moves when told (:meth:`ManualTimer.advance`), so the coordinator's timing rules test
without sleeping.

>>> timer = ManualTimer(); fired = []
>>> task = timer.schedule(100, lambda: fired.append("session expired"))
>>> timer.advance(99); fired
[]
>>> timer.advance(1); fired
['session expired']
"""

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)


class TimerTask:
    __slots__ = ("callback", "cancelled", "deadline")

    def __init__(self, deadline: float, callback: Callable[[], object]):
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        self.callback = None  # what it would have run is released now, not at its deadline


class _TaskQueue:
    def __init__(self):
        self._heap: list[tuple[float, int, TimerTask]] = []
        self._sequence = itertools.count()

    def push(self, task: TimerTask) -> None:
        heapq.heappush(self._heap, (task.deadline, next(self._sequence), task))

    def next_deadline(self) -> float | None:
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> TimerTask | None:
        deadline = self.next_deadline()
        if deadline is None or deadline > now:
            return None
        return heapq.heappop(self._heap)[2]


def _run(task: TimerTask) -> None:
    callback = task.callback
    if task.cancelled or callback is None:
        return
    try:
        callback()
    except Exception:  # one failing callback must not stop the others' deadlines
        logger.exception("timer task failed")


class Timer:
    """Callbacks after a delay, on a daemon thread started by :meth:`start`."""

    def __init__(self, name: str = "coordinator-timer"):
        self.name = name
        self._queue = _TaskQueue()
        self._condition = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def start(self) -> "Timer":
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()
        return self

    def schedule(self, delay_ms: float, callback: Callable[[], object]) -> TimerTask:
        task = TimerTask(time.monotonic() + max(delay_ms, 0) / 1000, callback)
        with self._condition:
            self._queue.push(task)
            self._condition.notify()
        return task

    def _loop(self) -> None:
        while True:
            with self._condition:
                while True:
                    if self._stopped:
                        return
                    task = self._queue.pop_due(time.monotonic())
                    if task is not None:
                        break
                    deadline = self._queue.next_deadline()
                    self._condition.wait(None if deadline is None
                                         else max(deadline - time.monotonic(), 0))
            _run(task)

    def stop(self) -> None:
        with self._condition:
            self._stopped = True
            self._condition.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)


class ManualTimer:
    """A :class:`Timer` whose clock moves only with :meth:`advance` (milliseconds)."""

    def __init__(self):
        self.now_ms = 0.0
        self._queue = _TaskQueue()

    def start(self) -> "ManualTimer":
        return self

    def stop(self) -> None:
        pass

    def schedule(self, delay_ms: float, callback: Callable[[], object]) -> TimerTask:
        task = TimerTask(self.now_ms + max(delay_ms, 0), callback)
        self._queue.push(task)
        return task

    def advance(self, ms: float) -> None:
        """Move the clock forward, running what falls due, in deadline order (a callback that
        schedules within the window runs too)."""
        end = self.now_ms + ms
        while True:
            task = self._queue.pop_due(end)
            if task is None:
                break
            self.now_ms = max(self.now_ms, task.deadline)
            _run(task)
        self.now_ms = end
