"""Walking a buffer of record entries of any magic, as a log segment or a Fetch response holds.

Every entry, whatever its format, starts the same way, which is what lets one reader walk a mix::

    offset / baseOffset   int64   0
    size / batchLength    int32   8   bytes after this field
    (crc | partitionLeaderEpoch)  12
    magic                 int8   16   0 and 1: message set entry, 2: record batch

A buffer may end inside an entry: a Fetch response is cut at the byte limit, a segment may have a
torn write at its end. Such a tail is *incomplete*, not corrupt: the reader stops before it and
reports it. Bytes that cannot be an entry at all (a size below any format's minimum, an unknown
magic) are corrupt and raise :class:`CorruptRecordError`.
"""

import struct
from collections.abc import Iterator

from .errors import CorruptRecordError
from .message_set import MESSAGE_OVERHEAD, LegacyRecordBatch
from .record import Record
from .record_batch import LOG_OVERHEAD, MAGIC_OFFSET, MIN_BATCH_LENGTH, RecordBatch

_SIZE = struct.Struct(">i")
MIN_ENTRY_SIZE = min(MESSAGE_OVERHEAD.values())
_MIN_SIZE_FOR_MAGIC = {0: MESSAGE_OVERHEAD[0], 1: MESSAGE_OVERHEAD[1], 2: MIN_BATCH_LENGTH}

Batch = RecordBatch | LegacyRecordBatch


class BatchReader:
    """Iterate the complete entries of ``buffer`` lazily, each as a batch.

    After iteration, :attr:`position` is where the complete entries end and :attr:`incomplete`
    tells whether bytes remain after them (a partial entry). With ``validate`` each batch is
    checked with ``ensure_valid()`` (sizes, magic, CRC) before it is yielded.

    >>> from broker_lite.records import build_batch, build_message_set
    >>> data = build_message_set([(None, b"old")], magic=0) + build_batch([(None, b"new")])
    >>> reader = BatchReader(data + b"\\x00\\x00")
    >>> [type(b).__name__ for b in reader], reader.incomplete
    (['LegacyRecordBatch', 'RecordBatch'], True)
    """

    def __init__(self, buffer, *, validate: bool = False, max_batch_size: int | None = None):
        self._buffer = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
        if self._buffer.ndim != 1 or self._buffer.itemsize != 1:
            self._buffer = self._buffer.cast("B")
        self.validate = validate
        self.max_batch_size = max_batch_size
        self.position = 0
        self.incomplete = False

    def __iter__(self) -> Iterator[Batch]:
        buffer = self._buffer
        end = len(buffer)
        pos = self.position
        while pos < end:
            remaining = end - pos
            if remaining < LOG_OVERHEAD:
                break
            (size,) = _SIZE.unpack_from(buffer, pos + 8)
            if size < MIN_ENTRY_SIZE:
                raise CorruptRecordError(
                    f"entry at position {pos} has size {size}, below the minimum {MIN_ENTRY_SIZE}"
                )
            if self.max_batch_size is not None and size + LOG_OVERHEAD > self.max_batch_size:
                raise CorruptRecordError(
                    f"entry at position {pos} has size {size + LOG_OVERHEAD}, above the "
                    f"largest allowed {self.max_batch_size}"
                )
            if remaining < size + LOG_OVERHEAD:
                break
            magic = buffer[pos + MAGIC_OFFSET]
            if magic not in _MIN_SIZE_FOR_MAGIC:
                raise CorruptRecordError(f"entry at position {pos} has unknown magic {magic}")
            if size < _MIN_SIZE_FOR_MAGIC[magic]:
                raise CorruptRecordError(
                    f"entry at position {pos} has size {size}, below the minimum "
                    f"{_MIN_SIZE_FOR_MAGIC[magic]} for magic {magic}"
                )
            batch = RecordBatch(buffer, pos) if magic == 2 else LegacyRecordBatch(buffer, pos)
            if self.validate:
                batch.ensure_valid()
            pos += size + LOG_OVERHEAD
            self.position = pos
            yield batch
        self.incomplete = self.position < end


def iter_batches(buffer, *, validate: bool = False) -> Iterator[Batch]:
    """The complete batches of ``buffer``; a partial trailing entry is silently left out."""
    return iter(BatchReader(buffer, validate=validate))


def iter_records(buffer, *, validate: bool = True) -> Iterator[Record]:
    """The data records of every complete batch, control batches skipped, as a consumer sees
    them."""
    for batch in BatchReader(buffer, validate=validate):
        if not batch.is_control_batch:
            yield from batch
