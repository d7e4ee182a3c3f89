"""Loading and unloading the partitions of an internal topic as this broker's leadership changes.

A coordinator owns the keys of the internal-topic partitions it leads. When it is elected a
partition's leader it *loads* the partition (replays its log); when it resigns it *unloads* it.
Loads can take long, so they run on one background thread, in the order they were asked for
(an unload queued after a load runs after it). Each task carries the partition's leader epoch:
the newest epoch told is remembered, and a task of an older one (a leadership change that has
since been superseded) is skipped.
"""

import logging
import queue
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)


class PartitionLoads:
    """The queue of loads and unloads of one internal topic, and the newest leader epoch of
    each partition.

    Parameters
    ----------
    thread_name : str
        Name of the background thread.
    lock : lock
        Guards the epochs; the coordinator's partition lock, so a task can check its epoch and
        change the partition's state atomically.
    """

    def __init__(self, thread_name: str, lock):
        self.thread_name = thread_name
        self._lock = lock
        self._epochs: dict[int, int] = {}
        self._tasks: queue.Queue = queue.Queue()
        self._worker: threading.Thread | None = None
        self.shutting_down = False

    def start(self) -> None:
        self._worker = threading.Thread(target=self._run_tasks, name=self.thread_name,
                                        daemon=True)
        self._worker.start()

    def shutdown(self) -> None:
        """Stop after the running task; queued tasks are dropped."""
        self.shutting_down = True
        self._tasks.put(None)
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join(timeout=30)

    def schedule(self, task: Callable[[], None]) -> None:
        self._tasks.put(task)

    def wait_for_tasks(self, timeout_s: float = 30) -> bool:
        """Wait until the tasks scheduled so far have run; False on a timeout."""
        done = threading.Event()
        self._tasks.put(done.set)
        return done.wait(timeout_s)

    def accept_epoch(self, partition: int, epoch: int | None) -> bool:
        """Record ``epoch`` if it is the newest seen for ``partition``; whether a task of
        ``epoch`` may run (None: always)."""
        with self._lock:
            current = self._epochs.get(partition)
            if epoch is not None and (current is None or epoch > current):
                self._epochs[partition] = current = epoch
            return epoch is None or epoch == current

    def newest_epoch(self, partition: int) -> int | None:
        with self._lock:
            return self._epochs.get(partition)

    def _run_tasks(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None or self.shutting_down:
                return
            try:
                task()
            except Exception:  # a failed load must not stop the next ones
                logger.exception("%s: task failed", self.thread_name)
