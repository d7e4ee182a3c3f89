"""The transaction index of a segment (``.txnindex``): the transactions aborted in it.

One entry per transaction whose ABORT marker was written in the segment (Kafka's AbortedTxn),
34 bytes, big-endian, in the order the markers were written::

    version           int16   0
    producerId        int64   the producer whose transaction was aborted
    firstOffset       int64   its first offset (possibly in an earlier segment)
    lastOffset        int64   the offset of its ABORT marker, in this segment
    lastStableOffset  int64   the last stable offset right after the abort: the first offset of
                              the earliest transaction then still open, else lastOffset + 1

A read_committed consumer receives the aborted transactions that overlap what it fetched and
drops their records. ``lastStableOffset`` bounds the search: no transaction aborted later can
have started before it, so once an entry's LSO reaches the end of the fetched range, later
segments need not be read.

The file exists only once the segment has an aborted transaction, as in Kafka. Entries are kept
in memory too. A file that does not hold whole, well-formed entries with increasing
``lastOffset`` is marked :attr:`TransactionIndex.needs_rebuild`; rebuilding needs the producer
state of the log, so the log loader does it (see :mod:`.loader`).
"""

import logging
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .index import CorruptIndexError

logger = logging.getLogger(__name__)

ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = ENTRY.size  # 34
CURRENT_VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """One aborted transaction (an entry of the index)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def to_bytes(self) -> bytes:
        """
        >>> AbortedTxn(7, 10, 12, 13).to_bytes().hex()
        '00000000000000000007000000000000000a000000000000000c000000000000000d'
        """
        return ENTRY.pack(CURRENT_VERSION, self.producer_id, self.first_offset,
                          self.last_offset, self.last_stable_offset)

    @classmethod
    def from_bytes(cls, data, offset: int = 0) -> "AbortedTxn":
        version, producer_id, first, last, lso = ENTRY.unpack_from(data, offset)
        if version != CURRENT_VERSION:
            raise CorruptIndexError(f"aborted transaction entry of version {version}, "
                                    f"only {CURRENT_VERSION} is known")
        return cls(producer_id, first, last, lso)


class TransactionIndex:
    """The aborted transactions of the segment starting at ``base_offset``, kept in ``path``."""

    def __init__(self, path: Path, base_offset: int):
        self.path = Path(path)
        self.base_offset = base_offset
        self.entries: list[AbortedTxn] = []
        self.needs_rebuild = False
        self._file = None  # opened on the first append
        if self.path.exists():
            try:
                self.entries = _parse(self.path.read_bytes(), self.path)
            except CorruptIndexError as exc:
                logger.warning("%s", exc)
                self.needs_rebuild = True

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[AbortedTxn]:
        return iter(self.entries)

    @property
    def last_offset(self) -> int | None:
        return self.entries[-1].last_offset if self.entries else None

    def append(self, txn: AbortedTxn) -> None:
        """Add the entry of an abort written in the segment: after every earlier one."""
        if self.entries and txn.last_offset <= self.entries[-1].last_offset:
            raise ValueError(f"aborted transaction at offset {txn.last_offset} is not after the "
                             f"last one ({self.entries[-1].last_offset}) of {self.path}")
        if self._file is None:
            # Unbuffered: an abort is rare, and a process killed right after it keeps it.
            self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 (closed by close())
        self._file.write(txn.to_bytes())
        self.entries.append(txn)

    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """The entries overlapping ``[fetch_offset, upper_bound)``, and whether the search is
        complete (an entry's LSO reached ``upper_bound``, so no later segment can add one),
        as Kafka's ``collectAbortedTxns``."""
        found = []
        for txn in self.entries:
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound:
                return found, True
        return found, False

    def truncate_to(self, offset: int) -> None:
        """Drop the entries of aborts at or above ``offset``."""
        keep = len(self.entries)
        while keep and self.entries[keep - 1].last_offset >= offset:
            keep -= 1
        if keep < len(self.entries):
            del self.entries[keep:]
            self._rewrite()

    def reset(self) -> None:
        """Drop every entry (before a rebuild)."""
        self.entries.clear()
        self.needs_rebuild = False
        self._rewrite()

    def sanity_check(self, next_offset: int) -> None:
        """Every abort must lie in the segment, ``[base offset, next_offset)``."""
        for txn in self.entries:
            if not self.base_offset <= txn.last_offset < next_offset \
                    or txn.first_offset > txn.last_offset:
                raise CorruptIndexError(
                    f"{self.path}: aborted transaction {txn} outside the segment "
                    f"[{self.base_offset}, {next_offset})")

    def _rewrite(self) -> None:
        """Make the file hold exactly the entries (none: no file)."""
        self.close()
        if not self.entries:
            self.path.unlink(missing_ok=True)
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(b"".join(txn.to_bytes() for txn in self.entries))
        os.replace(tmp, self.path)

    def flush(self) -> None:
        if self._file is not None:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def rename(self, path: Path) -> None:
        self.close()
        if self.path.exists():
            os.replace(self.path, path)
        self.path = Path(path)

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"TransactionIndex({self.path.name}, entries={len(self.entries)})"


def _parse(raw: bytes, path: Path) -> list[AbortedTxn]:
    if len(raw) % ENTRY_SIZE:
        raise CorruptIndexError(f"{path}: {len(raw)} bytes is not a whole number of "
                                f"{ENTRY_SIZE}-byte entries")
    entries = []
    for position in range(0, len(raw), ENTRY_SIZE):
        try:
            txn = AbortedTxn.from_bytes(raw, position)
        except CorruptIndexError as exc:
            raise CorruptIndexError(f"{path} at byte {position}: {exc}") from None
        if entries and txn.last_offset <= entries[-1].last_offset:
            raise CorruptIndexError(f"{path} at byte {position}: aborted transaction at offset "
                                    f"{txn.last_offset} is not after {entries[-1].last_offset}")
        entries.append(txn)
    return entries
