"""Where requests wait (Kafka's purgatory, implementation chapter 5.1): delayed operations that
complete when their condition holds or when their delay passes, whichever comes first.

A request that cannot be answered at once (a Fetch waiting for ``min_bytes``, a Produce with
acks=all waiting for its offsets to be committed, a JoinGroup waiting for the rebalance) becomes
a :class:`DelayedOperation` and is handed to a :class:`DelayedOperationPurgatory` with the keys
it waits on (the partitions fetched, the group joined)::

    purgatory.try_complete_else_watch(operation, keys)   # done now, or watched under keys
    purgatory.check_and_complete(key)                    # something changed for key: re-check

An operation completes exactly once, on whichever thread gets there first: the request handler
that created it, the thread whose change satisfied it (an append, a coordinator callback), or
the timer thread when its delay passes. Completing it sends its response (``on_complete``); no
thread ever blocks waiting for one. Once completed, an operation leaves every watch list at once,
so nothing accumulates under keys that never change again (Kafka purges them in batches instead).

Every delay runs on one timer thread shared by all purgatories (a heap of deadlines,
:class:`~broker_lite.coordinator.common.timer.Timer`). A stopping broker completes every delayed
operation at once, and any new one as soon as it is handed over, so waiting requests do not hold
the broker until their timeouts; it stops its network first, so their answers are not sent.

The broker's purgatories (:class:`Purgatory`, ``services.purgatory``):

=========  ======================  =======================================================
name       keys                    completed by
=========  ======================  =======================================================
fetch      TopicPartition          appends to the partition (:meth:`Purgatory.notify_appended`)
produce    TopicPartition          the high watermark reaching the appended offsets (the
                                   ISR's followers fetching them): Produce with acks=all,
                                   WriteTxnMarkers
groups     group id                the group coordinator's callback (JoinGroup, SyncGroup)
delete_    TopicPartition          the followers' fetches bringing their log start up to the
records                            leader's, or a broker leaving the cluster (DeleteRecords)
=========  ======================  =======================================================

>>> from broker_lite.coordinator.common.timer import ManualTimer
>>> class Reached(DelayedOperation):
...     def __init__(self, level, goal):
...         super().__init__(delay_ms=1000); self.level, self.goal = level, goal
...     def try_complete(self):
...         return self.level[0] >= self.goal and self.force_complete()
...     def on_complete(self):
...         print("done at", self.level[0])
>>> timer = ManualTimer(); purgatory = DelayedOperationPurgatory("demo", timer)
>>> level = [0]
>>> purgatory.try_complete_else_watch(Reached(level, 2), ["k"]), purgatory.delayed
(False, 1)
>>> level[0] = 2; purgatory.check_and_complete("k")
done at 2
1
>>> purgatory.try_complete_else_watch(Reached(level, 5), ["k"]); timer.advance(1000)
False
done at 2
>>> purgatory.delayed
0
"""

import logging
import threading
from collections.abc import Hashable, Iterable

from broker_lite.coordinator.common.timer import Timer, TimerTask

logger = logging.getLogger(__name__)


class DelayedOperation:
    """An operation that completes later: when :meth:`try_complete` finds its condition holds,
    or when ``delay_ms`` passes (``None``: only when completed from outside, or at stop).

    Subclasses implement :meth:`try_complete` (check the condition; when it holds, return
    ``self.force_complete()``) and :meth:`on_complete` (send the response; runs exactly once);
    :meth:`on_expiration` runs after ``on_complete`` when the delay was what completed it.
    ``try_complete`` and ``on_complete`` run under the operation's lock, so they never run
    concurrently for one operation.
    """

    def __init__(self, delay_ms: float | None):
        self.delay_ms = delay_ms
        self._completed = False
        self._lock = threading.RLock()
        self._timer_task: TimerTask | None = None
        self._purgatory: DelayedOperationPurgatory | None = None
        self._keys: tuple = ()

    @property
    def is_completed(self) -> bool:
        return self._completed

    def try_complete(self) -> bool:
        """Complete the operation if its condition holds; whether it did."""
        raise NotImplementedError

    def on_complete(self) -> None:
        """Send the response: runs once, on the thread that completed the operation."""
        raise NotImplementedError

    def on_expiration(self) -> None:
        """The delay passed before the condition held (after :meth:`on_complete`)."""

    def force_complete(self) -> bool:
        """Complete now, whatever the condition; False when it was completed already."""
        with self._lock:
            if self._completed:
                return False
            self._completed = True
            if self._timer_task is not None:
                self._timer_task.cancel()
            if self._purgatory is not None:
                self._purgatory._unwatch(self)
            try:
                self.on_complete()
            except Exception:  # a failing response must not break the thread completing it
                logger.exception("completing %s failed", type(self).__name__)
            return True

    def _safe_try_complete(self) -> bool:
        with self._lock:
            if self._completed:
                return False
            return self.try_complete()

    def _expire(self) -> None:
        if self.force_complete():
            self.on_expiration()


class DelayedOperationPurgatory:
    """Delayed operations of one kind, watched under the keys whose changes may complete them.

    ``timer`` runs their delays (one shared :class:`~broker_lite.coordinator.common.timer.Timer`);
    ``name`` names the purgatory in metrics.
    """

    def __init__(self, name: str, timer):
        self.name = name
        self._timer = timer
        self._lock = threading.Lock()
        self._watchers: dict[Hashable, dict[DelayedOperation, None]] = {}  # ordered sets
        self._watched: set[DelayedOperation] = set()
        self._stopping = False

    @property
    def delayed(self) -> int:
        """Operations waiting (watched, not completed)."""
        return len(self._watched)

    @property
    def watched_keys(self) -> int:
        return len(self._watchers)

    def try_complete_else_watch(self, operation: DelayedOperation,
                                keys: Iterable[Hashable]) -> bool:
        """Complete ``operation`` now if it can be, else watch it under ``keys`` (and start its
        delay); whether it completed here. Once the purgatory is stopping, it completes now."""
        if operation._safe_try_complete():
            return True
        keys = tuple(keys)
        with operation._lock:  # not completed meanwhile, or it would stay watched
            if operation.is_completed:
                return False
            with self._lock:
                stopping = self._stopping
                if not stopping:
                    operation._purgatory, operation._keys = self, keys
                    self._watched.add(operation)
                    for key in keys:
                        self._watchers.setdefault(key, {})[operation] = None
        if stopping:
            return operation.force_complete()
        # What changed between the first check and the watch would have been missed: re-check.
        if operation._safe_try_complete():
            return True
        if operation.delay_ms is not None and not operation.is_completed:
            operation._timer_task = self._timer.schedule(operation.delay_ms, operation._expire)
            if operation.is_completed:  # completed meanwhile: the task may have been missed
                operation._timer_task.cancel()
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Something ``key`` stands for changed: complete the operations watching it that can
        complete now; how many did."""
        if key not in self._watchers:  # the usual case, read without the lock: an operation
            return 0  # watched meanwhile checks itself once watched (try_complete_else_watch)
        with self._lock:
            watchers = self._watchers.get(key)
            if not watchers:
                return 0
            operations = list(watchers)
        return sum(1 for operation in operations if operation._safe_try_complete())

    def check_all(self) -> int:
        """Re-check every watched operation (a change whose key is not known)."""
        with self._lock:
            operations = list(self._watched)
        return sum(1 for operation in operations if operation._safe_try_complete())

    def _unwatch(self, operation: DelayedOperation) -> None:
        with self._lock:
            self._watched.discard(operation)
            for key in operation._keys:
                watchers = self._watchers.get(key)
                if watchers is not None:
                    watchers.pop(operation, None)
                    if not watchers:
                        del self._watchers[key]

    def complete_all(self) -> int:
        """Stop: complete every delayed operation now, and every later one when handed over;
        how many were waiting."""
        with self._lock:
            self._stopping = True
            operations = list(self._watched)
        return sum(1 for operation in operations if operation.force_complete())


class Purgatory:
    """The broker's purgatories (the table in the module docstring) and their timer thread.

    ``notify_appended(partitions)`` is called after every append to partition logs and
    whenever a leader's high watermark moves (a follower's fetch brought it up): the fetches
    watching those partitions re-check (called without partitions, when the appender does not
    say which, every waiting fetch does), and so do the acks=all produces.
    ``notify_metadata_changed()`` is called whenever the cluster's metadata changes: the
    deletions re-check, so one held back only by a replica whose broker left is answered then
    rather than at its timeout.
    """

    def __init__(self, timer=None):
        self._own_timer = timer is None
        self.timer = Timer("purgatory-timer").start() if timer is None else timer
        self.fetch = DelayedOperationPurgatory("Fetch", self.timer)
        self.produce = DelayedOperationPurgatory("Produce", self.timer)
        self.groups = DelayedOperationPurgatory("Rebalance", self.timer)
        self.delete_records = DelayedOperationPurgatory("DeleteRecords", self.timer)
        self._stopping = False

    @property
    def purgatories(self) -> tuple[DelayedOperationPurgatory, ...]:
        return self.fetch, self.produce, self.groups, self.delete_records

    @property
    def stopping(self) -> bool:
        """The broker is stopping: requests that wait complete now."""
        return self._stopping

    def notify_appended(self, partitions: Iterable[Hashable] | None = None) -> None:
        """Records were appended to ``partitions`` (None: to partitions not named)."""
        if partitions is None:
            self.fetch.check_all()
            self.produce.check_all()
            return
        for partition in partitions:
            self.fetch.check_and_complete(partition)
            self.produce.check_and_complete(partition)

    def notify_metadata_changed(self) -> None:
        """The cluster's metadata changed (a broker may have come or gone): the deletions
        re-check, since a low watermark counts the live replicas only; on the timer's thread,
        as the caller is a ZooKeeper watch."""
        if not self._stopping:
            self.timer.schedule(0, self.delete_records.check_all)

    def stop(self) -> None:
        """Complete every delayed operation now, and any handed over from now on."""
        self._stopping = True
        for purgatory in self.purgatories:
            purgatory.complete_all()
        if self._own_timer:
            self.timer.stop()
