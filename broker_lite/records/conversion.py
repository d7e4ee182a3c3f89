"""Records from one message format to another, as Kafka's brokers convert them.

Up, on append (Kafka's ``LogValidator``): the records of a v0/v1 message set (or of any batch
whose format is not the log's) are written again in the log's format by :func:`build_entries`,
at the offsets the log gives them.

Down, on fetch (Kafka's ``RecordsUtil.downConvert`` and ``LazyDownConversionRecords``): a client
that fetches with Fetch v0-v1 reads message format v0, v2-v3 reads v1; :func:`down_convert`
turns what the log holds into that format, batch by batch:

- a batch already in the target format (or an older one) passes unchanged;
- control batches (transaction markers) are left out: v0 and v1 have no such thing. The records
  of aborted transactions stay: a Fetch before v4 reads uncommitted data;
- record headers are dropped: v0 and v1 have none;
- a compressed batch becomes one wrapper of the same codec holding all its records (the client
  skips those before its fetch offset); an uncompressed batch becomes one message per record,
  without the records below the fetch offset (some librdkafka versions rely on that);
- zstd cannot be down-converted (message formats v0 and v1 have no zstd):
  :class:`UnsupportedCompressionError`;
- timestamps: v1 keeps each record's, and a LogAppendTime batch gives its log append time to
  every message, flagged as such; v0 has no timestamps.

Sizes follow Kafka's: the first converted batch is returned whole, however large, so a client
always progresses; after it, whole messages are added while the total stays within the size the
caller allows (Kafka sends the size of the data read before conversion).

>>> from broker_lite.records import build_batch, iter_records
>>> stored = build_batch([(b"k", b"a"), (b"k", b"b")], timestamp=5, base_offset=10)
>>> converted = down_convert(stored, to_magic=1, first_offset=11, max_bytes=1 << 20)
>>> [(r.offset, r.value, r.timestamp) for r in iter_records(converted)]
[(11, b'b', 5)]
"""

import struct
from collections.abc import Iterator, Sequence

from broker_lite.common.vocabulary import NO_PARTITION_LEADER_EPOCH

from .compression import CompressionType
from .errors import UnsupportedCompressionError
from .message_set import MessageSetBuilder
from .reader import Batch, BatchReader
from .record import Record, TimestampType
from .record_batch import LOG_OVERHEAD, MAGIC, RecordBatch, RecordBatchBuilder

_SIZE = struct.Struct(">i")
_SIZE_OFFSET = 8  # every entry: offset int64, then its size int32


def build_entries(records: Sequence[Record], *, magic: int, compression: CompressionType,
                  timestamp_type: TimestampType, log_append_time: int | None = None,
                  partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH) -> list[bytes]:
    """``records``, each at its own offset (increasing), in message format ``magic``: one v2
    batch; or a v0/v1 message set, one wrapper when compressed, else one message per record.
    ``log_append_time`` is the time of a LogAppendTime log. Headers are not written in v0/v1.

    >>> from broker_lite.records import LegacyRecordBatch
    >>> records = [Record(7, 100, TimestampType.CREATE_TIME, b"k", b"v")]
    >>> [LegacyRecordBatch(e).offset for e in build_entries(
    ...     records, magic=1, compression=CompressionType.NONE,
    ...     timestamp_type=TimestampType.CREATE_TIME)]
    [7]
    """
    if not records:
        return []
    if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
        timestamp_type = TimestampType.CREATE_TIME
    log_append = timestamp_type == TimestampType.LOG_APPEND_TIME
    base = records[0].offset
    if magic == MAGIC:
        batch = RecordBatchBuilder(compression=compression, timestamp_type=timestamp_type,
                                   base_offset=base, partition_leader_epoch=partition_leader_epoch)
        for record in records:
            batch.append(record.value, key=record.key, timestamp=record.timestamp,
                         headers=record.headers, offset_delta=record.offset - base)
        return [batch.build(log_append_time=log_append_time if log_append else None)]
    messages = MessageSetBuilder(magic=magic, compression=compression,
                                 timestamp_type=timestamp_type, base_offset=base,
                                 log_append_time=log_append_time)
    for record in records:
        messages.append(record.value, key=record.key, timestamp=record.timestamp,
                        offset=record.offset)
    return list(split_entries(messages.build()))


def split_entries(data) -> Iterator[bytes]:
    """The entries (batches or messages) of ``data``, each as its own bytes; a partial tail is
    left out."""
    view = memoryview(data)
    position = 0
    while len(view) - position >= LOG_OVERHEAD:
        (size,) = _SIZE.unpack_from(view, position + _SIZE_OFFSET)
        end = position + LOG_OVERHEAD + size
        if size < 0 or end > len(view):
            return
        yield bytes(view[position:end])
        position = end


def _log_append_time(batch: Batch) -> int | None:
    if batch.timestamp_type != TimestampType.LOG_APPEND_TIME:
        return None
    return batch.max_timestamp if isinstance(batch, RecordBatch) else batch.timestamp


def down_convert_batch(batch: Batch, to_magic: int, first_offset: int) -> list[bytes]:
    """One stored batch as entries of message format ``to_magic`` (0 or 1); empty when
    nothing of it is left (a control batch, records all below ``first_offset``)."""
    if batch.is_control_batch:
        return []
    codec = batch.compression
    if codec is CompressionType.ZSTD:
        raise UnsupportedCompressionError(
            f"the zstd-compressed batch at offset {batch.base_offset} cannot be down-converted "
            f"to message format v{to_magic}")
    if batch.magic <= to_magic:
        return [bytes(batch.raw())]
    records = list(batch)
    if codec is CompressionType.NONE:
        records = [r for r in records if r.offset >= first_offset]
    return build_entries(records, magic=to_magic, compression=codec,
                         timestamp_type=batch.timestamp_type,
                         log_append_time=_log_append_time(batch))


def down_convert(data, *, to_magic: int, first_offset: int, max_bytes: int) -> bytes:
    """The batches of ``data`` (as a log read returns them) in message format ``to_magic``:
    the first converted batch whole, then whole messages while the total stays within
    ``max_bytes``. A zstd batch ends the conversion; :class:`UnsupportedCompressionError` when
    it is the first."""
    out = bytearray()
    limit = max_bytes
    for batch in BatchReader(data):
        try:
            entries = down_convert_batch(batch, to_magic, first_offset)
        except UnsupportedCompressionError:
            if out:
                break  # the client reads what it got, then fetches the zstd batch: the error
            raise
        if not entries:
            continue
        if not out:
            out += b"".join(entries)
            limit = max(max_bytes, len(out))
            continue
        for entry in entries:
            if len(out) + len(entry) > limit:
                return bytes(out)
            out += entry
    return bytes(out)


__all__ = ["build_entries", "down_convert", "down_convert_batch", "split_entries"]
