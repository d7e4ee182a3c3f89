"""Opening a partition directory: the segments it holds, in a state fit to append to.

In order, as Kafka's LogLoader does:

1. Leftovers of interrupted work are settled. ``.cleaned`` files (a cleaning that had not yet
   reached the swap) are removed; ``.deleted`` files (segments already dropped from the log) are
   removed; a ``.swap`` segment (a cleaning that had reached the swap) replaces the segments whose
   offsets it covers and loses its suffix, which completes the interrupted swap. Its transaction
   index loses the suffix with it; its other indexes are rebuilt.
2. Every ``.log`` file becomes a segment; index files without a ``.log`` are removed.
3. After an unclean shutdown, every segment from the one holding the recovery point on is
   recovered: each batch's size, CRC and offset order are checked, the file is cut at the first
   bad byte, the indexes are rebuilt, and segments after a cut are removed (nothing after a torn
   write can be trusted). After a clean shutdown the indexes are only sanity-checked, and rebuilt
   if they fail.
4. The producer state (:mod:`.producer_state`) is loaded from the newest usable snapshot and the
   batches after it. After a clean shutdown the snapshot at the log end holds all of it (none
   there: there was no producer). Otherwise only snapshots at or below the recovery point are
   trusted, and the log is read from there (from the log start without one) to its end; only
   batch headers are read, except for transaction markers. Snapshots above the log end (data
   lost to recovery) or below the first segment (segments deleted) are removed.
5. The transaction indexes (:mod:`.txn_index`) are brought up to date in the same pass. The
   batches read in step 4 start at a trusted offset (a snapshot at or below the recovery point
   or the log end); index entries below it were flushed with their data and are kept, and those
   at or above it are written again: from there every marker read closes its transaction
   (:mod:`.transactions`) and adds an ABORT to its segment's index with the last stable offset
   of that moment, as when it was appended. A segment whose index is torn or fails its check is
   rebuilt whole: the snapshot is then taken at or below that segment's base offset.
"""

import logging
import os
from pathlib import Path

from broker_lite.records import BatchReader, RecordBatch, RecordsError
from broker_lite.records.record_batch import (
    CONTROL_FLAG,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TRANSACTIONAL_FLAG,
)

from .files import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    SNAPSHOT_SUFFIX,
    SWAP_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    parse_segment_file,
    segment_path,
)
from .producer_state import AppendOrigin, ProducerBatch, ProducerStateManager
from .segment import LogSegment
from .transactions import OngoingTransactions

logger = logging.getLogger(__name__)


def load_segments(directory: Path, *, index_interval_bytes: int, max_index_size: int,
                  recovery_point: int, clean_shutdown: bool, log_start_offset: int = 0,
                  leader_epochs=None) -> list[LogSegment]:
    """The segments of ``directory`` in offset order, recovered as needed (never empty).
    Recovered v2 batches also re-assign their leader epochs in ``leader_epochs``."""
    directory.mkdir(parents=True, exist_ok=True)

    def open_segment(base: int) -> LogSegment:
        return LogSegment(directory, base, index_interval_bytes=index_interval_bytes,
                          max_index_size=max_index_size)

    _remove_leftovers(directory)
    _complete_swaps(directory)
    bases = sorted(base for base, suffix, state in _segment_files(directory)
                   if suffix == LOG_SUFFIX and not state)
    _remove_orphan_indexes(directory, set(bases))
    segments = [open_segment(base) for base in bases]
    if not segments:
        return [open_segment(log_start_offset)]

    if clean_shutdown:
        for segment in segments:
            segment.load()
        return segments
    for i, segment in enumerate(segments):
        following = segments[i + 1] if i + 1 < len(segments) else None
        if following is not None and following.base_offset <= recovery_point:
            segment.load()  # wholly below the recovery point: flushed before the crash
            continue
        truncated = segment.recover(leader_epochs)
        if truncated:
            logger.warning("%s: truncated %d invalid bytes at the end of %s", directory,
                           truncated, segment.log_path.name)
            for later in segments[i + 1:]:
                logger.warning("%s: removing %s after the truncation", directory,
                               later.log_path.name)
                later.delete()
            return segments[:i + 1]
    return segments


def _segment_files(directory: Path):
    for entry in os.scandir(directory):
        parsed = parse_segment_file(entry.name)
        if parsed is not None:
            yield parsed


def _remove_leftovers(directory: Path) -> None:
    for entry in list(os.scandir(directory)):
        if entry.name.endswith((CLEANED_SUFFIX, DELETED_SUFFIX, ".tmp")):
            os.unlink(entry.path)


def _complete_swaps(directory: Path) -> None:
    swaps = sorted(base for base, suffix, state in _segment_files(directory)
                   if suffix == LOG_SUFFIX and state == SWAP_SUFFIX)
    for base in swaps:
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):  # rebuilt from the data below
            Path(str(segment_path(directory, base, suffix)) + SWAP_SUFFIX).unlink(missing_ok=True)
        swap_path = Path(str(segment_path(directory, base, LOG_SUFFIX)) + SWAP_SUFFIX)
        # The swap segment covers [base, its next offset): the segments it replaces are those
        # with a base offset in that range; they are gone or going.
        replaced_up_to = _next_offset_of(swap_path, base)
        for other, suffix, state in list(_segment_files(directory)):
            if not state and suffix != SNAPSHOT_SUFFIX and base <= other < replaced_up_to:
                segment_path(directory, other, suffix).unlink(missing_ok=True)
        os.replace(swap_path, segment_path(directory, base, LOG_SUFFIX))
        logger.info("%s: completed the interrupted swap of segment %d", directory, base)
    # What is left with the suffix belongs to a segment whose log is in place (just now, or by a
    # swap interrupted between renaming its files). Its transaction index cannot be rebuilt from
    # the data alone, and the cleaner flushed it before the swap: it takes its place. The other
    # indexes are rebuilt from the data, as above.
    for base, suffix, state in list(_segment_files(directory)):
        if state != SWAP_SUFFIX:
            continue
        swap = Path(str(segment_path(directory, base, suffix)) + SWAP_SUFFIX)
        if suffix == TXN_INDEX_SUFFIX and segment_path(directory, base, LOG_SUFFIX).exists():
            os.replace(swap, segment_path(directory, base, TXN_INDEX_SUFFIX))
        else:
            swap.unlink()


def _next_offset_of(path: Path, base: int) -> int:
    """The offset after the last complete, valid batch of a segment file."""
    next_offset = base
    with open(path, "rb") as f:
        data = f.read()
    try:
        for batch in BatchReader(data, validate=True):
            next_offset = batch.last_offset + 1
    except RecordsError:
        pass
    return next_offset


def _remove_orphan_indexes(directory: Path, bases: set[int]) -> None:
    for base, suffix, state in list(_segment_files(directory)):
        if suffix not in (LOG_SUFFIX, SNAPSHOT_SUFFIX) and not state and base not in bases:
            segment_path(directory, base, suffix).unlink(missing_ok=True)


def load_producer_state(state: ProducerStateManager, segments: list[LogSegment], *,
                        log_start_offset: int, recovery_point: int, clean_shutdown: bool,
                        now_ms: int) -> None:
    """Bring ``state`` to the log end of ``segments`` (step 4 above)."""
    end = segments[-1].next_offset
    state.delete_snapshots_before(segments[0].base_offset)
    if clean_shutdown and end not in state.snapshot_offsets \
            and _txn_index_rebuild_start(segments) is None:
        state.delete_snapshots_after(end)
        state.reset(end)
        return
    rebuild_producer_state(state, segments, log_start_offset=log_start_offset,
                           snapshot_limit=end if clean_shutdown else recovery_point,
                           now_ms=now_ms)


def rebuild_producer_state(state: ProducerStateManager, segments: list[LogSegment], *,
                           log_start_offset: int, snapshot_limit: int, now_ms: int) -> None:
    """Load the newest snapshot at or below ``snapshot_limit`` and read the batches from there
    to the log end (after recovery, or after the log was truncated). Transaction indexes that
    need it are rebuilt on the way (step 5 above)."""
    end = segments[-1].next_offset
    rebuild_from = _txn_index_rebuild_start(segments)
    if rebuild_from is not None:
        snapshot_limit = min(snapshot_limit, rebuild_from)
    state.delete_snapshots_after(end)
    loaded = state.load_latest_snapshot(min(snapshot_limit, end))
    start = log_start_offset if loaded is None else max(loaded, log_start_offset)
    txns = OngoingTransactions.of_producers(state.producers.values())
    replayed = 0
    for segment in segments:
        if rebuild_from is not None and segment.base_offset >= rebuild_from:
            segment.txn_index.reset()
        elif segment.next_offset > start:
            segment.txn_index.truncate_to(start)  # entries below start were flushed with it
        if segment.next_offset > start:
            replayed += _replay_segment(state, segment, start, txns)
    state.update_map_end_offset(end)
    state.remove_expired_producers(now_ms)
    if replayed:
        logger.info("%s: producer state rebuilt from offset %d (%d batches read), %d producers",
                    segments[-1].directory.name, start, replayed, len(state.producers))
    if rebuild_from is not None:
        logger.info("%s: transaction indexes rebuilt from offset %d",
                    segments[-1].directory.name, rebuild_from)


def _txn_index_rebuild_start(segments: list[LogSegment]) -> int | None:
    """Base offset of the first segment whose transaction index must be rebuilt, if any."""
    return next((s.base_offset for s in segments if s.txn_index.needs_rebuild), None)


def _replay_segment(state: ProducerStateManager, segment: LogSegment, start: int,
                    txns: OngoingTransactions) -> int:
    """Apply the producer batches of ``segment`` that end at or after ``start``, reading only
    their headers (a marker's whole batch), to ``state`` and ``txns``; aborts go to the
    segment's transaction index. Returns the number of producer batches."""
    position = 0
    if segment.base_offset < start:
        first = segment.translate_offset(start)
        if first is None:
            return 0
        position = first.position
    count = 0
    while position + HEADER_SIZE <= segment.size:
        head = segment.read_bytes(position, HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            break
        (base_offset, batch_length, _epoch, magic, _crc, attributes, last_offset_delta,
         _base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence,
         _count) = HEADER.unpack(head)
        size = batch_length + LOG_OVERHEAD
        if magic == 2 and producer_id >= 0 and base_offset + last_offset_delta >= start:
            if attributes & CONTROL_FLAG:
                batch = _control_batch(segment, position, size)
            else:
                batch = ProducerBatch(producer_id, producer_epoch, base_sequence, base_offset,
                                      last_offset_delta, max_timestamp,
                                      is_transactional=bool(attributes & TRANSACTIONAL_FLAG))
            if batch is not None:
                state.check_and_update(batch, AppendOrigin.REPLICATION)
                for completed, lso in txns.apply(txns.prepare([batch])):
                    segment.update_txn_index(completed, lso)
                count += 1
        position += size
    return count


def _control_batch(segment: LogSegment, position: int, size: int) -> ProducerBatch | None:
    try:
        return ProducerBatch.of(RecordBatch(segment.read_bytes(position, size)))
    except RecordsError as exc:  # not a transaction marker: nothing for the producer state
        logger.warning("%s: control batch at position %d skipped: %s", segment.log_path.name,
                       position, exc)
        return None
