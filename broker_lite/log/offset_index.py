"""The offset index of a segment (``.index``): a sparse map from offset to file position.

Entry, 8 bytes, big-endian::

    relativeOffset  int32   offset - segment base offset (the last offset of an indexed batch)
    position        int32   byte position of that batch in the ``.log`` file

An entry is added once more than ``index.interval.bytes`` have been appended since the last one,
so a lookup lands at most that many bytes before the batch it looks for.
"""

import struct

import numpy as np

from .index import CorruptIndexError, SortedIndex


class OffsetIndex(SortedIndex):
    ENTRY = struct.Struct(">ii")
    DTYPE = np.dtype([("key", ">i4"), ("value", ">i4")])

    def append(self, offset: int, position: int) -> None:
        relative = offset - self.base_offset
        if self.keys and relative <= self.keys[-1]:
            raise CorruptIndexError(
                f"offset {offset} is not above the last entry {self.last_offset} of {self.path}")
        self._append(relative, position)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.keys[-1] if self.keys else self.base_offset

    def lookup(self, offset: int) -> tuple[int, int]:
        """(indexed offset, position) of the largest entry at or below ``offset``; the segment
        start ``(base offset, 0)`` when there is none."""
        i = self.floor(offset - self.base_offset)
        if i < 0:
            return self.base_offset, 0
        return self.base_offset + self.keys[i], self.values[i]

    def truncate_to(self, offset: int) -> None:
        """Drop entries for offsets >= ``offset``."""
        self._keep(self.floor(offset - self.base_offset - 1) + 1)

    def truncate_to_position(self, position: int) -> None:
        """Drop entries pointing at or past ``position``."""
        keep = 0
        while keep < len(self.values) and self.values[keep] < position:
            keep += 1
        self._keep(keep)

    def sanity_check(self, log_size: int) -> None:
        """Entries must increase in offset and position and point inside the segment."""
        relative = np.asarray(self.keys)
        positions = np.asarray(self.values)
        if len(relative) and (
            relative[0] < 0 or (np.diff(relative) <= 0).any() or (np.diff(positions) < 0).any()
            or positions[0] < 0 or positions[-1] >= max(log_size, 1)
        ):
            raise CorruptIndexError(f"{self.path} has entries out of order or past the segment")
