"""Checking the batches of an append and giving them their offsets, before they reach a segment.

Batches are checked as whole batches (size, magic, CRC, record count against lastOffsetDelta),
and every batch of an append must have the magic of the first. Records inside a batch are only
decoded where a rule needs them: the record-level rules of :mod:`.record_checks` (keys on
compacted topics, timestamp bounds), whose errors name each bad record, records to convert, and
legacy compressed sets whose inner offsets must be rewritten.

The log keeps one message format, its record version (``message.format.version``: v2 unless an
older version is set, see :func:`broker_lite.config.format_versions.record_version`). Batches in
that format are kept as they came; offsets are assigned the cheapest way each format allows:

- v2: the new baseOffset and partitionLeaderEpoch are written over the first 16 bytes of the
  header, which the CRC does not cover; the rest of the batch is passed on as it came (no copy).
- v0/v1 uncompressed: each message is its own entry, so each entry's offset field is rewritten.
- v1 compressed with inner offsets 0..n-1: only the wrapper offset changes (to the last offset).
- v0 compressed (absolute inner offsets), or v1 with irregular inner offsets: the wrapper is
  rebuilt with the same codec, as Kafka recompresses in that case.

Batches in another format are converted, as Kafka's ``LogValidator`` converts them: their records
(inner messages CRC-checked) are written again in the log's format, all in one batch of the
producer's codec (uncompressed v0/v1: one message each). A compressed message set, like a v2
batch, must then come alone in its append. v0 records have no timestamp and keep none
(NO_TIMESTAMP, -1) in a v1 or v2 log under CreateTime. A log in v0 or v1 refuses idempotent and
transactional batches and records with headers (:class:`UnsupportedForMessageFormatError`).

With ``message.timestamp.type=LogAppendTime`` the broker's clock replaces the batch timestamp
(v2: maxTimestamp and the timestamp-type bit; v1: the message or wrapper timestamp), and the CRC
is recomputed, since both fields are covered by it; converted records get it the same way.
"""

import dataclasses
import itertools
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import crc32c

from broker_lite.common.vocabulary import NO_TIMESTAMP
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
from broker_lite.records.compression import COMPRESSION_CODEC_MASK
from broker_lite.records.conversion import build_entries
from broker_lite.records.record_batch import (
    ATTRIBUTES_OFFSET,
    BATCH_LENGTH_OFFSET,
    CRC_OFFSET,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    MAGIC_OFFSET,
    MIN_BATCH_LENGTH,
    TIMESTAMP_TYPE_FLAG,
)

from .errors import InvalidRecordError, UnsupportedForMessageFormatError
from .record_checks import RecordRules, check_records
from .segment import BatchSummary, batch_max_timestamp

_V2_HEAD = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
_OFFSET = struct.Struct(">q")
_BATCH_LENGTH = struct.Struct(">i")
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
    # (batch, first offset, max timestamp) of the v2 batches carrying a producer id, as assigned
    producers: list = field(default_factory=list)

    @classmethod
    def joined(cls, parts: Sequence["ValidatedRecords"]) -> "ValidatedRecords":
        """The records of ``parts``, consecutive appends, as one append."""
        if len(parts) == 1:
            return parts[0]
        joined = cls()
        for part in parts:
            joined.chunks.extend(part.chunks)
            joined.batches.extend(part.batches)
            joined.record_count += part.record_count
            joined.producers.extend(part.producers)
            if part.max_timestamp > joined.max_timestamp:
                joined.max_timestamp = part.max_timestamp
                joined.offset_of_max_timestamp = part.offset_of_max_timestamp
        joined.first_offset, joined.last_offset = parts[0].first_offset, parts[-1].last_offset
        return joined

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
    record_version: int = 2,
) -> ValidatedRecords:
    """Check ``records`` (the bytes of a Produce request's partition), convert them to the
    log's ``record_version`` when they are in another format, and assign offsets from
    ``next_offset``. ``log_append_time_ms`` set means the topic uses LogAppendTime;
    ``record_rules`` are the record-level rules of the topic (:mod:`.record_checks`)."""
    view = memoryview(records).cast("B") if not isinstance(records, memoryview) else records
    if record_version == 2 and _one_whole_batch(view):
        # What a Produce from version 3 holds: checked and given its offsets without walking
        # the buffer (the walk would find the same batch, and raise the same errors); at once
        # when it passes every check, else by RecordBatch, which names what fails.
        if log_append_time_ms is None:
            result = _sound_lone_batch(view, next_offset, max_message_bytes,
                                       partition_leader_epoch, record_rules)
            if result is not None:
                return result
        batch = RecordBatch(view)
        batch.ensure_valid()
        _check(batch, MAGIC, max_message_bytes, record_rules)
        result = ValidatedRecords()
        _assign_v2(batch, next_offset, partition_leader_epoch, log_append_time_ms, result)
        return result
    reader = BatchReader(view, validate=True)
    batches = _checked(reader, max_message_bytes, record_rules)
    first = next(batches, None)
    if first is None:
        result = ValidatedRecords()
    elif first.magic != record_version:
        result = _convert(first, batches, next_offset, record_version, max_message_bytes,
                          partition_leader_epoch, log_append_time_ms)
    else:
        result = ValidatedRecords()
        offset = next_offset
        for batch in itertools.chain([first], batches):
            if batch.magic == 2:
                offset = _assign_v2(batch, offset, partition_leader_epoch, log_append_time_ms,
                                    result)
            elif batch.compression is CompressionType.NONE:
                offset = _assign_legacy_message(batch, offset, log_append_time_ms, result)
            else:
                offset = _assign_legacy_wrapper(batch, offset, log_append_time_ms, result)
    if reader.incomplete:
        raise CorruptRecordError(f"records end with a partial batch at position {reader.position}")
    if not result.batches:
        raise InvalidRecordError("an append needs at least one batch")
    return result


def analyze_replicated(records, log_end_offset: int) -> tuple[ValidatedRecords, list]:
    """Check the batches a follower fetched from its leader (Kafka's ``appendAsFollower``):
    they keep the offsets, epochs and timestamps the leader gave them, so only their sizes,
    magic and CRCs are checked, and that offsets start at ``log_end_offset`` and increase.
    Returns the records ready to append (their summaries) and the batches, in order.

    Raises :class:`CorruptRecordError` for a damaged batch or a partial one at the end (the
    caller passes whole batches), :class:`InvalidRecordError` for offsets out of order."""
    view = memoryview(records).cast("B") if not isinstance(records, memoryview) else records
    reader = BatchReader(view, validate=True)
    result, batches = ValidatedRecords(), []
    next_offset, position = log_end_offset, 0
    for batch in reader:
        first = batch.base_offset
        if first < next_offset:
            raise InvalidRecordError(
                f"replicated batch at position {batch.position} starts at offset {first}, "
                f"below the next offset {next_offset}")
        size = batch.size_in_bytes
        count = batch.record_count if batch.magic == 2 else 1
        result.add([view[position:position + size]], size, first, batch.last_offset,
                   batch_max_timestamp(batch), count)
        batches.append(batch)
        next_offset, position = batch.last_offset + 1, position + size
    if reader.incomplete:
        raise CorruptRecordError(f"replicated records end with a partial batch at position "
                                 f"{reader.position}")
    return result, batches


def _checked(reader: BatchReader, max_message_bytes: int,
             record_rules: RecordRules | None) -> Iterator:
    """The batches of an append, each checked (:func:`_check`)."""
    magic = None
    for batch in reader:
        if magic is None:
            magic = batch.magic
        _check(batch, magic, max_message_bytes, record_rules)
        yield batch


def _one_whole_batch(view: memoryview) -> bool:
    """Whether ``view`` is exactly one v2 batch, by its header's length."""
    return len(view) >= HEADER_SIZE and view[MAGIC_OFFSET] == MAGIC and \
        _BATCH_LENGTH.unpack_from(view, BATCH_LENGTH_OFFSET)[0] + LOG_OVERHEAD == len(view)


_KNOWN_CODECS = frozenset(codec.value for codec in CompressionType)


def _sound_lone_batch(view: memoryview, next_offset: int, max_message_bytes: int,
                      partition_leader_epoch: int, record_rules: RecordRules | None
                      ) -> ValidatedRecords | None:
    """A lone v2 batch (:func:`_one_whole_batch`) given its offsets as :func:`_assign_v2` gives
    them, when it passes every check of RecordBatch's ``ensure_valid`` and :func:`_check` and
    no rule needs its records, all read from one unpacking of its header: what nearly every
    Produce holds. None otherwise (the caller checks it the long way, for the error)."""
    (_, batch_length, _, _, crc, attributes, last_offset_delta, _, max_timestamp, producer_id,
     _, _, record_count) = HEADER.unpack_from(view)
    size = batch_length + LOG_OVERHEAD
    if batch_length < MIN_BATCH_LENGTH or size > max_message_bytes or record_count <= 0 \
            or last_offset_delta != record_count - 1 \
            or attributes & COMPRESSION_CODEC_MASK not in _KNOWN_CODECS \
            or (record_rules is not None and (record_rules.compacted
                                              or record_rules.checks_create_times
                                              or attributes & TIMESTAMP_TYPE_FLAG)) \
            or crc32c.crc32c(view[ATTRIBUTES_OFFSET:]) != crc:
        return None
    result = ValidatedRecords()
    last = next_offset + last_offset_delta
    result.add([_V2_HEAD.pack(next_offset, batch_length, partition_leader_epoch),
                view[_V2_HEAD.size:]], size, next_offset, last, max_timestamp, record_count)
    if producer_id >= 0:
        result.producers.append((RecordBatch(view), next_offset, max_timestamp))
    return result


def _check(batch, magic: int, max_message_bytes: int, record_rules: RecordRules | None) -> None:
    """A batch of an append checked against the rules of every format; ``magic`` is the first
    batch's. Most topics have no record-level rule: their batches are checked record by record
    only when marked LogAppendTime (which a producer may not set), as check_records decides."""
    if batch.magic != magic:
        raise InvalidRecordError(
            f"batch at position {batch.position} has magic {batch.magic}, not the magic "
            f"{magic} of the first batch")
    if batch.size_in_bytes > max_message_bytes:
        raise RecordTooLargeError(
            f"batch of {batch.size_in_bytes} bytes at position {batch.position} exceeds "
            f"max.message.bytes {max_message_bytes}"
        )
    if batch.magic == 2:
        _check_v2_counts(batch)
    elif batch.compression is not CompressionType.NONE:
        batch.ensure_valid(deep=True)  # the inner messages' CRCs, as Kafka checks them
    if record_rules is not None and (record_rules.compacted or record_rules.checks_create_times
                                     or batch.attributes & TIMESTAMP_TYPE_FLAG):
        check_records(batch, record_rules)


def _check_v2_counts(batch: RecordBatch) -> None:
    if batch.record_count <= 0:
        raise InvalidRecordError(f"batch at position {batch.position} holds no record")
    if batch.last_offset_delta != batch.record_count - 1:
        raise InvalidRecordError(
            f"batch at position {batch.position} has lastOffsetDelta {batch.last_offset_delta} "
            f"for {batch.record_count} records"
        )


def _convert(first, batches: Iterator, next_offset: int, record_version: int,
             max_message_bytes: int, partition_leader_epoch: int,
             log_append_time_ms: int | None) -> ValidatedRecords:
    """The records of every batch, written again in the log's format at the next offsets
    (Kafka's ``convertAndAssignOffsetsNonCompressed`` / ``buildRecordsAndAssignOffsets``)."""
    records, codec, count = [], CompressionType.NONE, 0
    for batch in itertools.chain([first], batches):
        count += 1
        if batch.compression is not CompressionType.NONE:
            codec = batch.compression
        if record_version < 2 and (batch.producer_id >= 0 or batch.is_transactional
                                   or batch.is_control_batch):
            raise UnsupportedForMessageFormatError(
                f"idempotent and transactional batches cannot be kept in message format "
                f"v{record_version}")
        for record in batch:
            if record.headers and record_version < 2:
                raise UnsupportedForMessageFormatError(
                    f"message format v{record_version} has no record headers")
            records.append(dataclasses.replace(record, offset=next_offset + len(records)))
    if count > 1 and (codec is not CompressionType.NONE or first.magic == 2):
        raise InvalidRecordError(
            "a compressed message set or a record batch must come alone in its append")
    log_append = log_append_time_ms is not None
    entries = build_entries(
        records, magic=record_version, compression=codec,
        timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
        log_append_time=log_append_time_ms, partition_leader_epoch=partition_leader_epoch)
    result = ValidatedRecords()
    start = 0
    for entry in entries:
        if len(entry) > max_message_bytes:
            raise RecordTooLargeError(
                f"converted batch of {len(entry)} bytes exceeds max.message.bytes "
                f"{max_message_bytes}")
        covered = records[start:] if len(entries) == 1 else records[start:start + 1]
        start += len(covered)
        result.add([entry], len(entry), covered[0].offset, covered[-1].offset,
                   _max_timestamp(covered, record_version, log_append_time_ms), len(covered))
    return result


def _max_timestamp(records, record_version: int, log_append_time_ms: int | None) -> int:
    if record_version == 0:
        return NO_TIMESTAMP
    if log_append_time_ms is not None:
        return log_append_time_ms
    return max(record.timestamp for record in records)


def _assign_v2(batch: RecordBatch, offset: int, epoch: int, log_append_time_ms: int | None,
               result: ValidatedRecords) -> int:
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
    if batch.producer_id >= 0:
        result.producers.append((batch, offset, max_timestamp))
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
