"""The primitive types of the Kafka protocol, over a :class:`Reader` and a :class:`Writer`.

All integers are big-endian two's complement::

    bool      1 byte, 0 = false, anything else = true
    int8      1 byte          int16 / uint16   2 bytes
    int32     4 bytes         uint32 / int64   4 / 8 bytes
    float64   8 bytes, IEEE 754
    uuid      16 bytes; Kafka's "zero uuid" (UUID(int=0)) stands for "no id"

Variable-length fields exist in a classic and a compact ("flexible versions") form::

                    classic                                     compact
    string          int16 length N, N bytes UTF-8               uvarint N+1, N bytes
    nullable string int16 -1 = null                             uvarint 0 = null
    bytes           int32 length N, N bytes                     uvarint N+1, N bytes
    nullable bytes  int32 -1 = null                             uvarint 0 = null
    records         like nullable bytes (a record set: v0/v1 message set or v2 batches)
    array           int32 count N, N elements                   uvarint N+1, N elements
    nullable array  int32 -1 = null                             uvarint 0 = null

A tagged-fields section (flexible versions only) ends every struct::

    uvarint count, then per field: uvarint tag, uvarint size, `size` bytes   (tags ascending)

unsigned varint, varint and varlong are the protobuf encodings of :mod:`broker_lite.records.varint`.

Reading never raises ``IndexError`` or ``struct.error``: every underflow or bad value is an
:class:`~broker_lite.protocol.errors.InvalidRequestError` with the byte position, and declared
lengths are checked against the bytes that remain before anything is allocated.

>>> w = Writer()
>>> w.int16(3); w.compact_string("kpy"); w.unsigned_varint(300)
>>> w.getvalue().hex()
'0003046b7079ac02'
>>> r = Reader(w.getvalue())
>>> r.int16(), r.compact_string(), r.unsigned_varint()
(3, 'kpy', 300)
"""

from __future__ import annotations

import builtins  # bool and bytes: Reader and Writer have methods of those names
import struct
import uuid as _uuid

from broker_lite.records.errors import CorruptRecordError
from broker_lite.records.varint import (
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
)

from .errors import EncodeError, InvalidRequestError

ZERO_UUID = _uuid.UUID(int=0)

#: Bytes-like record sets smaller than this are copied into the surrounding buffer; larger ones
#: (and file regions) are emitted as chunks of their own, untouched.
INLINE_RECORDS_LIMIT = 4096

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")

# Byte encodings of small unsigned varints, so that compact lengths below 128 cost a lookup.
_SMALL_UVARINT = [bytes((i,)) for i in range(128)]


def uvarint_bytes(value: int) -> bytes:
    """Unsigned varint of ``value`` (0 <= value < 2**32)."""
    if 0 <= value < 128:
        return _SMALL_UVARINT[value]
    return encode_unsigned_varint(value)


class Reader:
    """Reads protocol primitives from a buffer, advancing ``pos``; never past ``end``.

    The buffer is held as a memoryview, so :meth:`records` (and :meth:`view`) return slices of
    the caller's buffer without copying.

    >>> r = Reader(b"\\x00\\x03kpy\\x05")
    >>> r.string(), r.int8(), r.remaining()
    ('kpy', 5, 0)
    >>> r.int8()
    Traceback (most recent call last):
    ...
    broker_lite.protocol.errors.InvalidRequestError: int8 needs 1 bytes, 0 remain (position 6)
    """

    __slots__ = ("buf", "end", "pos")

    def __init__(self, data, pos: int = 0, end: int | None = None):
        buf = data if isinstance(data, memoryview) else memoryview(data)
        if buf.ndim != 1 or buf.itemsize != 1:
            buf = buf.cast("B")
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def fail(self, reason: str, position: int | None = None):
        raise InvalidRequestError(reason, self.pos if position is None else position)

    def _underflow(self, need: int, what: str):
        raise InvalidRequestError(f"{what} needs {need} bytes, {self.end - self.pos} remain",
                                  self.pos)

    def view(self, n: int, what: str = "data") -> memoryview:
        """The next ``n`` bytes as a memoryview slice (no copy)."""
        p = self.pos
        if n < 0 or p + n > self.end:
            self._underflow(n, what)
        self.pos = p + n
        return self.buf[p:p + n]

    # -- fixed-size integers -------------------------------------------------------------------

    def bool(self) -> bool:
        p = self.pos
        if p >= self.end:
            self._underflow(1, "bool")
        self.pos = p + 1
        return self.buf[p] != 0

    def int8(self) -> int:
        p = self.pos
        if p >= self.end:
            self._underflow(1, "int8")
        self.pos = p + 1
        return _I8.unpack_from(self.buf, p)[0]

    def int16(self) -> int:
        p = self.pos
        if p + 2 > self.end:
            self._underflow(2, "int16")
        self.pos = p + 2
        return _I16.unpack_from(self.buf, p)[0]

    def uint16(self) -> int:
        p = self.pos
        if p + 2 > self.end:
            self._underflow(2, "uint16")
        self.pos = p + 2
        return _U16.unpack_from(self.buf, p)[0]

    def int32(self) -> int:
        p = self.pos
        if p + 4 > self.end:
            self._underflow(4, "int32")
        self.pos = p + 4
        return _I32.unpack_from(self.buf, p)[0]

    def uint32(self) -> int:
        p = self.pos
        if p + 4 > self.end:
            self._underflow(4, "uint32")
        self.pos = p + 4
        return _U32.unpack_from(self.buf, p)[0]

    def int64(self) -> int:
        p = self.pos
        if p + 8 > self.end:
            self._underflow(8, "int64")
        self.pos = p + 8
        return _I64.unpack_from(self.buf, p)[0]

    def float64(self) -> float:
        p = self.pos
        if p + 8 > self.end:
            self._underflow(8, "float64")
        self.pos = p + 8
        return _F64.unpack_from(self.buf, p)[0]

    def uuid(self) -> _uuid.UUID:
        p = self.pos
        if p + 16 > self.end:
            self._underflow(16, "uuid")
        self.pos = p + 16
        raw = bytes(self.buf[p:p + 16])
        return ZERO_UUID if raw == b"\0" * 16 else _uuid.UUID(bytes=raw)

    # -- varints -------------------------------------------------------------------------------

    def unsigned_varint(self) -> int:
        p = self.pos
        if p < self.end:
            b = self.buf[p]
            if b < 0x80:  # the common case: one byte
                self.pos = p + 1
                return b
        try:
            value, self.pos = decode_unsigned_varint(self.buf, p, self.end)
        except CorruptRecordError as e:
            raise InvalidRequestError(f"bad unsigned varint: {e}", p) from None
        return value

    def varint(self) -> int:
        p = self.pos
        try:
            value, self.pos = decode_varint(self.buf, p, self.end)
        except CorruptRecordError as e:
            raise InvalidRequestError(f"bad varint: {e}", p) from None
        return value

    def varlong(self) -> int:
        p = self.pos
        try:
            value, self.pos = decode_varlong(self.buf, p, self.end)
        except CorruptRecordError as e:
            raise InvalidRequestError(f"bad varlong: {e}", p) from None
        return value

    # -- lengths -------------------------------------------------------------------------------

    def _length(self, compact: builtins.bool, nullable: builtins.bool, wide: builtins.bool,
                what: str) -> int:
        """A length prefix; -1 for null. Checked against the bytes remaining."""
        p = self.pos
        if compact:
            n = self.unsigned_varint() - 1
        elif wide:
            n = self.int32()
        else:
            n = self.int16()
        if n < 0:
            if n == -1 and nullable:
                return -1
            self.fail(f"{'null' if n == -1 else 'negative'} length {n} for non-nullable {what}", p)
        if n > self.end - self.pos:
            self.fail(f"{what} length {n} exceeds the {self.end - self.pos} bytes remaining", p)
        return n

    def _text(self, n: int) -> str:
        p = self.pos
        self.pos = p + n
        try:
            return str(self.buf[p:p + n], "utf-8")
        except UnicodeDecodeError as e:
            raise InvalidRequestError(f"string is not valid UTF-8: {e.reason}", p) from None

    # -- strings, bytes, records ---------------------------------------------------------------

    def string(self) -> str:
        return self._text(self._length(False, False, False, "string"))

    def nullable_string(self) -> str | None:
        n = self._length(False, True, False, "string")
        return None if n < 0 else self._text(n)

    def compact_string(self) -> str:
        return self._text(self._length(True, False, False, "string"))

    def compact_nullable_string(self) -> str | None:
        n = self._length(True, True, False, "string")
        return None if n < 0 else self._text(n)

    def bytes(self) -> bytes:
        n = self._length(False, False, True, "bytes")
        return bytes(self.view(n))

    def nullable_bytes(self) -> builtins.bytes | None:
        n = self._length(False, True, True, "bytes")
        return None if n < 0 else bytes(self.view(n))

    def compact_bytes(self) -> builtins.bytes:
        n = self._length(True, False, True, "bytes")
        return bytes(self.view(n))

    def compact_nullable_bytes(self) -> builtins.bytes | None:
        n = self._length(True, True, True, "bytes")
        return None if n < 0 else bytes(self.view(n))

    def records(self) -> memoryview | None:
        """A record set (int32 length, -1 = null) as a memoryview into the buffer: no copy."""
        n = self._length(False, True, True, "records")
        return None if n < 0 else self.view(n)

    def compact_records(self) -> memoryview | None:
        n = self._length(True, True, True, "records")
        return None if n < 0 else self.view(n)

    # -- arrays --------------------------------------------------------------------------------

    def array_length(self, compact: builtins.bool, nullable: builtins.bool,
                     min_item_size: int = 1) -> int:
        """An array's element count (-1 for null). ``min_item_size`` bytes per element must
        remain, so an absurd count is rejected before any element is decoded."""
        p = self.pos
        n = self.unsigned_varint() - 1 if compact else self.int32()
        if n < 0:
            if n == -1 and nullable:
                return -1
            self.fail(f"{'null' if n == -1 else 'negative'} length {n} for non-nullable array", p)
        if n * max(min_item_size, 1) > self.end - self.pos:
            self.fail(f"array of {n} elements cannot fit in the "
                      f"{self.end - self.pos} bytes remaining", p)
        return n

    def tagged_fields(self) -> dict[int, memoryview]:
        """A tagged-fields section as {tag: raw bytes (a view)}.

        Like Kafka's readers, this does not insist on ascending tags; a repeated tag keeps its
        last value.
        """
        count = self.unsigned_varint()
        if count > self.end - self.pos:
            self.fail(f"{count} tagged fields cannot fit in the "
                      f"{self.end - self.pos} bytes remaining")
        out = {}
        for _ in range(count):
            tag = self.unsigned_varint()
            size = self.unsigned_varint()
            out[tag] = self.view(size, f"tagged field {tag}")
        return out


class Writer:
    """Accumulates an encoding as a list of chunks.

    Small values are appended to a bytearray (``buf``); :meth:`chunk` closes it and adds an
    object of its own, untouched (a large record set, or a file region that the network layer
    will send with ``sendfile``): the caller passes its size, since the object may not be bytes.

    >>> w = Writer()
    >>> w.int32(1); w.chunk(b"payload", 7); w.int8(0)
    >>> [bytes(c) for c in w.chunks()], len(w)
    ([b'\\x00\\x00\\x00\\x01', b'payload', b'\\x00'], 12)
    """

    __slots__ = ("_chunks", "_flushed", "buf")

    def __init__(self):
        self.buf = bytearray()
        self._chunks: list = []
        self._flushed = 0

    def __len__(self) -> int:
        return self._flushed + len(self.buf)

    def write(self, data) -> None:
        self.buf += data

    def chunk(self, obj, size: int) -> None:
        """Emit ``obj`` (``size`` bytes on the wire) as a chunk of its own."""
        if self.buf:
            self._chunks.append(self.buf)
            self._flushed += len(self.buf)
            self.buf = bytearray()
        self._chunks.append(obj)
        self._flushed += size

    def chunks(self) -> list:
        """The chunks so far: bytes objects, plus the objects given to :meth:`chunk`."""
        out = [bytes(c) if isinstance(c, bytearray) else c for c in self._chunks]
        if self.buf:
            out.append(bytes(self.buf))
        return out

    def raw_chunks(self) -> list:
        """Like :meth:`chunks`, but the accumulated parts stay mutable bytearrays (no copy)."""
        return self._chunks + ([self.buf] if self.buf else [])

    def getvalue(self) -> bytes:
        """Everything as one bytes object; every chunk must be bytes-like."""
        parts = self.raw_chunks()
        try:
            return b"".join(parts)
        except TypeError:
            raise EncodeError("a records chunk is not bytes-like; use chunks() instead") from None

    # -- primitives ----------------------------------------------------------------------------

    def bool(self, v) -> None:
        self.buf += b"\x01" if v else b"\x00"

    def int8(self, v: int) -> None:
        self.buf += _I8.pack(v)

    def int16(self, v: int) -> None:
        self.buf += _I16.pack(v)

    def uint16(self, v: int) -> None:
        self.buf += _U16.pack(v)

    def int32(self, v: int) -> None:
        self.buf += _I32.pack(v)

    def uint32(self, v: int) -> None:
        self.buf += _U32.pack(v)

    def int64(self, v: int) -> None:
        self.buf += _I64.pack(v)

    def float64(self, v: float) -> None:
        self.buf += _F64.pack(v)

    def uuid(self, v) -> None:
        if isinstance(v, _uuid.UUID):
            self.buf += v.bytes
        elif isinstance(v, (bytes, bytearray, memoryview)) and len(v) == 16:
            self.buf += v
        else:
            raise EncodeError(f"uuid must be a uuid.UUID, not {type(v).__name__}")

    def unsigned_varint(self, v: int) -> None:
        self.buf += uvarint_bytes(v)

    def varint(self, v: int) -> None:
        self.buf += encode_varint(v)

    def varlong(self, v: int) -> None:
        self.buf += encode_varlong(v)

    # -- strings, bytes, records ---------------------------------------------------------------

    def _null(self, compact: builtins.bool, wide: builtins.bool) -> None:
        if compact:
            self.buf += b"\x00"
        elif wide:
            self.buf += b"\xff\xff\xff\xff"
        else:
            self.buf += b"\xff\xff"

    def string(self, v: str) -> None:
        data = v.encode("utf-8")
        if len(data) > 0x7FFF:
            raise EncodeError(f"string of {len(data)} bytes is longer than 32767")
        self.buf += _I16.pack(len(data))
        self.buf += data

    def nullable_string(self, v: str | None) -> None:
        if v is None:
            self.buf += b"\xff\xff"
        else:
            self.string(v)

    def compact_string(self, v: str) -> None:
        data = v.encode("utf-8")
        if len(data) > 0x7FFF:
            raise EncodeError(f"string of {len(data)} bytes is longer than 32767")
        self.buf += uvarint_bytes(len(data) + 1)
        self.buf += data

    def compact_nullable_string(self, v: str | None) -> None:
        if v is None:
            self.buf += b"\x00"
        else:
            self.compact_string(v)

    def bytes(self, v) -> None:
        self.buf += _I32.pack(len(v))
        self.buf += v

    def nullable_bytes(self, v) -> None:
        if v is None:
            self.buf += b"\xff\xff\xff\xff"
        else:
            self.bytes(v)

    def compact_bytes(self, v) -> None:
        self.buf += uvarint_bytes(len(v) + 1)
        self.buf += v

    def compact_nullable_bytes(self, v) -> None:
        if v is None:
            self.buf += b"\x00"
        else:
            self.compact_bytes(v)

    def records(self, v, compact: builtins.bool = False) -> None:
        """A record set: None, bytes-like, or an object with an integer ``size`` (a file region).

        Bytes-like values of at least :data:`INLINE_RECORDS_LIMIT` bytes and sized objects become
        chunks of their own, untouched; smaller bytes-like values are copied inline.
        """
        if v is None:
            self._null(compact, True)
            return
        if isinstance(v, (bytes, bytearray, memoryview)):
            size = v.nbytes if isinstance(v, memoryview) else len(v)
            inline = size < INLINE_RECORDS_LIMIT
        else:
            given = getattr(v, "size", None)
            if not isinstance(given, int) or given < 0:
                raise EncodeError(
                    "records must be bytes-like, None, or have an integer size, "
                    f"not {type(v).__name__}"
                )
            size, inline = given, False
        if compact:
            self.buf += uvarint_bytes(size + 1)
        else:
            self.buf += _I32.pack(size)
        if inline:
            self.buf += v
        else:
            self.chunk(v, size)

    def compact_records(self, v) -> None:
        self.records(v, compact=True)

    # -- arrays and tagged fields --------------------------------------------------------------

    def array_length(self, n: int | None, compact: builtins.bool) -> None:
        """The count prefix of an array; ``None`` writes the null marker."""
        if n is None:
            self._null(compact, True)
        elif compact:
            self.buf += uvarint_bytes(n + 1)
        else:
            self.buf += _I32.pack(n)

    def tagged_fields(self, fields: dict[int, builtins.bytes] | None) -> None:
        """A tagged-fields section from {tag: raw bytes}, written in ascending tag order."""
        if not fields:
            self.buf += b"\x00"
            return
        self.buf += uvarint_bytes(len(fields))
        for tag in sorted(fields):
            data = fields[tag]
            self.buf += uvarint_bytes(tag)
            self.buf += uvarint_bytes(len(data))
            self.buf += data
