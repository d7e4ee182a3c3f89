"""Opening a partition directory: the segments it holds, in a state fit to append to.

In order, as Kafka's LogLoader does:

1. Leftovers of interrupted work are settled. ``.cleaned`` files (a cleaning that had not yet
   reached the swap) are removed; ``.deleted`` files (segments already dropped from the log) are
   removed; a ``.swap`` segment (a cleaning that had reached the swap) replaces the segments whose
   offsets it covers and loses its suffix, which completes the interrupted swap.
2. Every ``.log`` file becomes a segment; index files without a ``.log`` are removed.
3. After an unclean shutdown, every segment from the one holding the recovery point on is
   recovered: each batch's size, CRC and offset order are checked, the file is cut at the first
   bad byte, the indexes are rebuilt, and segments after a cut are removed (nothing after a torn
   write can be trusted). After a clean shutdown the indexes are only sanity-checked, and rebuilt
   if they fail.
"""

import logging
import os
from pathlib import Path

from broker_lite.records import BatchReader, RecordsError

from .files import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    TIME_INDEX_SUFFIX,
    parse_segment_file,
    segment_path,
)
from .segment import LogSegment

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
            if not state and base <= other < replaced_up_to:
                segment_path(directory, other, suffix).unlink(missing_ok=True)
        os.replace(swap_path, segment_path(directory, base, LOG_SUFFIX))
        logger.info("%s: completed the interrupted swap of segment %d", directory, base)


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
        if suffix != LOG_SUFFIX and not state and base not in bases:
            segment_path(directory, base, suffix).unlink(missing_ok=True)
