"""Log compaction (``cleanup.policy=compact``): keep the latest record of every key.

Which logs are cleaned (Kafka's ``LogCleanerManager``): each log remembers how far it was cleaned
(its clean point, kept per log dir in ``cleaner-offset-checkpoint``); the inactive segments past
it, within the section below, are dirty. A log is cleaned when its dirty bytes are more than
``min.cleanable.dirty.ratio`` of the clean and dirty bytes together, or when a dirty segment's
first batch is older than ``max.compaction.lag.ms`` (:func:`cleaning_due`).

One cleaning pass over a log:

1. The inactive segments old enough to clean (``min.compaction.lag.ms``) and wholly below the
   first open transaction are the section cleaned; the active segment is never touched. (A
   record of an open transaction may yet be aborted: it must not make an older value of its key
   go, as in Kafka, which cleans only below the first unstable offset.)
2. An offset map is built over that section: key -> offset of its latest record, leaving out
   records of aborted transactions (found in the transaction indexes), which read_committed
   consumers never see. Not being the latest of their keys, those records go in step 3.
3. Segments are cleaned in groups (consecutive, together no larger than ``segment.bytes``), each
   group into one new segment named after the group's first base offset. A record survives when it
   is the latest of its key, except tombstones (null values) in segments whose largest timestamp
   is older than ``delete.retention.ms``. Surviving records keep their offsets:

   - a batch whose records all survive is copied byte for byte;
   - a v2 batch that loses some is rebuilt with the same base offset, lastOffsetDelta, producer
     id, epoch, base sequence and flags, so offsets and sequence metadata stay as they were;
   - a v2 batch that loses all of them is dropped, unless it is its producer's last batch in the
     log: then it is kept empty, so the producer state can still be rebuilt from the log;
   - control batches (transaction markers) are kept as they are, so every transaction whose data
     remains keeps its end, and the aborted transactions of the group's transaction indexes are
     carried over to the new segment's index (their markers, which they are keyed by, stay);
   - legacy (v0/v1) messages are kept or dropped whole; a compressed legacy wrapper that loses some
     inner messages is replaced by its survivors as plain messages at their own offsets.

4. Each group is swapped in crash-safely, as Kafka does: the new segment is written as
   ``.cleaned`` and flushed, renamed ``.swap``, the old segments are renamed ``.deleted``, and the
   ``.swap`` suffix is dropped. Loading the log finishes or discards any of these steps after a
   crash (see :mod:`.loader`).
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass

from broker_lite.common.vocabulary import INT32_MAX
from broker_lite.records import (
    BatchReader,
    CompressionType,
    LegacyRecordBatch,
    RecordBatch,
    RecordBatchBuilder,
    TimestampType,
    assemble_batch,
)
from broker_lite.records.message_set import TIMESTAMP_TYPE_FLAG, encode_message

from .files import CLEANED_SUFFIX, SWAP_SUFFIX, fsync_directory
from .log import Log
from .segment import BatchSummary, LogSegment

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CleaningResult:
    segments_cleaned: int
    bytes_before: int
    bytes_after: int
    records_removed: int
    end_offset: int = -1  # the new clean point: the end of the section cleaned (-1: none)


def cleanable_segments(log: Log, now_ms: int) -> list[LogSegment]:
    """Inactive segments whose records are all older than ``min.compaction.lag.ms`` and below
    the first open transaction."""
    first_unstable = log.first_unstable_offset
    section = []
    for segment in log.segments[:-1]:
        if now_ms - segment.largest_timestamp < log.config.min_compaction_lag_ms:
            break
        if first_unstable is not None and segment.next_offset > first_unstable:
            break
        section.append(segment)
    return section


def cleaning_due(log: Log, clean_point: int, now_ms: int | None = None) -> bool:
    """Whether the cleaner should pick ``log``, cleaned up to ``clean_point`` so far: its
    dirty share of the cleanable bytes exceeds ``min.cleanable.dirty.ratio``, or it has dirty
    bytes and a dirty inactive segment whose first batch is older than ``max.compaction.lag.ms``
    (Kafka's ``grabFilthiestCompactedLog`` and ``maxCompactionDelay``)."""
    now_ms = log.clock() if now_ms is None else now_ms
    config = log.config
    if not config.compact:
        return False
    clean_point = max(clean_point, log.log_start_offset)
    section = cleanable_segments(log, now_ms)
    dirty = sum(s.size for s in section if s.next_offset > clean_point)
    if dirty == 0:
        return False
    inactive = log.segments[:-1]
    clean_bytes = sum(s.size for s in inactive if s.next_offset <= clean_point)
    if dirty / (clean_bytes + dirty) > config.min_cleanable_dirty_ratio:
        return True
    first_times = [s.first_batch_timestamp for s in inactive if s.next_offset > clean_point
                   and s.first_batch_timestamp is not None and s.first_batch_timestamp > 0]
    return bool(first_times) and min(first_times) < now_ms - max(config.max_compaction_lag_ms, 0)


def clean(log: Log, now_ms: int | None = None,
          on_step: Callable[[str], None] = lambda step: None) -> CleaningResult:
    """Compact ``log`` once. ``on_step`` is told of each crash-relevant step ("cleaned", "swap",
    "deleted") as it is reached."""
    now_ms = log.clock() if now_ms is None else now_ms
    if not log.config.compact:
        return CleaningResult(0, 0, 0, 0)
    section = cleanable_segments(log, now_ms)
    if not section:
        return CleaningResult(0, 0, 0, 0)
    aborted = _aborted_ranges(log, section)
    latest, last_batch_of_producer = _scan(section, log.segments[-1], aborted)
    horizon = now_ms - log.config.delete_retention_ms
    before = after = removed = 0
    for group in _groups(section, log.config.segment_bytes):
        before += sum(s.size for s in group)
        segment, dropped = _clean_group(log, group, latest, last_batch_of_producer, horizon,
                                        on_step)
        after += segment.size
        removed += dropped
    logger.info("%s: cleaned %d segments, %d -> %d bytes, %d records removed",
                log.directory.name, len(section), before, after, removed)
    return CleaningResult(len(section), before, after, removed, section[-1].next_offset)


def _batches(segment: LogSegment):
    return BatchReader(segment.read_bytes(0, segment.size))


def _aborted_ranges(log: Log, section: list[LogSegment]) -> dict[int, list[tuple[int, int]]]:
    """Producer id -> (first offset, marker offset) of its transactions aborted in the
    section's range."""
    ranges: dict[int, list[tuple[int, int]]] = {}
    for txn in log.collect_aborted_transactions(section[0].base_offset, section[-1].next_offset):
        ranges.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
    return ranges


def _is_aborted(batch, aborted: dict) -> bool:
    if not getattr(batch, "is_transactional", False) or batch.is_control_batch:
        return False
    return any(first <= batch.base_offset <= last
               for first, last in aborted.get(batch.producer_id, ()))


def _scan(section: list[LogSegment], active: LogSegment, aborted: dict) -> tuple[dict, dict]:
    """The offset map (key -> latest offset) of the section without aborted records, and the
    base offset of each producer's last batch in the whole log."""
    latest: dict[bytes, int] = {}
    last_batch_of_producer: dict[int, int] = {}
    for segment in section:
        for batch in _batches(segment):
            if batch.producer_id >= 0:
                last_batch_of_producer[batch.producer_id] = batch.base_offset
            if batch.is_control_batch or _is_aborted(batch, aborted):
                continue
            for record in batch:
                if record.key is not None:
                    latest[record.key] = record.offset
    for batch in _batches(active):
        if batch.producer_id >= 0:
            last_batch_of_producer[batch.producer_id] = batch.base_offset
    return latest, last_batch_of_producer


def _groups(section: list[LogSegment], segment_bytes: int) -> list[list[LogSegment]]:
    groups: list[list[LogSegment]] = []
    for segment in section:
        if groups and sum(s.size for s in groups[-1]) + segment.size <= segment_bytes \
                and segment.next_offset - groups[-1][0].base_offset <= INT32_MAX:
            groups[-1].append(segment)
        else:
            groups.append([segment])
    return groups


def _clean_group(log: Log, group: list[LogSegment], latest: dict, last_batch_of_producer: dict,
                 horizon: int, on_step) -> tuple[LogSegment, int]:
    base = group[0].base_offset
    config = log.config
    cleaned = LogSegment(log.directory, base, index_interval_bytes=config.index_interval_bytes,
                         max_index_size=config.segment_index_bytes, file_suffix=CLEANED_SUFFIX)
    cleaned.truncate_to_size(0)  # a leftover of an earlier, interrupted cleaning
    cleaned.txn_index.reset()
    removed = 0
    for segment in group:
        drop_tombstones = segment.largest_timestamp < horizon
        for batch in _batches(segment):
            kept, dropped = _filter(batch, latest, last_batch_of_producer, drop_tombstones)
            removed += dropped
            for data in kept:
                summary = _summary(data)
                cleaned.append([data], [summary])
        for txn in segment.txn_index:
            cleaned.txn_index.append(txn)
    cleaned.on_become_inactive()
    cleaned.flush()
    on_step("cleaned")
    cleaned.change_suffix(CLEANED_SUFFIX, SWAP_SUFFIX)
    fsync_directory(log.directory)
    on_step("swap")
    log.replace_segments(cleaned, group, on_step)
    return cleaned, removed


def _keeps(record, latest: dict, drop_tombstones: bool) -> bool:
    if record.key is None or latest.get(record.key) != record.offset:
        return False
    return not (record.value is None and drop_tombstones)


def _filter(batch, latest: dict, last_batch_of_producer: dict,
            drop_tombstones: bool) -> tuple[list[bytes], int]:
    """The bytes that replace ``batch`` in the cleaned segment, and how many records went."""
    if batch.is_control_batch:
        return [bytes(batch.raw())], 0
    records = list(batch)
    kept = [r for r in records if _keeps(r, latest, drop_tombstones)]
    dropped = len(records) - len(kept)
    if not dropped:
        return [bytes(batch.raw())], 0
    if isinstance(batch, RecordBatch):
        return _rebuild_v2(batch, kept, last_batch_of_producer), dropped
    return [_legacy_message(batch, r) for r in kept], dropped


def _rebuild_v2(batch: RecordBatch, kept: list, last_batch_of_producer: dict) -> list[bytes]:
    options = dict(
        compression=batch.compression, timestamp_type=batch.timestamp_type,
        base_offset=batch.base_offset, partition_leader_epoch=batch.partition_leader_epoch,
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, is_transactional=batch.is_transactional,
    )
    if kept:
        builder = RecordBatchBuilder(**options)
        for record in kept:
            builder.append(record.value, key=record.key, timestamp=record.timestamp,
                           headers=record.headers, offset_delta=record.offset - batch.base_offset)
        return [builder.build(last_offset_delta=batch.last_offset_delta)]
    if batch.producer_id >= 0 \
            and last_batch_of_producer.get(batch.producer_id) == batch.base_offset:
        options["compression"] = CompressionType.NONE
        return [assemble_batch(b"", record_count=0, last_offset_delta=batch.last_offset_delta,
                               base_timestamp=batch.base_timestamp,
                               max_timestamp=batch.max_timestamp, **options)]
    return []


def _legacy_message(batch: LegacyRecordBatch, record) -> bytes:
    log_append = record.timestamp_type is TimestampType.LOG_APPEND_TIME
    attributes = TIMESTAMP_TYPE_FLAG if batch.magic == 1 and log_append else 0
    return encode_message(record.offset, batch.magic, attributes, record.timestamp, record.key,
                          record.value)


def _summary(data: bytes) -> BatchSummary:
    (batch,) = list(BatchReader(data))
    max_timestamp = batch.max_timestamp if isinstance(batch, RecordBatch) else batch.timestamp
    return BatchSummary(batch.last_offset, max_timestamp, len(data))

