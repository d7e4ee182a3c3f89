"""Message sets, message formats v0 (magic 0, Kafka 0.8-0.9) and v1 (magic 1, Kafka 0.10).

A message set is entries back to back, with no count in front. Each entry, big-endian::

    offset        int64     0
    messageSize   int32     8   bytes of the message that follow
    crc           uint32   12   CRC-32 (IEEE, not Castagnoli) of magic .. end of value
    magic         int8     16   0 or 1
    attributes    int8     17   bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4),
                                bit 3 timestampType (v1 only: 0 CreateTime, 1 LogAppendTime)
    timestamp     int64    18   v1 only
    keyLength     int32         -1 for a null key
    key           bytes
    valueLength   int32         -1 for a null value
    value         bytes

Compression wraps a whole inner message set in one "wrapper" message: its value is the compressed
inner set, its key is null, its offset is the offset of the last inner message. Inner offsets are
absolute in v0; in v1 they are relative to the first inner message (0, 1, ...; gaps where a
compacted log has them), and the absolute offset of an inner message is
``wrapper offset - last inner relative offset + inner relative offset`` (a producer that has not
had offsets assigned may leave the wrapper offset at 0; the relative offsets then stand). A v1
wrapper with LogAppendTime gives its own timestamp to every inner message; Kafka's brokers also
write that timestamp, and the LogAppendTime flag, into each inner message.

Every entry of a message set is treated as a batch: an uncompressed entry is a batch of one record,
a wrapper is a batch of its inner messages, as Kafka's own readers do.
"""

import struct
import zlib
from collections.abc import Iterable, Iterator

from broker_lite.common.vocabulary import NO_TIMESTAMP, now_ms

from .compression import CompressionType, compress, decompress
from .errors import CorruptRecordError
from .record import Record, TimestampType
from .record_batch import LOG_OVERHEAD

_ENTRY_HEAD = struct.Struct(">qiIbb")  # offset, messageSize, crc, magic, attributes
_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
CRC_OFFSET = 12
MAGIC_OFFSET = 16
ATTRIBUTES_OFFSET = 17
# crc + magic + attributes (+ timestamp) + keyLength + valueLength
MESSAGE_OVERHEAD = {0: 4 + 1 + 1 + 4 + 4, 1: 4 + 1 + 1 + 8 + 4 + 4}

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_FLAG = 0x08


class LegacyRecordBatch:
    """One entry of a v0/v1 message set, viewed in place.

    >>> builder = MessageSetBuilder(magic=1)
    >>> builder.append(b"v", key=b"k", timestamp=5)
    0
    >>> [LegacyRecordBatch(builder.build()).magic]
    [1]
    """

    __slots__ = ("_buffer", "position", "offset", "message_size", "crc", "magic", "attributes",
                 "timestamp", "_key_position")

    def __init__(self, buffer, position: int = 0):
        buffer = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
        if len(buffer) - position < _ENTRY_HEAD.size:
            raise CorruptRecordError(f"message at position {position} is shorter than its header")
        (self.offset, self.message_size, self.crc, self.magic,
         self.attributes) = _ENTRY_HEAD.unpack_from(buffer, position)
        if self.magic not in MESSAGE_OVERHEAD:
            raise CorruptRecordError(
                f"message at position {position} has magic {self.magic}, expected 0 or 1"
            )
        if self.message_size < MESSAGE_OVERHEAD[self.magic]:
            raise CorruptRecordError(
                f"message at position {position} has size {self.message_size}, below the "
                f"minimum {MESSAGE_OVERHEAD[self.magic]} for magic {self.magic}"
            )
        if len(buffer) - position < self.message_size + LOG_OVERHEAD:
            raise CorruptRecordError(
                f"message at position {position} declares {self.message_size + LOG_OVERHEAD} "
                f"bytes but only {len(buffer) - position} remain"
            )
        self._buffer = buffer
        self.position = position
        if self.magic == 0:
            self.timestamp = NO_TIMESTAMP
            self._key_position = position + ATTRIBUTES_OFFSET + 1
        else:
            (self.timestamp,) = _TIMESTAMP.unpack_from(buffer, position + ATTRIBUTES_OFFSET + 1)
            self._key_position = position + ATTRIBUTES_OFFSET + 1 + _TIMESTAMP.size

    # -- header-derived properties, named as on a v2 batch so readers treat both alike ----------
    @property
    def size_in_bytes(self) -> int:
        return self.message_size + LOG_OVERHEAD

    @property
    def compression(self) -> CompressionType:
        return CompressionType.from_attributes(self.attributes)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & TIMESTAMP_TYPE_FLAG:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    @property
    def base_offset(self) -> int:
        if self.compression is CompressionType.NONE:
            return self.offset
        for record in self:
            return record.offset
        return self.offset

    @property
    def record_count(self) -> int:
        if self.compression is CompressionType.NONE:
            return 1
        return sum(1 for _ in self._inner_entries())

    is_control_batch = False
    is_transactional = False
    producer_id = -1
    producer_epoch = -1
    base_sequence = -1

    def raw(self) -> memoryview:
        return self._buffer[self.position:self.position + self.size_in_bytes]

    # -- fields -----------------------------------------------------------------------------
    def _end(self) -> int:
        return self.position + self.size_in_bytes

    def _read_field(self, pos: int, what: str) -> tuple[bytes | None, int]:
        end = self._end()
        if pos + 4 > end:
            raise CorruptRecordError(f"{what} length at position {pos} overruns its message")
        (length,) = _LENGTH.unpack_from(self._buffer, pos)
        pos += 4
        if length < 0:
            if length != -1:
                raise CorruptRecordError(f"{what} length {length} at position {pos - 4} is invalid")
            return None, pos
        if pos + length > end:
            raise CorruptRecordError(
                f"{what} of {length} bytes at position {pos} overruns its message")
        return bytes(self._buffer[pos:pos + length]), pos + length

    def key_and_value(self) -> tuple[bytes | None, bytes | None]:
        key, pos = self._read_field(self._key_position, "key")
        value, pos = self._read_field(pos, "value")
        if pos != self._end():
            raise CorruptRecordError(
                f"message at position {self.position} has {self._end() - pos} bytes after its value"
            )
        return key, value

    # -- validation ---------------------------------------------------------------------------
    def compute_crc(self) -> int:
        return zlib.crc32(self._buffer[self.position + MAGIC_OFFSET:self._end()])

    def is_valid(self) -> bool:
        return self.compute_crc() == self.crc

    def ensure_valid(self, *, deep: bool = False) -> None:
        """Check the CRC-32 and the field layout; raise :class:`CorruptRecordError` on a fault.
        ``deep`` checks the inner messages of a wrapper too (decompressing it), as Kafka's broker
        does on append."""
        actual = self.compute_crc()
        if actual != self.crc:
            raise CorruptRecordError(
                f"message at position {self.position} (offset {self.offset}) is corrupt: stored "
                f"CRC-32 {self.crc:#010x}, computed {actual:#010x}"
            )
        self.key_and_value()
        codec = self.compression  # raises UnsupportedCompressionError for an unknown codec id
        if deep and codec is not CompressionType.NONE:
            for entry in self._inner_entries():
                entry.ensure_valid()

    # -- records ------------------------------------------------------------------------------
    def _inner_entries(self) -> Iterator["LegacyRecordBatch"]:
        _key, value = self.key_and_value()
        if value is None:
            raise CorruptRecordError(
                f"compressed message at position {self.position} has a null value"
            )
        inner = memoryview(decompress(self.compression, value, magic=self.magic))
        pos = 0
        while pos < len(inner):
            entry = LegacyRecordBatch(inner, pos)
            if entry.magic != self.magic:
                raise CorruptRecordError(
                    f"inner message with magic {entry.magic} in a magic {self.magic} wrapper "
                    f"at position {self.position}"
                )
            if entry.compression is not CompressionType.NONE:
                raise CorruptRecordError(
                    f"nested compression inside the message at position {self.position}"
                )
            yield entry
            pos += entry.size_in_bytes

    def __iter__(self) -> Iterator[Record]:
        if self.compression is CompressionType.NONE:
            key, value = self.key_and_value()
            yield Record(self.offset, self.timestamp, self.timestamp_type, key, value)
            return
        entries = list(self._inner_entries())
        if not entries:
            raise CorruptRecordError(f"compressed message at position {self.position} is empty")
        timestamp_type = self.timestamp_type
        log_append = timestamp_type == TimestampType.LOG_APPEND_TIME
        # v1 inner offsets are relative: shift them so the last one lands on the wrapper offset.
        # A wrapper whose offset is below the last relative offset comes straight from a
        # producer (offsets not assigned yet); its inner offsets are taken as they are, as the
        # Java client does.
        shift = max(self.offset - entries[-1].offset, 0) if self.magic == 1 else 0
        for entry in entries:
            key, value = entry.key_and_value()
            timestamp = self.timestamp if log_append else entry.timestamp
            yield Record(entry.offset + shift, timestamp, timestamp_type, key, value)

    def __repr__(self) -> str:
        return (f"LegacyRecordBatch(magic={self.magic}, offset={self.offset}, "
                f"codec={self.compression.kafka_name}, size={self.size_in_bytes})")


def encode_message(offset: int, magic: int, attributes: int, timestamp: int, key, value) -> bytes:
    """One message set entry (offset, size, crc, message), the CRC computed."""
    if magic not in MESSAGE_OVERHEAD:
        raise ValueError(f"legacy message magic must be 0 or 1, not {magic}")
    body = bytearray(struct.pack(">bb", magic, attributes))
    if magic == 1:
        body += _TIMESTAMP.pack(timestamp)
    for field in (key, value):
        if field is None:
            body += _LENGTH.pack(-1)
        else:
            body += _LENGTH.pack(len(field))
            body += field
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + bytes(body)


class MessageSetBuilder:
    """Builds a v0 or v1 message set: plain messages, or one compressed wrapper message.

    Offsets run on from ``base_offset``, or each message is given its own (increasing, gaps
    allowed), as Kafka's ``appendWithOffset``. With LogAppendTime every message takes the
    ``log_append_time`` given (Kafka's ``MemoryRecordsBuilder``).

    >>> builder = MessageSetBuilder(magic=0, compression=CompressionType.SNAPPY, base_offset=10)
    >>> builder.append(b"a"), builder.append(b"b"), builder.append(b"c", offset=15)
    (10, 11, 15)
    >>> [(r.offset, r.value) for r in LegacyRecordBatch(builder.build())]
    [(10, b'a'), (11, b'b'), (15, b'c')]
    """

    def __init__(self, *, magic: int, compression: CompressionType = CompressionType.NONE,
                 timestamp_type: TimestampType = TimestampType.CREATE_TIME, base_offset: int = 0,
                 compression_level: int | None = None, log_append_time: int | None = None):
        if magic not in MESSAGE_OVERHEAD:
            raise ValueError(f"legacy message magic must be 0 or 1, not {magic}")
        self.magic = magic
        self.compression = CompressionType(compression)
        self.compression_level = compression_level
        self.timestamp_type = timestamp_type if magic == 1 else TimestampType.NO_TIMESTAMP_TYPE
        self.log_append_time = log_append_time \
            if self.timestamp_type == TimestampType.LOG_APPEND_TIME else None
        self.base_offset = base_offset
        # (offset, timestamp, key, value)
        self._messages: list[tuple[int, int, bytes | None, bytes | None]] = []

    def __len__(self) -> int:
        return len(self._messages)

    def append(self, value, *, key=None, timestamp: int | None = None, headers=(),
               offset: int | None = None) -> int:
        """Add a message; return its offset (``offset``, else the one after the last). v0
        messages carry no timestamp; no version has headers."""
        if headers:
            raise ValueError(f"message format v{self.magic} has no record headers")
        if self.magic == 0:
            timestamp = NO_TIMESTAMP
        elif self.log_append_time is not None:
            timestamp = self.log_append_time
        elif timestamp is None:
            timestamp = now_ms()
        last = self._messages[-1][0] if self._messages else self.base_offset - 1
        if offset is None:
            offset = last + 1
        elif offset <= last:
            raise ValueError(f"offset {offset} is not above the last one, {last}")
        self._messages.append((offset, timestamp, key, value))
        return offset

    def _attributes(self, codec: CompressionType) -> int:
        flag = TIMESTAMP_TYPE_FLAG if self.timestamp_type == TimestampType.LOG_APPEND_TIME else 0
        return int(codec) | flag

    def build(self) -> bytes:
        if self.compression is CompressionType.NONE:
            return b"".join(
                encode_message(offset, self.magic, self._attributes(self.compression), ts, key,
                               value)
                for offset, ts, key, value in self._messages
            )
        if not self._messages:
            return b""
        # Inner offsets: absolute for v0, relative to the first message for v1. The wrapper
        # carries the codec; the timestamp type is on the wrapper and each inner message.
        first = self._messages[0][0] if self.magic == 1 else 0
        inner = b"".join(
            encode_message(offset - first, self.magic,
                           self._attributes(CompressionType.NONE), ts, key, value)
            for offset, ts, key, value in self._messages
        )
        wrapper_timestamp = max(ts for _, ts, _, _ in self._messages)
        compressed = compress(self.compression, inner, magic=self.magic,
                              level=self.compression_level)
        return encode_message(self._messages[-1][0], self.magic,
                              self._attributes(self.compression), wrapper_timestamp, None,
                              compressed)


def build_message_set(records: Iterable[tuple], *, magic: int, timestamp: int | None = None,
                      **options) -> bytes:
    """Build a message set from ``(key, value)`` tuples."""
    builder = MessageSetBuilder(magic=magic, **options)
    for key, value in records:
        builder.append(value, key=key, timestamp=timestamp)
    return builder.build()
