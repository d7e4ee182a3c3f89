"""Record batches, message format v2 (magic 2, Kafka 0.11 and later).

Batch header, 61 bytes, big-endian; the offset of each field is the running sum below::

    baseOffset            int64    0   offset of the first record; assigned by the broker
    batchLength           int32    8   bytes after this field (so batch size = batchLength + 12)
    partitionLeaderEpoch  int32   12   set by the broker; outside the CRC so it can be patched
    magic                 int8    16   2
    crc                   uint32  17   CRC-32C (Castagnoli) of attributes .. end of batch
    attributes            int16   21   bits 0-2 codec, 3 timestampType, 4 isTransactional,
                                       5 isControlBatch, 6 hasDeleteHorizonMs, 7-15 unused
    lastOffsetDelta       int32   23   offset of the last record minus baseOffset
    baseTimestamp         int64   27   timestamp of the first record ("firstTimestamp")
    maxTimestamp          int64   35   largest timestamp; every record's under LogAppendTime
    producerId            int64   43   -1 unless idempotent or transactional
    producerEpoch         int16   51
    baseSequence          int32   53
    recordCount           int32   57
    records               ...     61   compressed as one stream when the codec is not none

Record (all integers zigzag varints, see :mod:`.varint`)::

    length          varint    bytes after this field
    attributes      int8      unused, 0
    timestampDelta  varlong   timestamp - baseTimestamp
    offsetDelta     varint    offset - baseOffset
    keyLength       varint    -1 for a null key
    key             bytes
    valueLength     varint    -1 for a null value
    value           bytes
    headerCount     varint
    headers         [headerKeyLength varint, headerKey utf-8, headerValueLength varint, value]

The CRC does not cover baseOffset, batchLength or partitionLeaderEpoch, so the broker assigns
offsets and epochs by patching the header without recomputing it.
"""

import inspect
import struct
from collections.abc import Iterable, Iterator

import crc32c

from broker_lite.common.vocabulary import (
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    now_ms,
)

from .compression import CompressionType, compress, decompress
from .control import (
    ControlRecordType,
    EndTransactionMarker,
    decode_end_transaction_marker,
)
from .errors import CorruptRecordError
from .record import Header, Record, TimestampType
from .varint import decode_varint, decode_varlong, encode_varint, encode_varlong

MAGIC = 2

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the part of every entry outside its length
# Field positions, derived from the layout above.
BATCH_LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = CRC_OFFSET + 4
RECORDS_OFFSET = HEADER_SIZE
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40



class RecordBatch:
    """A read-only view of one v2 batch inside a larger buffer; nothing is copied or decoded
    until asked for.

    >>> batch = RecordBatch(build_batch([(b"k", b"v")], timestamp=1000))
    >>> [(r.offset, r.key, r.value, r.timestamp) for r in batch]
    [(0, b'k', b'v', 1000)]
    """

    __slots__ = (
        "_buffer", "position", "base_offset", "batch_length", "partition_leader_epoch", "magic",
        "crc", "attributes", "last_offset_delta", "base_timestamp", "max_timestamp",
        "producer_id", "producer_epoch", "base_sequence", "record_count",
    )

    def __init__(self, buffer, position: int = 0):
        buffer = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
        if len(buffer) - position < HEADER_SIZE:
            raise CorruptRecordError(
                f"record batch at position {position} is shorter than its {HEADER_SIZE}-byte header"
            )
        (
            self.base_offset, self.batch_length, self.partition_leader_epoch, self.magic,
            self.crc, self.attributes, self.last_offset_delta, self.base_timestamp,
            self.max_timestamp, self.producer_id, self.producer_epoch, self.base_sequence,
            self.record_count,
        ) = HEADER.unpack_from(buffer, position)
        if self.batch_length < MIN_BATCH_LENGTH:
            raise CorruptRecordError(
                f"record batch at position {position} has batchLength {self.batch_length}, "
                f"below the minimum {MIN_BATCH_LENGTH}"
            )
        if len(buffer) - position < self.batch_length + LOG_OVERHEAD:
            raise CorruptRecordError(
                f"record batch at position {position} declares {self.batch_length + LOG_OVERHEAD} "
                f"bytes but only {len(buffer) - position} remain"
            )
        self._buffer = buffer
        self.position = position

    # -- header-derived properties ------------------------------------------------------------
    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression(self) -> CompressionType:
        return CompressionType.from_attributes(self.attributes)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_FLAG:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control_batch(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF

    def raw(self) -> memoryview:
        """The batch's bytes, header included."""
        return self._buffer[self.position:self.position + self.size_in_bytes]

    # -- validation -----------------------------------------------------------------------------
    def compute_crc(self) -> int:
        start = self.position + ATTRIBUTES_OFFSET
        return crc32c.crc32c(self._buffer[start:self.position + self.size_in_bytes])

    def is_valid(self) -> bool:
        return self.magic == MAGIC and self.compute_crc() == self.crc

    def ensure_valid(self) -> None:
        """Check magic, sizes and the CRC-32C; raise :class:`CorruptRecordError` naming the
        fault."""
        if self.magic != MAGIC:
            raise CorruptRecordError(f"{self._where} has magic {self.magic}, expected {MAGIC}")
        if self.record_count < 0:
            raise CorruptRecordError(
                f"{self._where} has a negative record count {self.record_count}")
        if self.last_offset_delta < 0:
            raise CorruptRecordError(f"{self._where} has a negative lastOffsetDelta")
        actual = self.compute_crc()
        if actual != self.crc:
            raise CorruptRecordError(f"{self._where} is corrupt: stored CRC-32C {self.crc:#010x}, "
                                     f"computed {actual:#010x}")
        self.compression  # noqa: B018 (raises UnsupportedCompressionError for an unknown codec)

    @property
    def _where(self) -> str:
        return f"record batch at position {self.position} (base offset {self.base_offset})"

    # -- records --------------------------------------------------------------------------------
    def records_span(self) -> tuple[memoryview, int, int] | None:
        """Where the records section of an uncompressed batch lies in the buffer the batch was
        read from, ``(buffer, start, end)``, for readers that decode in place; None when the
        batch is compressed (:meth:`records_data` decompresses it)."""
        if self.attributes & COMPRESSION_MASK:
            return None
        return (self._buffer, self.position + RECORDS_OFFSET,
                self.position + self.size_in_bytes)

    def records_data(self):
        """The records section, decompressed when the batch is compressed."""
        start = self.position + RECORDS_OFFSET
        section = self._buffer[start:self.position + self.size_in_bytes]
        codec = self.compression
        if codec is CompressionType.NONE:
            return section
        return decompress(codec, section, magic=MAGIC)

    def __iter__(self) -> Iterator[Record]:
        data = self.records_data()
        log_append = self.attributes & TIMESTAMP_TYPE_FLAG
        timestamp_type = self.timestamp_type
        pos = 0
        end = len(data)
        for _ in range(self.record_count):
            record, pos = _decode_record(
                data, pos, end, self.base_offset, self.base_timestamp,
                self.max_timestamp if log_append else None, timestamp_type,
            )
            yield record
        if pos != end:
            raise CorruptRecordError(
                f"record batch at position {self.position} has {end - pos} bytes after its "
                f"{self.record_count} records"
            )

    def end_transaction_marker(self) -> EndTransactionMarker:
        """The commit/abort marker of a control batch."""
        if not self.is_control_batch:
            raise ValueError("not a control batch")
        for record in self:
            return decode_end_transaction_marker(record.key, record.value)
        raise CorruptRecordError(f"control batch at position {self.position} has no record")

    def __repr__(self) -> str:
        return (
            f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
            f"count={self.record_count}, codec={self.compression.kafka_name}, "
            f"size={self.size_in_bytes})"
        )


def _read_bytes(data, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    length, pos = decode_varint(data, pos, end)
    if length < 0:
        if length != -1:
            raise CorruptRecordError(f"{what} length {length} at position {pos} is invalid")
        return None, pos
    if pos + length > end:
        raise CorruptRecordError(f"{what} of {length} bytes at position {pos} overruns its record")
    return bytes(data[pos:pos + length]), pos + length


def _decode_record(data, pos, end, base_offset, base_timestamp, log_append_time, timestamp_type):
    """Decode the record at ``data[pos]``; return (record, position after it)."""
    length, body = decode_varint(data, pos, end)
    record_end = body + length
    if length < 0 or record_end > end:
        raise CorruptRecordError(f"record at position {pos} has invalid length {length}")
    p = body + 1  # attributes: unused
    timestamp_delta, p = decode_varlong(data, p, record_end)
    offset_delta, p = decode_varint(data, p, record_end)
    key, p = _read_bytes(data, p, record_end, "key")
    value, p = _read_bytes(data, p, record_end, "value")
    header_count, p = decode_varint(data, p, record_end)
    if header_count < 0:
        raise CorruptRecordError(f"record at position {pos} has a negative header count")
    headers = []
    for _ in range(header_count):
        name, p = _read_bytes(data, p, record_end, "header key")
        if name is None:
            raise CorruptRecordError(f"record at position {pos} has a null header key")
        header_value, p = _read_bytes(data, p, record_end, "header value")
        # As the Java client does, malformed UTF-8 in a header key is replaced, not fatal.
        headers.append((name.decode("utf-8", "replace"), header_value))
    if p != record_end:
        raise CorruptRecordError(
            f"record at position {pos} declares {length} bytes but its fields use {p - body}"
        )
    timestamp = log_append_time if log_append_time is not None else base_timestamp + timestamp_delta
    record = Record(base_offset + offset_delta, timestamp, timestamp_type, key, value,
                    tuple(headers))
    return record, record_end


def encode_record(offset_delta: int, timestamp_delta: int, key, value,
                  headers: Iterable[Header] = ()) -> bytes:
    """One record's bytes, length prefix included."""
    parts = [b"\x00", encode_varlong(timestamp_delta), encode_varint(offset_delta)]
    for field in (key, value):
        if field is None:
            parts.append(encode_varint(-1))
        else:
            parts.append(encode_varint(len(field)))
            parts.append(bytes(field))
    headers = list(headers)
    parts.append(encode_varint(len(headers)))
    for name, header_value in headers:
        encoded_name = name.encode("utf-8")
        parts.append(encode_varint(len(encoded_name)))
        parts.append(encoded_name)
        if header_value is None:
            parts.append(encode_varint(-1))
        else:
            parts.append(encode_varint(len(header_value)))
            parts.append(bytes(header_value))
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def assemble_batch(
    records_data,
    *,
    record_count: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    compression: CompressionType = CompressionType.NONE,
    compression_level: int | None = None,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control_batch: bool = False,
) -> bytes:
    """Wrap encoded records in a batch header: compress, lay out the header, compute the CRC."""
    compression = CompressionType(compression)
    if compression is not CompressionType.NONE:
        records_data = compress(compression, records_data, magic=MAGIC, level=compression_level)
    header = write_header(
        bytearray(HEADER_SIZE), records_data, record_count=record_count,
        last_offset_delta=last_offset_delta, base_timestamp=base_timestamp,
        max_timestamp=max_timestamp, compression=compression, timestamp_type=timestamp_type,
        base_offset=base_offset, partition_leader_epoch=partition_leader_epoch,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        is_transactional=is_transactional, is_control_batch=is_control_batch)
    # joined once: no zeroed buffer of the batch's size, no second copy of its records
    return b"".join((header, records_data))


def write_header(
    batch: bytearray,
    records_after=b"",
    *,
    record_count: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    compression: CompressionType,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control_batch: bool = False,
) -> bytearray:
    """Write a batch header, CRC included, into the first :data:`HEADER_SIZE` bytes of
    ``batch``, whose records are the rest of ``batch`` followed by ``records_after``
    (compressed already where ``compression`` says so). Returns ``batch``.

    A batch whose records were encoded after room for the header (the compiled encoder's) is
    finished so, in place, without copying its records; :func:`assemble_batch` writes a
    header of its own and joins the records to it."""
    attributes = int(compression)
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_FLAG
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG
    if is_control_batch:
        attributes |= CONTROL_FLAG
    HEADER.pack_into(
        batch, 0, base_offset, len(batch) + len(records_after) - LOG_OVERHEAD,
        partition_leader_epoch, MAGIC, 0, attributes, last_offset_delta, base_timestamp,
        max_timestamp, producer_id, producer_epoch, base_sequence, record_count,
    )
    # the CRC runs from the attributes to the end of the records, wherever they lie
    crc = crc32c.crc32c(records_after, crc32c.crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))
    struct.pack_into(">I", batch, CRC_OFFSET, crc)
    return batch


_BATCH_OPTIONS = inspect.signature(assemble_batch).replace(
    parameters=[p for p in inspect.signature(assemble_batch).parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY
                and p.default is not inspect.Parameter.empty]
)


class RecordBatchBuilder:
    """Builds one v2 batch record by record.

    >>> builder = RecordBatchBuilder(compression=CompressionType.GZIP)
    >>> builder.append(b"value", key=b"key", timestamp=1700000000000, headers=[("h", b"1")])
    0
    >>> batch = RecordBatch(builder.build())
    >>> batch.ensure_valid(); [r.headers for r in batch]
    [(('h', b'1'),)]
    """

    def __init__(self, **batch_options):
        """``batch_options`` are the header settings of :func:`assemble_batch` (compression,
        timestamp_type, base_offset, producer_id, ...); the record fields are derived."""
        _BATCH_OPTIONS.bind_partial(**batch_options)  # unknown names fail here, not at build()
        self._options = batch_options
        self._records: list[bytes] = []
        self._base_timestamp: int | None = None
        self._max_timestamp = -1
        self._next_delta = 0
        self._last_delta = -1
        self.size_in_bytes = HEADER_SIZE

    def __len__(self) -> int:
        return len(self._records)

    def append(self, value, *, key=None, timestamp: int | None = None,
               headers: Iterable[Header] = (), offset_delta: int | None = None) -> int:
        """Add a record; return its offset delta. ``timestamp`` defaults to now (ms)."""
        if timestamp is None:
            timestamp = now_ms()
        if offset_delta is None:
            offset_delta = self._next_delta
        if offset_delta <= self._last_delta:
            raise ValueError(f"offset delta {offset_delta} is not above {self._last_delta}")
        if self._base_timestamp is None:
            self._base_timestamp = timestamp
        encoded = encode_record(offset_delta, timestamp - self._base_timestamp, key, value,
                                headers)
        self._records.append(encoded)
        self.size_in_bytes += len(encoded)
        self._max_timestamp = max(self._max_timestamp, timestamp)
        self._last_delta = offset_delta
        self._next_delta = offset_delta + 1
        return offset_delta

    def build(self, *, last_offset_delta: int | None = None,
              log_append_time: int | None = None) -> bytes:
        """The batch. ``last_offset_delta`` may keep a larger last offset than the last record's,
        as compaction does to preserve a batch's offset range. ``log_append_time`` is the
        maxTimestamp of a LogAppendTime batch (the records keep their own timestamps, as Kafka's
        builder leaves them)."""
        base_timestamp = -1 if self._base_timestamp is None else self._base_timestamp
        if last_offset_delta is None:
            last_offset_delta = max(self._last_delta, 0)
        elif last_offset_delta < self._last_delta:
            raise ValueError(f"last offset delta {last_offset_delta} is below a record's")
        return assemble_batch(
            b"".join(self._records), record_count=len(self._records),
            last_offset_delta=last_offset_delta, base_timestamp=base_timestamp,
            max_timestamp=self._max_timestamp if log_append_time is None else log_append_time,
            **self._options,
        )


def build_batch(records: Iterable[tuple], *, timestamp: int | None = None, **options) -> bytes:
    """Build a batch from ``(key, value)`` or ``(key, value, headers)`` tuples."""
    builder = RecordBatchBuilder(**options)
    for key, value, *rest in records:
        builder.append(value, key=key, timestamp=timestamp, headers=rest[0] if rest else ())
    return builder.build()


def build_control_batch(marker: EndTransactionMarker, *, producer_id: int, producer_epoch: int,
                        timestamp: int | None = None, base_offset: int = 0,
                        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH) -> bytes:
    """The one-record control batch that commits or aborts a transaction on a partition."""
    builder = RecordBatchBuilder(
        producer_id=producer_id, producer_epoch=producer_epoch, is_transactional=True,
        is_control_batch=True, base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
    )
    builder.append(marker.value(), key=marker.key(), timestamp=timestamp)
    return builder.build()


__all__ = [
    "RecordBatch", "RecordBatchBuilder", "assemble_batch", "build_batch", "build_control_batch",
    "encode_record", "ControlRecordType", "MAGIC", "HEADER_SIZE", "LOG_OVERHEAD",
]
