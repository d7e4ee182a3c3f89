"""Kafka's checkpoint files: a version line, a count line, then one entry per line.

    recovery-point-offset-checkpoint, log-start-offset-checkpoint,
    replication-offset-checkpoint (high watermarks), cleaner-offset-checkpoint (per log dir):
        0                       version
        2                       number of entries
        events 0 1234           topic partition offset
        events 1 998

    leader-epoch-checkpoint (per partition dir):
        0
        1
        3 1200                  leader epoch, start offset of that epoch

They are replaced atomically (write a temporary file, fsync, rename, fsync the directory), so a
crash leaves either the old or the new file, never a torn one.
"""

import os
from pathlib import Path

from .files import fsync_directory

VERSION = 0


class CorruptCheckpointError(Exception):
    """A checkpoint file that does not parse; the message names the file and the line."""


def _write_atomically(path: Path, lines: list[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_directory(path.parent)


def _read_entries(path: Path, fields: int) -> list[list[str]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        version, count = int(lines[0]), int(lines[1])
    except (IndexError, ValueError):
        raise CorruptCheckpointError(f"{path}: malformed version or count line") from None
    if version != VERSION:
        raise CorruptCheckpointError(f"{path}: unknown version {version}")
    entries = [line.split() for line in lines[2:] if line.strip()]
    if len(entries) != count or any(len(e) != fields for e in entries):
        raise CorruptCheckpointError(f"{path}: expected {count} entries of {fields} fields")
    return entries


class OffsetCheckpointFile:
    """(topic, partition) -> offset, for every partition of one log dir."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> dict[tuple[str, int], int]:
        try:
            return {(t, int(p)): int(o) for t, p, o in _read_entries(self.path, 3)}
        except ValueError:
            raise CorruptCheckpointError(f"{self.path}: non-numeric partition or offset") from None

    def write(self, offsets: dict[tuple[str, int], int]) -> None:
        entries = [f"{t} {p} {o}" for (t, p), o in sorted(offsets.items())]
        _write_atomically(self.path, [str(VERSION), str(len(entries)), *entries])


class LeaderEpochCheckpointFile:
    """The (leader epoch, start offset) pairs of one partition, in order."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> list[tuple[int, int]]:
        try:
            return [(int(e), int(o)) for e, o in _read_entries(self.path, 2)]
        except ValueError:
            raise CorruptCheckpointError(f"{self.path}: non-numeric epoch or offset") from None

    def write(self, entries: list[tuple[int, int]]) -> None:
        _write_atomically(self.path, [str(VERSION), str(len(entries)),
                                      *(f"{e} {o}" for e, o in entries)])
