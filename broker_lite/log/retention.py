"""Retention: which old segments a log drops.

Three rules, each applied to the oldest segments first and stopping at the first segment it keeps
(a log only ever loses a prefix):

- time (``cleanup.policy`` with ``delete``): a segment goes once its largest record timestamp is
  more than ``retention.ms`` old (the file's modification time stands in when it has no
  timestamps);
- size (``delete`` too): the oldest segments go while the log stays at or above
  ``retention.bytes`` without them;
- log start (every policy, compacted logs included, as Kafka's
  ``deleteLogStartOffsetBreachedSegments``): segments wholly below the log start offset (moved
  by DeleteRecords) go.

The active segment is never deleted.
"""

from .log import Log
from .segment import LogSegment


def segments_to_delete(log: Log, now_ms: int) -> list[tuple[LogSegment, str]]:
    """The segments retention removes now, each with the rule that removes it."""
    config = log.config
    inactive = log.segments[:-1]
    chosen: dict[int, tuple[LogSegment, str]] = {}
    if config.delete and config.retention_ms >= 0:
        for segment in inactive:
            if now_ms - segment.largest_timestamp <= config.retention_ms:
                break
            chosen.setdefault(segment.base_offset, (segment, f"retention.ms {config.retention_ms}"))
    if config.delete and config.retention_bytes >= 0:
        excess = log.size - config.retention_bytes
        for segment in inactive:
            if excess - segment.size < 0:
                break
            excess -= segment.size
            chosen.setdefault(segment.base_offset,
                              (segment, f"retention.bytes {config.retention_bytes}"))
    for segment in inactive:
        if segment.next_offset > log.log_start_offset:
            break
        chosen.setdefault(segment.base_offset, (segment, "below the log start offset"))
    return [chosen[base] for base in sorted(chosen)]


def enforce_retention(log: Log, now_ms: int | None = None) -> int:
    """Delete what retention allows; return how many segments went."""
    now_ms = log.clock() if now_ms is None else now_ms
    doomed = segments_to_delete(log, now_ms)
    for segment, reason in doomed:
        log.delete_segments([segment], reason)
    log.remove_deleted_files(now_ms)
    return len(doomed)
