"""An append-only file of fixed-size, big-endian entries sorted by key: the shape shared by the
offset index and the time index.

Kafka memory-maps its index files and preallocates them to ``segment.index.bytes``, trimming them
on close; here entries are appended to the file as they come, with one unbuffered write (those of
one append's batches together), so a file always holds exactly its entries (the state Kafka
leaves on disk after a clean shutdown) and another process reading it (``broker-lite dump-log``)
sees whole entries, as with Kafka's mapped files. Entries are also kept in memory (two lists) for
binary search. Index files are a cache of what the segment holds: after a crash or when they
fail the sanity check they are rebuilt from the segment.
"""

import bisect
import os
import struct
from contextlib import contextmanager
from pathlib import Path

import numpy as np


class CorruptIndexError(Exception):
    """An index file whose entries are inconsistent: it must be rebuilt from its segment."""


class SortedIndex:
    """Entries ``(key, value)`` with strictly increasing keys, for one segment."""

    ENTRY: struct.Struct  # set by subclasses
    DTYPE: np.dtype

    def __init__(self, path: Path, base_offset: int, max_index_size: int):
        self.path = Path(path)
        self.base_offset = base_offset
        self.max_entries = max(max_index_size // self.ENTRY.size, 1)
        self.keys: list[int] = []
        self.values: list[int] = []
        # A missing file, or one ending in a partial entry, cannot be trusted to describe its
        # segment: the segment rebuilds it.
        self.damaged = not self.path.exists()
        if self.path.exists():
            raw = self.path.read_bytes()
            usable = len(raw) - len(raw) % self.ENTRY.size
            entries = np.frombuffer(raw, dtype=self.DTYPE, count=usable // self.ENTRY.size)
            self.keys = entries["key"].astype(np.int64).tolist()
            self.values = entries["value"].astype(np.int64).tolist()
            if usable != len(raw):
                self.damaged = True
                self._rewrite()
        self._file = self._open_for_append()
        self._unwritten: list[bytes] | None = None  # entries held by writes_together()

    def _open_for_append(self):
        return open(self.path, "ab", buffering=0)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def is_full(self) -> bool:
        return len(self.keys) >= self.max_entries

    @property
    def size_in_bytes(self) -> int:
        return len(self.keys) * self.ENTRY.size

    def _append(self, key: int, value: int, skip_full_check: bool = False) -> None:
        if self.is_full and not skip_full_check:
            raise CorruptIndexError(f"{self.path} is full ({self.max_entries} entries)")
        self.keys.append(key)
        self.values.append(value)
        if self._unwritten is None:
            self._file.write(self.ENTRY.pack(key, value))
        else:
            self._unwritten.append(self.ENTRY.pack(key, value))

    @contextmanager
    def writes_together(self):
        """The entries appended meanwhile (those of one append's batches) are written at the
        end, in one write."""
        self._unwritten = []
        try:
            yield
        finally:
            entries, self._unwritten = self._unwritten, None
            if entries:
                self._file.write(b"".join(entries))

    def floor(self, key: int) -> int:
        """Position in the entries of the largest key <= ``key``; -1 when there is none."""
        return bisect.bisect_right(self.keys, key) - 1

    def _keep(self, count: int) -> None:
        """Keep the first ``count`` entries."""
        if count < len(self.keys):
            del self.keys[count:], self.values[count:]
            self._rewrite()

    def _rewrite(self) -> None:
        entries = np.empty(len(self.keys), dtype=self.DTYPE)
        entries["key"], entries["value"] = self.keys, self.values
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(entries.tobytes())
        if getattr(self, "_file", None) is not None:
            self._file.close()
        os.replace(tmp, self.path)
        self._file = self._open_for_append()

    def reset(self) -> None:
        self._keep(0)

    def flush(self) -> None:
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def rename(self, path: Path) -> None:
        self.close()
        os.replace(self.path, path)
        self.path = Path(path)
        self._file = self._open_for_append()

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
