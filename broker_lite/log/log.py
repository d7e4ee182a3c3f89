"""The log of one partition: an ordered list of segments, appended to at the end.

Offsets only grow. Three positions matter to readers::

    log start offset   first offset still kept (retention and DeleteRecords move it forward)
    high watermark     offsets below it are committed: every in-sync replica has them
    log end offset     the offset the next appended record gets

Who moves the high watermark depends on the log's :attr:`Log.high_watermark_keeper`. Without one
(a log outside a broker, or before its partition's state is known) it follows every append, as
for a partition of one replica. A replicated partition (:mod:`broker_lite.replication`) keeps
it: a leader's appends only tell the keeper, which moves the high watermark once the in-sync
replicas have the records; a follower copies the leader's (:meth:`Log.append_as_follower`,
:meth:`Log.update_follower_high_watermark`). It starts where the broker's
``replication-offset-checkpoint`` left it.

Appends go to the last (active) segment, which rolls into a new one on ``segment.bytes``,
``segment.ms`` (or ``max.compaction.lag.ms`` when smaller, on a compacted topic) or full indexes.
Data reaches the disk (fsync) every ``flush.messages`` records or ``flush.ms`` milliseconds, as
Kafka's implementation chapter describes (5.4, the log); the recovery point is the offset below
which all data is known to be on disk, so recovery after a crash scans only what lies past it.

Appends of idempotent producers are checked against the partition's producer state
(:mod:`.producer_state`) under the log lock, after offsets are assigned and before anything is
written: a retried batch is answered with the offsets it got the first time and not written
again. The state changes only once the write succeeded. It is snapshotted on every roll (at the
new segment's base offset) and on close, so loading reads little of the log.

Transactional batches open transactions and markers close them (:mod:`.transactions`): the last
stable offset is where the earliest open transaction starts (else the high watermark), and a
read_committed consumer reads only below it (:meth:`Log.read_committed`), along with the aborted
transactions of what it reads, which each segment's transaction index keeps (:mod:`.txn_index`).
"""

import bisect
import logging
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from broker_lite.common.vocabulary import now_ms
from broker_lite.config.topic import LogConfig
from broker_lite.records import RecordBatch, RecordsError

from .errors import KafkaStorageError, LogError, OffsetOutOfRangeError
from .files import DELETED_SUFFIX, SWAP_SUFFIX
from .leader_epochs import LeaderEpochCache
from .loader import load_producer_state, load_segments, rebuild_producer_state
from .producer_snapshot import SnapshotEntry
from .producer_state import (
    AppendOrigin,
    DuplicateBatch,
    ProducerBatch,
    ProducerStateManager,
)
from .record_checks import RecordRules
from .segment import FileRegion, LogSegment
from .transactions import OngoingTransactions
from .txn_index import AbortedTxn
from .validator import ValidatedRecords, analyze_replicated, validate_and_assign_offsets

logger = logging.getLogger(__name__)


class HighWatermarkKeeper(Protocol):
    def on_leader_append(self, log: "Log") -> None:
        """Records were appended to ``log`` as the leader's (called after the log's lock is
        released): move the high watermark if the in-sync replicas allow it."""

    def wait_for_replication(self, required_offset: int, timeout_s: float):
        """Block until the high watermark reaches ``required_offset`` or ``timeout_s``
        passed; the Kafka error code of the outcome (NONE once committed)."""


@dataclass(slots=True)
class CommittedRead:
    """What a read_committed consumer gets: batches below the last stable offset, and the
    aborted transactions overlapping them (their records are to be dropped)."""

    region: FileRegion | None
    aborted_transactions: list[AbortedTxn]
    last_stable_offset: int


class Log:
    """A partition log in ``directory`` (``<log.dir>/<topic>-<partition>``).

    >>> import tempfile; from broker_lite.records import build_batch
    >>> log = Log(Path(tempfile.mkdtemp()) / "events-0", LogConfig())
    >>> log.append(build_batch([(b"k", b"v")], timestamp=1)).first_offset
    0
    >>> log.log_end_offset, log.read(0, 1 << 20).size > 0
    (1, True)
    >>> log.close()
    """

    def __init__(self, directory: Path, config: LogConfig, *, recovery_point: int = 0,
                 log_start_offset: int = 0, clean_shutdown: bool = False,
                 high_watermark: int | None = None, clock: Callable[[], int] = now_ms):
        self.directory = Path(directory)
        self.config = config
        self._last_rules: RecordRules | None = None
        self._last_rules_config: LogConfig | None = None
        self.clock = clock
        self._lock = threading.RLock()
        # Its log directory failed (an I/O error, a full disk): it takes no write and serves
        # no read until the broker starts again (Kafka's offline log dir, KIP-112).
        self.offline = False
        # told the log directory when a write or sync fails there (the log manager's)
        self.on_storage_error: Callable[[Path], None] | None = None
        self.directory.mkdir(parents=True, exist_ok=True)
        self.leader_epochs = LeaderEpochCache(self.directory)
        segments = load_segments(
            self.directory, index_interval_bytes=config.index_interval_bytes,
            max_index_size=config.segment_index_bytes, recovery_point=recovery_point,
            clean_shutdown=clean_shutdown, log_start_offset=log_start_offset,
            leader_epochs=self.leader_epochs,
        )
        self._segments: dict[int, LogSegment] = {s.base_offset: s for s in segments}
        self._bases: list[int] = [s.base_offset for s in segments]
        self.log_start_offset = max(log_start_offset, self._bases[0])
        # Only a flush moves the recovery point: what recovery rebuilt (indexes) is not on disk
        # yet, and a crash before the next flush must recover it again, as in Kafka.
        self.recovery_point = self.log_end_offset if clean_shutdown else \
            min(recovery_point, self.log_end_offset)
        # The checkpointed high watermark, within the log; the log end without a checkpoint.
        self.high_watermark = self.log_end_offset if high_watermark is None else \
            min(max(high_watermark, self.log_start_offset), self.log_end_offset)
        self.high_watermark_keeper: HighWatermarkKeeper | None = None
        self.leader_epochs.truncate_from_end(self.log_end_offset)  # epochs lost in recovery
        self.producer_state = ProducerStateManager(self.directory)
        load_producer_state(self.producer_state, self.segments,
                            log_start_offset=self.log_start_offset,
                            recovery_point=self.recovery_point, clean_shutdown=clean_shutdown,
                            now_ms=clock())
        self.transactions = OngoingTransactions.of_producers(self.producer_state.producers.values())
        self._unflushed_records = 0
        self._last_flush_ms = clock()
        self._pending_deletions: list[tuple[int, LogSegment]] = []

    # -- positions ----------------------------------------------------------------------------
    @property
    def segments(self) -> list[LogSegment]:
        return [self._segments[b] for b in self._bases]

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[self._bases[-1]]

    @property
    def log_end_offset(self) -> int:
        return self.active_segment.next_offset

    @property
    def size(self) -> int:
        return sum(s.size for s in self._segments.values())

    @property
    def first_unstable_offset(self) -> int | None:
        """First offset of the earliest open transaction (not below the log start); None when
        no transaction is open."""
        with self._lock:
            first = self.transactions.first_unstable_offset
            return None if first is None else max(first, self.log_start_offset)

    @property
    def last_stable_offset(self) -> int:
        """Offsets below it are decided: read_committed consumers read up to it."""
        with self._lock:
            first = self.first_unstable_offset
            return self.high_watermark if first is None else min(first, self.high_watermark)

    @property
    def ongoing_transactions(self) -> dict[int, int]:
        """Producer id -> first offset of its open transaction, earliest first."""
        with self._lock:
            return self.transactions.as_dict()

    def active_producers(self) -> list[SnapshotEntry]:
        """The producers the partition remembers, each as its snapshot entry (DescribeProducers)."""
        with self._lock:
            return [entry.to_snapshot() for entry in self.producer_state.producers.values()]

    # -- appending ----------------------------------------------------------------------------
    def append(self, records, *, partition_leader_epoch: int = 0,
               origin: AppendOrigin = AppendOrigin.CLIENT) -> ValidatedRecords:
        """Validate ``records``, give them the next offsets, and append them (the leader's
        append). A retry of a producer's batch already in the log is not appended again: the
        result then carries the original offsets and no batch (``batches == []``)."""
        with self._lock:
            now = self.clock()
            validated = self._validated(records, self.log_end_offset, partition_leader_epoch,
                                        now)
            producer_batches = _producer_batches(validated)
            producer_update, txn_events = None, []
            if producer_batches:
                checked = self.producer_state.prepare(producer_batches, origin)
                if isinstance(checked, DuplicateBatch):
                    logger.debug("%s: a retried batch, already at offsets %d-%d",
                                 self.directory.name, checked.first_offset,
                                 checked.last_offset)
                    return _duplicate(checked)
                producer_update = checked
                txn_events = self.transactions.prepare(producer_batches)
            keeper = self._write_as_leader(validated, partition_leader_epoch, producer_update,
                                           txn_events, now)
        if keeper is not None:
            keeper.on_leader_append(self)
        return validated

    def append_all(self, record_sets: Sequence, *, partition_leader_epoch: int = 0,
                   origin: AppendOrigin = AppendOrigin.CLIENT) -> list:
        """Append the records of several requests sent together (a producer's pipelined Produce
        requests), in order: the outcome of each is what :meth:`append` gives it, called on
        each in turn (the :class:`ValidatedRecords`, or the error it raises, and then those
        records are not written), but the records taken are written in one vectored write.
        A failed write raises, for all of them, as :meth:`append` does."""
        with self._lock:
            now = self.clock()
            outcomes: list = []
            taken: list[ValidatedRecords] = []
            next_offset = self.log_end_offset
            for records in record_sets:
                try:
                    validated = self._validated(records, next_offset, partition_leader_epoch,
                                                now)
                except (RecordsError, LogError) as exc:
                    outcomes.append(exc)
                    continue
                outcomes.append(validated)
                taken.append(validated)
                next_offset = validated.last_offset + 1
            if not taken:
                return outcomes
            producer_batches = [b for validated in taken for b in _producer_batches(validated)]
            producer_update, txn_events = None, []
            if producer_batches:
                try:
                    checked = self.producer_state.prepare(producer_batches, origin)
                except (RecordsError, LogError):
                    checked = None
                if checked is None or isinstance(checked, DuplicateBatch):
                    # A retry or a broken sequence among them: each request on its own, as
                    # append() takes it (the checks run again, from the state before any).
                    return [self._outcome(records, partition_leader_epoch, origin)
                            for records in record_sets]
                producer_update = checked
                txn_events = self.transactions.prepare(producer_batches)
            keeper = self._write_as_leader(ValidatedRecords.joined(taken),
                                           partition_leader_epoch, producer_update, txn_events,
                                           now)
        if keeper is not None:
            keeper.on_leader_append(self)
        return outcomes

    def _write_as_leader(self, validated: ValidatedRecords, partition_leader_epoch: int,
                         producer_update, txn_events: list, now: int):
        """(under the lock) Write a leader's checked append; the high watermark keeper to tell
        of it once the lock is released (None: the high watermark moved with it)."""
        self._write(validated, [(partition_leader_epoch, validated.first_offset)],
                    producer_update, txn_events, now)
        keeper = self.high_watermark_keeper
        if keeper is None:
            self.high_watermark = self.log_end_offset
        return keeper

    def _outcome(self, records, partition_leader_epoch: int, origin: AppendOrigin):
        try:
            return self.append(records, partition_leader_epoch=partition_leader_epoch,
                               origin=origin)
        except (RecordsError, LogError) as exc:
            return exc

    def _validated(self, records, next_offset: int, partition_leader_epoch: int,
                   now: int) -> ValidatedRecords:
        """(under the lock) ``records`` checked, and given offsets from ``next_offset``."""
        config = self.config
        return validate_and_assign_offsets(
            records, next_offset,
            max_message_bytes=config.max_message_bytes,
            partition_leader_epoch=partition_leader_epoch,
            log_append_time_ms=now if config.message_timestamp_type == "LogAppendTime"
            else None,
            record_rules=self._record_rules(now),
            record_version=config.record_version,
        )

    def append_as_follower(self, records) -> ValidatedRecords | None:
        """Append batches fetched from the partition's leader as they are: offsets, leader
        epochs and timestamps are the leader's (Kafka's ``appendAsFollower``). ``records`` must
        start at the log end offset and hold whole batches. The producer state and the
        transactions follow them unchecked (``AppendOrigin.REPLICATION``); the high watermark
        does not move (:meth:`update_follower_high_watermark` does). None for no batch."""
        with self._lock:
            if len(records) == 0:
                return None
            now = self.clock()
            validated, batches = analyze_replicated(records, self.log_end_offset)
            if not validated.batches:
                return None
            producer_batches = [ProducerBatch.of(batch, batch.base_offset, batch.max_timestamp)
                                for batch in batches
                                if isinstance(batch, RecordBatch) and batch.producer_id >= 0]
            producer_update, txn_events = None, []
            if producer_batches:
                producer_update = self.producer_state.prepare(producer_batches,
                                                              AppendOrigin.REPLICATION)
                txn_events = self.transactions.prepare(producer_batches)
            epochs = [(b.partition_leader_epoch, b.base_offset) for b in batches if b.magic == 2]
            self._write(validated, epochs, producer_update, txn_events, now)
            return validated

    def _write(self, validated: ValidatedRecords, epochs: list[tuple[int, int]],
               producer_update, txn_events: list, now: int) -> None:
        """Write checked batches to the active segment (rolled first when due), then record
        what they change: leader epochs, producer state, transactions, flushing."""
        self._check_online()
        try:
            segment = self._maybe_roll(validated, now)
        except OSError as exc:
            raise self._storage_error("rolling a segment", exc) from exc
        size_before = segment.size
        # The epochs are recorded before the data, as Kafka does, so a crash in between
        # cannot leave data of an epoch the cache does not know.
        try:
            for epoch, start_offset in epochs:
                self.leader_epochs.assign(epoch, start_offset)
        except OSError as exc:  # the leader epoch checkpoint
            raise self._storage_error("recording a leader epoch", exc) from exc
        try:
            segment.append(validated.chunks, validated.batches)
        except OSError as exc:
            try:  # nothing half-written stays (a full disk's partial write), where it can
                segment.truncate_to_size(size_before)
                self.leader_epochs.truncate_from_end(self.log_end_offset)
            except OSError:
                pass  # a failing disk: recovery drops the torn tail at the next start
            raise self._storage_error("append", exc) from exc
        if producer_update is not None:
            self.producer_state.apply(producer_update)
        self.producer_state.update_map_end_offset(self.log_end_offset)
        # An abort is indexed with the LSO of the moment its marker is written, as in Kafka.
        for completed, last_stable_offset in self.transactions.apply(txn_events):
            try:
                segment.update_txn_index(completed, last_stable_offset)
            except OSError as exc:
                raise KafkaStorageError(
                    f"{self.directory}: transaction index update failed: {exc}") from exc
        self._unflushed_records += validated.record_count
        try:
            if self._unflushed_records >= self.config.flush_messages:
                self.flush()
            else:
                self.maybe_flush_by_time(now)
        except OSError as exc:
            raise self._storage_error("flush", exc) from exc

    def _check_online(self) -> None:
        if self.offline:
            raise KafkaStorageError(f"{self.directory}: its log directory is offline")

    def _storage_error(self, what: str, exc: OSError) -> KafkaStorageError:
        """The error to raise for a failed write or sync, once the log directory is told."""
        if self.on_storage_error is not None:
            self.on_storage_error(self.directory.parent)
        return KafkaStorageError(f"{self.directory}: {what} failed: {exc}")

    # -- the high watermark ---------------------------------------------------------------------
    def maybe_increment_high_watermark(self, offset: int) -> bool:
        """The leader's high watermark moves forward to ``offset`` (never back, never past the
        log end); whether it moved."""
        with self._lock:
            offset = min(offset, self.log_end_offset)
            if offset <= self.high_watermark:
                return False
            self.high_watermark = offset
            return True

    def update_follower_high_watermark(self, leader_high_watermark: int) -> int:
        """A follower's high watermark: the leader's, but not past its own log end (Kafka's
        ``updateHighWatermark``); the value set."""
        with self._lock:
            self.high_watermark = max(min(leader_high_watermark, self.log_end_offset),
                                      self.log_start_offset)
            return self.high_watermark

    def _record_rules(self, now: int) -> RecordRules:
        """(under the lock) The rules of an append at ``now``: the last ones while the clock
        and the config have not moved (appends come many to a millisecond)."""
        config = self.config
        rules = self._last_rules
        if rules is not None and rules.now_ms == now and self._last_rules_config is config:
            return rules
        self._last_rules_config = config
        self._last_rules = rules = RecordRules(
            partition=self.directory.name, compacted=config.compact,
            timestamp_type=config.message_timestamp_type,
            timestamp_before_max_ms=config.timestamp_before_max_ms,
            timestamp_after_max_ms=config.timestamp_after_max_ms, now_ms=now)
        return rules

    def _maybe_roll(self, incoming: ValidatedRecords, now: int) -> LogSegment:
        segment = self.active_segment
        if segment.should_roll(incoming.size, incoming.last_offset, incoming.max_timestamp, now,
                               self.config.segment_bytes, self.config.max_segment_ms):
            return self.roll(now)
        return segment

    def roll(self, now: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset (unless the active one is empty)."""
        with self._lock:
            current = self.active_segment
            if current.size == 0:
                return current
            current.on_become_inactive()
            current.flush()  # the inactive segment is complete; its data and indexes are durable
            base = self.log_end_offset
            now = now if now is not None else self.clock()
            # The state at the new base offset: loading then starts from it and this segment.
            # Written before the segment exists, a crash in between leaves a valid snapshot of
            # the log end, as a clean shutdown does.
            self.producer_state.remove_expired_producers(now)
            self.producer_state.take_snapshot()
            segment = LogSegment(self.directory, base,
                                 index_interval_bytes=self.config.index_interval_bytes,
                                 max_index_size=self.config.segment_index_bytes,
                                 created_ms=now)
            segment.next_offset = base
            self._segments[base] = segment
            self._bases.append(base)
            return segment

    # -- flushing -----------------------------------------------------------------------------
    def flush(self) -> None:
        """fsync everything past the recovery point and move the recovery point to the end."""
        with self._lock:
            for segment in self.segments:
                if segment.next_offset > self.recovery_point or segment is self.active_segment:
                    segment.flush()
            self.recovery_point = self.log_end_offset
            self._unflushed_records = 0
            self._last_flush_ms = self.clock()

    def maybe_flush_by_time(self, now: int | None = None) -> None:
        now = self.clock() if now is None else now
        if self._unflushed_records and now - self._last_flush_ms >= self.config.flush_ms:
            self.flush()

    # -- reading ------------------------------------------------------------------------------
    def read(self, offset: int, max_bytes: int, *, max_offset: int | None = None,
             min_one_batch: bool = True) -> FileRegion | None:
        """Whole batches from the one holding ``offset``, within ``max_bytes`` (but the first
        batch whole), not past ``max_offset`` (e.g. the high watermark). None at the log end."""
        with self._lock:
            self._check_online()
            return self._read(offset, max_bytes, max_offset, min_one_batch)[1]

    def read_committed(self, offset: int, max_bytes: int, *,
                       min_one_batch: bool = True) -> CommittedRead:
        """:meth:`read` up to the last stable offset, with the aborted transactions that
        overlap what is returned (Fetch with isolation level READ_COMMITTED)."""
        with self._lock:
            last_stable = self.last_stable_offset
            segment, region = self._read(offset, max_bytes, last_stable, min_one_batch)
            if region is None:
                return CommittedRead(None, [], last_stable)
            # Bound the search by what the region may hold, as Kafka does.
            upper = segment.fetch_upper_bound_offset(region.position + region.size)
            if upper is None:
                i = bisect.bisect_right(self._bases, segment.base_offset)
                upper = self._bases[i] if i < len(self._bases) else self.log_end_offset
            return CommittedRead(region, self.collect_aborted_transactions(offset, upper),
                                 last_stable)

    def _read(self, offset: int, max_bytes: int, max_offset: int | None,
              min_one_batch: bool) -> tuple[LogSegment | None, FileRegion | None]:
        end = self.log_end_offset
        if offset < self.log_start_offset or offset > end:
            raise OffsetOutOfRangeError(
                f"offset {offset} is outside [{self.log_start_offset}, {end}] of "
                f"{self.directory.name}"
            )
        limit = end if max_offset is None else min(max_offset, end)
        if offset >= limit:
            return None, None
        i = max(bisect.bisect_right(self._bases, offset) - 1, 0)
        for base in self._bases[i:]:
            segment = self._segments[base]
            max_position = None
            if limit < end and limit < segment.next_offset:
                header = segment.translate_offset(limit)
                max_position = header.position if header is not None else None
            region = segment.read(offset, max_bytes, max_position, min_one_batch)
            if region is not None:
                return segment, region
        return None, None

    def collect_aborted_transactions(self, start: int, end: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping offsets ``[start, end)``, from the segment
        holding ``start`` on, until an abort's LSO shows no later one can overlap (Kafka's
        ``collectAbortedTransactions``)."""
        with self._lock:
            found: list[AbortedTxn] = []
            i = max(bisect.bisect_right(self._bases, start) - 1, 0)
            for base in self._bases[i:]:
                aborted, complete = self._segments[base].collect_aborted_txns(start, end)
                found.extend(aborted)
                if complete:
                    break
            return found

    def find_by_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(timestamp, offset) of the earliest record whose timestamp is >= ``timestamp``
        (ListOffsets by time); None when every record is older."""
        with self._lock:
            for segment in self.segments:
                if segment.size == 0 or segment.largest_timestamp < timestamp:
                    continue
                found = segment.find_by_timestamp(timestamp, self.log_start_offset)
                if found is not None:
                    return found
            return None

    def record_with_max_timestamp(self) -> tuple[int, int] | None:
        """(timestamp, offset) of the record with the largest timestamp, the earliest on ties."""
        with self._lock:
            best = None
            for segment in self.segments:
                if segment.size and segment.max_timestamp >= 0 and \
                        (best is None or segment.max_timestamp > best.max_timestamp):
                    best = segment
            return best.record_with_max_timestamp() if best is not None else None

    def offsets_before(self, timestamp: int, max_count: int) -> list[int]:
        """ListOffsets v0 (Kafka's ``legacyFetchOffsetsBefore``): up to ``max_count`` offsets,
        largest first, from the segment base offsets (the log start offset for the first) and,
        when the active segment holds data, the log end offset, each standing for the time its
        segment file was last written (the log end: now). ``timestamp`` -1 starts from the log
        end, -2 from the log start (one offset), else from the last segment written at or before
        ``timestamp``; none when every segment was written later."""
        with self._lock:
            points = [(max(s.base_offset, self.log_start_offset), s.last_modified_ms)
                      for s in self.segments]
            if self.active_segment.size > 0:
                points.append((self.log_end_offset, self.clock()))
        if timestamp == -1:
            start = len(points) - 1
        elif timestamp == -2:
            start = 0
        else:
            start = max((i for i, (_, written) in enumerate(points) if written <= timestamp),
                        default=-1)
        chosen = [offset for offset, _ in reversed(points[:start + 1])][:max(max_count, 0)]
        return sorted(chosen, reverse=True)

    def epoch_for_offset(self, offset: int) -> int:
        """The leader epoch that wrote ``offset`` (-1 when unknown)."""
        epoch = -1
        for known, start in self.leader_epochs.entries:
            if start > offset:
                break
            epoch = known
        return epoch

    # -- truncation and deletion ----------------------------------------------------------------
    def truncate_to(self, offset: int) -> None:
        """Remove every record at or above ``offset`` (a follower diverging from its leader)."""
        with self._lock:
            if offset >= self.log_end_offset:
                return
            for base in reversed(list(self._bases)):
                if base >= offset and len(self._bases) > 1:
                    self._remove_segment(base).delete()
            self.active_segment.truncate_to(offset)
            self.leader_epochs.truncate_from_end(self.log_end_offset)
            rebuild_producer_state(self.producer_state, self.segments,
                                   log_start_offset=self.log_start_offset,
                                   snapshot_limit=self.log_end_offset, now_ms=self.clock())
            self.transactions = OngoingTransactions.of_producers(
                self.producer_state.producers.values())
            self.recovery_point = min(self.recovery_point, self.log_end_offset)
            self.high_watermark = min(self.high_watermark, self.log_end_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Drop every record and start the log afresh at ``offset`` (a follower whose log ends
        below its leader's log start: Kafka's ``truncateFullyAndStartAt``)."""
        with self._lock:
            for base in list(self._bases):
                self._remove_segment(base).delete()
            self.producer_state.delete_snapshots_after(-1)
            self.producer_state.reset(offset)
            segment = LogSegment(self.directory, offset,
                                 index_interval_bytes=self.config.index_interval_bytes,
                                 max_index_size=self.config.segment_index_bytes,
                                 created_ms=self.clock())
            segment.next_offset = offset
            self._segments[offset] = segment
            self._bases.append(offset)
            self.leader_epochs.clear()
            self.transactions = OngoingTransactions.of_producers([])
            self.log_start_offset = self.recovery_point = self.high_watermark = offset

    def delete_segments(self, segments: list[LogSegment], reason: str) -> None:
        """Drop inactive segments from the log: renamed ``.deleted`` now, removed after
        ``file.delete.delay.ms`` (readers holding a region of them keep their bytes)."""
        with self._lock:
            if any(segment is self.active_segment for segment in segments):
                raise ValueError("the active segment is never deleted")
            # The start moves first, as Kafka's does under its lock: a reader that does not
            # take the lock (the log's size, a test) never finds the segments gone while the
            # start still points into them.
            doomed = {segment.base_offset for segment in segments}
            first_kept = next(base for base in self._bases if base not in doomed)
            self.log_start_offset = max(self.log_start_offset, first_kept)
            for segment in segments:
                logger.info("%s: deleting segment %d (%s)", self.directory.name,
                            segment.base_offset, reason)
                self._retire(segment)
            self.producer_state.delete_snapshots_before(self._bases[0])
            self.remove_deleted_files()

    def remove_deleted_files(self, now: int | None = None) -> None:
        now = self.clock() if now is None else now
        due = [s for when, s in self._pending_deletions if when <= now]
        self._pending_deletions = [(w, s) for w, s in self._pending_deletions if w > now]
        for segment in due:
            segment.delete()

    def _retire(self, segment: LogSegment) -> None:
        """Take a segment out of the log: renamed ``.deleted`` now, removed from disk after
        ``file.delete.delay.ms``."""
        self._remove_segment(segment.base_offset)
        segment.change_suffix("", DELETED_SUFFIX)
        self._pending_deletions.append((self.clock() + self.config.file_delete_delay_ms, segment))

    def _remove_segment(self, base: int) -> LogSegment:
        self._bases.remove(base)
        return self._segments.pop(base)

    def replace_segments(self, new: LogSegment, old: list[LogSegment],
                         on_step: Callable[[str], None] = lambda step: None) -> None:
        """Swap ``new`` (a ``.swap`` segment) in for ``old``: the cleaner's last steps, in
        Kafka's crash-safe order. ``old`` are renamed ``.deleted`` first, then ``new`` loses its
        suffix; a crash in between leaves a ``.swap`` file that loading completes."""
        with self._lock:
            for segment in old:
                self._retire(segment)
            on_step("deleted")
            new.change_suffix(SWAP_SUFFIX, "")
            self._segments[new.base_offset] = new
            bisect.insort(self._bases, new.base_offset)
            self.remove_deleted_files()

    def increment_log_start_offset(self, offset: int) -> bool:
        """DeleteRecords: records below ``offset`` are no longer readable (Kafka's
        ``maybeIncrementLogStartOffset``). The log start never moves back, nor past the high
        watermark (:class:`OffsetOutOfRangeError`). Leader epochs that ended below it are
        forgotten; the segments wholly below it go with the next retention pass. True when
        it moved."""
        with self._lock:
            if offset > self.high_watermark:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {offset} of partition "
                    f"{self.directory.name} since it is larger than the high watermark "
                    f"{self.high_watermark}")
            if offset <= self.log_start_offset:
                return False
            self.log_start_offset = offset
            self.leader_epochs.truncate_from_start(offset)
            logger.info("%s: incremented the log start offset to %d (records deleted)",
                        self.directory.name, offset)
            return True

    # -- closing ------------------------------------------------------------------------------
    def close(self) -> None:
        """Flush, snapshot the producer state at the log end, and close the files."""
        with self._lock:
            self.flush()
            self.producer_state.take_snapshot()
            for segment in self._segments.values():
                segment.close()
            for _, segment in self._pending_deletions:
                segment.delete()
            self._pending_deletions = []

    def delete(self) -> None:
        """Remove the whole partition directory (topic deletion)."""
        with self._lock:
            for segment in self._segments.values():
                segment.close()
            shutil.rmtree(self.directory, ignore_errors=True)

    def __repr__(self) -> str:
        return (f"Log({self.directory.name}, start={self.log_start_offset}, "
                f"end={self.log_end_offset}, segments={len(self._bases)})")


def _producer_batches(validated: ValidatedRecords) -> list[ProducerBatch]:
    return [ProducerBatch.of(batch, first_offset, max_timestamp)
            for batch, first_offset, max_timestamp in validated.producers]


def _duplicate(duplicate: DuplicateBatch) -> ValidatedRecords:
    return ValidatedRecords(first_offset=duplicate.first_offset,
                            last_offset=duplicate.last_offset,
                            max_timestamp=duplicate.timestamp,
                            offset_of_max_timestamp=duplicate.last_offset)
