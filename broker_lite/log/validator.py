"""Checking the batches of an append and giving them their offsets, before they reach a segment.

Batches are checked as whole batches (size, magic, CRC, record count against lastOffsetDelta);
records inside a batch are only decoded where a rule needs them: the record-level rules of
:mod:`.record_checks` (keys on compacted topics, timestamp bounds), whose errors name each bad
record, and legacy compressed sets whose inner offsets must be rewritten. Offsets are assigned
the cheapest way each format allows:

- v2: the new baseOffset and partitionLeaderEpoch are written over the first 16 bytes of the
  header, which the CRC does not cover; the rest of the batch is passed on as it came (no copy).
- v0/v1 uncompressed: each message is its own entry, so each entry's offset field is rewritten.
- v1 compressed with inner offsets 0..n-1: only the wrapper offset changes (to the last offset).
- v0 compressed (absolute inner offsets), or v1 with irregular inner offsets: the wrapper is
  rebuilt with the same codec, as Kafka recompresses in that case.

Legacy batches are stored in the format they came in; up-conversion is not done, and readers of
the log handle every format.

With ``message.timestamp.type=LogAppendTime`` the broker's clock replaces the batch timestamp
(v2: maxTimestamp and the timestamp-type bit; v1: the message or wrapper timestamp), and the CRC
is recomputed, since both fields are covered by it.
"""

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import crc32c

from broker_lite.records import (
    BatchReader,
    CompressionType,
    CorruptRecordError,
    LegacyRecordBatch,
    MessageSetBuilder,
    RecordBatch,
    RecordTooLargeError,
    TimestampType,
)
from broker_lite.records.record_batch import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    TIMESTAMP_TYPE_FLAG,
)
from broker_lite.vocabulary import NO_TIMESTAMP

from .errors import InvalidRecordError
from .record_checks import RecordRules, check_records
from .segment import BatchSummary

_V2_HEAD = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
_OFFSET = struct.Struct(">q")
_V2_MAX_TIMESTAMP_OFFSET = 35
_V1_ATTRIBUTES_OFFSET = 17
_V1_TIMESTAMP_OFFSET = 18
_V1_CRC_OFFSET = 12
_V1_MAGIC_OFFSET = 16


@dataclass
class ValidatedRecords:
    """Batches ready to append: their bytes as chunks for one vectored write, and a summary each."""

    chunks: list = field(default_factory=list)
    batches: list[BatchSummary] = field(default_factory=list)
    first_offset: int = -1
    last_offset: int = -1
    max_timestamp: int = NO_TIMESTAMP
    offset_of_max_timestamp: int = -1
    record_count: int = 0

    @property
    def size(self) -> int:
        return sum(b.size for b in self.batches)

    def add(self, chunks: Sequence, size: int, first: int, last: int, max_timestamp: int,
            count: int) -> None:
        self.chunks.extend(chunks)
        self.batches.append(BatchSummary(last, max_timestamp, size))
        if self.first_offset < 0:
            self.first_offset = first
        self.last_offset = last
        self.record_count += count
        if max_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = max_timestamp, last


def validate_and_assign_offsets(
    records,
    next_offset: int,
    *,
    max_message_bytes: int,
    partition_leader_epoch: int = 0,
    log_append_time_ms: int | None = None,
    record_rules: RecordRules | None = None,
) -> ValidatedRecords:
    """Check ``records`` (the bytes of a Produce request's partition) and assign offsets from
    ``next_offset``. ``log_append_time_ms`` set means the topic uses LogAppendTime;
    ``record_rules`` are the record-level rules of the topic (:mod:`.record_checks`)."""
    view = memoryview(records).cast("B") if not isinstance(records, memoryview) else records
    reader = BatchReader(view, validate=True)
    result = ValidatedRecords()
    offset = next_offset
    for batch in reader:
        if batch.size_in_bytes > max_message_bytes:
            raise RecordTooLargeError(
                f"batch of {batch.size_in_bytes} bytes at position {batch.position} exceeds "
                f"max.message.bytes {max_message_bytes}"
            )
        if record_rules is not None:
            check_records(batch, record_rules)
        if batch.magic == 2:
            offset = _assign_v2(batch, offset, partition_leader_epoch, log_append_time_ms, result)
        elif batch.compression is CompressionType.NONE:
            offset = _assign_legacy_message(batch, offset, log_append_time_ms, result)
        else:
            offset = _assign_legacy_wrapper(batch, offset, log_append_time_ms, result)
    if reader.incomplete:
        raise CorruptRecordError(f"records end with a partial batch at position {reader.position}")
    if not result.batches:
        raise InvalidRecordError("an append needs at least one batch")
    return result


def _assign_v2(batch: RecordBatch, offset: int, epoch: int, log_append_time_ms: int | None,
               result: ValidatedRecords) -> int:
    if batch.record_count <= 0:
        raise InvalidRecordError(f"batch at position {batch.position} holds no record")
    if batch.last_offset_delta != batch.record_count - 1:
        raise InvalidRecordError(
            f"batch at position {batch.position} has lastOffsetDelta {batch.last_offset_delta} "
            f"for {batch.record_count} records"
        )
    raw = batch.raw()
    head = _V2_HEAD.pack(offset, batch.batch_length, epoch)
    max_timestamp = batch.max_timestamp
    if log_append_time_ms is None:
        chunks = [head, raw[_V2_HEAD.size:]]
    else:
        body = bytearray(raw[_V2_HEAD.size:])
        base = _V2_HEAD.size
        struct.pack_into(">h", body, ATTRIBUTES_OFFSET - base,
                         batch.attributes | TIMESTAMP_TYPE_FLAG)
        struct.pack_into(">q", body, _V2_MAX_TIMESTAMP_OFFSET - base, log_append_time_ms)
        struct.pack_into(">I", body, CRC_OFFSET - base,
                         crc32c.crc32c(memoryview(body)[ATTRIBUTES_OFFSET - base:]))
        chunks = [head, body]
        max_timestamp = log_append_time_ms
    last = offset + batch.last_offset_delta
    result.add(chunks, batch.size_in_bytes, offset, last, max_timestamp, batch.record_count)
    return last + 1


def _stamp_legacy(message: bytearray, log_append_time_ms: int) -> None:
    """Give a v1 message (or wrapper) the broker's time and recompute its CRC-32."""
    message[_V1_ATTRIBUTES_OFFSET] |= TIMESTAMP_TYPE_FLAG
    struct.pack_into(">q", message, _V1_TIMESTAMP_OFFSET, log_append_time_ms)
    struct.pack_into(">I", message, _V1_CRC_OFFSET,
                     zlib.crc32(memoryview(message)[_V1_MAGIC_OFFSET:]))


def _assign_legacy_message(batch: LegacyRecordBatch, offset: int,
                           log_append_time_ms: int | None, result: ValidatedRecords) -> int:
    raw = batch.raw()
    timestamp = batch.timestamp
    if log_append_time_ms is not None and batch.magic == 1:
        message = bytearray(raw)
        _stamp_legacy(message, log_append_time_ms)
        rest, timestamp = memoryview(message)[_OFFSET.size:], log_append_time_ms
    else:
        rest = raw[_OFFSET.size:]
    result.add([_OFFSET.pack(offset), rest], batch.size_in_bytes, offset, offset, timestamp, 1)
    return offset + 1


def _assign_legacy_wrapper(batch: LegacyRecordBatch, offset: int,
                           log_append_time_ms: int | None, result: ValidatedRecords) -> int:
    inner = list(batch._inner_entries())
    if not inner:
        raise InvalidRecordError(f"compressed message at position {batch.position} is empty")
    count = len(inner)
    last = offset + count - 1
    sequential = batch.magic == 1 and [e.offset for e in inner] == list(range(count))
    if sequential:
        message = bytearray(batch.raw())
        _OFFSET.pack_into(message, 0, last)
        timestamp = batch.timestamp
        if log_append_time_ms is not None:
            _stamp_legacy(message, log_append_time_ms)
            timestamp = log_append_time_ms
        result.add([message], len(message), offset, last, timestamp, count)
        return last + 1
    log_append = log_append_time_ms is not None and batch.magic == 1
    builder = MessageSetBuilder(
        magic=batch.magic, compression=batch.compression, base_offset=offset,
        timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else batch.timestamp_type,
    )
    for record in batch:
        builder.append(record.value, key=record.key,
                       timestamp=log_append_time_ms if log_append else record.timestamp)
    rebuilt = builder.build()
    timestamp = LegacyRecordBatch(rebuilt).timestamp
    result.add([rebuilt], len(rebuilt), offset, last, timestamp, count)
    return last + 1
