"""A log segment: one ``.log`` file of record batches plus its offset, time and transaction
indexes.

The ``.log`` file holds batches back to back exactly as they were appended (after offset
assignment), in any message format; it is what a Fetch response carries, so reads hand out a
:class:`FileRegion` to send with ``sendfile`` rather than bytes. Its name is its base offset: the
first offset it may hold. Only the last segment of a log (the active one) is appended to.

The offset and time indexes are rebuilt from the segment alone; the transaction index
(:mod:`.txn_index`) also needs the transactions open before the segment, so the log maintains it
(on appends, truncation and loading) and the segment only keeps, checks and moves its file.
"""

import bisect
import mmap
import os
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from broker_lite.common.vocabulary import INT32_MAX, NO_TIMESTAMP, now_ms
from broker_lite.records import BatchReader, RecordsError
from broker_lite.records.record_batch import LOG_OVERHEAD

from .files import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    segment_path,
)
from .index import CorruptIndexError
from .offset_index import OffsetIndex
from .time_index import TimeIndex
from .txn_index import AbortedTxn, TransactionIndex

# Enough of any entry's header to know its magic and last offset (v2 header up to maxTimestamp).
_PEEK = 43
_ENTRY_START = struct.Struct(">qi")  # offset / baseOffset, size / batchLength
_V2_LAST_OFFSET_DELTA = struct.Struct(">i")
_V2_MAX_TIMESTAMP = struct.Struct(">q")
_V1_TIMESTAMP = struct.Struct(">q")
# The most buffers one pwritev takes (POSIX IOV_MAX; Linux refuses more with EINVAL).
_IOV_MAX = os.sysconf("SC_IOV_MAX") if "SC_IOV_MAX" in os.sysconf_names else 1024


def write_fully(fd: int, chunks: Sequence, position: int) -> None:
    """Write ``chunks`` back to back at ``position``: at most :data:`_IOV_MAX` buffers a
    ``pwritev`` (a follower's fetch of small batches brings one chunk per batch, thousands of
    them), and a short write finished from where it stopped."""
    for start in range(0, len(chunks), _IOV_MAX):
        group = chunks[start:start + _IOV_MAX]
        expected = sum(memoryview(c).nbytes for c in group)
        written = os.pwritev(fd, group, position)
        if written < expected:  # a short write is legal; finish it
            rest = b"".join(bytes(c) for c in group)
            while written < expected:
                written += os.pwrite(fd, rest[written:], position + written)
        position += expected


class FileRegion:
    """Bytes ``[position, position + size)`` of a segment file, to send with ``os.sendfile``.

    It holds its own duplicate of the file descriptor, so the bytes stay readable even when the
    segment is deleted or renamed before they are sent; :meth:`close` (or ``with``) releases it.
    """

    __slots__ = ("fd", "position", "size")

    def __init__(self, fd: int, position: int, size: int):
        self.fd, self.position, self.size = os.dup(fd), position, size

    def read(self) -> bytes:
        """The bytes, read at once; the region is closed afterwards."""
        try:
            return os.pread(self.fd, self.size, self.position)
        finally:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "FileRegion":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FileRegion(position={self.position}, size={self.size})"


class BatchSummary(NamedTuple):
    """What the indexes need of an appended batch (one per appended batch: a named tuple, the
    cheapest to make)."""

    last_offset: int
    max_timestamp: int
    size: int


@dataclass(frozen=True)
class EntryHeader:
    """The start of a batch as found in a segment file."""

    position: int
    size: int
    magic: int
    last_offset: int
    max_timestamp: int


def _entry_header(buf: bytes, position: int) -> EntryHeader | None:
    if len(buf) < 17:
        return None
    offset, length = _ENTRY_START.unpack_from(buf)
    magic = buf[16]
    if magic == 2 and len(buf) >= _PEEK:
        last = offset + _V2_LAST_OFFSET_DELTA.unpack_from(buf, 23)[0]
        return EntryHeader(position, length + LOG_OVERHEAD, 2, last,
                           _V2_MAX_TIMESTAMP.unpack_from(buf, 35)[0])
    if magic == 1 and len(buf) >= 26:
        return EntryHeader(position, length + LOG_OVERHEAD, 1, offset,
                           _V1_TIMESTAMP.unpack_from(buf, 18)[0])
    if magic == 0:
        return EntryHeader(position, length + LOG_OVERHEAD, 0, offset, NO_TIMESTAMP)
    return None


class LogSegment:
    """One segment: ``<base>.log`` with ``<base>.index``, ``<base>.timeindex`` and, once a
    transaction is aborted in it, ``<base>.txnindex`` beside it."""

    def __init__(self, directory: Path, base_offset: int, *, index_interval_bytes: int,
                 max_index_size: int, created_ms: int | None = None, file_suffix: str = ""):
        """``file_suffix`` names a segment being built or swapped in (``.cleaned``, ``.swap``)."""
        self.directory = Path(directory)
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes

        def path(suffix: str) -> Path:
            return Path(str(segment_path(self.directory, base_offset, suffix)) + file_suffix)

        self.log_path = path(LOG_SUFFIX)
        self._fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT, 0o644)
        self.size = os.fstat(self._fd).st_size
        self.offset_index = OffsetIndex(path(INDEX_SUFFIX), base_offset, max_index_size)
        self.time_index = TimeIndex(path(TIME_INDEX_SUFFIX), base_offset, max_index_size)
        self.txn_index = TransactionIndex(path(TXN_INDEX_SUFFIX), base_offset)
        self.created_ms = created_ms if created_ms is not None else now_ms()
        self.bytes_since_last_index_entry = 0
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = base_offset
        self.first_batch_timestamp: int | None = None
        self.next_offset = base_offset

    # -- appending ----------------------------------------------------------------------------
    def append(self, chunks: Sequence, batches: Sequence[BatchSummary]) -> None:
        """Write ``chunks`` (the batches' bytes, offsets assigned) at the end of the file and
        index them."""
        position = self.size
        write_fully(self._fd, chunks, position)
        if len(batches) == 1:
            batch = batches[0]
            self._index_batch(position, batch.last_offset, batch.max_timestamp, batch.size)
            position += batch.size
        else:
            with self.offset_index.writes_together(), self.time_index.writes_together():
                for batch in batches:
                    self._index_batch(position, batch.last_offset, batch.max_timestamp,
                                      batch.size)
                    position += batch.size
        self.size = position

    def _index_batch(self, position: int, last_offset: int, max_timestamp: int, size: int) -> None:
        if self.first_batch_timestamp is None:
            self.first_batch_timestamp = max_timestamp
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.offset_of_max_timestamp = last_offset
        if self.bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(last_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += size
        self.next_offset = last_offset + 1

    @property
    def indexes_full(self) -> bool:
        return self.offset_index.is_full or self.time_index.is_full

    def should_roll(self, incoming_bytes: int, incoming_last_offset: int,
                    incoming_max_timestamp: int, now_ms: int, segment_bytes: int,
                    segment_ms: int) -> bool:
        """Kafka's roll rules: size, age, full indexes, or an offset that no longer fits the
        4-byte relative offsets of the indexes. Age is measured in record time (incoming
        timestamp minus the first batch's) when records have timestamps, else in wall-clock
        time since the segment was created, as Kafka's ``timeWaitedForRoll`` does."""
        if incoming_last_offset - self.base_offset > INT32_MAX:
            return True
        if self.size == 0:
            return False
        if self.first_batch_timestamp is not None and self.first_batch_timestamp >= 0:
            waited = incoming_max_timestamp - self.first_batch_timestamp
        else:
            waited = now_ms - self.created_ms
        return self.size + incoming_bytes > segment_bytes or waited > segment_ms \
            or self.indexes_full

    def on_become_inactive(self) -> None:
        """On roll: index the largest timestamp so retention and time lookups see it."""
        self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp,
                                     skip_full_check=True)

    # -- reading ------------------------------------------------------------------------------
    def entries(self, start_position: int = 0, end_position: int | None = None
                ) -> Iterator[EntryHeader]:
        """Headers of the batches from ``start_position`` on, read with small preads."""
        end = self.size if end_position is None else end_position
        position = start_position
        while position < end:
            header = _entry_header(os.pread(self._fd, _PEEK, position), position)
            if header is None or header.size < LOG_OVERHEAD or position + header.size > end:
                return
            yield header
            position += header.size

    def translate_offset(self, offset: int) -> EntryHeader | None:
        """The first batch holding an offset >= ``offset``, found from the offset index."""
        _, position = self.offset_index.lookup(offset)
        for header in self.entries(position):
            if header.last_offset >= offset:
                return header
        return None

    def read(self, start_offset: int, max_size: int, max_position: int | None = None,
             min_one_batch: bool = True) -> FileRegion | None:
        """Whole batches from the one holding ``start_offset``, at most ``max_size`` bytes and
        not past ``max_position``; the first batch whole even when larger, so a consumer always
        progresses (KIP-74). None when the segment has nothing at or after ``start_offset``."""
        limit = self.size if max_position is None else min(max_position, self.size)
        first = self.translate_offset(start_offset)
        if first is None or first.position >= limit:
            return None
        size = min(max_size, limit - first.position)
        if min_one_batch and size < first.size:
            size = first.size
        return FileRegion(self._fd, first.position, size)

    def fetch_upper_bound_offset(self, end_position: int) -> int | None:
        """An offset above every offset of the batches before ``end_position``: that of the
        first index entry at or past it (Kafka's ``fetchUpperBoundOffset``); None when the
        index has none, so the next segment's base offset bounds them."""
        i = bisect.bisect_left(self.offset_index.values, end_position)
        if i == len(self.offset_index.values):
            return None
        return self.base_offset + self.offset_index.keys[i]

    def read_bytes(self, position: int, size: int) -> bytes:
        return os.pread(self._fd, size, position)

    def find_by_timestamp(self, timestamp: int, starting_offset: int) -> tuple[int, int] | None:
        """(timestamp, offset) of the first record at or after ``starting_offset`` whose
        timestamp is >= ``timestamp``."""
        _, indexed_offset = self.time_index.lookup(timestamp)
        _, position = self.offset_index.lookup(max(indexed_offset, starting_offset))
        for header in self.entries(position):
            if header.max_timestamp < timestamp or header.last_offset < starting_offset:
                continue
            for record in self._records_of(header):
                if record.offset >= starting_offset and record.timestamp >= timestamp:
                    return record.timestamp, record.offset
        return None

    def record_with_max_timestamp(self) -> tuple[int, int] | None:
        """(timestamp, offset) of the first record holding the segment's largest timestamp."""
        if self.max_timestamp < 0:
            return None
        header = self.translate_offset(self.offset_of_max_timestamp)
        if header is not None:
            for record in self._records_of(header):
                if record.timestamp == self.max_timestamp:
                    return record.timestamp, record.offset
        return self.max_timestamp, self.offset_of_max_timestamp

    def _records_of(self, header: EntryHeader):
        for batch in BatchReader(self.read_bytes(header.position, header.size)):
            if not batch.is_control_batch:
                yield from batch

    @property
    def last_modified_ms(self) -> int:
        """When the ``.log`` file was last written (its modification time)."""
        return int(os.fstat(self._fd).st_mtime * 1000)

    @property
    def largest_timestamp(self) -> int:
        """Largest record timestamp, or the file's modification time when there is none."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return self.last_modified_ms

    # -- transactions -------------------------------------------------------------------------
    def update_txn_index(self, completed, last_stable_offset: int) -> None:
        """Record a transaction closed by a marker written in this segment (a
        :class:`~.transactions.CompletedTxn`): the index keeps the aborted ones."""
        if completed.is_aborted:
            self.txn_index.append(AbortedTxn(completed.producer_id, completed.first_offset,
                                             completed.last_offset, last_stable_offset))

    def collect_aborted_txns(self, fetch_offset: int,
                             upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        return self.txn_index.collect(fetch_offset, upper_bound)

    # -- recovery and loading -----------------------------------------------------------------
    def recover(self, leader_epochs=None) -> int:
        """Rebuild the offset and time indexes from the data and cut the file at the first
        entry whose size, CRC or offset order is wrong; v2 batches re-assign their epochs in
        ``leader_epochs``. Returns the number of bytes truncated. The transaction index is left
        as it is: rebuilding it needs the log's producer state (see :mod:`.loader`)."""
        self.offset_index.reset()
        self.time_index.reset()
        self.bytes_since_last_index_entry = 0
        self.max_timestamp, self.offset_of_max_timestamp = NO_TIMESTAMP, self.base_offset
        self.first_batch_timestamp, self.next_offset = None, self.base_offset
        valid = 0
        if self.size:
            with mmap.mmap(self._fd, self.size, access=mmap.ACCESS_READ) as data:
                view = memoryview(data)
                reader = BatchReader(view, validate=True)
                try:
                    for batch in reader:
                        last = batch.last_offset
                        # Offsets must increase and fit the indexes' 4-byte relative offsets.
                        if last < self.next_offset or last - self.base_offset > INT32_MAX:
                            break
                        if leader_epochs is not None and batch.magic == 2:
                            leader_epochs.assign(batch.partition_leader_epoch, batch.base_offset)
                        self._index_batch(valid, last, batch_max_timestamp(batch),
                                          batch.size_in_bytes)
                        valid += batch.size_in_bytes
                except RecordsError:
                    pass
                finally:
                    del reader
                    view.release()
        truncated = self.size - valid
        if truncated:
            os.ftruncate(self._fd, valid)
            self.size = valid
        return truncated

    def load(self) -> None:
        """Open after a clean shutdown: check the indexes and pick up the state past the last
        index entry; a failed check rebuilds them (:meth:`recover`)."""
        try:
            if self.size and (self.offset_index.damaged or self.time_index.damaged):
                raise CorruptIndexError(f"{self.log_path.name}: an index file is missing or torn")
            self.offset_index.sanity_check(self.size)
            self.time_index.sanity_check()
        except CorruptIndexError:
            self.recover()
            self._check_txn_index()
            return
        timestamp, offset = self.time_index.last_entry
        self.max_timestamp, self.offset_of_max_timestamp = timestamp, offset
        first = next(self.entries(0), None)
        self.first_batch_timestamp = first.max_timestamp if first is not None else None
        _, position = self.offset_index.lookup(2**63 - 1)
        self.bytes_since_last_index_entry = 0
        self.next_offset = self.base_offset
        for header in self.entries(position):  # batches past the last index entry
            self.bytes_since_last_index_entry += header.size
            self.next_offset = header.last_offset + 1
            if header.max_timestamp > self.max_timestamp:
                self.max_timestamp = header.max_timestamp
                self.offset_of_max_timestamp = header.last_offset
        self._check_txn_index()

    def _check_txn_index(self) -> None:
        try:
            self.txn_index.sanity_check(self.next_offset)
        except CorruptIndexError:
            self.txn_index.needs_rebuild = True

    # -- truncation, flushing, files ------------------------------------------------------------
    def truncate_to(self, offset: int) -> int:
        """Remove batches whose last offset is >= ``offset``; return the bytes removed."""
        header = self.translate_offset(offset)
        if header is None:
            return 0
        removed = self.size - header.position
        os.ftruncate(self._fd, header.position)
        self.size = header.position
        self.recover()  # indexes and in-memory state from what is left
        self.txn_index.truncate_to(offset)
        return removed

    def truncate_to_size(self, size: int) -> None:
        """Undo a failed write: nothing past ``size`` was indexed yet."""
        os.ftruncate(self._fd, size)
        self.size = size

    def flush(self) -> None:
        os.fsync(self._fd)
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def close(self) -> None:
        if self._fd >= 0:
            self.offset_index.close()
            self.time_index.close()
            self.txn_index.close()
            os.close(self._fd)
            self._fd = -1

    def change_suffix(self, old: str, new: str) -> None:
        """Rename every file of the segment from suffix ``old`` to ``new`` (e.g. '' to
        '.deleted'), keeping them open."""
        target = Path(str(self.log_path).removesuffix(old) + new)
        os.replace(self.log_path, target)
        self.log_path = target
        for index in (self.offset_index, self.time_index, self.txn_index):
            index.rename(Path(str(index.path).removesuffix(old) + new))

    def delete(self) -> None:
        self.close()
        for path in (self.log_path, self.offset_index.path, self.time_index.path,
                     self.txn_index.path):
            path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size})"


def batch_max_timestamp(batch) -> int:
    """The largest timestamp of a batch of any format (v0: none)."""
    if batch.magic == 2:
        return batch.max_timestamp
    return batch.timestamp if batch.magic == 1 else NO_TIMESTAMP
