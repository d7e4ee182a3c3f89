"""Producer state snapshots: ``<offset>.snapshot`` files, in Kafka's format (version 1).

A snapshot holds the state of every producer of a partition as it was after all batches below
its offset (the log end offset when it was taken), so loading a log can start from it instead of
reading the log from its start. Its name is that offset, zero-padded to 20 digits like a
segment's (``00000000000000001234.snapshot``). Layout, big-endian, offsets computed below::

    version                       int16    0   1
    crc                           uint32   2   CRC-32C of every byte after this field
    entry count                   int32    6
    entries, 46 bytes each:
        producer_id               int64    0
        epoch                     int16    8   the producer's current epoch
        last_sequence             int32   10   last sequence of its last batch (-1: none)
        last_offset               int64   14   last offset of that batch (-1: none)
        offset_delta              int32   22   that batch's last offset minus its first
        timestamp                 int64   26   that batch's max timestamp
        coordinator_epoch         int32   34   of the last transaction marker (-1: none)
        current_txn_first_offset  int64   38   first offset of the open transaction (-1: none)

Only the last batch of each producer is kept, as Kafka keeps it: after loading a snapshot, a
retry of a producer's last batch is still recognised as a duplicate, earlier ones are not (reading
the log past the snapshot brings back up to five per producer).

A snapshot is written to a temporary file, fsynced and renamed into place, so a crash leaves
either no snapshot or a whole one; a file that fails its CRC, version or length check anyway
(bit rot, a copy cut short) raises :class:`CorruptSnapshotError`.
"""

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import crc32c

from .errors import LogError
from .files import (
    SNAPSHOT_SUFFIX,
    fsync_directory,
    offset_file_name,
    parse_segment_file,
)

SNAPSHOT_VERSION = 1
_HEADER = struct.Struct(">hIi")  # version, crc, entry count
_CRC = struct.Struct(">I")
_CRC_OFFSET = struct.calcsize(">h")
_CRC_START = _CRC_OFFSET + _CRC.size  # the CRC covers the entry count and the entries
_ENTRY = struct.Struct(">qhiqiqiq")
_TMP_SUFFIX = ".tmp"


class CorruptSnapshotError(LogError):
    """A snapshot file that fails its version, length or CRC check; the message names it."""


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One producer, as a snapshot stores it (the fields of the layout above)."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int


def snapshot_path(directory: Path, offset: int) -> Path:
    return Path(directory) / offset_file_name(offset, SNAPSHOT_SUFFIX)


def list_snapshots(directory: Path) -> list[int]:
    """The offsets of the snapshot files in ``directory``, ascending."""
    offsets = []
    if Path(directory).is_dir():
        for entry in os.scandir(directory):
            parsed = parse_segment_file(entry.name)
            if parsed is not None and parsed[1] == SNAPSHOT_SUFFIX and not parsed[2]:
                offsets.append(parsed[0])
    return sorted(offsets)


def encode_snapshot(entries: Iterable[SnapshotEntry]) -> bytes:
    entries = list(entries)
    out = bytearray(_HEADER.size + _ENTRY.size * len(entries))
    _HEADER.pack_into(out, 0, SNAPSHOT_VERSION, 0, len(entries))
    position = _HEADER.size
    for e in entries:
        _ENTRY.pack_into(out, position, e.producer_id, e.epoch, e.last_sequence, e.last_offset,
                         e.offset_delta, e.timestamp, e.coordinator_epoch,
                         e.current_txn_first_offset)
        position += _ENTRY.size
    _CRC.pack_into(out, _CRC_OFFSET, crc32c.crc32c(memoryview(out)[_CRC_START:]))
    return bytes(out)


def decode_snapshot(data: bytes, name: str = "snapshot") -> list[SnapshotEntry]:
    """The entries of a snapshot file's bytes; ``name`` goes into error messages."""
    if len(data) < _HEADER.size:
        raise CorruptSnapshotError(f"{name}: {len(data)} bytes, shorter than its header")
    version, crc, count = _HEADER.unpack_from(data)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"{name}: unknown snapshot version {version}")
    computed = crc32c.crc32c(memoryview(data)[_CRC_START:])
    if crc != computed:
        raise CorruptSnapshotError(f"{name}: stored CRC {crc:#010x} but computed {computed:#010x}")
    if count < 0 or len(data) != _HEADER.size + count * _ENTRY.size:
        raise CorruptSnapshotError(
            f"{name}: {len(data)} bytes do not hold the {count} entries it declares")
    return [SnapshotEntry(*fields) for fields in _ENTRY.iter_unpack(data[_HEADER.size:])]


def write_snapshot(path: Path, entries: Iterable[SnapshotEntry]) -> None:
    """Write a snapshot atomically: temporary file, fsync, rename, fsync of the directory."""
    path = Path(path)
    tmp = path.with_name(path.name + _TMP_SUFFIX)
    with open(tmp, "wb") as f:
        f.write(encode_snapshot(entries))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_directory(path.parent)


def read_snapshot(path: Path) -> list[SnapshotEntry]:
    path = Path(path)
    return decode_snapshot(path.read_bytes(), path.name)
