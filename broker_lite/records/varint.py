"""Variable-length integers as Kafka writes them (the protobuf encoding).

Unsigned varint: seven bits per byte, least significant group first; the high bit of a byte is set
when another byte follows::

    300 -> 0b1_0101100 0b0_0000010 -> AC 02

Signed values are zigzag-mapped first so that small magnitudes stay short whatever their sign::

    zigzag(n) = (n << 1) ^ (n >> 63)        0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3, ...

Kafka uses signed "varint" for int32 fields (at most 5 bytes) and signed "varlong" for int64
fields (at most 10 bytes) in v2 records, and unsigned varints for lengths in flexible protocol
versions. Decoders reject encodings longer than the field allows and values outside its range, so a
corrupt byte stream cannot make them read past a record or return absurd numbers.
"""

from broker_lite.common.vocabulary import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

from .errors import CorruptRecordError

UINT32_MAX = (1 << 32) - 1

MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10


def _encode_unsigned(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _decode_unsigned(buf, pos: int, max_bytes: int, limit: int | None = None) -> tuple[int, int]:
    """Return (value, position after the varint); at most ``max_bytes`` bytes are read."""
    end = len(buf) if limit is None else limit
    value = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise CorruptRecordError(f"varint at position {start} runs past the end of its data")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if pos - start >= max_bytes:
            raise CorruptRecordError(
                f"varint at position {start} is longer than {max_bytes} bytes"
            )


def zigzag_encode(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def zigzag_decode(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def encode_unsigned_varint(value: int) -> bytes:
    """Unsigned varint of a value in [0, 2**32 - 1]."""
    if not 0 <= value <= UINT32_MAX:
        raise ValueError(f"unsigned varint out of range: {value}")
    return _encode_unsigned(value)


def decode_unsigned_varint(buf, pos: int = 0, limit: int | None = None) -> tuple[int, int]:
    value, pos = _decode_unsigned(buf, pos, MAX_VARINT_BYTES, limit)
    if value > UINT32_MAX:
        raise CorruptRecordError(f"unsigned varint ending before position {pos} exceeds 32 bits")
    return value, pos


def encode_varint(value: int) -> bytes:
    """Zigzag varint of an int32."""
    if not INT32_MIN <= value <= INT32_MAX:
        raise ValueError(f"varint out of int32 range: {value}")
    return _encode_unsigned(zigzag_encode(value) & 0xFFFFFFFF)


def decode_varint(buf, pos: int = 0, limit: int | None = None) -> tuple[int, int]:
    """Decode a zigzag int32 at ``buf[pos]``; return (value, next position)."""
    raw, pos = _decode_unsigned(buf, pos, MAX_VARINT_BYTES, limit)
    if raw > UINT32_MAX:
        raise CorruptRecordError(f"varint ending before position {pos} exceeds 32 bits")
    return zigzag_decode(raw), pos


def encode_varlong(value: int) -> bytes:
    """Zigzag varint of an int64."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"varlong out of int64 range: {value}")
    return _encode_unsigned(zigzag_encode(value) & 0xFFFFFFFFFFFFFFFF)


def decode_varlong(buf, pos: int = 0, limit: int | None = None) -> tuple[int, int]:
    """Decode a zigzag int64 at ``buf[pos]``; return (value, next position)."""
    raw, pos = _decode_unsigned(buf, pos, MAX_VARLONG_BYTES, limit)
    if raw > 0xFFFFFFFFFFFFFFFF:
        raise CorruptRecordError(f"varlong ending before position {pos} exceeds 64 bits")
    return zigzag_decode(raw), pos


def size_of_varint(value: int) -> int:
    """Encoded size in bytes of a zigzag varint (or varlong) holding ``value``."""
    raw = zigzag_encode(value) & 0xFFFFFFFFFFFFFFFF
    size = 1
    while raw >= 0x80:
        raw >>= 7
        size += 1
    return size
