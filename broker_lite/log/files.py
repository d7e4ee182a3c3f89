"""File-name rules of a Kafka log directory, in one place.

    <log.dir>/<topic>-<partition>/                       one directory per partition
        00000000000000000000.log                         segment data, named by base offset
        00000000000000000000.index                       offset index
        00000000000000000000.timeindex                   time index
        00000000000000000000.txnindex                    aborted transactions (when needed)
        00000000000000001234.snapshot                    producer state at offset 1234
        leader-epoch-checkpoint
    <log.dir>/recovery-point-offset-checkpoint           per log dir, all its partitions
    <log.dir>/log-start-offset-checkpoint
    <log.dir>/cleaner-offset-checkpoint                  how far each compacted log was cleaned
    <log.dir>/replication-offset-checkpoint              the high watermark of each partition
    <log.dir>/.kafka_cleanshutdown                       written on clean shutdown

Base offsets are zero-padded to 20 digits so names sort in offset order. A segment file being
deleted, cleaned or swapped in carries one more suffix: ``.deleted``, ``.cleaned`` or ``.swap``.
"""

import os
import re
from pathlib import Path

from broker_lite.common.vocabulary import TopicPartition

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
SEGMENT_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)

DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
CLEAN_SHUTDOWN_MARKER = ".kafka_cleanshutdown"

_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_SEGMENT_FILE = re.compile(r"^(?P<base>\d{20})(?P<suffix>\.[a-z]+)(?P<state>\.[a-z]+)?$")


def offset_file_name(offset: int, suffix: str) -> str:
    """``00000000000000001234.log`` and the like."""
    return f"{offset:020d}{suffix}"


def segment_path(directory: Path, base_offset: int, suffix: str = LOG_SUFFIX) -> Path:
    return directory / offset_file_name(base_offset, suffix)


def parse_segment_file(name: str) -> tuple[int, str, str] | None:
    """(base offset, suffix, state suffix or '') for a segment file name, else None."""
    match = _SEGMENT_FILE.match(name)
    if not match:
        return None
    return int(match["base"]), match["suffix"], match["state"] or ""


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir(name: str) -> TopicPartition | None:
    """The partition of a partition directory; the partition number follows the last '-'."""
    match = _PARTITION_DIR.match(name)
    if not match:
        return None
    return TopicPartition(match["topic"], int(match["partition"]))


def fsync_directory(path: Path) -> None:
    """Make renames and creations inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
