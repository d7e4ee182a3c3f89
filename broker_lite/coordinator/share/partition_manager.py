"""The share-partitions this broker leads, and the share sessions of the members fetching from
it (Kafka's ``SharePartitionManager`` and ``ShareSessionCache``; KIP-932, "Share sessions").

A share-partition lives on the leader of its topic partition. It is loaded the first time a
member of its group fetches there, from the state its share coordinator keeps
(ReadShareGroupState, :mod:`.persister`); a state never initialized starts where the group's
``share.auto.offset.reset`` says, and is initialized at its share coordinator. A share-partition
loaded in an older leader epoch than the partition's (leadership went away and came back) is
loaded again: its share coordinator fences the writes of a leader older than the last reader.

Each fetch reads whole batches of the log from the share-partition's fetch offset (up to the
high watermark, or the last stable offset under ``share.isolation.level=read_committed``, where
the records of aborted transactions are archived, never delivered) and acquires what is
available (:class:`.share_partition.SharePartition`). Acquisition locks expire on a timer:
expired records become available again and any fetch waiting for records is woken
(``on_available``). Every acknowledgement, and every change a lock expiry or a closed session
makes, is written to the share coordinator (WriteShareGroupState) before it is answered.

A share session is the set of partitions a member fetches from this broker, with an epoch the
member steps with every ShareFetch and ShareAcknowledge: 0 opens it, -1 closes it (the member's
acquired records are released), anything else must be the next epoch
(INVALID_SHARE_SESSION_EPOCH; a session that does not exist: SHARE_SESSION_NOT_FOUND).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from broker_lite.common.vocabulary import INT32_MAX, TopicPartition, now_ms
from broker_lite.log import OffsetOutOfRangeError
from broker_lite.protocol import ErrorCode
from broker_lite.records import RecordsError
from broker_lite.records.reader import BatchReader

from .config import ShareConfig
from .group_configs import ShareGroupSettings, parse_duration_ms
from .persister import StatePersister
from .records import StateKey
from .share_partition import (
    AcquiredRange,
    ShareAcknowledgeError,
    SharePartition,
    SharePartitionLimits,
)
from .state import UNINITIALIZED

logger = logging.getLogger(__name__)

OPEN, CLOSE = 0, -1  # the share session epochs that open and close a session


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int  # the epoch the next request must carry
    partitions: set[tuple[uuid.UUID, int]] = field(default_factory=set)
    turn: int = 0  # which partition a fetch tries first (they take turns)

    def step(self) -> None:
        self.epoch = 1 if self.epoch >= INT32_MAX else self.epoch + 1

    def in_turn(self) -> list[tuple[uuid.UUID, int]]:
        """The session's partitions in the order the next fetch tries them, starting one
        further each time, so that every partition gets its turn first."""
        ordered = sorted(self.partitions, key=lambda p: (str(p[0]), p[1]))
        if not ordered:
            return ordered
        start = self.turn % len(ordered)
        self.turn += 1
        return ordered[start:] + ordered[:start]


@dataclass(frozen=True)
class Acquired:
    """What one fetch of one share-partition got: the log's bytes and what of them is the
    member's."""

    error: ErrorCode
    records: bytes = b""
    ranges: tuple[AcquiredRange, ...] = ()
    message: str | None = None


class _Held:
    """A loaded share-partition, its lock and the leader epoch it was loaded in."""

    __slots__ = ("leader_epoch", "lock", "partition", "settings", "timer_task")

    def __init__(self, partition: SharePartition, leader_epoch: int,
                 settings: ShareGroupSettings):
        self.partition = partition
        self.leader_epoch = leader_epoch
        self.settings = settings
        self.lock = threading.Lock()
        self.timer_task = None


class SharePartitionManager:
    """The share-partitions and share sessions of this broker.

    Parameters
    ----------
    config : ShareConfig
    partitions
        This broker's :class:`~broker_lite.replication.partition_manager.PartitionManager`.
    persister : StatePersister
    settings : callable
        ``settings(group_id) -> ShareGroupSettings``: the group's configs in force.
    timer
        A :class:`..common.timer.Timer` for the acquisition locks.
    on_available : callable
        ``on_available(TopicPartition)``: records became available again (wakes fetches).
    """

    def __init__(self, config: ShareConfig, partitions, persister: StatePersister,
                 settings: Callable[[str], ShareGroupSettings], timer, *,
                 on_available: Callable[[TopicPartition], None] = lambda tp: None,
                 clock_ms: Callable[[], int] = now_ms):
        self.config = config
        self.partitions = partitions
        self.persister = persister
        self.settings = settings
        self.timer = timer
        self.on_available = on_available
        self.clock_ms = clock_ms
        self._lock = threading.Lock()
        self._sessions: dict[tuple[str, str], ShareSession] = {}
        self._held: dict[StateKey, _Held] = {}

    # -- share sessions ----------------------------------------------------------------------

    def session(self, group_id: str, member_id: str, epoch: int, *,
                added: Iterable[tuple[uuid.UUID, int]] = (),
                forgotten: Iterable[tuple[uuid.UUID, int]] = (), opens: bool = True
                ) -> tuple[ErrorCode, ShareSession | None]:
        """The member's session for a request of ``epoch`` (stepped, ``added`` and
        ``forgotten`` applied), or the error to answer. ``opens``: whether this request may
        open a session (ShareFetch; not ShareAcknowledge)."""
        key = (group_id, member_id)
        with self._lock:
            current = self._sessions.get(key)
            if epoch == OPEN:
                if not opens:
                    return ErrorCode.INVALID_SHARE_SESSION_EPOCH, None
                current = self._sessions[key] = ShareSession(group_id, member_id, OPEN)
            elif current is None:
                return ErrorCode.SHARE_SESSION_NOT_FOUND, None
            elif epoch != CLOSE and epoch != current.epoch:
                return ErrorCode.INVALID_SHARE_SESSION_EPOCH, None
            current.partitions |= set(added)
            current.partitions -= set(forgotten)
            if epoch == CLOSE:
                del self._sessions[key]
            else:
                current.step()
            return ErrorCode.NONE, current

    def close_session(self, session: ShareSession, topic_of: Callable[[uuid.UUID], str | None]
                      ) -> None:
        """Release what the member of a closed session holds on its partitions here."""
        for topic_id, index in session.partitions:
            held = self._held.get(StateKey(session.group_id, topic_id, index))
            topic = topic_of(topic_id)
            if held is None or topic is None:
                continue
            with held.lock:
                changed = held.partition.release_member(session.member_id)
                if changed:
                    self._persist(StateKey(session.group_id, topic_id, index), held)
            if changed:
                self.on_available(TopicPartition(topic, index))

    def release_member(self, group_id: str, member_id: str) -> None:
        """The member left its group (the group coordinator says so): release what it holds
        in the share-partitions of that group led here."""
        with self._lock:
            held = [(k, h) for k, h in self._held.items() if k.group_id == group_id]
        for key, entry in held:
            with entry.lock:
                changed = entry.partition.release_member(member_id)
                if changed:
                    self._persist(key, entry)

    # -- fetching ----------------------------------------------------------------------------

    def acquire(self, key: StateKey, topic: str, member_id: str, *, max_records: int,
                max_bytes: int, wait: bool = True, record_limit: bool = False) -> Acquired:
        """Read ``key``'s partition and acquire for ``member_id`` what is available. Without
        ``wait`` (a fetch waiting in the purgatory, re-checked by whichever thread appended
        or released records, which may hold a share-partition's lock or the share
        coordinator's) nothing blocks: a share-partition not loaded or busy gives nothing
        now, and the fetch is checked again at the next change or answered at its timeout."""
        error, log, leader_epoch = self._leader_log(topic, key.partition)
        if error:
            return Acquired(error)
        if wait:
            held = self._loaded(key, topic, log, leader_epoch)
        else:
            held = self._held.get(key)
            if held is None or held.leader_epoch != leader_epoch:
                return Acquired(ErrorCode.NONE)
        if isinstance(held, ErrorCode):
            return Acquired(held)
        if not held.lock.acquire(blocking=wait):
            return Acquired(ErrorCode.NONE)
        try:
            return self._acquire(key, topic, member_id, held, log, max_records, max_bytes,
                                 record_limit)
        finally:
            held.lock.release()

    def _acquire(self, key: StateKey, topic: str, member_id: str, held: _Held, log,
                 max_records: int, max_bytes: int, record_limit: bool) -> Acquired:
        partition = held.partition
        # the group's configs as they are now: a group may change them while it consumes
        held.settings = settings = self.settings(key.group_id)
        partition.limits.lock_duration_ms = settings.record_lock_duration_ms
        partition.limits.delivery_count_limit = settings.delivery_count_limit
        if log.log_start_offset > partition.start_offset:
            partition.move_start_offset(log.log_start_offset)
        offset = partition.fetch_offset()
        committed = settings.read_committed
        try:
            if committed:
                read = log.read_committed(offset, max(max_bytes, 1))
                region, aborted = read.region, read.aborted_transactions
            else:
                region = log.read(offset, max(max_bytes, 1), max_offset=log.high_watermark)
                aborted = []
        except OffsetOutOfRangeError:
            partition.move_start_offset(log.log_start_offset)
            return Acquired(ErrorCode.NONE)
        if region is None:
            return Acquired(ErrorCode.NONE)
        try:
            data = region.read()
        finally:
            region.close()
        batches, not_deliverable, ends = _batch_offsets(data, aborted)
        ranges = partition.acquire(member_id, batches, max_records=max(max_records, 1),
                                   now_ms=self.clock_ms(), not_deliverable=not_deliverable,
                                   record_limit=record_limit)
        if not ranges:
            return Acquired(ErrorCode.NONE)
        self._schedule_expiry(key, topic, held)
        last = ranges[-1].last_offset
        end = next((position for (first, last_offset), position in zip(batches, ends,
                                                                         strict=True)
                    if last_offset >= last), len(data))
        return Acquired(ErrorCode.NONE, data[:end], tuple(ranges))

    def acknowledge(self, key: StateKey, topic: str, member_id: str,
                    batches: Iterable[dict]) -> tuple[ErrorCode, str | None]:
        """Apply a member's acknowledgement batches (FirstOffset, LastOffset,
        AcknowledgeTypes) to ``key`` and persist the result; (error, message)."""
        error, _, leader_epoch = self._leader_log(topic, key.partition)
        if error:
            return error, None
        held = self._held.get(key)
        if held is None or held.leader_epoch != leader_epoch:
            return ErrorCode.INVALID_RECORD_STATE, "no record of this partition is acquired"
        first_error: tuple[ErrorCode, str | None] = (ErrorCode.NONE, None)
        released = False
        with held.lock:
            for batch in batches:
                try:
                    held.partition.acknowledge(member_id, batch["first_offset"],
                                               batch["last_offset"], batch["acknowledge_types"],
                                               now_ms=self.clock_ms())
                    released |= 2 in batch["acknowledge_types"]
                except ShareAcknowledgeError as exc:
                    logger.debug("%s: acknowledgement of %s by %s refused: %s", key,
                                 batch, member_id, exc)
                    if not first_error[0]:
                        first_error = (exc.code, str(exc))
            write_error = self._persist(key, held)
        if released:
            self.on_available(TopicPartition(topic, key.partition))
        return first_error if first_error[0] else (write_error, None)

    def lock_duration_ms(self, group_id: str) -> int:
        return self.settings(group_id).record_lock_duration_ms

    def loaded(self, key: StateKey) -> SharePartition | None:
        """The share-partition of ``key`` if loaded here (tests, tools)."""
        held = self._held.get(key)
        return held.partition if held is not None else None

    def reset(self, key: StateKey) -> None:
        """Forget ``key``'s share-partition (its offsets were altered or deleted): the next
        fetch loads it again from its share coordinator."""
        with self._lock:
            held = self._held.pop(key, None)
        if held is not None and held.timer_task is not None:
            held.timer_task.cancel()

    # -- internals ---------------------------------------------------------------------------

    def _leader_log(self, topic: str, index: int):
        partition = self.partitions.partition(TopicPartition(topic, index))
        if partition is None or not partition.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER, None, -1
        return ErrorCode.NONE, partition.log, partition.leader_epoch

    def _loaded(self, key: StateKey, topic: str, log, leader_epoch: int) -> _Held | ErrorCode:
        held = self._held.get(key)
        if held is not None and held.leader_epoch == leader_epoch:
            return held
        settings = self.settings(key.group_id)
        result = self.persister.read(key, leader_epoch)
        if result.error:
            logger.info("reading the state of %s failed: %s", key, result.error.name)
            return ErrorCode.NONE if result.error in (ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                                      ErrorCode.NOT_COORDINATOR,
                                                      ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) \
                else result.error
        start, state_epoch = result.start_offset, result.state_epoch
        if start == UNINITIALIZED:
            start = self._reset_offset(log, settings)
            error = self.persister.initialize(key, state_epoch, start)
            if error:
                logger.info("initializing the state of %s failed: %s", key, error.name)
                return ErrorCode.NONE
            logger.info("share-partition %s starts at offset %d (%s)", key, start,
                        settings.auto_offset_reset)
        limits = SharePartitionLimits(settings.record_lock_duration_ms,
                                      settings.delivery_count_limit,
                                      self.config.partition_max_record_locks)
        partition = SharePartition.from_state(start, result.batches, limits, state_epoch)
        with self._lock:
            held = self._held.get(key)
            if held is None or held.leader_epoch != leader_epoch:
                held = self._held[key] = _Held(partition, leader_epoch, settings)
        return held

    def _reset_offset(self, log, settings: ShareGroupSettings) -> int:
        reset = settings.auto_offset_reset
        if reset == "earliest":
            return log.log_start_offset
        if reset.startswith("by_duration:"):
            since = self.clock_ms() - parse_duration_ms(reset.removeprefix("by_duration:"))
            found = log.find_by_timestamp(since)
            return found[1] if found is not None else log.high_watermark
        return log.high_watermark

    def _persist(self, key: StateKey, held: _Held) -> ErrorCode:
        """Write ``held``'s state (the caller holds its lock); a fenced write unloads it."""
        partition = held.partition
        error = self.persister.write(key, partition.state_epoch, held.leader_epoch,
                                     partition.start_offset, partition.state_batches())
        if error in (ErrorCode.FENCED_STATE_EPOCH, ErrorCode.FENCED_LEADER_EPOCH):
            logger.info("the state of %s was fenced (%s): loading it again", key, error.name)
            with self._lock:
                if self._held.get(key) is held:
                    del self._held[key]
        elif error:
            logger.warning("writing the state of %s failed: %s", key, error.name)
        return error

    def _schedule_expiry(self, key: StateKey, topic: str, held: _Held) -> None:
        """Run the lock expiry at the earliest lock deadline (the caller holds the lock)."""
        deadline = held.partition.next_lock_deadline()
        if deadline is None:
            return
        if held.timer_task is not None:
            held.timer_task.cancel()

        def expire() -> None:
            with held.lock:
                held.timer_task = None
                changed = held.partition.expire_locks(self.clock_ms())
                if changed:
                    self._persist(key, held)
                self._schedule_expiry(key, topic, held)
            if changed:
                self.on_available(TopicPartition(topic, key.partition))

        held.timer_task = self.timer.schedule(max(deadline - self.clock_ms(), 0), expire)


def _batch_offsets(data: bytes, aborted) -> tuple[list[tuple[int, int]], set[int], list[int]]:
    """The (first, last) offsets of each batch of ``data``, the offsets not to deliver (control
    records; records of the aborted transactions ``aborted``), and where each batch ends."""
    batches: list[tuple[int, int]] = []
    ends: list[int] = []
    skip: set[int] = set()
    aborted_by_producer: dict[int, list] = {}
    for txn in aborted:
        aborted_by_producer.setdefault(txn.producer_id, []).append(txn)
    reader = BatchReader(data)
    try:
        for batch in reader:
            first, last = batch.base_offset, batch.last_offset
            batches.append((first, last))
            ends.append((ends[-1] if ends else 0) + batch.size_in_bytes)
            if getattr(batch, "is_control_batch", False) or any(
                    txn.first_offset <= first and last <= txn.last_offset
                    for txn in aborted_by_producer.get(getattr(batch, "producer_id", -1), ())):
                skip.update(range(first, last + 1))
    except RecordsError as exc:
        logger.warning("share fetch: stopped reading a batch: %s", exc)
    return batches, skip, ends

