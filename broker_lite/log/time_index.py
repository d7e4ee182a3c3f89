"""The time index of a segment (``.timeindex``): from timestamp to the first offset at or after it.

Entry, 12 bytes, big-endian::

    timestamp       int64   the largest timestamp seen so far in the segment
    relativeOffset  int32   offset of the record with that timestamp - segment base offset

An entry is added with each offset index entry when the segment's largest timestamp has grown, so
both columns increase. ListOffsets by timestamp looks up the last entry at or below the target and
scans the segment forward from there.
"""

import struct

import numpy as np

from .index import CorruptIndexError, SortedIndex


class TimeIndex(SortedIndex):
    ENTRY = struct.Struct(">qi")
    DTYPE = np.dtype([("key", ">i8"), ("value", ">i4")])

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Add an entry when ``timestamp`` is above the last one. The final entry written when a
        segment stops being active may go past the size limit, as in Kafka."""
        if self.keys and timestamp <= self.keys[-1]:
            return
        relative = offset - self.base_offset
        if self.values and relative <= self.values[-1]:
            return
        self._append(timestamp, relative, skip_full_check)

    @property
    def last_entry(self) -> tuple[int, int]:
        """(timestamp, offset) of the last entry; (-1, base offset) when empty."""
        if not self.keys:
            return -1, self.base_offset
        return self.keys[-1], self.base_offset + self.values[-1]

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the largest entry at or below ``timestamp``, else
        (-1, base offset): where a scan for the first record at or after ``timestamp`` starts."""
        i = self.floor(timestamp)
        if i < 0:
            return -1, self.base_offset
        return self.keys[i], self.base_offset + self.values[i]

    def truncate_to(self, offset: int) -> None:
        """Drop entries for offsets >= ``offset``."""
        keep = 0
        while keep < len(self.values) and self.base_offset + self.values[keep] < offset:
            keep += 1
        self._keep(keep)

    def sanity_check(self) -> None:
        timestamps = np.asarray(self.keys)
        relative = np.asarray(self.values)
        if len(relative) and (
            relative[0] < 0 or (np.diff(relative) <= 0).any() or (np.diff(timestamps) <= 0).any()
        ):
            raise CorruptIndexError(f"{self.path} has entries out of order")
