"""What the group and the transaction metadata managers share: the partitions of their internal
topic that this broker coordinates, as its leadership of them changes.

A partition is *loading* from this broker's election as its leader until its log has been
replayed (on a background thread, in the order asked for, a stale leader epoch ignored:
:mod:`.partition_loading`); then it is *owned*, in the leader epoch it was loaded in (the
*coordinator epoch*). Resigning *unloads* it. A partition whose log is missing or cannot be read
is owned all the same, with nothing loaded: the coordinator answers for its keys from then on.

A subclass says what a partition holds:

- :meth:`MetadataManager._replay` rebuilds it from the log while the partition is loading
  (requests for its keys answer COORDINATOR_LOAD_IN_PROGRESS meanwhile);
- :meth:`MetadataManager._install` caches it as the partition becomes owned (under the partition
  lock), :meth:`MetadataManager._on_owned` is run just after (outside it);
- :meth:`MetadataManager._drop` forgets it when the partition is unloaded.

Keys are placed by the topic's partition count (:class:`.internal_topic.PartitionCount`), and
records reach a partition through its leader log (:mod:`.append`).
"""

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from broker_lite.common.vocabulary import now_ms
from broker_lite.log import Log

from .append import append_records
from .internal_topic import LeaderLog, PartitionCount
from .partition_loading import PartitionLoads
from .partitioner import partition_for

logger = logging.getLogger(__name__)


def _ignore(*_) -> None:
    pass


@dataclass(frozen=True)
class Replayed:
    """What :meth:`MetadataManager._replay` read from a partition's log."""

    state: object  # handed to _install and _on_owned
    summary: str  # what was found, for the log line ("3 groups, 12 offsets")
    skipped_records: int = 0


class MetadataManager:
    """The loading and owned partitions of :attr:`topic` on this broker, their loads and
    unloads, key placement, and appends to their leader logs.

    Parameters
    ----------
    config
        The coordinator's settings; ``num_partitions`` (the count the topic is created with)
        and ``load_buffer_size`` (bytes read at a time when loading) are read here.
    leader_log : callable
        ``leader_log(partition) -> (Log, leader_epoch) | None``.
    partition_count : callable
        The topic's partition count as created, or None while it does not exist (then
        ``config.num_partitions``).
    clock_ms : callable
        Wall-clock milliseconds (the timestamps of appended records, and the subclass's own).
    on_appended : callable
        Told after each append, before waiting for the ISR (wakes the fetches waiting for
        data: the followers' too).

    Examples
    --------
    A manager of one key per partition, whose loads tell ``print``:

    >>> from types import SimpleNamespace
    >>> class OneKey(MetadataManager):
    ...     topic = "__one_key"
    ...     def _replay(self, log, on_loaded):
    ...         return Replayed(f"the key of {log}", "1 key")
    ...     def _install(self, partition, state):
    ...         self.cached = state
    ...     def _on_owned(self, partition, epoch, state, on_loaded):
    ...         on_loaded(partition, epoch, state)
    ...     def _drop(self, partition, on_unloaded):
    ...         return 1
    >>> manager = OneKey(SimpleNamespace(num_partitions=1, load_buffer_size=1024),
    ...                  lambda partition: (f"log-{partition}", 3))
    >>> manager.start()
    >>> manager.schedule_load(0, 3, print); manager.wait_for_tasks()
    0 3 the key of log-0
    True
    >>> manager.coordinator_epoch(0), manager.owned_partitions()
    (3, {0})
    >>> manager.schedule_load(0, 4, print); manager.wait_for_tasks()  # kept as cached
    True
    >>> manager.reload_on_new_epoch = True
    >>> manager.schedule_load(0, 5, print); manager.wait_for_tasks()
    0 5 the key of log-0
    True
    >>> manager.schedule_unload(0, 4); manager.wait_for_tasks()  # stale: ignored
    True
    >>> manager.schedule_unload(0, 6); manager.wait_for_tasks(), manager.owned_partitions()
    (True, set())
    >>> manager.shutdown()
    """

    topic: str  # the internal topic
    loader_thread = "metadata-loader"  # the name of the background thread loading partitions
    keys_name = "keys"  # what the keys of a partition are called in log lines
    # An owned partition is loaded again when this broker is elected in a newer leader epoch
    # (the coordinator epoch is part of the state), or kept as cached.
    reload_on_new_epoch = False

    def __init__(self, config, leader_log: LeaderLog, *,
                 partition_count: Callable[[], int | None] = lambda: None,
                 clock_ms: Callable[[], int] = now_ms,
                 on_appended: Callable[[], None] = lambda: None):
        self.config = config
        self.leader_log = leader_log
        self.clock_ms = clock_ms
        self.on_appended = on_appended
        self._partition_count = PartitionCount(self.topic, config.num_partitions,
                                               partition_count)
        self._partition_lock = threading.RLock()
        # partition -> its loads asked for and not yet done: a partition is loading from the
        # moment this broker is elected, not only once the loader thread reaches it (a request
        # for its keys meanwhile answers COORDINATOR_LOAD_IN_PROGRESS, not NOT_COORDINATOR)
        self._loading: dict[int, int] = {}
        self._owned: dict[int, int] = {}  # partition -> coordinator epoch
        self._loads = PartitionLoads(self.loader_thread, self._partition_lock)

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        self.resolve_partition_count()
        self._loads.start()

    def shutdown(self) -> None:
        """Stop loading (a running load stops early; queued loads and unloads are dropped)."""
        self._loads.shutdown()

    @property
    def shutting_down(self) -> bool:
        return self._loads.shutting_down

    def wait_for_tasks(self, timeout_s: float = 30) -> bool:
        """Wait until the loads and unloads asked for so far have run; False on a timeout."""
        return self._loads.wait_for_tasks(timeout_s)

    # -- partitions -------------------------------------------------------------------------

    def resolve_partition_count(self) -> int:
        """The topic's partition count: its own once it exists (read once), the configured one
        until then."""
        return self._partition_count.resolve()

    @property
    def partition_count(self) -> int:
        return self.resolve_partition_count()

    def partition_for(self, key: str) -> int:
        return partition_for(key, self.resolve_partition_count())

    def is_partition_owned(self, partition: int) -> bool:
        with self._partition_lock:
            return partition in self._owned

    def is_partition_loading(self, partition: int) -> bool:
        with self._partition_lock:
            return partition in self._loading

    def coordinator_epoch(self, partition: int) -> int | None:
        """The epoch this broker coordinates ``partition`` in, None when it does not (yet)."""
        with self._partition_lock:
            return self._owned.get(partition)

    @property
    def is_loading(self) -> bool:
        with self._partition_lock:
            return bool(self._loading)

    def owned_partitions(self) -> set[int]:
        with self._partition_lock:
            return set(self._owned)

    # -- appends ----------------------------------------------------------------------------

    def _append_to_leader(self, partition: int, records: Sequence[tuple[bytes, bytes | None]],
                          **batch_options) -> int:
        """Append ``records`` to the leader log of ``partition`` as one batch stamped with its
        leader epoch and the clock (:func:`.append.append_records`); the offset of the first.
        Raises :class:`.append.AppendFailed` (NOT_LEADER_OR_FOLLOWER: this broker does not
        lead it)."""
        found = self.leader_log(partition)
        log, leader_epoch = found if found is not None else (None, -1)
        return append_records(log, leader_epoch, records, timestamp_ms=self.clock_ms(),
                              replication_timeout_ms=getattr(self.config,
                                                             "replication_timeout_ms", None),
                              on_appended=self.on_appended, **batch_options)

    # -- loading and unloading --------------------------------------------------------------

    def schedule_load(self, partition: int, epoch: int, on_loaded: Callable = _ignore) -> None:
        """Load ``partition``, whose leader this broker became in ``epoch``, in the background;
        ``on_loaded`` is told of what was loaded (what of, and when: see the subclass)."""
        self.resolve_partition_count()
        logger.info("loading %s-%d (leader epoch %d)", self.topic, partition, epoch)
        with self._partition_lock:
            self._loading[partition] = self._loading.get(partition, 0) + 1
        self._loads.schedule(lambda: self._load(partition, epoch, on_loaded))

    def schedule_unload(self, partition: int, epoch: int | None,
                        on_unloaded: Callable = _ignore) -> None:
        """Unload ``partition``, which this broker no longer leads (``epoch``: the new leader
        epoch, None when unknown), in the background, after the loads asked for before."""
        logger.info("unloading %s-%d", self.topic, partition)
        self._loads.schedule(lambda: self._unload(partition, epoch, on_unloaded))

    def unload_all(self, on_unloaded: Callable = _ignore) -> None:
        """Unload every partition now (shutdown)."""
        with self._partition_lock:
            self._owned.clear()
            self._loading.clear()
            self._drop(None, on_unloaded)

    def _load(self, partition: int, epoch: int, on_loaded: Callable) -> None:
        if not self._loads.accept_epoch(partition, epoch):
            logger.info("not loading %s-%d for stale epoch %d", self.topic, partition, epoch)
            with self._partition_lock:
                self._load_done(partition)
            return
        with self._partition_lock:
            owned_epoch = self._owned.get(partition)
            if owned_epoch == epoch or (owned_epoch is not None and not self.reload_on_new_epoch):
                self._load_done(partition)
                return
            self._owned.pop(partition, None)
        started = time.monotonic()
        replayed = None
        try:
            found = self.leader_log(partition)
            if found is None:
                logger.warning("no leader log to load %s-%d from", self.topic, partition)
            else:
                replayed = self._replay(found[0], on_loaded)
                logger.info("loaded %s-%d (coordinator epoch %d) in %d ms: %s%s", self.topic,
                            partition, epoch, (time.monotonic() - started) * 1000,
                            replayed.summary, f", {replayed.skipped_records} records skipped"
                            if replayed.skipped_records else "")
        except Exception:
            logger.exception("loading %s-%d failed", self.topic, partition)
        state = replayed.state if replayed is not None else None
        with self._partition_lock:
            self._load_done(partition)
            if self._loads.newest_epoch(partition) != epoch or self.shutting_down:
                return  # resigned (or re-elected) while loading
            self._owned[partition] = epoch
            self._install(partition, state)
        self._on_owned(partition, epoch, state, on_loaded)

    def _load_done(self, partition: int) -> None:
        """One of the loads asked for ``partition`` has run; the caller holds the partition
        lock."""
        left = self._loading.pop(partition, 0) - 1
        if left > 0:
            self._loading[partition] = left

    def _unload(self, partition: int, epoch: int | None, on_unloaded: Callable) -> None:
        if not self._loads.accept_epoch(partition, epoch):
            logger.info("not unloading %s-%d for stale epoch %s", self.topic, partition, epoch)
            return
        with self._partition_lock:
            self._owned.pop(partition, None)
            dropped = self._drop(partition, on_unloaded)
        logger.info("unloaded %s-%d: %d %s", self.topic, partition, dropped, self.keys_name)

    # -- what a subclass says ---------------------------------------------------------------

    def _replay(self, log: Log, on_loaded: Callable) -> Replayed:
        """Rebuild a loading partition's state from ``log``; raises on what cannot be read."""
        raise NotImplementedError

    def _install(self, partition: int, state) -> None:
        """Cache the state :meth:`_replay` rebuilt (None: nothing could be read) as ``partition``
        becomes owned; the caller holds the partition lock."""

    def _on_owned(self, partition: int, epoch: int, state, on_loaded: Callable) -> None:
        """Told once ``partition`` is owned in ``epoch`` (the partition lock is not held)."""

    def _drop(self, partition: int | None, on_unloaded: Callable) -> int:
        """Forget the keys of ``partition`` (None: of every partition); how many there were.
        The caller holds the partition lock."""
        raise NotImplementedError
